//! `linkperf run` for real on loopback: iperf 2, iperf3 and qperf run between two processes on
//! 127.0.0.1, their raw logs are kept, imported, and the stored numbers are the printed ones.
//! `.ci/run` installs the tools; without them these tests fail rather than pass vacuously.
//! Each test has its own ports, below Linux's ephemeral range (32768–60999): a port in that range
//! can be taken by any outgoing connection of a test running alongside (it failed CI once).

mod common;
use common::{linkperf, read_manifest, run_dir, run_suite, text};

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn loopback_suite_end_to_end() {
    for tool in ["iperf", "iperf3", "qperf"] {
        assert!(
            Command::new("which")
                .arg(tool)
                .output()
                .unwrap()
                .status
                .success(),
            "{tool} is not installed"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let o = run_suite(
        &store,
        "suites/loopback-tcp.toml",
        &runs,
        27300,
        &["--label", "platform=loopback"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = text(&o);
    let last = String::from_utf8_lossy(&o.stdout)
        .lines()
        .last()
        .unwrap()
        .to_string();
    assert!(
        last.ends_with("report/index.html") && Path::new(&last).exists(),
        "{out}"
    );

    let dir = run_dir(&runs);
    for f in [
        "suite.toml",
        "manifest.json",
        "host-local.log",
        "iperf2-4-streams-r1-client.log",
        "iperf3-r1-server.log",
        "qperf-r1-client.log",
    ] {
        assert!(dir.join(f).exists(), "{f} missing in {}", dir.display());
    }
    let manifest = read_manifest(&runs);
    assert!(manifest["runs"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["status"] == "ok"));

    // The stored rows are exactly what importing the kept logs gives.
    let run_name = dir.file_name().unwrap().to_str().unwrap();
    for log in [
        "iperf3-r1-client.log",
        "iperf2-4-streams-r1-client.log",
        "qperf-r1-client.log",
    ] {
        let path = dir.join(log);
        let parsed = linkperf::ingest::parse_bytes(
            &path.display().to_string(),
            &std::fs::read(&path).unwrap(),
        );
        let rows: usize = parsed.runs.iter().map(|r| r.measurements.len()).sum();
        assert!(rows > 0, "{log}: no rows");
        let exported = linkperf(
            &store,
            &[
                "export",
                "--where",
                &format!("run={run_name},source={}", path.display()),
            ],
        );
        let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&exported.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), rows, "{log}");
        // Same rows, same numbers, same raw text (the store's order may differ).
        let mut want: Vec<(String, Option<f64>)> = parsed
            .runs
            .iter()
            .flat_map(|r| &r.measurements)
            .map(|m| (m.raw_text.clone(), m.bw_avg_gbps.or(m.lat_avg_us)))
            .collect();
        let mut got: Vec<(String, Option<f64>)> = lines
            .iter()
            .map(|l| {
                let v = l["bw_avg_gbps"].as_f64().or(l["lat_avg_us"].as_f64());
                (l["raw_text"].as_str().unwrap().to_string(), v)
            })
            .collect();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        got.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(got, want, "{log}");
        assert_eq!(lines[0]["labels"]["platform"], "loopback");
    }
    // iperf 2 ran 4 streams: the client's SUM total is stored.
    let sums = linkperf(
        &store,
        &[
            "export",
            "--where",
            &format!("run={run_name},test=iperf2_tcp,role=client"),
        ],
    );
    let sum_total = String::from_utf8_lossy(&sums.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["stream"] == "SUM" && r["row_kind"] == "total");
    assert!(sum_total.is_some_and(|r| r["bw_avg_gbps"].as_f64().unwrap() > 0.0));
}

#[test]
fn a_failing_test_is_recorded_and_the_suite_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let suite = tmp.path().join("suite.toml");
    // The first test's server cannot start (no such program); the second runs.
    std::fs::write(
        &suite,
        "name = \"fail-then-pass\"\n[[host]]\nname = \"l\"\ntool_paths = { iperf3 = \"/nonexistent/iperf3\" }\n[[test]]\ntool = \"iperf3\"\nserver = \"l\"\nclient = \"l\"\nduration = 1\n[[test]]\ntool = \"qperf\"\nserver = \"l\"\nclient = \"l\"\ntests = [\"tcp_lat\"]\n",
    )
    .unwrap();
    let o = run_suite(
        &store,
        suite.to_str().unwrap(),
        &runs,
        27400,
        &["--no-report"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("1 of 2 runs passed")
            && out.contains("iperf3 (repeat 1): failed: cannot start /nonexistent/iperf3"),
        "{out}"
    );
    let manifest = read_manifest(&runs);
    assert_eq!(manifest["runs"][1]["status"], "ok");
}

#[test]
fn a_port_another_program_listens_on_fails_the_run_instead_of_serving_its_client() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let _holder = std::net::TcpListener::bind(("127.0.0.1", 27950)).unwrap();
    let suite = write_suite(
        tmp.path(),
        "busy",
        "[[test]]\ntool = \"iperf3\"\nserver = \"l\"\nclient = \"l\"\nduration = 1\n",
    );
    let o = run_suite(
        &store,
        suite.to_str().unwrap(),
        &runs,
        27950,
        &["--no-report"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("iperf3 (repeat 1): failed: port 27950 already has a listener on l"),
        "{}",
        text(&o)
    );
}

#[test]
fn dry_run_and_bad_suites() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let o = linkperf(
        &store,
        &[
            "run",
            "suites/perftest-sweep.toml",
            "--dry-run",
            "--runs-dir",
            runs.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let plan = String::from_utf8_lossy(&o.stdout);
    // The remote command is one argument of ssh, quoted for the remote shell.
    assert!(plan.contains("ssh -o BatchMode=yes -o ConnectTimeout=10 root@node2 -- 'taskset -c 16-23 ib_write_bw -p 24000 -d hns_1 -a --report_gbits 192.170.1.10'"), "{plan}");
    assert!(!runs.exists(), "a dry run creates nothing");
    let bad = tmp.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"x\"\n[[test]]\ntool = \"iperf3\"\nserver = \"a\"\nclient = \"b\"\nspeed = 1\n",
    )
    .unwrap();
    let o = linkperf(&store, &["run", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("bad.toml:6:"), "{}", text(&o));
}

#[test]
fn host_pairs_run_in_parallel_with_bounded_concurrency() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let suite = tmp.path().join("suite.toml");
    // Two host pairs (a→b, b→a), both on this machine, each with a 3-second iperf3 test.
    std::fs::write(
        &suite,
        "name = \"pairs\"\nconcurrency = 2\n[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[test]]\ntool = \"iperf3\"\nname = \"a-to-b\"\nserver = \"b\"\nclient = \"a\"\nduration = 3\n[[test]]\ntool = \"iperf3\"\nname = \"b-to-a\"\nserver = \"a\"\nclient = \"b\"\nduration = 3\n",
    )
    .unwrap();
    let o = run_suite(
        &store,
        suite.to_str().unwrap(),
        &runs,
        27600,
        &["--no-report"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let manifest = read_manifest(&runs);
    let runs_m = manifest["runs"].as_array().unwrap();
    assert_eq!(runs_m.len(), 2);
    assert_eq!(
        (runs_m[0]["test"].as_str(), runs_m[1]["test"].as_str()),
        (Some("a-to-b"), Some("b-to-a"))
    );
    assert!(runs_m.iter().all(|r| r["status"] == "ok"));
}

#[test]
fn ctrl_c_keeps_what_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let suite = tmp.path().join("suite.toml");
    std::fs::write(
        &suite,
        "name = \"interrupt\"\n[[host]]\nname = \"l\"\n[[test]]\ntool = \"qperf\"\nserver = \"l\"\nclient = \"l\"\ntests = [\"tcp_lat\"]\n[[test]]\ntool = \"iperf3\"\nserver = \"l\"\nclient = \"l\"\nduration = 60\n",
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_linkperf"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("LINKPERF_STORE", &store)
        .args([
            "run",
            suite.to_str().unwrap(),
            "--runs-dir",
            runs.to_str().unwrap(),
            "--base-port",
            "27700",
            "--no-report",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the iperf3 client is running, then press Ctrl-C.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let started = runs.exists()
            && std::fs::read_dir(&runs)
                .unwrap()
                .next()
                .is_some_and(|d| d.unwrap().path().join("iperf3-r1-client.log").exists());
        if started {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "iperf3 never started");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(2), "{out}");
    assert!(
        out.contains("interrupted: kept the runs that finished")
            && out.contains("1 of 2 runs passed"),
        "{out}"
    );
    // The finished qperf run was imported.
    let rows = linkperf(&store, &["export", "--where", "test=tcp_lat"]);
    assert_eq!(String::from_utf8_lossy(&rows.stdout).lines().count(), 1);
}

/// (test, repeat) of each run, in the order they ran.
fn run_order(m: &serde_json::Value) -> Vec<(String, u64)> {
    let runs = m["runs"].as_array().unwrap();
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r["sequence"], i + 1);
    }
    runs.iter()
        .map(|r| {
            (
                r["test"].as_str().unwrap().to_string(),
                r["repeat"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn write_suite(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    // Top-level keys (order, seed) must come before the first table.
    let (top, tests) = body.split_at(body.find("[[test]]").unwrap());
    std::fs::write(
        &path,
        format!("name = \"{name}\"\n{top}[[host]]\nname = \"l\"\n{tests}"),
    )
    .unwrap();
    path
}

const TWO_IPERF3: &str = "[[test]]\ntool = \"iperf3\"\nname = \"a\"\nserver = \"l\"\nclient = \"l\"\nduration = 1\nrepeats = 2\n[[test]]\ntool = \"iperf3\"\nname = \"b\"\nserver = \"l\"\nclient = \"l\"\nduration = 1\nrepeats = 2\n";

#[test]
fn repeats_interleave_across_tests() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    let suite = write_suite(tmp.path(), "interleaved", TWO_IPERF3);
    let o = run_suite(&store, suite.to_str().unwrap(), &runs, 27800, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let m = read_manifest(&runs);
    assert_eq!(m["order"], "interleaved");
    let ab = |t: &str, r: u64| (t.to_string(), r);
    assert_eq!(
        run_order(&m),
        vec![ab("a", 1), ab("b", 1), ab("a", 2), ab("b", 2)]
    );
    // The repeats are stored: four iperf3 client runs.
    let ls = text(&linkperf(&store, &["ls", "--where", "role=client"]));
    assert_eq!(
        ls.lines().filter(|l| l.contains("iperf3")).count(),
        4,
        "{ls}"
    );
    // Sequential keeps every repeat of a test together (seen in the dry-run schedule).
    let seq = write_suite(
        tmp.path(),
        "sequential",
        &format!("order = \"sequential\"\n{TWO_IPERF3}"),
    );
    let plan = text(&linkperf(
        &store,
        &["run", seq.to_str().unwrap(), "--dry-run"],
    ));
    let order: Vec<&str> = plan.lines().filter(|l| l.contains("(repeat")).collect();
    assert_eq!(
        order
            .iter()
            .map(|l| l.split(" timeout").next().unwrap())
            .collect::<Vec<_>>(),
        vec![
            "a (repeat 1)",
            "a (repeat 2)",
            "b (repeat 1)",
            "b (repeat 2)"
        ]
    );
}

#[test]
fn auto_repeats_stop_at_the_target_width_or_the_cap_in_a_seeded_random_order() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, runs) = (tmp.path().join("store"), tmp.path().join("runs"));
    // `loose`: any interval is narrow enough, so it stops at its minimum of 2. `tight`: no
    // measured interval is that narrow, so it runs to its cap of 3. `tight` reads iperf3's JSON
    // (`-J`): its text prints three significant digits, and two one-second loopback runs printed
    // the same rate now and then, an interval of zero width that met even this target.
    let body = "order = \"random\"\nseed = 7\n[[test]]\ntool = \"iperf3\"\nname = \"loose\"\nserver = \"l\"\nclient = \"l\"\nduration = 1\nrepeats = \"auto\"\nauto = { target_ci = 10.0, min_repeats = 2, max_repeats = 4 }\n[[test]]\ntool = \"iperf3\"\nname = \"tight\"\nserver = \"l\"\nclient = \"l\"\nduration = 1\nclient_args = [\"-J\"]\nrepeats = \"auto\"\nauto = { target_ci = 1e-12, min_repeats = 2, max_repeats = 3 }\n";
    let suite = write_suite(tmp.path(), "auto", body);
    let o = run_suite(&store, suite.to_str().unwrap(), &runs, 27900, &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let m = read_manifest(&runs);
    assert_eq!(
        (m["order"].as_str(), m["seed"].as_u64()),
        (Some("random"), Some(7))
    );
    let auto = m["auto"].as_array().unwrap();
    let outcome = |name: &str| auto.iter().find(|a| a["test"] == name).unwrap().clone();
    let (loose, tight) = (outcome("loose"), outcome("tight"));
    assert_eq!(
        (loose["repeats"].as_u64(), loose["stopped"].as_str()),
        (Some(2), Some("target"))
    );
    assert!(loose["widest_ci"].as_f64().unwrap() <= 10.0);
    assert_eq!(
        (tight["repeats"].as_u64(), tight["stopped"].as_str()),
        (Some(3), Some("cap"))
    );
    assert!(tight["widest_ci"].as_f64().unwrap() > 1e-12);
    assert!(tight["widest_point"]
        .as_str()
        .unwrap()
        .contains("iperf3_tcp client"));
    // Rounds: both tests in rounds 1 and 2, in an order drawn from the seed; then `tight` alone.
    let order = run_order(&m);
    assert_eq!(order.len(), 5);
    let round = |r: u64| {
        let mut names: Vec<&str> = order
            .iter()
            .filter(|o| o.1 == r)
            .map(|o| o.0.as_str())
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        (round(1), round(2), round(3)),
        (
            vec!["loose", "tight"],
            vec!["loose", "tight"],
            vec!["tight"]
        )
    );
    assert_eq!(order[4], ("tight".to_string(), 3));
}
