//! Trends over nightly runs: twelve nights made from seed 000's transcript, where nights 01–08
//! are its MTU 4096 runs and nights 09–12 its MTU 1024 runs (each copy with its own PSNs, as a
//! real rerun has, so every night is a new run). `history --fail-on-change` must name the step at
//! night 09 with the MTU change; twelve identical nights must pass; the report gains a history
//! section with one chart per test.

mod common;
use common::{linkperf, ok, root, text, SEED_000};

use std::path::{Path, PathBuf};

/// Seed 000's MTU 1024 runs (from the first `ib_send_bw` client to the note that says the MTU
/// was changed) and its MTU 4096 runs (after that note, up to the closing empty prompt).
fn seed_parts() -> (String, String) {
    let seed = std::fs::read_to_string(root().join(SEED_000)).unwrap();
    let lines: Vec<&str> = seed.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("# ib_send_bw -d hns_1 192.170.1.10"))
        .unwrap();
    let note = lines
        .iter()
        .position(|l| l.contains("MTU修改为4096"))
        .unwrap();
    let end = note
        + lines[note..]
            .iter()
            .position(|l| l.trim() == "[root@localhost ~]#")
            .unwrap();
    let join = |ls: &[&str]| ls.join("\n") + "\n";
    (join(&lines[start..note]), join(&lines[note + 1..end]))
}

/// Imports twelve nights into a new store; `late` is what nights 09–12 ran.
fn nightly_store(dir: &Path, late_is_mtu_1024: bool) -> PathBuf {
    let (mtu1024, mtu4096) = seed_parts();
    let store = dir.join("store");
    for night in 1..=12 {
        let body = if night >= 9 && late_is_mtu_1024 {
            &mtu1024
        } else {
            &mtu4096
        };
        let n = format!("{night:02}");
        let file = dir.join(format!("night-{n}.txt"));
        std::fs::write(
            &file,
            body.replace("localhost", &format!("night{n}"))
                .replace("PSN 0x", &format!("PSN 0x{n}")),
        )
        .unwrap();
        let out = ok(&linkperf(
            &store,
            &[
                "import",
                file.to_str().unwrap(),
                "--label",
                &format!("night={n}"),
                "--label",
                "platform=kunpeng920",
            ],
        ));
        assert!(out.contains("0 already"), "night {n} is new: {out}");
    }
    store
}

#[test]
fn a_step_at_night_09_fails_and_is_named_with_its_mtu_change() {
    let tmp = tempfile::tempdir().unwrap();
    let store = nightly_store(tmp.path(), true);
    let o = linkperf(
        &store,
        &[
            "history",
            "--order-by",
            "label:night",
            "--where",
            "test=ib_write_bw,role=client",
            "--fail-on-change",
        ],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains(
            "regression: kunpeng920 ib_write_bw client RC 65536 B bw_avg_gbps: step at night=09"
        ),
        "{out}"
    );
    assert!(
        out.contains("97.53 → 91.40 (-6.3 %, beyond the 5 % threshold); config: mtu 4096 → 1024"),
        "{out}"
    );
    assert!(
        out.contains("FAILED: the latest step of 12 series is a regression"),
        "{out}"
    );
    // JSON names the same step with exact values.
    let json = ok(&linkperf(
        &store,
        &[
            "history",
            "--order-by",
            "label:night",
            "--where",
            "test=ib_write_bw,role=client",
            "--format",
            "json",
        ],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let big = v
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"]["msg_size_bytes"] == 8_388_608)
        .unwrap();
    assert_eq!(big["values"].as_array().unwrap().len(), 12);
    assert_eq!(big["latest_step"]["order"], "09");
    assert_eq!(big["latest_step"]["regression"], true);
    let mean = |k: &str| big["latest_step"][k].as_f64().unwrap();
    assert!((mean("mean_before") - 97.56).abs() < 1e-9);
    assert!((mean("mean_after") - 91.42).abs() < 1e-9);
}

#[test]
fn twelve_identical_nights_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let store = nightly_store(tmp.path(), false);
    let o = linkperf(
        &store,
        &["history", "--order-by", "label:night", "--fail-on-change"],
    );
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("passed: no series ends in a regression step"),
        "{out}"
    );
}

#[test]
fn the_report_charts_the_history_of_each_test() {
    let tmp = tempfile::tempdir().unwrap();
    let store = nightly_store(tmp.path(), true);
    let out = tmp.path().join("report");
    ok(&linkperf(
        &store,
        &[
            "report",
            "-o",
            out.to_str().unwrap(),
            "--history-by",
            "label:night",
        ],
    ));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## History by night"), "{md}");
    for test in ["ib-write-bw", "ib-read-bw", "ib-send-bw", "ib-write-lat"] {
        let chart = out.join(format!("charts/{test}-history.svg"));
        let svg = std::fs::read_to_string(&chart).unwrap();
        // Twelve nights on the axis, the step marked, the threshold drawn.
        let texts: Vec<&str> = svg
            .split("</text>")
            .filter_map(|t| Some(t.rsplit_once('>')?.1.trim()))
            .collect();
        for label in [
            "01",
            "09",
            "12",
            "kunpeng920: gate 5 %",
            "kunpeng920: first mean",
        ] {
            let label = if test.ends_with("lat") {
                label.replace("gate 5", "gate 10")
            } else {
                label.to_string()
            };
            assert!(
                texts.contains(&label.as_str()),
                "{test}: {label} missing: {texts:?}"
            );
        }
        assert!(
            svg.contains("stroke-dasharray") || svg.contains("<line"),
            "{test}: no step marker"
        );
    }
    assert!(
        md.contains("| kunpeng920 | ib_write_bw | client | 64 KiB | bw_avg_gbps | night=09 | 97.53 | 91.40 | -6.3 % | **regression** 🔴 | mtu 4096 → 1024 |"),
        "{md}"
    );
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(html.contains("<section id=\"history\">"));
    // Ordered by file name instead, the nights come out the same.
    let by_source = tmp.path().join("by-source");
    ok(&linkperf(
        &store,
        &["report", "-o", by_source.to_str().unwrap()],
    ));
    assert!(std::fs::read_to_string(by_source.join("report.md"))
        .unwrap()
        .contains("## History by source"));
}

#[test]
fn compare_and_gate_give_confidence_intervals_and_flag_noisy_points() {
    let tmp = tempfile::tempdir().unwrap();
    let store = nightly_store(tmp.path(), true);
    // MTU 1024 (nights 09–12) against MTU 4096 (nights 01–08): repeats on both sides.
    let json = ok(&linkperf(
        &store,
        &[
            "compare",
            "--by",
            "mtu",
            "--where",
            "test=ib_write_bw,role=client",
            "--format",
            "json",
        ],
    ));
    let c: serde_json::Value = serde_json::from_str(&json).unwrap();
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"]["msg_size_bytes"] == 65536)
        .unwrap();
    let cell = &row["cells"][1];
    assert_eq!(cell["group"], "4096");
    let ratio = cell["ratio"].as_f64().unwrap();
    let (lo, hi) = (
        cell["ratio_ci"][0].as_f64().unwrap(),
        cell["ratio_ci"][1].as_f64().unwrap(),
    );
    assert_eq!(cell["ratio_ci_method"], "bootstrap");
    // Every night of a side printed the same number, so the interval is the ratio itself.
    assert!((ratio - 97.53 / 91.40).abs() < 1e-12);
    assert!(
        (lo - ratio).abs() < 1e-12 && (hi - ratio).abs() < 1e-12,
        "{lo} {hi}"
    );
    assert_eq!(cell["noisy"], false);
    let table = ok(&linkperf(
        &store,
        &[
            "compare",
            "--by",
            "mtu",
            "--where",
            "test=ib_write_bw,role=client",
        ],
    ));
    assert!(table.contains("1.07× [1.07–1.07] better"), "{table}");

    // All twelve nights against night 01: the current side mixes both MTUs, a spread of about
    // 3 %, which a 1 % bound calls noisy.
    let config = tmp.path().join("linkperf.toml");
    std::fs::write(&config, "[gate]\nnoisy_cv_above = 0.01\n").unwrap();
    let gate = |config_env: &[(&str, &str)]| {
        let json = tmp.path().join("gate.json");
        common::linkperf_env(
            &store,
            &[
                "gate",
                "--baseline-where",
                "night=01",
                "--current-where",
                "platform=kunpeng920",
                "--where",
                "test=ib_write_bw,role=client",
                "--json",
                json.to_str().unwrap(),
            ],
            config_env,
        );
        let g: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        g["points"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["msg_size_bytes"] == 65536)
            .unwrap()
            .clone()
    };
    let strict = gate(&[("LINKPERF_CONFIG", config.to_str().unwrap())]);
    assert_eq!(
        (strict["baseline_n"].as_u64(), strict["current_n"].as_u64()),
        (Some(1), Some(12))
    );
    assert_eq!(strict["noisy"], true);
    assert_eq!(strict["ratio_ci_method"], "bootstrap");
    let (lo, hi) = (
        strict["ratio_ci"][0].as_f64().unwrap(),
        strict["ratio_ci"][1].as_f64().unwrap(),
    );
    // Eight nights at 97.53 and four at 91.40 against 97.53: the median ratio lies in [0.937, 1].
    assert!(
        lo >= 91.40 / 97.53 - 1e-12 && hi <= 1.0 + 1e-12 && lo < hi,
        "{lo} {hi}"
    );
    // The default bound (5 %) does not call a 3 % spread noisy.
    assert_eq!(gate(&[])["noisy"], false);
}
