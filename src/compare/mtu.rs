//! The cost of a smaller MTU, found in the data: for each group measured at several MTUs, the
//! bandwidth at the largest message size at the lowest MTU against the highest.

use crate::format;
use crate::model::Run;
use crate::normalize::aggregate::{self, Aggregate};
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, prefer_client, Point};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

/// "MTU 1024 costs 6.3 % bandwidth" for groups measured at several MTUs (largest message).
pub fn mtu_findings(selected: &[(Run, Platform)], by: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let group_of: BTreeMap<&str, String> = selected
        .iter()
        .filter_map(|(r, p)| Some((r.run_id.as_str(), points::dimension(r, p, by)?)))
        .collect();
    let all = prefer_client(points::points(selected, "mtu", Some("bw_avg_gbps"))?);
    let groups: BTreeSet<&String> = group_of.values().collect();
    for g in groups {
        let mine: Vec<Point> = all
            .iter()
            .filter(|p| group_of.get(p.run_id.as_str()) == Some(g))
            .cloned()
            .collect();
        let aggs = aggregate::aggregate(&mine)?;
        let mut by_test: BTreeMap<&str, Vec<&Aggregate>> = BTreeMap::new();
        for a in &aggs {
            by_test.entry(a.key.test.as_str()).or_default().push(a);
        }
        for (test, list) in by_test {
            let Some(size) = list.iter().filter_map(|a| a.key.msg_size_bytes).max() else {
                continue;
            };
            let at: Vec<&&Aggregate> = list
                .iter()
                .filter(|a| a.key.msg_size_bytes == Some(size))
                .collect();
            let (Some(lo), Some(hi)) = (
                at.iter().min_by(|a, b| {
                    a.group
                        .parse::<f64>()
                        .unwrap_or(0.0)
                        .total_cmp(&b.group.parse::<f64>().unwrap_or(0.0))
                }),
                at.iter().max_by(|a, b| {
                    a.group
                        .parse::<f64>()
                        .unwrap_or(0.0)
                        .total_cmp(&b.group.parse::<f64>().unwrap_or(0.0))
                }),
            ) else {
                continue;
            };
            if lo.group != hi.group && hi.median > 0.0 {
                let cost = (hi.median - lo.median) / hi.median;
                out.push(format!(
                    "{g}: MTU {} costs {} bandwidth against MTU {} on {test} at {} ({} vs {} Gbit/s)",
                    lo.group,
                    format::pct(cost),
                    hi.group,
                    format::bytes_label(size as f64),
                    format::num(lo.median),
                    format::num(hi.median)
                ));
            }
        }
    }
    Ok(out)
}
