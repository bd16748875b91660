//! Parser checks over the real fixtures: the numbers the foundation issue names, plus a
//! snapshot of what every fixture yields so any change in parsing shows up in review.

use linkperf::ingest::{parse_bytes, FileResult};
use linkperf::model::{Role, Run, RunStatus};
use std::path::Path;

fn parse(rel: &str) -> FileResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    parse_bytes(rel, &bytes)
}

fn perftest(r: &FileResult) -> Vec<&Run> {
    r.runs.iter().filter(|r| r.tool == "perftest").collect()
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9)
}

#[test]
fn seed_000_kunpeng920_hns() {
    let r = parse("fixtures/seeds/000_8f7f2e13e9bf4848.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let runs = perftest(&r);
    assert_eq!(runs.len(), 17);
    assert_eq!(
        runs.iter().filter(|r| !r.measurements.is_empty()).count(),
        16
    );
    assert_eq!(
        runs.iter().map(|r| r.measurements.len()).sum::<usize>(),
        346
    );
    let mut mtus: Vec<_> = runs.iter().filter_map(|r| r.mtu).collect();
    mtus.dedup();
    assert_eq!(mtus, vec![1024, 4096]);
    assert!(runs.iter().all(|r| r.device.as_deref() == Some("hns_1")));

    let write = runs
        .iter()
        .find(|r| r.test == "ib_write_bw" && r.role == Role::Client && r.mtu == Some(4096))
        .expect("ib_write_bw client at MTU 4096");
    let big = write
        .measurements
        .iter()
        .find(|m| m.msg_size_bytes == Some(8_388_608))
        .unwrap();
    assert!(close(big.bw_avg_gbps, 97.56));
    assert!(close(big.msg_rate_mpps, 0.001454));
    assert_eq!(big.raw_unit, "Gb/sec");
    assert_eq!(write.host.as_deref(), Some("localhost"));
    assert_eq!(
        write.command.as_ref().unwrap().peer.as_deref(),
        Some("192.170.1.20")
    );

    let lat = runs
        .iter()
        .find(|r| r.test == "ib_send_lat" && r.role == Role::Server && r.mtu == Some(1024))
        .expect("ib_send_lat server at MTU 1024");
    let two = &lat.measurements[0];
    assert_eq!(two.msg_size_bytes, Some(2));
    assert!(close(two.lat_typical_us, 2.25));
    assert!(close(two.lat_p99_us, 2.43));
    assert!(close(two.lat_p999_us, 2.65));

    // The ib_read_lat server prints no table: a run without rows, not an error.
    let read_srv = runs
        .iter()
        .find(|r| r.test == "ib_read_lat" && r.role == Role::Server)
        .unwrap();
    assert_eq!(read_srv.status, RunStatus::NoResults);
    // The ib_send_bw server measured no peak: stored as null, raw text keeps the 0.00.
    let send_srv = runs
        .iter()
        .find(|r| r.test == "ib_send_bw" && r.role == Role::Server)
        .unwrap();
    assert_eq!(send_srv.measurements[5].bw_peak_gbps, None);
    assert!(send_srv.measurements[5].raw_text.contains("0.00"));
}

#[test]
fn seed_001_mb_per_sec_is_mebibytes() {
    let r = parse("fixtures/seeds/001_76f1dcbf5cbef6cc.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let runs = perftest(&r);
    assert_eq!(runs.len(), 6);
    assert!(runs
        .iter()
        .all(|r| r.measurements.len() == 1 && r.measurements[0].raw_unit == "MB/sec"));
    let client = runs
        .iter()
        .find(|r| r.test == "ib_send_bw" && r.role == Role::Client)
        .unwrap();
    // A prompt that lost its opening bracket still names the host.
    assert_eq!(client.host.as_deref(), Some("node1-2"));
    let m = &client.measurements[0];
    assert_eq!(m.msg_size_bytes, Some(65536));
    let g = m.bw_avg_gbps.unwrap();
    assert!((g - 9.7742).abs() < 5e-5, "{g}");
    // The activation nag inside the ib_write_bw server table is a note, not a row or a problem.
    let write_srv = runs
        .iter()
        .find(|r| r.test == "ib_write_bw" && r.role == Role::Server)
        .unwrap();
    assert!(write_srv
        .notes
        .iter()
        .any(|n| n.contains("Your system is not activated")));
}

#[test]
fn seed_003_phytium_b850_collapsed_spaces() {
    let r = parse("fixtures/seeds/003_7da62a485175b0b8.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let runs = perftest(&r);
    let with_rows: Vec<_> = runs.iter().filter(|r| !r.measurements.is_empty()).collect();
    assert_eq!(with_rows.len(), 6);
    assert!(with_rows.iter().all(|r| r.measurements.len() == 23));
    assert!(with_rows
        .iter()
        .all(|r| r.device.as_deref() == Some("mrdma0")
            && r.facts.get("gid_index").map(String::as_str) == Some("1")
            && r.mtu == Some(4096)
            && r.role == Role::Client));
    assert!(with_rows
        .iter()
        .all(|r| r.command.as_ref().unwrap().wrappers == vec!["numactl -i 1"]));
    // The ib_read_lat server was interrupted with ^C while waiting.
    let waiting = runs.iter().find(|r| r.role == Role::Server).unwrap();
    assert_eq!(waiting.status, RunStatus::Interrupted);
    assert!(waiting.measurements.is_empty());
    // `8388608 1000 0.00 98.03 0.001461时延测试` is a valid row for 8388608 bytes.
    let send = with_rows.iter().find(|r| r.test == "ib_send_bw").unwrap();
    let last = send.measurements.last().unwrap();
    assert_eq!(last.msg_size_bytes, Some(8_388_608));
    assert!(close(last.bw_avg_gbps, 98.03));
    assert!(close(last.msg_rate_mpps, 0.001461));
    assert!(send.notes.iter().any(|n| n.contains("时延测试")));
    let write_lat = with_rows.iter().find(|r| r.test == "ib_write_lat").unwrap();
    assert!(close(write_lat.measurements[0].lat_typical_us, 5.43));
}

#[test]
fn seed_002_cpu_frequency_warning_inside_table() {
    let r = parse("fixtures/seeds/002_42248bd0d2963916.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let runs = perftest(&r);
    let client = runs
        .iter()
        .find(|r| r.test == "ib_read_lat" && r.role == Role::Client)
        .unwrap();
    assert_eq!(client.device.as_deref(), Some("mlx4_0"));
    assert_eq!(client.link_layer.as_deref(), Some("IB"));
    assert_eq!(client.measurements.len(), 1);
    let m = &client.measurements[0];
    assert_eq!(m.msg_size_bytes, Some(2));
    assert!(close(m.lat_min_us, 1.76));
    assert!(close(m.lat_typical_us, 1.79));
    assert!(close(m.lat_p999_us, 6.12));
    assert!(client
        .notes
        .iter()
        .any(|n| n.contains("Conflicting CPU frequency")));
    let server = runs
        .iter()
        .find(|r| r.test == "ib_read_lat" && r.role == Role::Server)
        .unwrap();
    assert_eq!(server.host.as_deref(), Some("storage03"));
}

#[test]
fn seed_004_prose_only_is_reported_as_nothing_recognised() {
    // An article about testing, with no tool output in it: not a silent `0 run(s)`.
    let r = parse("fixtures/seeds/004_c5a60d793a1d5799.txt");
    assert!(r.runs.is_empty());
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert!(r.problems[0].message.starts_with("nothing recognised"));
    assert_eq!(r.nothing, Some(linkperf::ingest::Nothing::Unrecognised));
}

#[test]
fn samples_unusual_tables() {
    let r = parse("fixtures/perftest/perftest-read_bw-all-gbits-highprecision-rows.txt");
    assert_eq!(r.runs.len(), 1);
    let run = &r.runs[0];
    assert_eq!(
        run.test, "ib_read_bw",
        "named from the file when no banner says"
    );
    assert_eq!(run.measurements.len(), 23);
    assert!(close(run.measurements[0].bw_peak_gbps, 0.045444));

    let r = parse("fixtures/perftest/perftest-send_bw-bidir-duration-server.txt");
    let m = &r.runs[0].measurements[0];
    assert_eq!(m.iterations, Some(8_758_300));
    assert_eq!(m.bw_peak_gbps, None);
    assert!((m.bw_avg_gbps.unwrap() - 11403.46 * 1048576.0 * 8.0 / 1e9).abs() < 1e-9);
    assert_eq!(r.runs[0].test, "ib_send_bw");

    let r = parse("fixtures/perftest/perftest-write_lat-server-waiting-cpufreq.txt");
    let run = &r.runs[0];
    assert_eq!(run.role, Role::Server);
    assert!(close(run.measurements[0].lat_p999_us, 1.25));
    assert_eq!(
        run.notes
            .iter()
            .filter(|n| n.contains("Conflicting CPU"))
            .count(),
        2
    );

    let r = parse("fixtures/perftest/perftest-lat-duration-tps.txt");
    assert!(close(r.runs[0].measurements[0].tps, 168068.16));
    assert!(close(r.runs[0].measurements[0].lat_avg_us, 2.97));
}

/// What each fixture yields, compact enough to review in a snapshot.
fn summary(r: &FileResult) -> serde_json::Value {
    let runs: Vec<_> = r
        .runs
        .iter()
        .map(|run| {
            serde_json::json!({
                "line": run.line,
                "tool": run.tool,
                "test": run.test,
                "role": run.role,
                "status": run.status,
                "host": run.host,
                "device": run.device,
                "mtu": run.mtu,
                "rows": run.measurements.len(),
                "first": run.measurements.first(),
                "last": run.measurements.last(),
                "notes": run.notes,
                "error": run.error,
            })
        })
        .collect();
    serde_json::json!({
        "runs": runs,
        "problems": r.problems.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
    })
}

#[test]
fn snapshots_of_every_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p
                .extension()
                .is_some_and(|e| e == "txt" || e == "json" || e == "bin" || e == "log")
            {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    for dir in [
        "fixtures/seeds",
        "fixtures/perftest",
        "fixtures/iperf2",
        "fixtures/iperf3",
        "fixtures/qperf",
        "fixtures/ibping",
        "fixtures/devinfo",
        "fixtures/linkperf-bench",
        "fixtures/invalid",
    ] {
        walk(&root.join(dir), &mut files);
    }
    for f in files {
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let r = parse(&rel);
        let name = rel.replace(['/', '.'], "_");
        insta::assert_json_snapshot!(name, summary(&r));
    }
}

#[test]
fn soft_roce_lab_captures() {
    let r = parse("fixtures/perftest/rxe-lab/write_bw-sweep-client.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let run = &r.runs[0];
    assert_eq!(
        (run.test.as_str(), run.role, run.device.as_deref()),
        ("ib_write_bw", Role::Client, Some("rxe0"))
    );
    assert_eq!(run.measurements.len(), 23);
    assert_eq!(run.command.as_ref().unwrap().flags["iters"], "5");

    // --out_json from perftest 6.06: not valid JSON, no unit; the unit is inferred.
    let r = parse("fixtures/perftest/rxe-lab/read_bw-2qp-out_json.json");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let run = &r.runs[0];
    assert_eq!(run.test, "ib_read_bw");
    assert_eq!(run.qps, Some(2));
    let m = &run.measurements[0];
    assert_eq!(m.raw_unit, "MiB/sec");
    assert!((m.bw_avg_gbps.unwrap() - 10.37 * 1048576.0 * 8.0 / 1e9).abs() < 1e-12);
    // ... and agrees with the text output of the same run.
    let text = parse("fixtures/perftest/rxe-lab/read_bw-2qp-json-client.txt");
    assert_eq!(text.runs[0].measurements[0].bw_avg_gbps, m.bw_avg_gbps);

    // --report-both: the summed row is the measurement; local and remote rows are facts.
    let r = parse("fixtures/perftest/rxe-lab/write_bw-bidir-report-both-client.txt");
    let run = &r.runs[0];
    assert_eq!(run.measurements.len(), 1);
    assert!(run.facts["local_result"].contains("14.45"));
    assert!(run.facts["remote_result"].contains("13.10"));
    assert_eq!(run.role, Role::Client);

    for (file, text) in [
        (
            "write_bw-connection-refused.txt",
            "Couldn't connect to 10.0.2.15:18999",
        ),
        (
            "write_bw-no-such-device.txt",
            "IB device nosuchdev0 not found",
        ),
    ] {
        let r = parse(&format!("fixtures/perftest/rxe-lab/{file}"));
        assert_eq!(r.runs.len(), 1, "{file}");
        assert_eq!(r.runs[0].status, RunStatus::Failed);
        assert!(r.runs[0].error.as_deref().unwrap().contains(text));
    }

    let r = parse("fixtures/perftest/rxe-lab/write_lat-duration-client.txt");
    let m = &r.runs[0].measurements[0];
    assert!(m.tps.is_some() && m.lat_avg_us.is_some());

    // `ib_write_bw --version` is not a run and not a problem.
    let r = parse("fixtures/perftest/rxe-lab/perftest-version.txt");
    assert!(r.runs.is_empty() && r.problems.is_empty());
}

/// perftest `-U`/`-H` raw latency samples belong to the result row printed after them; `-C`
/// latencies are CPU cycles under a `[usec]` header and never become microseconds.
#[test]
fn perftest_raw_samples_and_cycles() {
    let lab = |f: &str| parse(&format!("fixtures/perftest/rxe-lab/{f}"));

    // -U: every delta, unsorted (the first one is the warm-up), one per iteration after the first.
    let r = lab("write_lat-unsorted-client.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let m = &r.runs[0].measurements[0];
    assert_eq!((m.msg_size_bytes, m.iterations), (Some(64), Some(40)));
    assert_eq!(m.samples_us.len(), 39);
    assert_eq!((m.samples_us[0], m.samples_us[38]), (1057.29, 56.4282));
    let min = m.samples_us.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(
        (min - m.lat_min_us.unwrap()).abs() < 0.005,
        "t_min is the smallest sample"
    );
    assert!(r.runs[0].notes.iter().all(|n| !n.contains("sample")));
    assert_eq!(r.runs[0].facts["samples_sorted"], "no");

    // -H: sorted and tail-trimmed by perftest.
    let r = lab("send_lat-histogram-server.txt");
    let s = &r.runs[0].measurements[0].samples_us;
    assert_eq!(s.len(), 57);
    assert!(s.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(r.runs[0].facts["samples_sorted"], "yes");

    // An -a sweep: each size gets the samples printed just before its row.
    let r = lab("read_lat-sweep-unsorted-client.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let rows = &r.runs[0].measurements;
    assert_eq!(rows.len(), 23);
    assert!(rows.iter().all(|m| m.samples_us.len() == 5));
    assert_eq!(rows[0].samples_us[0], 2449.19);
    assert_eq!(rows[1].samples_us[0], 479.332);

    // -C: cycles, whether the sample list says so or only the command line does.
    for file in [
        "write_lat-cycles-client.txt",
        "write_lat-cycles-summary-client.txt",
    ] {
        let r = lab(file);
        let run = &r.runs[0];
        let m = &run.measurements[0];
        assert_eq!(m.lat_min_us, None, "{file}");
        assert_eq!(m.lat_avg_us, None, "{file}");
        assert_eq!(m.raw_unit, "cycles", "{file}");
        assert!(m.samples_us.is_empty(), "{file}");
        assert!(run.notes.iter().any(|n| n.contains("CPU cycles")), "{file}");
    }
    let r = lab("write_lat-cycles-client.txt");
    let m = &r.runs[0].measurements[0];
    assert_eq!(m.extra["t_min_cycles"], "50081");
    assert_eq!(m.extra["t_avg_cycles"], "68217.24");
    assert!(r.runs[0]
        .notes
        .iter()
        .any(|n| n.starts_with("19 raw latency samples (-H/-U) not stored: in CPU cycles")));
}

/// `linkperf bench` logs recorded in the Soft-RoCE lab read back as `linkperf-verbs` runs with
/// perftest's test names, the header's facts, the device facts and the per-size checks.
#[test]
fn linkperf_bench_logs() {
    let r = parse("fixtures/linkperf-bench/all-tests.log");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let tests: Vec<&str> = r.runs.iter().map(|x| x.test.as_str()).collect();
    assert_eq!(
        tests,
        [
            "ib_write_bw",
            "ib_read_bw",
            "ib_send_bw",
            "ib_write_lat",
            "ib_read_lat",
            "ib_send_lat",
            "ib_atomic_lat",
            "ib_atomic_lat"
        ]
    );
    for run in &r.runs {
        assert_eq!(run.tool, "linkperf-verbs");
        assert_eq!(run.role, Role::Client);
        assert_eq!(run.device.as_deref(), Some("rxe0"));
        assert_eq!((run.mtu, run.qps), (Some(1024), Some(1)));
        assert_eq!(run.link_layer.as_deref(), Some("Ethernet"));
        assert_eq!(run.facts["device.port1.gid1"], "::ffff:10.0.2.15, RoCE v2");
        assert_eq!(run.facts["gid_index"], "1");
        for m in run.measurements.iter().filter(|m| m.row_kind.is_none()) {
            assert!(
                m.extra["verified"].contains("checked") || m.extra["verified"].contains("counter")
            );
            assert_eq!(m.iterations, Some(100));
        }
    }
    assert_eq!(r.runs[6].facts["atomic_type"], "FETCH_AND_ADD");
    assert_eq!(r.runs[7].facts["atomic_type"], "CMP_AND_SWAP");
    assert_eq!(r.runs[0].measurements.len(), 3);
    let lat = &r.runs[3].measurements[1];
    assert_eq!((lat.msg_size_bytes, &*lat.raw_unit), (Some(4096), "usec"));
    assert!(lat.extra.contains_key("p99.99") && lat.lat_p999_us.is_some());

    let r = parse("fixtures/linkperf-bench/write_bw-2qp-duration-intervals.log");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let run = &r.runs[0];
    assert_eq!(run.qps, Some(2));
    assert_eq!(run.facts["duration"], "2");
    let intervals: Vec<_> = run
        .measurements
        .iter()
        .filter(|m| m.row_kind.as_deref() == Some("interval"))
        .collect();
    assert!(intervals.len() >= 4);
    let total: f64 = intervals.iter().filter_map(|m| m.transfer_bytes).sum();
    let summary = &run.measurements[0];
    let ops = summary.iterations.unwrap() as f64 * 2.0;
    // Every byte the summary row counts was completed in some slice.
    assert_eq!(total, ops * 65536.0);
}

#[test]
fn help_and_version_outputs_are_recognised_not_problems() {
    use linkperf::ingest::Nothing;
    for (file, want) in [
        (
            "fixtures/help-version/iperf3-version.txt",
            Nothing::VersionBanner,
        ),
        (
            "fixtures/help-version/iperf2-version-bare.txt",
            Nothing::VersionBanner,
        ),
        (
            "fixtures/help-version/qperf-version-bare.txt",
            Nothing::VersionBanner,
        ),
        (
            "fixtures/help-version/perftest-version-bare.txt",
            Nothing::VersionBanner,
        ),
        ("fixtures/help-version/qperf-help.txt", Nothing::HelpText),
        (
            "fixtures/help-version/iperf3-help-bare.txt",
            Nothing::HelpText,
        ),
    ] {
        let r = parse(file);
        assert!(r.runs.is_empty(), "{file}");
        assert!(r.problems.is_empty(), "{file}: {:?}", r.problems);
        assert_eq!(r.nothing, Some(want), "{file}");
    }
}

#[test]
fn a_file_without_tool_output_is_a_problem_not_a_silent_zero() {
    use linkperf::ingest::Nothing;
    let r = parse("fixtures/invalid/notes-without-tool-output.txt");
    assert!(r.runs.is_empty());
    assert_eq!(r.nothing, Some(Nothing::Unrecognised));
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].line, 1);
    assert!(r.problems[0].message.starts_with("nothing recognised"));
    // A file that yields runs says nothing of the kind.
    assert_eq!(
        parse("fixtures/seeds/000_8f7f2e13e9bf4848.txt").nothing,
        None
    );
}

/// Every file under `fixtures/` ends up as runs, problems with a line, or a recognised help or
/// version text: no input passes through an import unmentioned.
#[test]
fn every_fixture_yields_runs_problems_or_a_reason() {
    use linkperf::ingest::Nothing;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = linkperf::pipeline::collect_files(&[root.join("fixtures")]).unwrap();
    assert!(files.len() > 100, "{}", files.len());
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let r = parse(&rel);
        // What the fuzz targets assert: every run and row names a line of its file.
        let lines = std::fs::read(&file).unwrap().split(|&b| b == b'\n').count() as u32 + 1;
        for run in &r.runs {
            assert!(
                (1..=lines).contains(&run.line),
                "{rel}: run at line {}",
                run.line
            );
            for m in &run.measurements {
                assert!(
                    (1..=lines).contains(&m.line),
                    "{rel}: row at line {}",
                    m.line
                );
            }
        }
        let explained = matches!(r.nothing, Some(Nothing::HelpText | Nothing::VersionBanner));
        assert!(
            !r.runs.is_empty() || !r.problems.is_empty() || explained,
            "{rel} yields nothing and says nothing"
        );
    }
}

/// Found by the `parse_bytes` fuzz target: ibping's `rtt` line without the statistics line
/// above it (garbled here) made a summary row at line 0.
#[test]
fn an_ibping_rtt_line_alone_is_its_own_row() {
    let r = parse("fixtures/invalid/fuzz-ibping-rtt-without-statistics-line.txt");
    let ibping = r.runs.iter().find(|r| r.tool == "ibping").unwrap();
    let summary = ibping.measurements.last().unwrap();
    assert_eq!(summary.line, 29);
    assert_eq!(summary.raw_text, "rtt min/avg/max = 0.004/0.190/900.015 ms");
    assert_eq!(summary.lat_max_us, Some(900_015.0));
}

/// Found by the `read_in_pieces` fuzz target: an ibping reply whose time is no number
/// (`time 0.22.6019 ms`) was stored as a not-a-number latency. It is a problem naming its line
/// now, and the other replies and the statistics still read; a packet count beyond 64 bits
/// (hand-made) is a problem too, not a count of 0.
#[test]
fn an_ibping_time_that_is_no_number_is_a_problem_not_a_row() {
    let rel = "fixtures/invalid/fuzz-read_in_pieces-ibping-time-with-two-points.txt";
    let input = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).unwrap();
    let r = parse_bytes(rel, &input[1..]); // the first byte picks the fuzz target's piece size
                                           // The client's run (`ibping -G … -c 10` at line 54; the server's at line 42 has no rows).
    let ibping = r.runs.iter().find(|r| r.line == 54).unwrap();
    let bad = "Pong from storage02.(none) (Lid 5): time 0.22.6019 ms";
    assert!(ibping.measurements.iter().all(|m| m.raw_text != bad));
    assert!(ibping
        .measurements
        .iter()
        .all(|m| m.lat_avg_us.is_none_or(f64::is_finite)));
    assert_eq!(ibping.measurements.len(), 10); // nine replies and the statistics
    let problem = r.problems.iter().find(|p| p.line == 62).unwrap();
    assert_eq!(
        problem.message,
        format!("ibping line not understood: {bad:?}")
    );

    let counts = "[root@node01 ~]# ibping -G 0x0002c90300b382a2 -c 10\n\
                  Pong from node02 (Lid 5): time 0.019 ms\n\
                  99999999999999999999999 packets transmitted, 1 received, 0% packet loss, time 5 ms\n";
    let r = parse_bytes("counts.txt", counts.as_bytes());
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].line, 3);
    assert!(r.problems[0]
        .message
        .starts_with("ibping packet count beyond 64 bits"));
    let rows = &r.runs[0].measurements;
    assert_eq!(rows.len(), 1);
    assert!(rows.iter().all(|m| m.total.is_none()));
}

#[test]
fn an_overlong_line_is_skipped_with_a_problem() {
    // A real table with one of its rows glued into a 100 KB line (a broken copy): the line is
    // cut with a problem naming it, and the rows around it still read.
    let seed = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seeds/003_7da62a485175b0b8.txt"),
    )
    .unwrap();
    let mut lines: Vec<String> = seed.lines().map(String::from).collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with("65536"))
        .unwrap();
    lines[at] = lines[at].repeat(100_000 / lines[at].len() + 1);
    let r = parse_bytes("long.txt", lines.join("\n").as_bytes());
    let long: Vec<_> = r
        .problems
        .iter()
        .filter(|p| p.message.starts_with("line longer than 65536 bytes"))
        .collect();
    assert_eq!(long.len(), 1, "{:?}", r.problems);
    assert_eq!(long[0].line as usize, at + 1);
    let whole = parse_bytes("seed.txt", seed.as_bytes());
    let rows = |r: &FileResult| r.runs.iter().map(|r| r.measurements.len()).sum::<usize>();
    assert_eq!(rows(&r) + 1, rows(&whole));
}
