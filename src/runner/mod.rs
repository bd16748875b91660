//! `linkperf run`: runs a suite's tests between hosts (this machine, or remote ones through the
//! system ssh client), keeps every raw log exactly as the tools printed it (after one `$ command`
//! line), captures host facts, writes a manifest, imports the logs through the same parsers as
//! `linkperf import`, and writes a report.
//!
//! Per run: start the server, wait until its port listens, start the client, enforce timeouts
//! on both, stop the server (SIGINT, so it prints its summary), retry a server that failed to
//! start once. A failed test is recorded with its error and the suite goes on. Ctrl-C stops the
//! tests in flight and keeps what finished.

pub mod auto;
mod counters;
mod execute;
mod expand;
pub mod pattern;
mod remote;
pub mod suite;

use anyhow::{Context, Result};
use execute::execute_batch;
use serde::Serialize;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use suite::{on_host, Host, Suite};

/// What happened to one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    /// Position in the order the runs were started (1, 2, …).
    pub sequence: usize,
    pub test: String,
    pub repeat: u32,
    pub size: Option<u64>,
    pub server_command: Vec<String>,
    pub client_command: Vec<String>,
    pub server_log: String,
    pub client_log: String,
    pub server_exit: Option<i32>,
    pub client_exit: Option<i32>,
    pub seconds: f64,
    /// `ok`, `failed`, `timeout`, `interrupted`.
    pub status: String,
    pub error: Option<String>,
    /// Labels of a pattern test's run (pattern, round, fleet_test, server_host, client_host),
    /// stored with both sides' runs.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub labels: std::collections::BTreeMap<String, String>,
}

/// The manifest of a run directory.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    pub suite: String,
    pub run: String,
    pub linkperf: String,
    /// The order repeats ran in, and the seed of a random order.
    pub order: suite::Order,
    pub seed: Option<u64>,
    pub hosts: Vec<String>,
    /// In the order they ran.
    pub runs: Vec<RunRecord>,
    /// How each `repeats = "auto"` test stopped.
    pub auto: Vec<auto::Outcome>,
}

/// Shell-style rendering of an argument vector, for the log's first line.
pub(crate) fn display(argv: &[String]) -> String {
    argv.iter()
        .map(|a| suite::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Options of a suite run.
pub struct Options<'a> {
    pub run_dir: &'a Path,
    /// The suite as written (saved as suite.toml in the run directory).
    pub suite_text: &'a str,
    pub dry_run: bool,
    pub base_port: u16,
    pub progress: bool,
}

/// Host facts: each command's output after a `$ command` line, in one log per host, so the
/// device listings import as device facts. Returns the log and the netdevs of the host's RDMA
/// devices (`rdma link`).
fn host_facts(host: &Host, dir: &Path) -> Result<(PathBuf, Vec<String>)> {
    let path = dir.join(format!("host-{}.log", host.name));
    let mut f = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    let cmds: Vec<Vec<&str>> = vec![
        vec!["uname", "-a"],
        vec!["cat", "/etc/os-release"],
        vec!["lscpu"],
        vec!["ibv_devinfo", "-v"],
        vec!["rdma", "link"],
        vec![
            "sysctl",
            "net.core.rmem_max",
            "net.core.wmem_max",
            "net.ipv4.tcp_rmem",
            "net.ipv4.tcp_wmem",
        ],
        vec!["iperf3", "--version"],
        vec!["iperf", "-v"],
        vec!["qperf", "--version"],
        vec!["ib_write_bw", "--version"],
    ];
    let mut netdevs = Vec::new();
    for c in cmds {
        let argv = on_host(
            host,
            &suite::Argv(c.iter().map(|s| s.to_string()).collect()),
        );
        writeln!(f, "$ {}", c.join(" "))?;
        let out = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::null())
            .output();
        match out {
            Ok(o) => {
                f.write_all(&o.stdout)?;
                f.write_all(&o.stderr)?;
                if c == ["rdma", "link"] {
                    netdevs = crate::counters::capture::netdevs_of_rdma_link(
                        &String::from_utf8_lossy(&o.stdout),
                    );
                }
            }
            Err(e) => writeln!(f, "(not run: {e})")?,
        }
    }
    for nd in netdevs.clone() {
        for c in [
            vec!["ethtool".to_string(), nd.clone()],
            vec!["ethtool".into(), "-i".into(), nd.clone()],
        ] {
            let argv = on_host(host, &suite::Argv(c.clone()));
            writeln!(f, "$ {}", c.join(" "))?;
            if let Ok(o) = Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::null())
                .output()
            {
                f.write_all(&o.stdout)?;
                f.write_all(&o.stderr)?;
            }
        }
    }
    Ok((path, netdevs))
}

type Planned<'a> = (&'a suite::Test, &'a Host, &'a Host, suite::PlannedRun);

/// Runs a suite into `opts.run_dir`. Returns the manifest (also written as manifest.json).
///
/// Repeats run in rounds (see [`suite::Order`]): round `r` holds repeat `r` of every test that
/// still runs, so A B A B … by default. A test with `repeats = "auto"` leaves the rounds once
/// every point's median is known to its target precision, or at its cap.
pub fn run_suite(
    suite: &Suite,
    opts: &Options<'_>,
    interrupted: Arc<AtomicBool>,
) -> Result<Manifest> {
    let mut tests = Vec::new();
    for (i, t) in suite.tests.iter().enumerate() {
        let (server, client) = (suite.host(&t.server)?, suite.host(&t.client)?);
        // A suite from `Suite::expand` carries each test's port.
        let port = t.expanded.as_ref().map_or(
            opts.base_port.wrapping_add((i as u16).wrapping_mul(10)),
            |e| e.port,
        );
        tests.push((t, server, client, port));
    }
    let run_name = opts
        .run_dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("run")
        .to_string();
    let mut manifest = Manifest {
        suite: suite.name.clone(),
        run: run_name,
        linkperf: env!("CARGO_PKG_VERSION").into(),
        order: suite.order,
        seed: (suite.order == suite::Order::Random).then(|| suite.seed.unwrap_or(1)),
        hosts: vec![],
        runs: vec![],
        auto: vec![],
    };
    if opts.dry_run {
        print_plan(suite, &tests)?;
        return Ok(manifest);
    }
    std::fs::create_dir_all(opts.run_dir)
        .with_context(|| format!("cannot create {}", opts.run_dir.display()))?;
    std::fs::write(opts.run_dir.join("suite.toml"), opts.suite_text)?;
    let mut netdevs = counters::Netdevs::new();
    for h in &suite.hosts {
        let (log, nds) = host_facts(h, opts.run_dir)?;
        manifest.hosts.push(
            log.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string(),
        );
        netdevs.insert(h.name.clone(), nds);
    }
    let bar = progress_bar(schedule_preview(suite, &tests).len(), opts.progress);
    let mut states: Vec<auto::State> = tests.iter().map(|(t, ..)| auto::State::new(t)).collect();
    let mut rng = crate::stats::Rng::new(manifest.seed.unwrap_or(1));
    let run_round = |active: Vec<usize>, states: &mut [auto::State], runs: &mut Vec<RunRecord>| {
        let batch: Vec<Planned> = active
            .iter()
            .flat_map(|&i| {
                let (t, s, c, port) = tests[i];
                suite::plan_repeat(t, s, c, port, states[i].next_repeat)
                    .into_iter()
                    .map(move |r| (t, s, c, r))
            })
            .collect();
        let records = execute_batch(
            &batch,
            suite.concurrency,
            opts.run_dir,
            &netdevs,
            &interrupted,
            &bar,
        );
        for &i in &active {
            let name = tests[i]
                .0
                .name
                .clone()
                .unwrap_or_else(|| tests[i].0.tool.clone());
            let mine: Vec<&RunRecord> = records.iter().filter(|r| r.test == name).collect();
            states[i].record(&mine, opts.run_dir);
        }
        for mut r in records {
            r.sequence = runs.len() + 1;
            runs.push(r);
        }
    };
    let mut runs = Vec::new();
    match suite.order {
        suite::Order::Sequential => {
            for i in 0..tests.len() {
                while !states[i].done() && !interrupted.load(Ordering::SeqCst) {
                    run_round(vec![i], &mut states, &mut runs);
                }
            }
        }
        suite::Order::Interleaved | suite::Order::Random => loop {
            let mut active: Vec<usize> = (0..tests.len()).filter(|&i| !states[i].done()).collect();
            if active.is_empty() || interrupted.load(Ordering::SeqCst) {
                break;
            }
            if suite.order == suite::Order::Random {
                rng.shuffle(&mut active);
            }
            run_round(active, &mut states, &mut runs);
        },
    }
    bar.finish_and_clear();
    manifest.runs = runs;
    manifest.auto = states
        .into_iter()
        .filter_map(auto::State::outcome)
        .collect();
    std::fs::write(
        opts.run_dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest)? + "\n",
    )?;
    Ok(manifest)
}

/// `--dry-run`: the schedule as if every `auto` test ran to its cap, with each command as it
/// would run on its host.
fn print_plan(
    suite: &Suite,
    tests: &[(&suite::Test, &Host, &Host, u16)],
) -> std::io::Result<()> {
    for (t, s, c, r) in schedule_preview(suite, tests) {
        outln!("{} (repeat {}) timeout {} s", r.test, r.repeat, t.timeout_s)?;
        outln!(
            "  server on {}: {}",
            s.name,
            display(&on_host(s, &r.server))
        )?;
        outln!(
            "  client on {}: {}",
            c.name,
            display(&on_host(c, &r.client))
        )?;
    }
    Ok(())
}

/// A progress bar over `len` runs, drawn only on a terminal.
fn progress_bar(len: usize, visible: bool) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len as u64);
    if visible {
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{pos}/{len} {wide_msg} [{elapsed_precise}, ETA {eta}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar
}

/// Every run in the order a suite would run them if each `auto` test ran to its cap.
fn schedule_preview<'a>(
    suite: &Suite,
    tests: &[(&'a suite::Test, &'a Host, &'a Host, u16)],
) -> Vec<Planned<'a>> {
    let plan = |i: usize, repeat: u32| {
        let (t, s, c, port) = tests[i];
        suite::plan_repeat(t, s, c, port, repeat)
            .into_iter()
            .map(move |r| (t, s, c, r))
    };
    let mut out = Vec::new();
    let most = tests
        .iter()
        .map(|t| suite::max_repeats(t.0))
        .max()
        .unwrap_or(0);
    let mut rng = crate::stats::Rng::new(suite.seed.unwrap_or(1));
    match suite.order {
        suite::Order::Sequential => {
            for (i, test) in tests.iter().enumerate() {
                for repeat in 1..=suite::max_repeats(test.0) {
                    out.extend(plan(i, repeat));
                }
            }
        }
        _ => {
            for repeat in 1..=most {
                let mut active: Vec<usize> = (0..tests.len())
                    .filter(|&i| suite::max_repeats(tests[i].0) >= repeat)
                    .collect();
                if suite.order == suite::Order::Random {
                    rng.shuffle(&mut active);
                }
                for i in active {
                    out.extend(plan(i, repeat));
                }
            }
        }
    }
    out
}
