//! The two ways to the same points: compare and gate compute on columns read straight from the
//! store (`aggregate_rows`, `Selection`), the report on `Point` values built from runs in memory
//! (`points::points`, `aggregate`). Over every real fixture, for each dimension and metric kind,
//! both must give the same aggregates, and a store must give the same as the runs it was fed.

use linkperf::config::Config;
use linkperf::gate::evaluate;
use linkperf::model::Run;
use linkperf::normalize::{aggregate, platform, points};
use linkperf::selection::{self, Selection};
use linkperf::store::Store;
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every run of the real fixtures (the hand-made invalid inputs and the old store left out), each
/// labelled with a `side` so gate has two selections to pair.
fn fixture_runs() -> Vec<Run> {
    let files = linkperf::pipeline::collect_files(&[root().join("fixtures")]).unwrap();
    let mut runs = Vec::new();
    for f in files {
        let rel = f.strip_prefix(root()).unwrap().display().to_string();
        if rel.starts_with("fixtures/invalid") || rel.starts_with("fixtures/store-v1") {
            continue;
        }
        let bytes = std::fs::read(&f).unwrap();
        for mut r in linkperf::ingest::parse_bytes(&rel, &bytes).runs {
            r.labels
                .insert("side".into(), ["a", "b"][runs.len() % 2].to_string());
            runs.push(r);
        }
    }
    assert!(runs.len() > 200, "only {} fixture runs", runs.len());
    runs
}

fn resolved(runs: Vec<Run>) -> Vec<(Run, platform::Platform)> {
    let config = Config::default();
    runs.into_iter()
        .map(|r| {
            let p = platform::resolve(&r, &config);
            (r, p)
        })
        .collect()
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap()
}

const METRICS: &[Option<&str>] = &[
    None,
    Some("bw_avg_gbps"),
    Some("lat_avg_us"),
    Some("lat_typical_us"),
    Some("msg_rate_mpps"),
    Some("retransmits"),
    Some("jitter_ms"),
];

#[test]
fn columns_and_points_aggregate_alike_over_every_fixture() {
    let runs = resolved(fixture_runs());
    let selection = Selection::from_runs(runs.clone()).unwrap();
    for by in ["platform", "mtu", "tool", "role", "host", "label:side"] {
        for metric in METRICS {
            let from_points =
                aggregate::aggregate(&points::points(&runs, by, *metric).unwrap()).unwrap();
            let from_columns =
                aggregate::aggregate_rows(&selection.runs, &selection.rows, by, *metric).unwrap();
            assert!(
                !from_points.is_empty() || metric.is_some(),
                "--by {by}: no aggregates"
            );
            assert_eq!(
                json(&from_points),
                json(&from_columns),
                "--by {by} --metric {metric:?}"
            );
        }
    }
}

#[test]
fn a_store_gives_the_points_of_the_runs_it_was_fed() {
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    Store::open(&store_dir, true)
        .unwrap()
        .add(fixture_runs())
        .unwrap();
    let config = Config::default();
    for metrics in [&[][..], &["bw_avg_gbps", "lat_avg_us"][..]] {
        // Read in columns (only the columns the metrics need), and as whole runs.
        let side = |which: &str| {
            let filters = vec![format!("side={which}")];
            let columns = selection::load_rows(&store_dir, &config, &filters, metrics).unwrap();
            let whole = selection::load(&store_dir, &config, &filters).unwrap();
            (columns, Selection::from_runs(whole).unwrap())
        };
        let ((a_cols, a_whole), (b_cols, b_whole)) = (side("a"), side("b"));
        assert!(a_cols.runs.len() > 80 && b_cols.runs.len() > 80);
        assert_eq!(a_cols.runs.len(), a_whole.runs.len());
        for by in ["platform", "mtu", "label:side"] {
            let metric = metrics.first().copied();
            let cols = aggregate::aggregate_rows(&a_cols.runs, &a_cols.rows, by, metric).unwrap();
            let whole =
                aggregate::aggregate_rows(&a_whole.runs, &a_whole.rows, by, metric).unwrap();
            assert!(!cols.is_empty());
            assert_eq!(json(&cols), json(&whole), "--by {by}");
        }
        let metrics: Vec<String> = metrics.iter().map(|m| m.to_string()).collect();
        let pair_by = ["test", "role", "connection_type", "qps", "msg_size", "mtu"];
        let gate = config.gate.clone();
        let from_columns = evaluate(&a_cols, &b_cols, &metrics, &pair_by, &gate).unwrap();
        let from_runs = evaluate(&a_whole, &b_whole, &metrics, &pair_by, &gate).unwrap();
        assert!(from_columns.len() > 20);
        assert_eq!(json(&from_columns), json(&from_runs));
    }
}
