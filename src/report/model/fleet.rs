//! The fleet section: for each pattern test and size, the pair matrix (a heatmap), the host
//! effects (a bar chart) and the suspects `linkperf fleet` names (see [`crate::fleet`]).

use super::view::{chart, Chart};
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::report::charts::{render_bars, BarChart};
use crate::report::heatmap::{render, Heatmap};
use anyhow::Result;
use serde::Serialize;
use std::collections::HashMap;

/// The metric and threshold the section fits (`linkperf fleet`'s defaults).
const METRIC: &str = "bw_avg_gbps";
const THRESHOLD: f64 = 0.10;

#[derive(Debug, Clone, Serialize)]
pub struct FleetView {
    pub title: String,
    pub charts: Vec<Chart>,
    /// `suspect host n3: 0.25× the fleet; n1–n3 0.10 (source:line), …`.
    pub suspects: Vec<String>,
}

pub(super) fn sections(selected: &[(Run, Platform)]) -> Result<Vec<FleetView>> {
    let mut out = Vec::new();
    for g in crate::fleet::groups(selected, METRIC, THRESHOLD)? {
        let size = g.msg_size_bytes.map_or(String::new(), |s| format!(" {s} B"));
        let title = format!("{}{size} {METRIC}: pair matrix", g.test);
        let hosts: Vec<String> = g.fit.hosts.iter().map(|h| h.host.clone()).collect();
        let index: HashMap<&str, usize> =
            hosts.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect();
        let mut values = vec![vec![None; hosts.len()]; hosts.len()];
        for c in &g.fit.cells {
            let (a, b) = (index[c.a.as_str()], index[c.b.as_str()]);
            values[a][b] = Some(c.value);
            values[b][a] = Some(c.value);
        }
        let id = format!("fleet {}{size}", g.test);
        let heatmap = render(&Heatmap {
            title: title.clone(),
            hosts,
            values,
            median: g.fit.median,
        })?;
        let effects = render_bars(&BarChart {
            title: format!("{}{size}: host effects (1 = the fleet's typical pair)", g.test),
            x_desc: "host".into(),
            y_desc: "effect (ratio)".into(),
            bars: g
                .fit
                .hosts
                .iter()
                .map(|h| (h.host.clone(), h.ratio, if h.ratio < 1.0 - THRESHOLD { 1 } else { 0 }))
                .collect(),
        })?;
        let suspects = g.fit.suspects.iter().map(|s| s.describe()).collect();
        out.push(FleetView {
            title: format!(
                "{}{size}: {} hosts, {} pairs, fleet median {}",
                g.test,
                g.fit.hosts.len(),
                g.fit.cells.len(),
                crate::format::num(g.fit.median)
            ),
            charts: vec![
                chart(&id, "matrix", title, heatmap),
                chart(&id, "effects", format!("{}{size}: host effects", g.test), effects),
            ],
            suspects,
        });
    }
    Ok(out)
}
