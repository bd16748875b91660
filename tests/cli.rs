//! End-to-end checks of the `linkperf` binary: import into a real Parquet store, idempotency,
//! a killed import, concurrent imports, export formats, filters and bad input.

mod common;
use common::{linkperf, ok, root, text, SEED_000, SEED_003};

use std::path::Path;
use std::process::Command;

fn export_jsonl(store: &Path, filters: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["export", "--format", "jsonl"];
    for f in filters {
        args.push("--where");
        args.push(f);
    }
    ok(&linkperf(store, &args))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn import_export_round_trip_with_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let out = ok(&linkperf(
        &store,
        &[
            "import",
            SEED_000,
            "--label",
            "platform=kunpeng920",
            "--label",
            "nic=hns",
        ],
    ));
    assert!(out.contains("stored 24 new run(s)"), "{out}");
    assert_eq!(export_jsonl(&store, &["tool=perftest"]).len(), 346);
    ok(&linkperf(
        &store,
        &["import", SEED_003, "--label", "platform=s5000c-b850"],
    ));

    let rows = export_jsonl(
        &store,
        &[
            "platform=kunpeng920",
            "test=ib_write_bw",
            "mtu=4096",
            "role=client",
        ],
    );
    assert_eq!(rows.len(), 23);
    let big = rows
        .iter()
        .find(|r| r["msg_size_bytes"] == 8_388_608)
        .unwrap();
    assert_eq!(big["bw_avg_gbps"], 97.56);
    assert_eq!(big["msg_rate_mpps"], 0.001454);
    assert_eq!(big["raw_unit"], "Gb/sec");
    assert_eq!(big["labels"]["platform"], "kunpeng920");
    assert_eq!(big["labels"]["nic"], "hns");
    assert_eq!(big["source"], SEED_000);
    assert_eq!(big["line"], 781);
    assert!(big["raw_text"].as_str().unwrap().contains("97.56"));

    let b850 = export_jsonl(&store, &["platform=s5000c-b850", "tool=perftest"]);
    assert_eq!(b850.len(), 6 * 23);

    let ls = ok(&linkperf(
        &store,
        &["ls", "--where", "platform=s5000c-b850,tool=perftest"],
    ));
    assert_eq!(ls.lines().count(), 1 + 7, "{ls}");
    assert!(ls.contains("interrupted"), "{ls}");

    // CSV and Parquet carry the same rows.
    let csv = ok(&linkperf(
        &store,
        &[
            "export",
            "--format",
            "csv",
            "--where",
            "platform=s5000c-b850,tool=perftest",
        ],
    ));
    assert_eq!(csv.lines().count(), 1 + 138);
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .starts_with("run_id,source,line,tool,test,role,host,device,mtu"));
    let pq = tmp.path().join("out.parquet");
    ok(&linkperf(
        &store,
        &[
            "export",
            "--format",
            "parquet",
            "--where",
            "tool=perftest",
            "-o",
            pq.to_str().unwrap(),
        ],
    ));
    use polars::prelude::SerReader;
    let df = polars::prelude::ParquetReader::new(std::fs::File::open(&pq).unwrap())
        .finish()
        .unwrap();
    assert_eq!(df.height(), 346 + 138);
}

/// perftest `-U` samples go through the store like the native runner's: `export --samples`.
#[test]
fn imported_perftest_samples_are_exported() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let log = "fixtures/perftest/rxe-lab/read_lat-sweep-unsorted-client.txt";
    ok(&linkperf(&store, &["import", log]));
    let csv = ok(&linkperf(
        &store,
        &["export", "--samples", "--format", "csv"],
    ));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 23 * 5, "{csv}");
    assert!(
        lines[0].ends_with("msg_size_bytes,seq,latency_us"),
        "{}",
        lines[0]
    );
    assert!(lines[1].ends_with(",2,0,2449.19"), "{}", lines[1]);
    assert!(
        lines[115].ends_with(",8388608,4,284547.0"),
        "{}",
        lines[115]
    );
}

#[test]
fn import_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(&store, &["import", SEED_000]));
    let again = ok(&linkperf(&store, &["import", SEED_000, "fixtures/seeds"]));
    // 24 runs were stored before, and 000 is named twice in this import (file and directory).
    assert!(again.contains("48 already in"), "{again}");
    let all = export_jsonl(&store, &["tool=perftest"]);
    // Seeds 001, 002, 003 added their own rows; 000's rows are stored once.
    let from_000 = all
        .iter()
        .filter(|r| r["source"] == SEED_000 && r["tool"] == "perftest")
        .count();
    assert_eq!(from_000, 346);
}

#[test]
fn killed_import_leaves_store_readable() {
    // The child: this test binary run again, importing through the library pipeline with a hook
    // that dies the way a killed import dies, after writing and before the commit.
    if let Some(store) = std::env::var_os("LINKPERF_CRASH_CHILD_STORE") {
        use linkperf::pipeline::{import, Mode, Options};
        let options = Options {
            labels: &Default::default(),
            mode: Mode::Store,
            jobs: 1,
            check: None,
            file_labels: None,
            stream: Default::default(),
            listed_dirs: None,
            before_commit: Some(|| std::process::abort()),
        };
        import(Path::new(&store), &[SEED_000.into()], &options).unwrap();
        unreachable!("the hook aborts");
    }
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(&store, &["import", SEED_003]));
    let before = export_jsonl(&store, &["tool=perftest"]).len();
    let crashed = Command::new(std::env::current_exe().unwrap())
        .current_dir(root())
        .env("LINKPERF_CRASH_CHILD_STORE", &store)
        .args([
            "killed_import_leaves_store_readable",
            "--exact",
            "--nocapture",
        ])
        .output()
        .unwrap();
    assert!(!crashed.status.success());
    assert!(
        store.join("tmp").read_dir().unwrap().next().is_some(),
        "the child wrote its batch before it died"
    );
    assert_eq!(
        export_jsonl(&store, &["tool=perftest"]).len(),
        before,
        "no partial run is visible"
    );
    // The next import cleans up and stores the run completely.
    ok(&linkperf(&store, &["import", SEED_000]));
    assert_eq!(export_jsonl(&store, &["tool=perftest"]).len(), before + 346);
    assert!(
        !store.join("tmp").exists() || std::fs::read_dir(store.join("tmp")).unwrap().count() == 0
    );
}

#[test]
fn concurrent_imports_store_each_run_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let spawn = |f: &str| {
        Command::new(env!("CARGO_BIN_EXE_linkperf"))
            .current_dir(root())
            .env("LINKPERF_STORE", &store)
            .args(["import", f, SEED_003])
            .spawn()
            .unwrap()
    };
    let mut a = spawn(SEED_000);
    let mut b = spawn(SEED_000);
    assert!(a.wait().unwrap().success());
    assert!(b.wait().unwrap().success());
    assert_eq!(export_jsonl(&store, &["tool=perftest"]).len(), 346 + 138);
}

#[test]
fn gb18030_and_crlf_copies_import_like_the_originals() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/perftest/seed002-gb18030-encoded.txt",
            "fixtures/perftest/seed001-crlf-line-ends.txt",
        ],
    ));
    let gbk = export_jsonl(
        &store,
        &[
            "source=fixtures/perftest/seed002-gb18030-encoded.txt",
            "tool=perftest",
        ],
    );
    assert_eq!(gbk.len(), 1);
    assert_eq!(gbk[0]["lat_typical_us"], 1.79);
    let crlf = export_jsonl(
        &store,
        &[
            "source=fixtures/perftest/seed001-crlf-line-ends.txt",
            "tool=perftest",
        ],
    );
    assert_eq!(crlf.len(), 6);
}

#[test]
fn every_invalid_input_exits_0_or_2_and_names_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let files = linkperf::pipeline::collect_files(&[root().join("fixtures/invalid")]).unwrap();
    for (i, file) in files.iter().enumerate() {
        let rel = file.strip_prefix(root()).unwrap().to_str().unwrap();
        let store = tmp.path().join(format!("s{i}"));
        let o = linkperf(&store, &["import", rel]);
        assert_eq!(o.status.code(), Some(0), "{rel}: {}", text(&o));
        // A file that yields no run says why, by name.
        if text(&o).contains(": 0 run(s)") {
            assert!(text(&o).contains(&format!("{rel}:")), "{rel}: {}", text(&o));
        }
        let strict = linkperf(&store, &["import", "--strict", rel]);
        assert!(
            matches!(strict.status.code(), Some(0 | 2)),
            "{rel}: {}",
            text(&strict)
        );
    }
}

#[test]
fn help_and_version_captures_are_listed_not_failed() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let o = linkperf(&store, &["import", "--strict", "fixtures/help-version"]);
    let out = ok(&o);
    assert!(out.contains("6 file(s) yielded no run:"), "{out}");
    assert!(
        out.contains("fixtures/help-version/iperf3-help-bare.txt: only a usage/help text"),
        "{out}"
    );
    assert!(
        out.contains("fixtures/help-version/qperf-version-bare.txt: only a version banner"),
        "{out}"
    );
}

#[test]
fn bad_input_is_reported_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let out = ok(&linkperf(&store, &["import", "fixtures/invalid"]));
    for expected in [
        "fixtures/invalid/binary.bin:1: binary data",
        "fixtures/invalid/empty.txt:1: empty file",
        "fixtures/invalid/truncated-table-no-rows.txt:20: perftest table header without any rows",
        "fixtures/invalid/row-missing-columns.txt:21: perftest row has 3 values but its header has 5 columns",
        "fixtures/invalid/perftest-unrecognised-output.txt:1: no perftest output recognised",
        "fixtures/invalid/perftest-json-truncated.json:4: perftest JSON without a results section",
        "fixtures/invalid/notes-without-tool-output.txt:1: nothing recognised",
        "  fixtures/invalid/notes-without-tool-output.txt: no tool output recognised",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    assert!(out.contains("unreadable block(s)"), "{out}");

    // --strict: the same input is an error and nothing is stored.
    let strict_store = tmp.path().join("strict");
    let o = linkperf(&strict_store, &["import", "--strict", "fixtures/invalid"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fixtures/invalid/binary.bin:1"), "{err}");
    assert!(!strict_store.exists());
}

#[test]
fn usage_errors_exit_2_with_a_clear_message() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let o = linkperf(&store, &["import", "no/such/file.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no/such/file.txt"));

    let o = linkperf(&store, &["export"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a linkperf store"));

    ok(&linkperf(&store, &["import", SEED_003]));
    let o = linkperf(&store, &["export", "--where", "platfrom=x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("unknown key \"platfrom\"") && err.contains("Choose from"),
        "{err}"
    );

    let o = linkperf(&store, &["import", SEED_003, "--label", "novalue"]);
    assert_eq!(o.status.code(), Some(2));
    let o = linkperf(&store, &["export", "--format", "parquet"]);
    assert_eq!(o.status.code(), Some(2));
    let o = linkperf(&store, &["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Without the `verbs` feature the native runner's verbs exist, say what is missing, and exit
/// 2; with it, a bench option error is still named before any device is touched.
#[test]
fn native_runner_verbs_explain_themselves() {
    let store = tempfile::tempdir().unwrap();
    let o = linkperf(
        store.path(),
        &["bench", "--server", "10.0.0.1", "--mtu", "1500"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("--mtu 1500: must be 256, 512, 1024, 2048 or 4096"),
        "{}",
        text(&o)
    );
    let o = linkperf(
        store.path(),
        &["bench", "--server", "h", "--tests", "write_bw,nope"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("invalid value 'nope'"), "{}", text(&o));
    if !cfg!(feature = "verbs") {
        for args in [&["devices"][..], &["bench", "--server", "10.0.0.1"][..]] {
            let o = linkperf(store.path(), args);
            assert_eq!(o.status.code(), Some(2));
            let t = text(&o);
            assert!(t.contains("built without it"), "{t}");
            assert!(t.contains("--features verbs"), "{t}");
        }
    }
}

#[test]
fn completion_scripts_for_bash_zsh_and_fish() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let bash = ok(&linkperf(&store, &["completions", "bash"]));
    for verb in [
        "import",
        "compare",
        "gate",
        "history",
        "report",
        "completions",
    ] {
        assert!(bash.contains(verb), "bash completion lacks {verb}");
    }
    let script = tmp.path().join("linkperf.bash");
    std::fs::write(&script, &bash).unwrap();
    let check = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(check.status.success(), "bash -n: {}", text(&check));
    // The script loads and registers its completion function.
    let loaded = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p linkperf",
            script.display()
        ))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&loaded.stdout).contains("linkperf"),
        "{}",
        text(&loaded)
    );
    for shell in ["zsh", "fish"] {
        assert!(ok(&linkperf(&store, &["completions", shell])).contains("linkperf"));
    }
    // A broken project file does not block completions.
    let broken = tmp.path().join("broken.toml");
    std::fs::write(&broken, "this is [not toml").unwrap();
    let o = common::linkperf_env(
        &store,
        &["completions", "bash"],
        &[("LINKPERF_CONFIG", broken.to_str().unwrap())],
    );
    assert!(o.status.success(), "{}", text(&o));
    // Nor the verbs that do not read it; the ones that do name the file.
    let env = [("LINKPERF_CONFIG", broken.to_str().unwrap())];
    let o = common::linkperf_env(&store, &["import", SEED_003], &env);
    assert!(o.status.success(), "{}", text(&o));
    let o = common::linkperf_env(&store, &["store", "info"], &env);
    assert!(o.status.success(), "{}", text(&o));
    let o = common::linkperf_env(&store, &["ls"], &env);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("broken.toml"), "{}", text(&o));
    let bad = linkperf(&store, &["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

/// `linkperf … | head` closes the pipe before the command is done writing: the command ends
/// quietly with status 0, as `ls` and `cat` do, instead of panicking in `println!`.
#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(&store, &["import", SEED_000]));
    let cases: [&[&str]; 6] = [
        &["import", "--dry-run", SEED_003],
        &["completions", "bash"],
        &["store", "info"],
        &["ls"],
        &["export", "--format", "csv"],
        &["check"],
    ];
    for args in cases {
        // The reading end is closed before the command starts: its first write fails.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_linkperf"))
            .current_dir(root())
            .env("LINKPERF_STORE", &store)
            .env_remove("LINKPERF_CONFIG")
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
