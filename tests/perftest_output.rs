//! perftest `--output=bandwidth|message_rate|latency`: bare numbers, recorded in the Soft-RoCE
//! lab (fixtures/perftest/rxe-lab/GENERATED-BY.sh). Sizes come from the command line.

use linkperf::ingest::{parse_bytes, FileResult};
use linkperf::model::{Role, Run, RunStatus};
use std::path::Path;

fn run(name: &str) -> Run {
    let rel = format!("fixtures/perftest/rxe-lab/{name}");
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(&rel)).unwrap();
    let FileResult {
        mut runs, problems, ..
    } = parse_bytes(&rel, &bytes);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(runs.len(), 1);
    let run = runs.remove(0);
    assert_eq!(run.status, RunStatus::Ok);
    assert_eq!(run.facts["output"], run.facts["output"].trim());
    run
}

/// perftest `MB/sec` is MiB/s.
fn mib_per_s(v: f64) -> f64 {
    v * 1048576.0 * 8.0 / 1e9
}

#[test]
fn bandwidth_in_mib_per_second_and_in_gbits() {
    let client = run("write_bw-output-bandwidth-client.txt");
    assert_eq!(
        (client.test.as_str(), client.role),
        ("ib_write_bw", Role::Client)
    );
    let m = &client.measurements[0];
    assert_eq!(
        (m.line, m.raw_text.as_str(), &*m.raw_unit),
        (2, "29.031270", "MB/sec")
    );
    assert_eq!(m.msg_size_bytes, Some(65536));
    assert_eq!(m.bw_avg_gbps, Some(mib_per_s(29.031270)));
    let server = run("write_bw-output-bandwidth-server.txt");
    assert_eq!(server.role, Role::Server);
    assert_eq!(
        server.measurements[0].bw_avg_gbps,
        Some(mib_per_s(29.031270))
    );

    let gbits = run("write_bw-output-bandwidth-gbits-client.txt");
    let m = &gbits.measurements[0];
    assert_eq!((&*m.raw_unit, m.bw_avg_gbps), ("Gb/sec", Some(0.128089)));
}

#[test]
fn message_rate_and_latency() {
    let rate = run("send_bw-output-message_rate-client.txt");
    let m = &rate.measurements[0];
    assert_eq!(rate.facts["output"], "message_rate");
    assert_eq!(
        (m.msg_size_bytes, m.msg_rate_mpps, m.bw_avg_gbps),
        (Some(4096), Some(0.004412), None)
    );
    assert_eq!(
        run("send_bw-output-message_rate-server.txt").measurements[0].msg_rate_mpps,
        Some(0.006362)
    );

    let lat = run("write_lat-output-latency-client.txt");
    assert_eq!(lat.test, "ib_write_lat");
    let m = &lat.measurements[0];
    assert_eq!(
        (m.msg_size_bytes, m.lat_avg_us, &*m.raw_unit),
        (Some(64), Some(4407.880955), "usec")
    );
    assert_eq!(
        run("write_lat-output-latency-server.txt").measurements[0].lat_avg_us,
        Some(4403.919665)
    );
}

#[test]
fn a_sweep_prints_one_value_per_size_and_its_server_only_the_last() {
    let client = run("read_bw-sweep-output-bandwidth-client.txt");
    // The inline warning of rxe is kept as a note, not a value.
    assert!(
        client.notes[0].starts_with("line 3: Device not recognized"),
        "{:?}",
        client.notes
    );
    let sizes: Vec<u64> = client
        .measurements
        .iter()
        .map(|m| m.msg_size_bytes.unwrap())
        .collect();
    assert_eq!(sizes, (1..=23).map(|k| 1u64 << k).collect::<Vec<_>>());
    let first = &client.measurements[0];
    assert_eq!(
        (first.line, first.bw_avg_gbps),
        (4, Some(mib_per_s(0.004780)))
    );
    let last = client.measurements.last().unwrap();
    assert_eq!(
        (last.line, last.bw_avg_gbps),
        (26, Some(mib_per_s(24.573534)))
    );

    let server = run("read_bw-sweep-output-bandwidth-server.txt");
    assert_eq!(server.measurements.len(), 1);
    let m = &server.measurements[0];
    assert_eq!(
        (m.msg_size_bytes, m.bw_avg_gbps),
        (Some(8388608), Some(mib_per_s(24.573534)))
    );
}
