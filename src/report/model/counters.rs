//! The counters section: what changed on each host while the selected runs ran (see
//! [`crate::counters`]), per test, side and group, summed over repeats.

use super::view::{provenance, Cell, Table};
use crate::model::{CounterDelta, Run};
use crate::normalize::platform::Platform;
use crate::normalize::points;
use std::collections::BTreeMap;

/// How many counters a row names.
const SHOWN: usize = 8;

/// One row per (test, role, group, host) whose runs carry counters; `None` when none does.
pub(super) fn table(selected: &[(Run, Platform)], by: &str) -> Option<Table> {
    type Key = (String, String, String, String);
    let mut rows: BTreeMap<Key, (usize, Vec<&CounterDelta>)> = BTreeMap::new();
    for (r, p) in selected.iter().filter(|(r, _)| !r.counters.is_empty()) {
        let group = points::dimension(r, p, by).unwrap_or_else(|| "-".into());
        let mut hosts: Vec<&str> = r.counters.iter().map(|c| c.host.as_str()).collect();
        hosts.dedup();
        for host in hosts {
            let key = (
                r.test.clone(),
                r.role.as_str().to_string(),
                group.clone(),
                host.to_string(),
            );
            let e = rows.entry(key).or_default();
            e.0 += 1;
            e.1.extend(r.counters.iter().filter(|c| c.host == host));
        }
    }
    if rows.is_empty() {
        return None;
    }
    let headers = ["test", "role", by, "host", "runs", "counters that changed"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let rows = rows
        .into_iter()
        .map(|((test, role, group, host), (runs, deltas))| {
            let mut files: Vec<String> = deltas
                .iter()
                .map(|d| format!("{}:{}", d.source, d.line))
                .collect();
            files.dedup();
            vec![
                Cell::text(test),
                Cell::text(role),
                Cell::text(group),
                Cell::text(host),
                Cell::text(runs.to_string()),
                Cell {
                    text: crate::counters::summary(deltas.iter().copied(), SHOWN),
                    class: String::new(),
                    source: provenance(&files),
                },
            ]
        })
        .collect();
    Some(Table { headers, rows })
}
