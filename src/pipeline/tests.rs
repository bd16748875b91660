//! A bench session's stored runs are its log read back: rows, units, samples, intervals; and the
//! directory a log's counters file is looked for in.

use super::*;
use crate::benchlog::write::render_test;
use crate::verbs::options::{BenchParams, BenchTest, Stop};
use crate::verbs::record::{Interval, SizeResult};

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
        device_facts: BTreeMap::from([
            ("fw_ver".into(), "0.0.0".into()),
            ("port1.gid1".into(), "::ffff:10.0.2.15, RoCE v2".into()),
        ]),
        argv: vec!["linkperf".into(), "bench".into()],
        started_at: 1_700_000_000,
        server_counters: None,
    }
}

fn result(size: u64, ops: u64, elapsed_s: f64) -> SizeResult {
    SizeResult {
        size,
        ops,
        total_ops: ops,
        qps: 1,
        elapsed_s,
        peak_gbps: None,
        samples_us: vec![],
        intervals: vec![],
        verified: "checked".into(),
    }
}

#[test]
fn bandwidth_rows_carry_their_line_and_units() {
    let r = SizeResult {
        peak_gbps: Some(60.0),
        verified: "65536 bytes checked at the server".into(),
        ..result(65536, 1000, 0.01)
    };
    // 65536 B × 1000 in 10 ms = 52.4288 Gbit/s, 0.1 Mpps.
    assert!((r.bw_gbps() - 52.4288).abs() < 1e-9);
    let p = params(BenchTest::WriteBw);
    let rendered = render_test(BenchTest::WriteBw, &[r], &p, &info(), &[]);
    let run = bench_run(&info(), "bench.log", 5, &rendered).unwrap();
    assert_eq!(run.tool, "linkperf-verbs");
    assert_eq!(run.test, "ib_write_bw");
    assert_eq!(run.line, 5);
    assert_eq!(run.device.as_deref(), Some("rxe0"));
    assert_eq!(run.mtu, Some(1024));
    assert_eq!(run.link_layer.as_deref(), Some("Ethernet"));
    assert_eq!(run.qps, Some(1));
    let m = &run.measurements[0];
    assert_eq!(m.bw_avg_gbps, Some(52.43));
    assert_eq!(m.bw_peak_gbps, Some(60.0));
    assert_eq!(m.msg_rate_mpps, Some(0.1));
    assert_eq!(m.raw_unit, "Gb/sec");
    assert_eq!(rendered.lines[(m.line - 5) as usize], m.raw_text);
    assert_eq!(m.extra["verified"], "65536 bytes checked at the server");
    assert_eq!(run.facts["device.fw_ver"], "0.0.0");
    assert_eq!(run.facts["device.port1.gid1"], "::ffff:10.0.2.15, RoCE v2");
    assert_eq!(run.facts["tx_depth"], "128");
    assert_eq!(run.facts["peer"], "10.0.2.15:18520");
    assert_eq!(run.facts["remote_qpn"], "0x0012");
    assert!(rendered.terminal_lines().all(|l| !l.contains("fw_ver")));
}

#[test]
fn latency_rows_keep_samples_and_percentiles() {
    let samples: Vec<f64> = (1..=100).map(f64::from).collect();
    let r = SizeResult {
        samples_us: samples.clone(),
        ..result(2, 100, 0.001)
    };
    let p = params(BenchTest::CmpSwapLat);
    let rendered = render_test(BenchTest::CmpSwapLat, &[r], &p, &info(), &[50.0, 99.99]);
    let run = bench_run(&info(), "bench.log", 1, &rendered).unwrap();
    assert_eq!(run.test, "ib_atomic_lat");
    assert_eq!(run.facts["atomic_type"], "CMP_AND_SWAP");
    let m = &run.measurements[0];
    assert_eq!(m.lat_min_us, Some(1.0));
    assert_eq!(m.lat_typical_us, Some(50.0));
    assert_eq!(m.lat_p99_us, Some(99.0));
    assert_eq!(m.extra["p99.99"], "100.000");
    assert_eq!(m.extra["p50"], "50.000");
    assert_eq!(m.samples_us, samples);
    assert_eq!(m.raw_unit, "usec");
}

#[test]
fn intervals_become_time_series_rows() {
    let r = SizeResult {
        intervals: vec![Interval {
            start_s: 0.0,
            end_s: 0.5,
            bytes: 62_500_000,
        }],
        ..result(4096, 10, 1.0)
    };
    let p = params(BenchTest::WriteBw);
    let rendered = render_test(BenchTest::WriteBw, &[r], &p, &info(), &[]);
    let run = bench_run(&info(), "bench.log", 1, &rendered).unwrap();
    let iv = &run.measurements[1];
    assert_eq!(iv.row_kind.as_deref(), Some("interval"));
    assert_eq!(iv.bw_avg_gbps, Some(1.0));
    assert_eq!(iv.interval_end_s, Some(0.5));
    assert_eq!(iv.transfer_bytes, Some(62_500_000.0));
}

#[test]
fn an_imported_log_is_the_stored_run() {
    // Two tests in one log file, as `linkperf bench` writes it.
    let p = params(BenchTest::WriteBw);
    let a = render_test(
        BenchTest::WriteBw,
        &[result(65536, 10, 0.1)],
        &p,
        &info(),
        &[],
    );
    let lat = SizeResult {
        samples_us: vec![1.0, 2.0],
        ..result(2, 2, 0.1)
    };
    let b = render_test(BenchTest::SendLat, &[lat], &p, &info(), &[]);
    let stored = [
        bench_run(&info(), "bench.log", 1, &a).unwrap(),
        bench_run(&info(), "bench.log", a.lines.len() as u32 + 1, &b).unwrap(),
    ];
    let file = [a.lines.clone(), b.lines.clone()].concat().join("\n") + "\n";
    let imported = crate::ingest::parse_bytes("bench.log", file.as_bytes());
    assert!(imported.problems.is_empty(), "{:?}", imported.problems);
    assert_eq!(imported.runs.len(), 2);
    for (s, i) in stored.iter().zip(&imported.runs) {
        assert_eq!(s.run_id, i.run_id);
        assert_eq!((s.line, &s.test, &s.facts), (i.line, &i.test, &i.facts));
        let strip = |m: &crate::model::Measurement| crate::model::Measurement {
            samples_us: vec![],
            ..m.clone()
        };
        let sm: Vec<_> = s.measurements.iter().map(strip).collect();
        assert_eq!(sm, i.measurements);
    }
}

/// `directory_of` names the directory `Path::parent` names for a file's path, as paths compare
/// (and hash): component by component.
#[test]
fn directory_of_a_file_is_its_parent() {
    for path in [
        "fixtures/iperf3/x.txt",
        "/x.txt",
        "/var/tmp/corp/btcp/000001-iperf2-udp-client.txt",
        "a//b.txt",
        "./b.txt",
        "a/./b.txt",
        "../a/b.txt",
        "dir with space/é.txt",
    ] {
        let parent = Path::new(path).parent();
        assert_eq!(super::directory_of(path), parent, "{path}");
    }
    // No separator: `Path::parent` gives the empty path, which no directory listing lists.
    assert_eq!(Path::new("x.txt").parent(), Some(Path::new("")));
    assert_eq!(super::directory_of("x.txt"), None);
}
