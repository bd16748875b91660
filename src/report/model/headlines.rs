//! Headlines: per group, the best number of each kind (peak RDMA bandwidth, small-message
//! rate, lowest typical latency, TCP throughput), with where it was measured.

use super::view::{provenance, size_text, Headline};
use crate::format;
use crate::model::Run;
use crate::normalize::aggregate::{self, Aggregate};
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, prefer_client};
use anyhow::Result;

/// What a headline shows: label, metric and tool of its points, unit, the largest message size
/// considered, whether lower is better, and whether the line-rate share is shown.
struct Kind {
    label: &'static str,
    metrics: &'static [(&'static str, &'static str)],
    unit: &'static str,
    max_size: Option<u64>,
    lowest: bool,
    with_share: bool,
}

const KINDS: &[Kind] = &[
    Kind {
        label: "peak RDMA bandwidth",
        metrics: &[("bw_avg_gbps", "perftest")],
        unit: "Gbit/s",
        max_size: None,
        lowest: false,
        with_share: true,
    },
    Kind {
        label: "best small-message rate",
        metrics: &[("msg_rate_mpps", "perftest")],
        unit: "Mpps",
        max_size: Some(64),
        lowest: false,
        with_share: false,
    },
    Kind {
        label: "lowest latency (typical)",
        metrics: &[("lat_typical_us", "perftest")],
        unit: "µs",
        max_size: None,
        lowest: true,
        with_share: false,
    },
    Kind {
        // iperf 2 where there is any, else iperf3.
        label: "TCP throughput (iperf)",
        metrics: &[("bw_avg_gbps", "iperf2"), ("bw_avg_gbps", "iperf3")],
        unit: "Gbit/s",
        max_size: None,
        lowest: false,
        with_share: true,
    },
];

pub(super) fn headlines(
    selected: &[(Run, Platform)],
    by: &str,
    groups: &[String],
) -> Result<Vec<Headline>> {
    let aggs_of = |metric: &str, tool: &str| -> Result<Vec<Aggregate>> {
        let pts = points::points(selected, by, Some(metric))?
            .into_iter()
            .filter(|p| p.key.tool == tool)
            .collect();
        aggregate::aggregate(&prefer_client(pts))
    };
    let kinds = KINDS
        .iter()
        .map(|k| {
            let aggs = k
                .metrics
                .iter()
                .map(|(m, t)| aggs_of(m, t))
                .collect::<Result<Vec<_>>>()?;
            Ok((k, aggs))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut out = Vec::new();
    for g in groups {
        for (kind, aggs) in &kinds {
            let best = aggs.iter().find_map(|a| best(a, g, kind));
            out.extend(best.map(|a| headline(g, kind, a)));
        }
    }
    Ok(out)
}

/// The group's best aggregate of one kind.
fn best<'a>(aggs: &'a [Aggregate], group: &str, kind: &Kind) -> Option<&'a Aggregate> {
    aggs.iter()
        .filter(|a| {
            a.group == group
                && kind
                    .max_size
                    .is_none_or(|m| a.key.msg_size_bytes.is_some_and(|s| s <= m))
        })
        .max_by(|a, b| {
            if kind.lowest {
                b.median.total_cmp(&a.median)
            } else {
                a.median.total_cmp(&b.median)
            }
        })
}

fn headline(group: &str, kind: &Kind, a: &Aggregate) -> Headline {
    let share = a
        .link_speed_gbps
        .filter(|_| kind.with_share)
        .map(|s| {
            format!(
                ", {} of the {s} Gbit/s line rate",
                format::pct(a.median / s)
            )
        })
        .unwrap_or_default();
    let at = a
        .key
        .msg_size_bytes
        .map(|s| format!(" at {}", size_text(Some(s))))
        .unwrap_or_default();
    Headline {
        group: group.to_string(),
        label: kind.label.into(),
        value: format!("{} {}", format::num(a.median), kind.unit),
        detail: format!("{} {} MTU {}{at}{share}", a.key.test, a.key.role, a.key.mtu),
        source: provenance(&a.sources),
    }
}
