//! `linkperf gate` end to end over seed 000: the same runs pass; MTU 1024 against MTU 4096
//! fails with the MTU change reported; baselines from an export file and from raw logs; CI
//! outputs; bad input.

mod common;
use common::{linkperf_env as linkperf, text as out, SEED_000};

use std::path::PathBuf;

fn store_with_seed() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let o = linkperf(
        &store,
        &["import", SEED_000, "--label", "platform=kunpeng920"],
        &[],
    );
    assert!(o.status.success());
    (tmp, store)
}

#[test]
fn same_runs_pass() {
    let (_tmp, store) = store_with_seed();
    let o = linkperf(
        &store,
        &[
            "gate",
            "--baseline-where",
            "mtu=4096",
            "--current-where",
            "mtu=4096",
            "--where",
            "tool=perftest",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let text = out(&o);
    assert!(
        text.contains("gate passed: 0 regressed, 0 missing, 0 improved, 138 unchanged"),
        "{text}"
    );
}

#[test]
fn mtu_1024_against_4096_fails_with_the_mtu_change() {
    let (tmp, store) = store_with_seed();
    let md = tmp.path().join("gate.md");
    let junit = tmp.path().join("gate.xml");
    let json = tmp.path().join("gate.json");
    let summary = tmp.path().join("summary.md");
    let o = linkperf(
        &store,
        &[
            "gate",
            "--baseline-where",
            "mtu=4096",
            "--current-where",
            "mtu=1024",
            "--where",
            "tool=perftest",
            "--markdown",
            md.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
        &[
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("GITHUB_ACTIONS", "true"),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = out(&o);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["failed"], true);
    let points = v["points"].as_array().unwrap();
    for test in ["ib_write_bw", "ib_read_bw", "ib_send_bw"] {
        let big = points
            .iter()
            .find(|p| {
                p["test"] == test && p["role"] == "client" && p["msg_size_bytes"] == 8_388_608
            })
            .unwrap_or_else(|| panic!("{test} 8 MiB point"));
        assert_eq!(big["outcome"], "regressed", "{test}: {big}");
        assert_eq!(
            big["config_changes"],
            serde_json::json!(["mtu 4096 → 1024"])
        );
        assert_eq!(big["method"], "threshold only (single runs)");
    }
    let write = points
        .iter()
        .find(|p| p["test"] == "ib_write_bw" && p["msg_size_bytes"] == 8_388_608)
        .unwrap();
    assert_eq!(
        (
            write["baseline_median"].as_f64(),
            write["current_median"].as_f64()
        ),
        (Some(97.56), Some(91.42))
    );

    let md = std::fs::read_to_string(&md).unwrap();
    let line = md
        .lines()
        .find(|l| l.contains("| ib_write_bw | client | 8388608 |"))
        .unwrap();
    assert!(
        line.starts_with("| regressed") && line.contains("97.56") && line.contains("91.42"),
        "{line}"
    );
    assert!(md.contains("mtu 4096 → 1024"));
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(
        junit.contains("name=\"ib_write_bw client 8388608 B bw_avg_gbps\">"),
        "{junit}"
    );
    assert!(
        junit.contains("regressed: baseline 97.56 current 91.42"),
        "{junit}"
    );
    assert!(std::fs::read_to_string(&summary)
        .unwrap()
        .contains("gate FAILED"));
    assert!(text.contains("::error title=linkperf gate: ib_write_bw client 8388608 B bw_avg_gbps::regressed baseline 97.56 current 91.42"), "{text}");
}

#[test]
fn baselines_from_an_export_file_and_from_raw_logs() {
    let (tmp, store) = store_with_seed();
    let export = tmp.path().join("baseline.jsonl");
    let o = linkperf(
        &store,
        &[
            "export",
            "--where",
            "mtu=4096,tool=perftest",
            "-o",
            export.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = linkperf(
        &store,
        &[
            "gate",
            "--baseline",
            export.to_str().unwrap(),
            "--current-where",
            "mtu=4096",
            "--where",
            "tool=perftest",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let pq = tmp.path().join("baseline.parquet");
    linkperf(
        &store,
        &[
            "export",
            "--format",
            "parquet",
            "--where",
            "mtu=4096,tool=perftest",
            "-o",
            pq.to_str().unwrap(),
        ],
        &[],
    );
    let o = linkperf(
        &store,
        &[
            "gate",
            "--baseline",
            pq.to_str().unwrap(),
            "--current-where",
            "mtu=1024",
            "--where",
            "tool=perftest",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    // Raw logs parsed on the fly; the label is missing there, so pair without the platform.
    let o = linkperf(
        &store,
        &[
            "gate",
            "--baseline",
            SEED_000,
            "--baseline-where",
            "mtu=4096",
            "--current-where",
            "mtu=4096",
            "--where",
            "tool=perftest",
            "--pair-by",
            "test,role,connection_type,qps,msg_size",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
}

#[test]
fn bad_input_exits_2() {
    let (tmp, store) = store_with_seed();
    let o = linkperf(&store, &["gate", "--baseline", "no/such/baseline"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains("no/such/baseline"));
    let o = linkperf(&store, &["gate", "--baseline-where", "mtu=9000"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("baseline selection is empty"),
        "{}",
        out(&o)
    );
    let corrupt = tmp.path().join("corrupt.jsonl");
    std::fs::write(&corrupt, "{\"run_id\": \"a\", \"test\": \n").unwrap();
    let o = linkperf(
        &store,
        &["gate", "--baseline", corrupt.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(out(&o).contains("corrupt.jsonl:1"), "{}", out(&o));
    let o = linkperf(&store, &["gate", "--pair-by", "colour"], &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        out(&o).contains("possible values: test, role"),
        "{}",
        out(&o)
    );
}

#[test]
fn history_lists_series_in_order() {
    let (_tmp, store) = store_with_seed();
    let o = linkperf(
        &store,
        &[
            "history",
            "--where",
            "test=ib_write_bw,role=client",
            "--order-by",
            "mtu",
            "--all",
            "--format",
            "json",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", out(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let big = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"]["msg_size_bytes"] == 8_388_608)
        .unwrap();
    let values: Vec<f64> = big["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[1].as_f64().unwrap())
        .collect();
    assert_eq!(values, vec![91.42, 97.56], "MTU 1024 then 4096");
    let o = linkperf(&store, &["history", "--metric", "speed"], &[]);
    assert_eq!(o.status.code(), Some(2));
}
