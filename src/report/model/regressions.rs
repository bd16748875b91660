//! The regressions section, from a `linkperf gate --json` file.

use super::view::{size_text, Cell, Table};
use crate::format;
use crate::gate::table::{shows_counters, without_column, HEADERS};
use crate::gate::{GateResult, Outcome};

/// The regressions section: the points of a gate result that regressed or went missing.
pub(super) fn gate_table(gate: &GateResult) -> Table {
    let mut headers: Vec<String> = HEADERS
        .iter()
        .filter(|h| **h != "p")
        .map(|s| s.to_string())
        .collect();
    let num = |v: Option<f64>| v.map_or("-".into(), format::num);
    let rows = gate
        .points
        .iter()
        .filter(|p| matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing))
        .map(|p| {
            let d = &p.decision;
            vec![
                Cell {
                    text: d.outcome.as_str().into(),
                    class: "worse".into(),
                    source: String::new(),
                },
                Cell::text(&p.test),
                Cell::text(&p.role),
                Cell::text(size_text(p.msg_size_bytes)),
                Cell::text(&p.metric),
                Cell::text(num(d.baseline_median)),
                Cell::text(num(d.current_median)),
                Cell::text(
                    d.change
                        .map_or("-".into(), |c| format!("{:+.1} %", c * 100.0)),
                ),
                Cell::text(p.config_changes.join("; ")),
                Cell::text(p.counters_text()),
                Cell::text(&d.reason),
            ]
        })
        .collect::<Vec<_>>();
    let mut rows = rows;
    if !shows_counters(&gate.points) {
        without_column(&mut headers, &mut rows, "counters");
    }
    Table { headers, rows }
}
