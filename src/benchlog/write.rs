//! Renders one test's results as a `linkperf bench` log block.

use super::{HEADER, RULE};
use crate::stats::samples::{percentile, percentile_key, sorted, summarize};
use crate::verbs::options::{BenchParams, BenchTest, Stop};
use crate::verbs::record::{SessionInfo, SizeResult};

/// The log of one test, and the latency samples of each table row (by 0-based line index).
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub lines: Vec<String>,
    pub samples: Vec<(usize, Vec<f64>)>,
}

impl Rendered {
    /// Lines for a terminal: the log without its `device.*` fact lines.
    pub fn terminal_lines(&self) -> impl Iterator<Item = &String> {
        self.lines.iter().filter(|l| !l.starts_with("# device."))
    }
}

/// Writes one test's results: header fields, device facts, the table, per-size check and
/// percentile lines, and bandwidth over time.
pub fn render_test(
    test: BenchTest,
    results: &[SizeResult],
    params: &BenchParams,
    info: &SessionInfo,
    percentiles: &[f64],
) -> Rendered {
    let mut out = Rendered {
        lines: header(test, params, info),
        samples: Vec::new(),
    };
    out.lines.push(RULE.to_string());
    let after = if test.is_bandwidth() {
        bandwidth_table(&mut out, results)
    } else {
        latency_table(&mut out, results, percentiles)
    };
    out.lines.push(RULE.to_string());
    out.lines.extend(after);
    intervals(&mut out.lines, results);
    out
}

/// The header block: what ran where, with which parameters, and the device's facts.
fn header(test: BenchTest, params: &BenchParams, info: &SessionInfo) -> Vec<String> {
    let depth = if test.is_bandwidth() {
        params.tx_depth
    } else {
        1
    };
    let stop = match params.stop {
        Stop::Iterations(n) => format!("Iterations: {n}"),
        Stop::Duration(d) => format!("Duration: {d}"),
    };
    let mut lines = vec![
        format!(
            "{}{} (native verbs, protocol v{})",
            HEADER,
            env!("CARGO_PKG_VERSION"),
            crate::verbs::protocol::VERSION
        ),
        format!("# {}", test.title()),
        format!(
            "# Started: {}  Host: {}",
            info.started_at,
            info.host.as_deref().unwrap_or("-")
        ),
        format!(
            "# Device: {}  Port: {}  GID index: {}  Link type: {}  MTU: {}",
            info.device, info.port, info.gid_index, info.link_layer, info.mtu
        ),
        format!(
            "# Connection type: RC  QPs: {}  TX depth: {depth}  Inline size: {}  {stop}",
            params.qps, params.inline_size,
        ),
        format!(
            "# Local QPN: {}  Local GID: {}",
            hex_list(&info.local_qpns),
            info.local_gid
        ),
        format!(
            "# Remote QPN: {}  Remote GID: {}  Peer: {}",
            hex_list(&info.remote_qpns),
            info.remote_gid,
            info.peer
        ),
    ];
    for (k, v) in &info.device_facts {
        lines.push(format!("# device.{k}: {v}"));
    }
    lines
}

/// The bandwidth table; returns the per-size check lines that follow it.
fn bandwidth_table(out: &mut Rendered, results: &[SizeResult]) -> Vec<String> {
    out.lines.push(
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]".into(),
    );
    let mut after = Vec::new();
    for r in results {
        let peak = r.peak_gbps.unwrap_or(r.bw_gbps());
        out.lines.push(format!(
            " {:<10} {:<14} {:<18.2} {:<20.2} {:.6}",
            r.size,
            r.ops,
            peak,
            r.bw_gbps(),
            r.msg_rate_mpps()
        ));
        after.push(format!("# {} bytes: verified: {}", r.size, r.verified));
    }
    after
}

/// The latency table (remembering each row's samples); returns the per-size check and
/// percentile lines that follow it.
fn latency_table(out: &mut Rendered, results: &[SizeResult], percentiles: &[f64]) -> Vec<String> {
    out.lines.push(
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"
            .into(),
    );
    let mut after = Vec::new();
    for r in results {
        let Some(s) = summarize(&r.samples_us) else {
            continue;
        };
        out.samples.push((out.lines.len(), r.samples_us.clone()));
        out.lines.push(format!(
            " {:<6} {:<14} {:<14.2} {:<12.2} {:<18.2} {:<14.2} {:<15.2} {:<22.2} {:.2}",
            r.size, r.ops, s.min, s.max, s.typical, s.avg, s.stdev, s.p99, s.p999
        ));
        after.push(format!("# {} bytes: verified: {}", r.size, r.verified));
        let sorted = sorted(&r.samples_us);
        let ps: Vec<String> = percentiles
            .iter()
            .filter_map(|&p| {
                Some(format!(
                    "{}={:.3}",
                    percentile_key(p),
                    percentile(&sorted, p)?
                ))
            })
            .collect();
        if !ps.is_empty() {
            after.push(format!(
                "# {} bytes: percentiles[usec]: {}",
                r.size,
                ps.join(" ")
            ));
        }
    }
    after
}

/// Bandwidth over time, one table per size that recorded it.
fn intervals(lines: &mut Vec<String>, results: &[SizeResult]) {
    for r in results.iter().filter(|r| !r.intervals.is_empty()) {
        lines.push(format!("# bandwidth over time, {} bytes:", r.size));
        lines.push(" #bytes     start[s]   end[s]     bytes            BW[Gb/sec]".into());
        for iv in &r.intervals {
            let secs = iv.end_s - iv.start_s;
            let gbps = if secs > 0.0 {
                iv.bytes as f64 * 8.0 / secs / 1e9
            } else {
                0.0
            };
            lines.push(format!(
                " {:<10} {:<10.3} {:<10.3} {:<16} {:.3}",
                r.size, iv.start_s, iv.end_s, iv.bytes, gbps
            ));
        }
    }
}

fn hex_list(v: &[u32]) -> String {
    v.iter()
        .map(|q| format!("{q:#06x}"))
        .collect::<Vec<_>>()
        .join(",")
}
