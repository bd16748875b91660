//! The version-2 store: migration from version 1, compaction, `store info`, crash safety under
//! `kill -9` at random points, concurrent imports, and `--where` pushdown agreeing with a full
//! read.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

fn export_lines(store: &Path, filters: &[&str]) -> Vec<String> {
    let mut args = vec!["export", "--format", "jsonl"];
    for f in filters {
        args.extend(["--where", f]);
    }
    let mut lines: Vec<String> = ok(&linkperf(store, &args))
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// The export without what a run takes from the file it was read from (`source`, and the
/// prompt's `host`, which a platform name may fall back to): a block two files share word for
/// word is one run (its id hashes the command and output, not the prompt), stored from
/// whichever file came first.
fn export_without_source(store: &Path) -> Vec<String> {
    let mut lines: Vec<String> = export_lines(store, &[])
        .iter()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let row = v.as_object_mut().unwrap();
            for k in ["source", "host", "platform", "resolved"] {
                row.remove(k);
            }
            v.to_string()
        })
        .collect();
    lines.sort();
    lines
}

/// The number of stored runs (`store info`, from the Parquet footers).
fn stored_runs(store: &Path) -> usize {
    let info: serde_json::Value = serde_json::from_str(&ok(&linkperf(
        store,
        &["store", "info", "--format", "json"],
    )))
    .unwrap();
    info["runs"].as_u64().unwrap() as usize
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// A corpus of real transcripts: `n` copies of two seeds whose prompts name another host
/// (`copyNNN`). Runs whose block holds its prompt line become new runs in each copy; the others
/// are the same runs in every copy, which is what a re-import of overlapping logs looks like.
fn corpus(dir: &Path, from: usize, n: usize) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let seeds = [SEED_000, SEED_003];
    let mut out = Vec::new();
    for i in from..from + n {
        for s in seeds {
            let text = std::fs::read_to_string(root().join(s)).unwrap();
            let text = text.replace("@localhost", &format!("@copy{i:03}"));
            let p = dir.join(format!(
                "{i:03}-{}",
                Path::new(s).file_name().unwrap().to_str().unwrap()
            ));
            std::fs::write(&p, text).unwrap();
            out.push(p);
        }
    }
    out
}

#[test]
fn version_1_store_is_refused_then_migrated_with_identical_export() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    copy_dir(&root().join("fixtures/store-v1/store"), &store);
    let refused = linkperf(&store, &["ls"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused).contains("store schema version 1; run `linkperf store migrate"),
        "{}",
        text(&refused)
    );
    let out = ok(&linkperf(&store, &["store", "migrate"]));
    assert!(out.contains("migrated schema version 1 to 2"), "{out}");
    // The export the version-1 release wrote from this store, sorted, byte for byte.
    let expected =
        std::fs::read_to_string(root().join("fixtures/store-v1/export-sorted.jsonl")).unwrap();
    let mut got = export_lines(&store, &[]).join("\n");
    got.push('\n');
    assert_eq!(got, expected);
    let samples =
        std::fs::read_to_string(root().join("fixtures/store-v1/export-samples-sorted.csv"))
            .unwrap();
    let mut got: Vec<String> = ok(&linkperf(
        &store,
        &["export", "--samples", "--format", "csv"],
    ))
    .lines()
    .map(str::to_string)
    .collect();
    got.sort();
    assert_eq!(got.join("\n") + "\n", samples);
    assert!(!store.join("batches").exists());
    // Migrating again is a no-op.
    assert!(ok(&linkperf(&store, &["store", "migrate"])).contains("already at schema version 2"));
}

#[test]
fn compaction_merges_batches_and_keeps_every_row() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    for (seed, build) in [(SEED_000, "1"), (SEED_003, "1"), (SEED_000, "2")] {
        // Same file twice with another label is the same run: stored once.
        ok(&linkperf(
            &store,
            &["import", seed, "--label", &format!("build={build}")],
        ));
    }
    let info: serde_json::Value = serde_json::from_str(&ok(&linkperf(
        &store,
        &["store", "info", "--format", "json"],
    )))
    .unwrap();
    assert_eq!(info["batches"], 2);
    assert_eq!(info["schema_version"], 2);
    assert_eq!(info["labels"], serde_json::json!(["build"]));
    let before = export_lines(&store, &[]);
    let build1 = export_lines(&store, &["build=1"]);
    let out = ok(&linkperf(&store, &["store", "compact"]));
    assert!(out.contains("compacted 2 batch(es) of 1 month(s)"), "{out}");
    let text_info = ok(&linkperf(&store, &["store", "info"]));
    assert!(text_info.contains("batches        1\n"), "{text_info}");
    assert!(text_info.contains("schema version 2"), "{text_info}");
    assert_eq!(export_lines(&store, &[]), before);
    assert_eq!(export_lines(&store, &["build=1"]), build1);
    // A later import still dedupes against the compacted batch, through the run-id index that
    // compaction wrote, and without it (the index is derived data).
    assert!(store.join("index").read_dir().unwrap().count() == 1);
    let again = ok(&linkperf(&store, &["import", SEED_000]));
    assert!(again.contains("stored 0 new run(s)"), "{again}");
    std::fs::remove_dir_all(store.join("index")).unwrap();
    let again = ok(&linkperf(
        &store,
        &["import", SEED_003, "--label", "build=3"],
    ));
    assert!(again.contains("stored 0 new run(s)"), "{again}");
}

#[test]
fn where_pushdown_agrees_with_reading_everything() {
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
            "build=7",
        ],
    ));
    ok(&linkperf(
        &store,
        &["import", SEED_003, "--label", "platform=s5000c-b850"],
    ));
    let all: Vec<serde_json::Value> = export_lines(&store, &[])
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let expect = |pred: &dyn Fn(&serde_json::Value) -> bool| all.iter().filter(|v| pred(v)).count();
    let count = |f: &[&str]| export_lines(&store, f).len();
    assert_eq!(
        count(&["build=7"]),
        expect(&|v| v["labels"]["build"] == "7")
    );
    assert_eq!(
        count(&["test=ib_write_bw,platform=s5000c-b850"]),
        expect(&|v| v["test"] == "ib_write_bw" && v["platform"] == "s5000c-b850")
    );
    assert_eq!(count(&["mtu=4096"]), expect(&|v| v["mtu"] == 4096));
    assert_eq!(count(&["mtu=04096"]), 0);
    // A derived key (nic) from built-in rules has no label: every run is read and resolved.
    assert_eq!(
        count(&["nic=HiSilicon HNS RoCE"]),
        expect(&|v| v["resolved"]["nic"]["value"] == "HiSilicon HNS RoCE")
    );
    assert!(count(&["nic=HiSilicon HNS RoCE"]) > 0);
    // A label only some runs have: the others never match.
    assert_eq!(count(&["build=8"]), 0);
    // A project rule may set a key a run has no label for; pushdown must keep such runs.
    let cfg = tmp.path().join("linkperf.toml");
    std::fs::write(
        &cfg,
        "[[rule]]\nsource = \"**/003_*\"\nset = { build = \"7\" }\n",
    )
    .unwrap();
    let with_rule = linkperf(
        &store,
        &[
            "--config",
            cfg.to_str().unwrap(),
            "export",
            "--where",
            "build=7",
        ],
    );
    let n = ok(&with_rule).lines().count();
    assert_eq!(n, all.len(), "every run is build 7: by label or by rule");
    let unknown = linkperf(&store, &["ls", "--where", "bulid=7"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown).ends_with("labels: build\n"),
        "{}",
        text(&unknown)
    );
}

#[test]
fn eight_concurrent_imports_of_overlapping_files_store_every_run_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let files = corpus(&tmp.path().join("corpus"), 0, 4);
    let mut children = Vec::new();
    for i in 0..8 {
        // Each import takes an overlapping window of the corpus.
        let mine: Vec<String> = files
            .iter()
            .cycle()
            .skip(i)
            .take(4)
            .map(|p| p.display().to_string())
            .collect();
        let mut c = Command::new(env!("CARGO_BIN_EXE_linkperf"));
        c.current_dir(root())
            .env("LINKPERF_STORE", &store)
            .arg("import")
            .args(&mine)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        children.push(c.spawn().unwrap());
    }
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let mut reference_store = tmp.path().join("reference");
    reference_store.push("store");
    let all: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let mut args = vec!["import"];
    args.extend(all.iter().map(String::as_str));
    ok(&linkperf(&reference_store, &args));
    assert_eq!(stored_runs(&store), stored_runs(&reference_store));
    assert_eq!(
        export_without_source(&store),
        export_without_source(&reference_store)
    );
}

/// Deterministic delays in [lo, hi) ms.
fn delays(n: usize, lo: u64, hi: u64) -> Vec<u64> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            lo + x % (hi - lo)
        })
        .collect()
}

fn kill_after(mut cmd: Command, ms: u64) {
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(ms));
    // SIGKILL: no destructor, no cleanup, like a power cut of the process.
    let _ = child.kill();
    let _ = child.wait();
}

fn assert_each_run_once(store: &Path) {
    // A run stored twice would repeat its (run id, line) rows in the export.
    let lines = export_lines(store, &[]);
    let mut keys: Vec<(String, u64)> = lines
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["run_id"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "a measurement row is stored twice");
}

#[test]
fn kill_9_during_import_and_compact_never_loses_or_doubles_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let files = corpus(&tmp.path().join("corpus"), 0, 12);
    let later = corpus(&tmp.path().join("corpus"), 12, 20);
    let reference = tmp.path().join("reference");
    let all: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    let later: Vec<String> = later.iter().map(|p| p.display().to_string()).collect();
    let mut args = vec!["import"];
    args.extend(all.iter().chain(&later).map(String::as_str));
    ok(&linkperf(&reference, &args));
    let expected = export_without_source(&reference);

    let store = tmp.path().join("store");
    // 24 imports killed at random points, each a few files, while earlier ones may have
    // committed: the store must stay readable with no run twice.
    for (i, ms) in delays(24, 5, 400).into_iter().enumerate() {
        let mut c = Command::new(env!("CARGO_BIN_EXE_linkperf"));
        c.current_dir(root())
            .env("LINKPERF_STORE", &store)
            .arg("import")
            .args(&all[(i * 2) % all.len()..((i * 2) % all.len() + 3).min(all.len())]);
        kill_after(c, ms);
        if store.join("linkperf-store.json").exists() {
            assert_each_run_once(&store);
        }
    }
    // Small batches to compact, then 20 compactions killed at random points.
    for f in &all {
        ok(&linkperf(&store, &["import", f]));
    }
    let mut stored = stored_runs(&store);
    for (i, ms) in delays(20, 5, 600).into_iter().enumerate() {
        let mut c = Command::new(env!("CARGO_BIN_EXE_linkperf"));
        c.current_dir(root())
            .env("LINKPERF_STORE", &store)
            .args(["store", "compact"]);
        kill_after(c, ms);
        assert_each_run_once(&store);
        assert_eq!(
            stored_runs(&store),
            stored,
            "a killed compaction changed the runs"
        );
        // Two new small batches for the next compaction to merge.
        ok(&linkperf(&store, &["import", &later[2 * i]]));
        ok(&linkperf(&store, &["import", &later[2 * i + 1]]));
        stored = stored_runs(&store);
    }
    // Re-importing everything stores nothing new, and the store equals the reference.
    ok(&linkperf(&store, &args));
    ok(&linkperf(&store, &["store", "compact"]));
    let got = export_without_source(&store);
    let only_store: Vec<&String> = got.iter().filter(|l| !expected.contains(l)).collect();
    let only_reference: Vec<&String> = expected.iter().filter(|l| !got.contains(l)).collect();
    assert!(
        only_store.is_empty() && only_reference.is_empty() && got.len() == expected.len(),
        "{} rows vs {}; only in the store: {:?}; only in the reference: {:?}",
        got.len(),
        expected.len(),
        &only_store[..only_store.len().min(3)],
        &only_reference[..only_reference.len().min(3)]
    );
    assert_eq!(stored_runs(&store), stored_runs(&reference));
}
