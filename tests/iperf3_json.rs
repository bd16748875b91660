//! iperf3's JSON forms beyond one `-J` document: `--json-stream` (recorded with iperf3 3.18 on
//! loopback, fixtures/GENERATED-BY-iperf3-3.18.sh), the document printed twice as iperf3 3.16 and
//! 3.17 do, and `nan` values of old builds (both built from recordings, under fixtures/invalid/).

use linkperf::ingest::{parse_bytes, FileResult};
use linkperf::model::{Measurement, Role, Run, RunStatus};
use std::path::Path;

fn parse(rel: &str) -> FileResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    parse_bytes(rel, &bytes)
}

fn only_run(r: &FileResult) -> &Run {
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    assert_eq!(r.runs.len(), 1);
    &r.runs[0]
}

fn rows<'a>(run: &'a Run, stream: &str, kind: &str) -> Vec<&'a Measurement> {
    run.measurements
        .iter()
        .filter(|m| m.stream.as_deref() == Some(stream) && m.row_kind.as_deref() == Some(kind))
        .collect()
}

#[test]
fn json_stream_tcp_client_rows_stand_on_their_own_lines() {
    let r = parse("fixtures/iperf3/iperf3.18-json-stream-client.txt");
    let run = only_run(&r);
    assert_eq!((run.test.as_str(), run.role), ("iperf3_tcp", Role::Client));
    assert_eq!(run.status, RunStatus::Ok);
    assert_eq!(run.facts["version"], "iperf 3.18");
    let intervals = rows(run, "SUM", "interval");
    assert_eq!(intervals.len(), 2);
    assert_eq!(intervals[0].line, 3);
    assert_eq!(intervals[0].bw_avg_gbps, Some(23743851849.476234 / 1e9));
    assert_eq!(intervals[0].transfer_bytes, Some(2969305088.0));
    assert_eq!(intervals[1].line, 4);
    assert_eq!(intervals[1].bw_avg_gbps, Some(25646513745.878315 / 1e9));
    let sent = rows(run, "SUM", "sender");
    let received = rows(run, "SUM", "receiver");
    assert_eq!(sent[0].line, 5);
    assert_eq!(sent[0].bw_avg_gbps, Some(24694923110.840267 / 1e9));
    assert_eq!(received[0].bw_avg_gbps, Some(24694540411.86216 / 1e9));
    assert_eq!(received[0].cpu_local_pct, Some(99.13236828788108));
}

#[test]
fn json_stream_udp_both_sides() {
    let client = parse("fixtures/iperf3/iperf3.18-json-stream-udp-client.txt");
    let run = only_run(&client);
    assert_eq!((run.test.as_str(), run.role), ("iperf3_udp", Role::Client));
    let intervals = rows(run, "SUM", "interval");
    assert_eq!(intervals.len(), 2);
    assert_eq!(intervals[0].total, Some(191));
    assert_eq!(intervals[0].bw_avg_gbps, Some(50013341.442828245 / 1e9));
    let received = rows(run, "SUM", "receiver");
    assert_eq!(received[0].jitter_ms, Some(0.003929382912164508));
    assert_eq!((received[0].lost, received[0].total), (Some(0), Some(382)));
    assert_eq!(received[0].loss_pct, Some(0.0));

    let server = parse("fixtures/iperf3/iperf3.18-json-stream-udp-server.txt");
    let run = only_run(&server);
    assert_eq!(run.role, Role::Server);
    let intervals = rows(run, "SUM", "interval");
    assert_eq!(intervals[0].jitter_ms, Some(0.004591021500649983));
    assert_eq!(intervals[1].bw_avg_gbps, Some(50074661.53120934 / 1e9));
    assert_eq!(intervals[1].line, 4);
}

#[test]
fn json_stream_error_event_is_a_failed_run() {
    let r = parse("fixtures/iperf3/iperf3.18-json-stream-connection-refused.txt");
    let run = only_run(&r);
    assert_eq!(run.status, RunStatus::Failed);
    assert!(run.measurements.is_empty());
    assert!(
        run.error
            .as_deref()
            .unwrap()
            .starts_with("unable to connect to server"),
        "{:?}",
        run.error
    );
}

#[test]
fn a_document_printed_twice_is_one_run_the_same_as_printed_once() {
    let once = parse("fixtures/iperf3/iperf3.18-json-client.txt");
    let twice = parse("fixtures/invalid/iperf3-json-printed-twice.txt");
    let (once, twice) = (only_run(&once), only_run(&twice));
    assert_eq!(twice.run_id, once.run_id);
    assert_eq!(twice.measurements, once.measurements);
    let lines = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/iperf3/iperf3.18-json-client.txt"),
    )
    .unwrap()
    .lines()
    .count();
    assert_eq!(
        twice.notes.last().unwrap(),
        &format!(
            "line {}: the same JSON document again (iperf3 3.16/3.17 print -J output twice); read once",
            lines + 1
        )
    );
}

#[test]
fn nan_values_read_as_missing_with_a_note() {
    let clean = parse("fixtures/iperf3/iperf3-udp-json-client.txt");
    let nan = parse("fixtures/invalid/iperf3-json-udp-nan.txt");
    let (clean, nan) = (only_run(&clean), only_run(&nan));
    assert_eq!(nan.measurements.len(), clean.measurements.len());
    // The rows are the same but for the two loss percentages that were `nan`.
    let differ: Vec<(Option<String>, Option<f64>, Option<f64>)> = clean
        .measurements
        .iter()
        .zip(&nan.measurements)
        .filter(|(c, n)| c != n)
        .map(|(c, n)| {
            // The JSON rows' raw text is the object as read: the `nan` shows as null.
            assert!(
                n.raw_text.contains("\"lost_percent\":null"),
                "{}",
                n.raw_text
            );
            let mut c2 = c.clone();
            c2.loss_pct = n.loss_pct;
            c2.raw_text = n.raw_text.clone();
            assert_eq!(&c2, n, "only the loss percentage differs");
            (c.stream.clone(), c.loss_pct, n.loss_pct)
        })
        .collect();
    assert_eq!(
        differ,
        vec![
            (Some("5".into()), Some(0.0), None),
            (Some("SUM".into()), Some(0.0), None)
        ]
    );
    assert_eq!(
        nan.notes,
        vec![
            "line 74: nan is not JSON; read as a missing value".to_string(),
            "line 88: nan is not JSON; read as a missing value".to_string(),
        ]
    );
}
