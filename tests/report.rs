//! `linkperf report` over the seeds: files, charts with axis labels, the comparison table,
//! escaping of strings from logs, determinism, and bad input. The real-browser check runs in
//! `.ci/run` (tests/browser/check_report.sh).

mod common;
use common::{linkperf, ok, root};

use std::path::{Path, PathBuf};

fn store(labels: (&str, &str)) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/seeds/000_8f7f2e13e9bf4848.txt",
            "--label",
            &format!("platform={}", labels.0),
        ],
    ));
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/seeds/003_7da62a485175b0b8.txt",
            "--label",
            &format!("platform={}", labels.1),
        ],
    ));
    (tmp, store)
}

#[test]
fn report_has_charts_tables_and_provenance() {
    let (tmp, store) = store(("kunpeng920", "s5000c-b850"));
    let out = tmp.path().join("reports/example");
    let printed = ok(&linkperf(
        &store,
        &[
            "report",
            "-o",
            out.to_str().unwrap(),
            "--baseline",
            "kunpeng920",
            "--dump-context",
        ],
    ));
    assert!(
        printed.contains("index.html") && printed.contains("report.md"),
        "{printed}"
    );
    // minijinja escapes '/' as &#x2f; in text; browsers show a slash.
    let html = std::fs::read_to_string(out.join("index.html"))
        .unwrap()
        .replace("&#x2f;", "/");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        !html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http"),
        "self-contained, no scripts"
    );
    assert!(html.contains("<table class=\"comparison\">"));
    for needle in [
        "message size",
        "bandwidth (Gbit/s)",
        "message rate (Mpps)",
        "latency (µs, log scale)",
        "throughput over time",
        "per-stream totals",
    ] {
        assert!(html.contains(needle), "missing {needle}");
    }
    // Every chart is in the HTML inline and beside the Markdown as a file it links to.
    let charts: Vec<_> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(charts.len() >= 9, "{charts:?}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for c in &charts {
        let rel = format!("charts/{}", c.file_name().unwrap().to_str().unwrap());
        assert!(md.contains(&format!("]({rel})")), "report.md links {rel}");
        assert!(std::fs::metadata(c).unwrap().len() > 1000);
    }
    assert_eq!(html.matches("<svg").count(), charts.len());
    // Headline numbers with their provenance, and the MTU finding.
    assert!(
        html.contains("97.56 Gbit/s")
            && html.contains("fixtures/seeds/000_8f7f2e13e9bf4848.txt:781")
    );
    assert!(html.contains("MTU 1024 costs 6.3 % bandwidth"));
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("peak RDMA bandwidth") && !summary.contains("!["),
        "compact, no images"
    );
    let ctx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("context.json")).unwrap()).unwrap();
    assert_eq!(ctx["baseline"], "kunpeng920");
}

#[test]
fn strings_from_logs_are_escaped() {
    let (tmp, store) = store(("<script>alert(1)</script>", "b850|x"));
    let out = tmp.path().join("r");
    ok(&linkperf(&store, &["report", "-o", out.to_str().unwrap()]));
    let html = std::fs::read_to_string(out.join("index.html"))
        .unwrap()
        .replace("&#x2f;", "/");
    assert!(!html.contains("<script>"), "label must show as text");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(!md.contains("<script>") && md.contains("b850\\|x"));
}

#[test]
fn reports_are_deterministic() {
    let (tmp, store) = store(("kunpeng920", "s5000c-b850"));
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    ok(&linkperf(&store, &["report", "-o", a.to_str().unwrap()]));
    ok(&linkperf(&store, &["report", "-o", b.to_str().unwrap()]));
    for f in ["index.html", "report.md", "summary.md"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn the_committed_example_report_is_current() {
    // .ci/run regenerates reports/ with scripts/demo.sh and fails on any drift; this checks the
    // committed copy is complete.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reports/kunpeng920-vs-s5000c-b850");
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("Regressions") && html.contains("mtu 4096 → 1024"));
}

#[test]
fn bad_input_exits_2() {
    let (tmp, store) = store(("kunpeng920", "s5000c-b850"));
    let o = linkperf(
        &store,
        &[
            "report",
            "-o",
            tmp.path().join("r").to_str().unwrap(),
            "--where",
            "platform=nothing",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("selection is empty"));

    let blocker = tmp.path().join("file");
    std::fs::write(&blocker, "not a directory").unwrap();
    let o = linkperf(
        &store,
        &["report", "-o", blocker.join("r").to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot create"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let templates = tmp.path().join("templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(
        templates.join("report.html"),
        "<html>\n<body>\n{% for x in %}\n</body>\n",
    )
    .unwrap();
    let out = tmp.path().join("t");
    let o = linkperf(
        &store,
        &[
            "report",
            "-o",
            out.to_str().unwrap(),
            "--templates",
            templates.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("report.html:3: template error"), "{e}");
    assert!(!out.exists(), "no partial report");
    assert!(std::fs::read_dir(tmp.path()).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .contains(".tmp-")));
}

/// Runs with raw per-iteration samples (perftest `-U`/`-H` here) get a percentile chart computed
/// from the samples, beside the charts of the printed columns.
#[test]
fn raw_samples_add_a_percentile_chart() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    for f in [
        "read_lat-sweep-unsorted-client.txt",
        "send_lat-histogram-client.txt",
        "send_lat-64-client.txt",
    ] {
        let path = format!("fixtures/perftest/rxe-lab/{f}");
        ok(&linkperf(
            &store,
            &["import", &path, "--label", "platform=rxe"],
        ));
    }
    let out = tmp.path().join("report");
    ok(&linkperf(&store, &["report", "-o", out.to_str().unwrap()]));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("ib_read_lat: latency percentiles from raw samples (5 per size)"),
        "{md}"
    );
    assert!(md.contains("ib_send_lat: latency percentiles from raw samples (57 per size)"));
    let svg = std::fs::read_to_string(out.join("charts/ib-send-lat-samples.svg")).unwrap();
    assert!(svg.contains("rxe p50") && svg.contains("rxe p90") && !svg.contains("rxe p99 "));
}

/// `linkperf bench --interval` rows chart bandwidth over time, as iperf intervals do.
#[test]
fn bench_intervals_chart_throughput_over_time() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let log = "fixtures/linkperf-bench/write_bw-2qp-duration-intervals.log";
    ok(&linkperf(&store, &["import", log]));
    let out = tmp.path().join("report");
    ok(&linkperf(&store, &["report", "-o", out.to_str().unwrap()]));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("](charts/ib-write-bw-timeline.svg)"), "{md}");
    let svg = std::fs::read_to_string(out.join("charts/ib-write-bw-timeline.svg")).unwrap();
    // A two-second session: ticks in fractions of a second, not a row of repeated "1"s.
    let ticks: Vec<f64> = svg
        .lines()
        .filter_map(|l| l.trim().parse::<f64>().ok())
        .collect();
    assert!(
        ticks
            .iter()
            .any(|t| (1.0..2.0).contains(t) && t.fract() != 0.0),
        "fractional time ticks: {ticks:?}"
    );
    assert!(svg.contains("time (s)") && svg.contains("throughput (Gbit/s)"));
}

/// At most one `missing` line per (test, MTU, role): points one platform lacks are folded, not
/// listed size by size. Checked on the committed example report and on a fresh one.
fn assert_missing_folded(report_md: &str) {
    let mut seen = std::collections::BTreeSet::new();
    for line in report_md.lines().filter(|l| l.contains("missing")) {
        assert!(
            !line.starts_with('|'),
            "a comparison row of `missing` values: {line}"
        );
        // `- kunpeng920 only: ib_read_bw client, MTU 1024, 23 sizes …; missing in s5000c-b850`
        let what = line.split_once(": ").map_or(line, |(_, w)| w);
        let group: Vec<&str> = what.split(", ").take(2).collect();
        assert!(
            seen.insert(group.join(", ")),
            "two missing lines for {group:?}"
        );
    }
}

#[test]
fn points_one_group_lacks_are_folded_into_one_line_per_test_mtu_and_role() {
    let example = root().join("reports/kunpeng920-vs-s5000c-b850/report.md");
    let committed = std::fs::read_to_string(example).unwrap();
    assert_missing_folded(&committed);
    assert!(
        committed.contains("- kunpeng920 only: ib_write_bw client, MTU 1024, 23 sizes (2 B … 8 MiB); missing in s5000c-b850"),
        "the MTU 1024 runs of Kunpeng 920 are summarised"
    );
    let (tmp, store) = store(("kunpeng920", "s5000c-b850"));
    let out = tmp.path().join("r");
    ok(&linkperf(&store, &["report", "-o", out.to_str().unwrap()]));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert_missing_folded(&md);
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<h3>Only in some groups</h3>"));
    assert!(
        !html.contains(">missing<"),
        "no `missing` cells in the HTML table"
    );
    // compare folds the same points; --show-missing and JSON keep every one.
    let folded = ok(&linkperf(
        &store,
        &["compare", "--where", "test=ib_write_bw,role=client"],
    ));
    assert_eq!(folded.matches("missing").count(), 2, "{folded}"); // the line and the hint
    assert!(folded.contains("- kunpeng920 only: ib_write_bw client, MTU 1024, 23 sizes"));
    let all = ok(&linkperf(
        &store,
        &[
            "compare",
            "--where",
            "test=ib_write_bw,role=client",
            "--show-missing",
        ],
    ));
    assert_eq!(all.matches("missing").count(), 2 * 23, "{all}");
    let json = ok(&linkperf(
        &store,
        &[
            "compare",
            "--where",
            "test=ib_write_bw,role=client",
            "--format",
            "json",
        ],
    ));
    assert_eq!(json.matches("\"missing\"").count(), 23);
}
