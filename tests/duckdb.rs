//! The store is readable by an engine users already have: the real DuckDB (Python package
//! `duckdb`) runs the README's SQL over the store and must get exactly the rows and values
//! `linkperf export` gives. `.ci/run` installs DuckDB; elsewhere the test says it was skipped.

mod common;
use common::*;
use std::process::Command;

#[test]
fn duckdb_reads_the_store_as_linkperf_exports_it() {
    let has_duckdb = Command::new("python3")
        .args(["-c", "import duckdb"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_duckdb {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install the Python package duckdb (.ci/run does)"
        );
        eprintln!("skipped: python3 has no duckdb module (pip install duckdb)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(
        &store,
        &[
            "import",
            SEED_000,
            "--label",
            "platform=kunpeng920",
            "--label",
            "build=1",
        ],
    ));
    ok(&linkperf(
        &store,
        &[
            "import",
            SEED_003,
            "--label",
            "platform=s5000c-b850",
            "--label",
            "build=2",
        ],
    ));
    ok(&linkperf(
        &store,
        &["import", "fixtures/iperf3", "fixtures/qperf/loopback"],
    ));
    // Two batches merged and one left alone: both shapes must read the same.
    ok(&linkperf(&store, &["store", "compact"]));
    ok(&linkperf(
        &store,
        &["import", "fixtures/perftest/rxe-lab", "--label", "build=3"],
    ));
    let export = tmp.path().join("export.jsonl");
    ok(&linkperf(
        &store,
        &[
            "export",
            "--format",
            "jsonl",
            "-o",
            export.to_str().unwrap(),
        ],
    ));
    let out = Command::new("python3")
        .arg(root().join("tests/duckdb/check_store.py"))
        .arg(&store)
        .arg(&export)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("values equal to linkperf export"), "{said}");
    eprintln!("{said}");
}
