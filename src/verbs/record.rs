//! Turns native runner results into a perftest-style log and canonical store rows. The log is
//! written to a file and every stored row points at its line there, so native numbers keep the
//! same provenance (raw text, raw unit, source, line) as imported ones.

use super::options::{BenchParams, BenchTest, Stop};
use super::samples::{percentile, percentile_key, sorted, summarize};
use crate::ingest::ContentHash;
use crate::model::{CommandLine, Measurement, Role, Run, RunStatus};
use std::collections::BTreeMap;

/// Bytes completed in one slice of a timed run (bandwidth over time).
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub start_s: f64,
    pub end_s: f64,
    pub bytes: u64,
}

/// One message size of one test.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeResult {
    pub size: u64,
    /// Operations completed per QP (perftest's `#iterations`).
    pub ops: u64,
    /// Operations completed over all QPs.
    pub total_ops: u64,
    pub qps: u32,
    /// From the first post to the last completion.
    pub elapsed_s: f64,
    /// Best rate over any window of completions (bandwidth tests).
    pub peak_gbps: Option<f64>,
    /// Per-iteration latency in µs (latency tests), in perftest's convention: half the round
    /// trip for ping-pong tests, the full completion time otherwise.
    pub samples_us: Vec<f64>,
    pub intervals: Vec<Interval>,
    /// What the data check found, e.g. `65536 bytes checked at the server`.
    pub verified: String,
}

impl SizeResult {
    pub fn total_bytes(&self) -> f64 {
        self.size as f64 * self.total_ops as f64
    }

    pub fn bw_gbps(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.total_bytes() * 8.0 / self.elapsed_s / 1e9
        } else {
            0.0
        }
    }

    pub fn msg_rate_mpps(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.total_ops as f64 / self.elapsed_s / 1e6
        } else {
            0.0
        }
    }
}

/// What both sides used, for the header and the run's facts.
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    pub host: Option<String>,
    pub peer: String,
    pub device: String,
    pub port: u8,
    pub gid_index: u32,
    pub local_gid: String,
    pub remote_gid: String,
    pub link_layer: String,
    /// Path MTU in bytes.
    pub mtu: u32,
    pub local_qpns: Vec<u32>,
    pub remote_qpns: Vec<u32>,
    /// `device.*` facts of the local device, as an `ibv_devinfo -v` import gives them.
    pub device_facts: BTreeMap<String, String>,
    /// The command line as typed.
    pub argv: Vec<String>,
    /// When the test started (seconds since the epoch), which also makes each run unique.
    pub started_at: u64,
}

const RULE: &str =
    "---------------------------------------------------------------------------------------";

/// The log of one test and its rows: (lines, rows with their 0-based line index).
pub fn render_test(
    test: BenchTest,
    results: &[SizeResult],
    params: &BenchParams,
    info: &SessionInfo,
    percentiles: &[f64],
) -> (Vec<String>, Vec<(usize, Measurement)>) {
    let mut lines = vec![
        format!(
            "# linkperf bench {} (native verbs, protocol v{})",
            env!("CARGO_PKG_VERSION"),
            super::protocol::VERSION
        ),
        format!("# {}", test.title()),
        format!("# started: {} (unix time)", info.started_at),
        format!(
            "# Device: {}  Port: {}  GID index: {}  Link type: {}  MTU: {}",
            info.device, info.port, info.gid_index, info.link_layer, info.mtu
        ),
        format!(
            "# Connection type: RC  QPs: {}  TX depth: {}  Inline: {}  {}",
            params.qps,
            if test.is_bandwidth() {
                params.tx_depth
            } else {
                1
            },
            params.inline_size,
            match params.stop {
                Stop::Iterations(n) => format!("Iterations: {n}"),
                Stop::Duration(d) => format!("Duration: {d} s"),
            }
        ),
        format!(
            "# local  QPN {}  GID {}",
            hex_list(&info.local_qpns),
            info.local_gid
        ),
        format!(
            "# remote QPN {}  GID {}  peer {}",
            hex_list(&info.remote_qpns),
            info.remote_gid,
            info.peer
        ),
        RULE.to_string(),
    ];
    let mut rows = Vec::new();
    if test.is_bandwidth() {
        lines.push(
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
                .into(),
        );
        for r in results {
            let peak = r.peak_gbps.unwrap_or(r.bw_gbps());
            let text = format!(
                " {:<10} {:<14} {:<18.2} {:<20.2} {:.6}",
                r.size,
                r.ops,
                peak,
                r.bw_gbps(),
                r.msg_rate_mpps()
            );
            let m = Measurement {
                raw_text: text.clone(),
                raw_unit: "Gb/sec".into(),
                msg_size_bytes: Some(r.size),
                iterations: Some(r.ops),
                bw_peak_gbps: Some(round(peak, 2)),
                bw_avg_gbps: Some(round(r.bw_gbps(), 2)),
                msg_rate_mpps: Some(round(r.msg_rate_mpps(), 6)),
                extra: verified_extra(r),
                ..Measurement::default()
            };
            rows.push((lines.len(), m));
            lines.push(text);
        }
    } else {
        lines.push(
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]"
                .into(),
        );
        for r in results {
            let Some(s) = summarize(&r.samples_us) else {
                continue;
            };
            let text = format!(
                " {:<6} {:<14} {:<14.2} {:<12.2} {:<18.2} {:<14.2} {:<15.2} {:<22.2} {:.2}",
                r.size, r.ops, s.min, s.max, s.typical, s.avg, s.stdev, s.p99, s.p999
            );
            let mut extra = verified_extra(r);
            let sorted = sorted(&r.samples_us);
            for &p in percentiles {
                if let Some(v) = percentile(&sorted, p) {
                    extra.insert(percentile_key(p), format!("{v:.3}"));
                }
            }
            let m = Measurement {
                raw_text: text.clone(),
                raw_unit: "usec".into(),
                msg_size_bytes: Some(r.size),
                iterations: Some(r.ops),
                lat_min_us: Some(round(s.min, 2)),
                lat_max_us: Some(round(s.max, 2)),
                lat_typical_us: Some(round(s.typical, 2)),
                lat_avg_us: Some(round(s.avg, 2)),
                lat_stdev_us: Some(round(s.stdev, 2)),
                lat_p99_us: Some(round(s.p99, 2)),
                lat_p999_us: Some(round(s.p999, 2)),
                extra,
                samples_us: r.samples_us.clone(),
                ..Measurement::default()
            };
            rows.push((lines.len(), m));
            lines.push(text);
        }
    }
    lines.push(RULE.to_string());
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
            let text = format!(
                " {:<10} {:<10.3} {:<10.3} {:<16} {:.3}",
                r.size, iv.start_s, iv.end_s, iv.bytes, gbps
            );
            let m = Measurement {
                raw_text: text.clone(),
                raw_unit: "Gb/sec".into(),
                msg_size_bytes: Some(r.size),
                bw_avg_gbps: Some(round(gbps, 3)),
                interval_start_s: Some(round(iv.start_s, 3)),
                interval_end_s: Some(round(iv.end_s, 3)),
                transfer_bytes: Some(iv.bytes as f64),
                row_kind: Some("interval".into()),
                ..Measurement::default()
            };
            rows.push((lines.len(), m));
            lines.push(text);
        }
    }
    (lines, rows)
}

fn verified_extra(r: &SizeResult) -> BTreeMap<String, String> {
    BTreeMap::from([("verified".to_string(), r.verified.clone())])
}

fn hex_list(v: &[u32]) -> String {
    v.iter()
        .map(|q| format!("{q:#06x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Rounds to what the table prints, so the stored value equals the raw text's number.
fn round(x: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (x * f).round() / f
}

/// A stored run for one test whose log block starts at 1-based line `first_line` of `source`.
#[allow(clippy::too_many_arguments)]
pub fn build_run(
    test: BenchTest,
    params: &BenchParams,
    info: &SessionInfo,
    source: &str,
    first_line: u32,
    lines: &[String],
    rows: Vec<(usize, Measurement)>,
) -> Run {
    let mut hash = ContentHash::new();
    for l in lines {
        hash.update(l.as_bytes());
        hash.update(b"\n");
    }
    let mut facts: BTreeMap<String, String> = info
        .device_facts
        .iter()
        .map(|(k, v)| (format!("device.{k}"), v.clone()))
        .collect();
    let mut put = |k: &str, v: String| {
        facts.insert(k.to_string(), v);
    };
    put("port", info.port.to_string());
    put("gid_index", info.gid_index.to_string());
    put("local_gid", info.local_gid.clone());
    put("remote_gid", info.remote_gid.clone());
    put("peer", info.peer.clone());
    put("tx_depth", params.tx_depth.to_string());
    put("inline_size", params.inline_size.to_string());
    put("protocol_version", super::protocol::VERSION.to_string());
    if test.is_atomic() {
        let kind = if test == BenchTest::FetchAddLat {
            "FETCH_AND_ADD"
        } else {
            "CMP_AND_SWAP"
        };
        put("atomic_type", kind.into());
    }
    match params.stop {
        Stop::Iterations(n) => put("iterations", n.to_string()),
        Stop::Duration(d) => put("duration_s", d.to_string()),
    }
    let raw = info.argv.join(" ");
    let mut flags = BTreeMap::new();
    flags.insert("test".to_string(), test.name().to_string());
    Run {
        run_id: hash.hex(),
        source: source.to_string(),
        line: first_line,
        tool: "linkperf-verbs".into(),
        test: test.perftest_name().into(),
        role: Role::Client,
        status: RunStatus::Ok,
        host: info.host.clone(),
        command: Some(CommandLine {
            raw,
            wrappers: Vec::new(),
            program: "linkperf".into(),
            flags,
            peer: Some(info.peer.clone()),
            pipe: None,
        }),
        device: Some(info.device.clone()),
        mtu: Some(info.mtu),
        link_layer: Some(info.link_layer.clone()),
        connection_type: Some("RC".into()),
        qps: Some(params.qps),
        facts,
        notes: Vec::new(),
        error: None,
        labels: BTreeMap::new(),
        measurements: rows
            .into_iter()
            .map(|(i, mut m)| {
                m.line = first_line + i as u32;
                m
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(test: BenchTest) -> BenchParams {
        BenchParams {
            tests: vec![test],
            sizes: vec![65536],
            stop: Stop::Iterations(1000),
            tx_depth: 128,
            qps: 1,
            inline_size: 0,
            mtu: None,
            interval: None,
        }
    }

    fn info() -> SessionInfo {
        SessionInfo {
            host: Some("lab".into()),
            peer: "10.0.2.15:18520".into(),
            device: "rxe0".into(),
            port: 1,
            gid_index: 1,
            local_gid: "::ffff:10.0.2.15".into(),
            remote_gid: "::ffff:10.0.2.15".into(),
            link_layer: "Ethernet".into(),
            mtu: 1024,
            local_qpns: vec![17],
            remote_qpns: vec![18],
            device_facts: BTreeMap::from([("fw_ver".into(), "0.0.0".into())]),
            argv: vec!["linkperf".into(), "bench".into()],
            started_at: 1_700_000_000,
        }
    }

    #[test]
    fn bandwidth_rows_carry_their_line_and_units() {
        let r = SizeResult {
            size: 65536,
            ops: 1000,
            total_ops: 1000,
            qps: 1,
            elapsed_s: 0.01,
            peak_gbps: Some(60.0),
            samples_us: vec![],
            intervals: vec![],
            verified: "65536 bytes checked at the server".into(),
        };
        // 65536 B × 1000 in 10 ms = 52.4288 Gbit/s, 0.1 Mpps.
        assert!((r.bw_gbps() - 52.4288).abs() < 1e-9);
        let p = params(BenchTest::WriteBw);
        let (lines, rows) = render_test(BenchTest::WriteBw, &[r], &p, &info(), &[]);
        let run = build_run(
            BenchTest::WriteBw,
            &p,
            &info(),
            "bench.log",
            5,
            &lines,
            rows,
        );
        assert_eq!(run.tool, "linkperf-verbs");
        assert_eq!(run.test, "ib_write_bw");
        let m = &run.measurements[0];
        assert_eq!(m.bw_avg_gbps, Some(52.43));
        assert_eq!(m.msg_rate_mpps, Some(0.1));
        assert_eq!(m.raw_unit, "Gb/sec");
        assert_eq!(lines[(m.line - 5) as usize], m.raw_text);
        assert!(m.raw_text.contains("52.43"));
        assert_eq!(run.facts["device.fw_ver"], "0.0.0");
        assert_eq!(run.facts["tx_depth"], "128");
    }

    #[test]
    fn latency_rows_keep_samples_and_percentiles() {
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let r = SizeResult {
            size: 2,
            ops: 100,
            total_ops: 100,
            qps: 1,
            elapsed_s: 0.001,
            peak_gbps: None,
            samples_us: samples.clone(),
            intervals: vec![],
            verified: "ok".into(),
        };
        let p = params(BenchTest::SendLat);
        let (lines, rows) = render_test(BenchTest::SendLat, &[r], &p, &info(), &[50.0, 99.99]);
        let run = build_run(
            BenchTest::SendLat,
            &p,
            &info(),
            "bench.log",
            1,
            &lines,
            rows,
        );
        let m = &run.measurements[0];
        assert_eq!(m.lat_min_us, Some(1.0));
        assert_eq!(m.lat_typical_us, Some(50.0));
        assert_eq!(m.lat_p99_us, Some(99.0));
        assert_eq!(m.extra["p99.99"], "100.000");
        assert_eq!(m.samples_us, samples);
        assert_eq!(m.raw_unit, "usec");
    }

    #[test]
    fn intervals_become_time_series_rows() {
        let r = SizeResult {
            size: 4096,
            ops: 10,
            total_ops: 10,
            qps: 1,
            elapsed_s: 1.0,
            peak_gbps: None,
            samples_us: vec![],
            intervals: vec![Interval {
                start_s: 0.0,
                end_s: 0.5,
                bytes: 62_500_000,
            }],
            verified: "ok".into(),
        };
        let p = params(BenchTest::WriteBw);
        let (_, rows) = render_test(BenchTest::WriteBw, &[r], &p, &info(), &[]);
        let iv = &rows[1].1;
        assert_eq!(iv.row_kind.as_deref(), Some("interval"));
        assert_eq!(iv.bw_avg_gbps, Some(1.0));
        assert_eq!(iv.interval_end_s, Some(0.5));
    }
}
