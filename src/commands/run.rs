//! `linkperf run`: suite → runner → raw logs → store → report. The last line printed is the
//! report's path (or the run directory with --no-report).

use crate::cli::RunArgs;
use crate::config::Config;
use crate::exit::ExitStatus;
use crate::pipeline;
use crate::report::generate::{generate, Format, Request};
use crate::runner::{self, suite::Suite};
use anyhow::{anyhow, bail, Context, Result};
use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Is `addr` this machine?
fn is_local(addr: &str) -> bool {
    addr == "localhost" || addr.starts_with("127.") || addr == "::1"
}

/// The suite of the `--tests` shortcut.
fn shortcut_suite(args: &RunArgs, tests: &[String]) -> Result<(Suite, String)> {
    let host = |name: &str, addr: &str| {
        format!(
            "[[host]]\nname = \"{name}\"\naddress = \"{addr}\"\n{}",
            if is_local(addr) {
                String::new()
            } else {
                format!("ssh = \"{addr}\"\n")
            }
        )
    };
    let mut text = format!(
        "name = \"adhoc\"\n{}{}",
        host("server", &args.server),
        host("client", &args.client)
    );
    for t in tests.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        let extra = match t {
            "iperf" | "iperf3" => "duration = 3\n",
            "qperf" => "tests = [\"tcp_bw\", \"tcp_lat\"]\n",
            _ => "sizes = \"all\"\niterations = 100\n",
        };
        text.push_str(&format!(
            "[[test]]\ntool = \"{t}\"\nserver = \"server\"\nclient = \"client\"\n{extra}"
        ));
    }
    let suite = Suite::parse(&text).map_err(|e| {
        anyhow!(
            "--tests: {}",
            e.split_once(": ").map_or(e.as_str(), |x| x.1)
        )
    })?;
    Ok((suite, text))
}

/// Imports every log of the run directory, exactly as `linkperf import` would, with `labels`
/// on every run and a pattern run's own labels (pattern, round, hosts) on both of its logs.
fn import_logs(
    store_dir: &Path,
    config: &Config,
    run_dir: &Path,
    manifest: &runner::Manifest,
    labels: &BTreeMap<String, String>,
) -> Result<pipeline::Imported> {
    let mut logs: Vec<_> = std::fs::read_dir(run_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let file_labels: HashMap<String, BTreeMap<String, String>> = manifest
        .runs
        .iter()
        .filter(|r| !r.labels.is_empty())
        .flat_map(|r| {
            [&r.server_log, &r.client_log]
                .map(|log| (run_dir.join(log).display().to_string(), r.labels.clone()))
        })
        .collect();
    pipeline::import(
        store_dir,
        &logs,
        &pipeline::Options {
            labels,
            mode: pipeline::Mode::Store,
            jobs: 0,
            check: Some(config),
            file_labels: Some(&file_labels),
            stream: Default::default(),
            listed_dirs: None,
            before_commit: None,
        },
    )
}

pub fn run(store_dir: &Path, config: &Config, args: &RunArgs) -> Result<ExitStatus> {
    let labels = super::shared::parse_labels(&args.labels)?;
    let (suite, suite_text) = match (&args.suite, &args.tests) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            (
                Suite::parse(&text).map_err(|e| anyhow!("{}:{e}", path.display()))?,
                text,
            )
        }
        (None, Some(tests)) => shortcut_suite(args, tests)?,
        (None, None) => bail!("give a suite file or --tests (see suites/ for examples)"),
    };
    // Pattern tests become one test per pair; `hosts = "@FILE"` is read beside the suite.
    let base = args
        .suite
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."));
    let mut suite = suite;
    if args.slurm {
        suite.executor = runner::suite::Executor::Slurm;
    }
    if suite.executor == runner::suite::Executor::Slurm
        && !args.dry_run
        && std::env::var_os("SLURM_JOB_ID").is_none()
    {
        bail!("the Slurm executor runs inside an allocation: salloc -N2 linkperf run --slurm SUITE (or sbatch)");
    }
    let suite = suite.expand(base, args.base_port)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let run_dir = args.runs_dir.join(format!("{stamp}-{}", suite.name));
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        // Ctrl-C: stop the tests in flight, keep what finished, still import and report it.
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    let manifest = runner::run_suite(
        &suite,
        &runner::Options {
            run_dir: &run_dir,
            suite_text: &suite_text,
            dry_run: args.dry_run,
            base_port: args.base_port,
            progress: std::io::stderr().is_terminal(),
        },
        interrupted.clone(),
    )?;
    if args.dry_run {
        return Ok(ExitStatus::Success);
    }

    let mut labels = labels;
    labels.insert("suite".into(), suite.name.clone());
    labels.insert("run".into(), manifest.run.clone());
    let imported = import_logs(store_dir, config, &run_dir, &manifest, &labels)?;
    let outcome = imported.stored.unwrap_or_default();
    let failed: Vec<_> = manifest.runs.iter().filter(|r| r.status != "ok").collect();
    outln!(
        "{} of {} runs passed; stored {} runs ({} rows from {}) in {}",
        manifest.runs.len() - failed.len(),
        manifest.runs.len(),
        outcome.added_runs,
        outcome.added_rows,
        imported.rows,
        store_dir.display()
    )?;
    for f in &failed {
        outln!(
            "  {} (repeat {}): {}: {}",
            f.test,
            f.repeat,
            f.status,
            f.error.as_deref().unwrap_or("")
        )?;
    }
    if interrupted.load(Ordering::SeqCst) {
        outln!("interrupted: kept the runs that finished")?;
    }
    let last = if args.no_report {
        run_dir.display().to_string()
    } else {
        let out = run_dir.join("report");
        let filters = [format!("run={}", manifest.run)];
        let title = format!("linkperf run {}", manifest.run);
        let report = generate(
            store_dir,
            config,
            &Request {
                output: &out,
                filters: &filters,
                by: "platform",
                baseline: None,
                formats: &[Format::Html, Format::Md],
                title: &title,
                templates: None,
                dump_context: false,
                gate: None,
                history_by: "source",
            },
        );
        match report {
            Ok(_) => out.join("index.html").display().to_string(),
            Err(e) => {
                outln!("no report: {e:#}")?;
                run_dir.display().to_string()
            }
        }
    };
    outln!("{last}")?;
    Ok(if failed.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Error
    })
}
