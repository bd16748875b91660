//! `linkperf bench`: the native verbs runner. The server side serves one client; the client
//! side runs the tests, prints perftest-style tables, writes them to a log and stores one run
//! per test whose rows point at their lines in that log.

use crate::cli::BenchArgs;
use crate::exit::ExitStatus;
use crate::verbs::options::{sweep_sizes, BenchParams, BenchTest, Stop};
use anyhow::Result;
#[cfg(feature = "verbs")]
use std::path::Path;

/// The parameters the client sends, from the command line.
pub fn params_from(args: &BenchArgs) -> Result<BenchParams> {
    let sizes = if args.all {
        sweep_sizes(args.max_size)
    } else {
        args.size.clone()
    };
    let latency = args.tests.iter().any(|t| !t.is_bandwidth());
    let stop = match (args.iters, args.duration) {
        (_, Some(d)) => Stop::Duration(d),
        (Some(n), None) => Stop::Iterations(n),
        // perftest's defaults: 1000 iterations for latency tests, 5000 for bandwidth.
        (None, None) if latency => Stop::Iterations(1000),
        (None, None) => Stop::Iterations(5000),
    };
    let mut tests: Vec<BenchTest> = Vec::new();
    for t in &args.tests {
        if !tests.contains(t) {
            tests.push(*t);
        }
    }
    let params = BenchParams {
        tests,
        sizes,
        stop,
        tx_depth: args.tx_depth,
        qps: args.qps,
        inline_size: args.inline_size,
        mtu: args.mtu,
        interval: args.interval,
    };
    params.validate().map_err(anyhow::Error::msg)?;
    if !(args.timeout > 0.0 && args.timeout <= 86400.0) {
        anyhow::bail!(
            "--timeout {}: must be between 0 and 86400 seconds",
            args.timeout
        );
    }
    if !(args.accept_timeout > 0.0 && args.accept_timeout <= 86400.0) {
        anyhow::bail!(
            "--accept-timeout {}: must be between 0 and 86400 seconds",
            args.accept_timeout
        );
    }
    Ok(params)
}

#[cfg(not(feature = "verbs"))]
pub fn run(_store: &std::path::Path, args: &BenchArgs) -> Result<ExitStatus> {
    // Options are still checked first, so a typo is reported as such.
    params_from(args)?;
    Err(super::shared::not_built("bench"))
}

#[cfg(feature = "verbs")]
pub fn run(store_dir: &Path, args: &BenchArgs) -> Result<ExitStatus> {
    use crate::store::Store;
    use crate::verbs::engine::{self, LocalSetup};
    use crate::verbs::record;
    use anyhow::Context as _;
    use std::io::Write;
    use std::time::Duration;

    let params = params_from(args)?;
    let percentiles = &args.percentiles;
    let labels = super::shared::parse_labels(&args.labels)?;
    let setup = LocalSetup {
        device: args.device.clone(),
        ib_port: args.ib_port,
        gid_index: args.gid_index,
        timeout: Duration::from_secs_f64(args.timeout),
    };
    if args.listen {
        engine::serve(
            &setup,
            args.port,
            Duration::from_secs_f64(args.accept_timeout),
            &mut |m| eprintln!("{m}"),
        )?;
        return Ok(ExitStatus::Success);
    }
    let server = args.server.as_deref().context("--server is required")?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // `--log -`: the whole log (device facts included) to standard output instead of the
    // terminal view; `linkperf run` keeps that as the client's raw log and imports it.
    let log_to_stdout = args.log.as_deref() == Some(Path::new("-"));
    let log_path = match &args.log {
        Some(_) if log_to_stdout => None,
        Some(p) => Some(p.clone()),
        None if args.no_store => None,
        None => Some(
            store_dir
                .join("logs")
                .join(format!("bench-{now}-{}.log", std::process::id())),
        ),
    };
    let mut log = log_path.as_deref().map(create_log).transpose()?;
    let source = log_path
        .as_ref()
        .map_or("linkperf bench".to_string(), |p| p.display().to_string());
    let counters = log_path.as_deref().and_then(counters::open);
    let mut tests_done = 0;
    let mut lines_written = 0u32;
    let mut runs = Vec::new();
    let mut on_test = |test: BenchTest,
                       info: &record::SessionInfo,
                       results: &[record::SizeResult]|
     -> Result<()> {
        let rendered =
            crate::benchlog::write::render_test(test, results, &params, info, percentiles);
        let mut out = std::io::stdout().lock();
        if log_to_stdout {
            for l in &rendered.lines {
                writeln!(out, "{l}")?;
            }
        } else {
            for l in rendered.terminal_lines() {
                writeln!(out, "{l}")?;
            }
        }
        if args.histogram {
            for r in results.iter().filter(|r| !r.samples_us.is_empty()) {
                print_histogram(&mut out, r)?;
            }
        }
        if let Some(f) = log.as_mut() {
            for l in &rendered.lines {
                writeln!(f, "{l}").with_context(|| format!("cannot write {source}"))?;
            }
            f.flush()?;
        }
        let first_line = lines_written + 1;
        lines_written += rendered.lines.len() as u32;
        tests_done += 1;
        if let Some(c) = &counters {
            let next = (tests_done < params.tests.len()).then_some(lines_written + 1);
            counters::after_test(c, info, first_line, next)?;
        }
        let mut run = crate::pipeline::bench_run(info, &source, first_line, &rendered)?;
        run.labels = labels.clone();
        runs.push(run);
        Ok(())
    };
    engine::run_client(&setup, server, args.port, &params, &mut on_test, &mut |m| {
        eprintln!("{m}")
    })
    .context("nothing was stored")?;
    if args.no_store {
        return Ok(ExitStatus::Success);
    }
    if let Some(c) = &counters {
        counters::attach(c, &mut runs)?;
    }
    let store = Store::open(store_dir, true)?;
    let rows: usize = runs.iter().map(|r| r.measurements.len()).sum();
    let outcome = store.add(runs)?;
    eprintln!(
        "stored {} run(s) ({rows} rows) in {}; log: {source}",
        outcome.added_runs,
        store.root().display()
    );
    Ok(ExitStatus::Success)
}

/// Creates the bench log (and its folder).
#[cfg(feature = "verbs")]
fn create_log(p: &Path) -> Result<std::fs::File> {
    use anyhow::Context as _;
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))
}

/// The counters file beside a bench log: this host's counters before and after each test,
/// and the server's when it runs on another host (it sends them with each test's `Done`).
#[cfg(feature = "verbs")]
mod counters {
    use crate::counters::capture::{LocalFile, When};
    use crate::model::Run;
    use crate::verbs::record::SessionInfo;
    use anyhow::{Context, Result};
    use std::path::Path;

    /// Creates the file beside `log` with the first `before` read; `None` (said on standard
    /// error) when it cannot be written: the session runs without counters.
    pub fn open(log: &Path) -> Option<LocalFile> {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        let file = LocalFile::create(&crate::counters::sidecar_path(log), host.trim());
        let file = file.and_then(|f| f.read(When::Before { log_line: 1 }).map(|()| f));
        file.map_err(|e| eprintln!("linkperf: no counters: {e}")).ok()
    }

    /// After a test whose log block starts at `first_line`: this host's `after` read, the
    /// server's reads, and the `before` read of the test whose block starts at `next`.
    pub fn after_test(
        c: &LocalFile,
        info: &SessionInfo,
        first_line: u32,
        next: Option<u32>,
    ) -> Result<()> {
        let mut read = c.read(When::After);
        if let Some((server, reads)) = &info.server_counters {
            let here = info.host.as_deref().unwrap_or("");
            read = read.and_then(|()| c.append_other(server, reads, first_line, here));
        }
        if let Some(log_line) = next {
            read = read.and_then(|()| c.read(When::Before { log_line }));
        }
        read.with_context(|| format!("cannot write {}", c.path().display()))
    }

    /// Gives the session's runs their counters, as importing the log would.
    pub fn attach(c: &LocalFile, runs: &mut [Run]) -> Result<()> {
        let text = std::fs::read_to_string(c.path())?;
        let file = crate::counters::read::parse(&text);
        let name = c.path().display().to_string();
        for (line, why) in &file.problems {
            eprintln!("linkperf: {name}:{line}: {why}");
        }
        crate::counters::delta::attach(&file, &name, runs);
        Ok(())
    }
}

/// Latency samples as a text histogram: 20 bins from the minimum to the 99th percentile, and
/// one for the tail above it (equal bins over the whole range would put the body in one bin).
#[cfg(feature = "verbs")]
fn print_histogram(
    out: &mut impl std::io::Write,
    r: &crate::verbs::record::SizeResult,
) -> Result<()> {
    use crate::stats::samples::{histogram, percentile, sorted};
    let s = sorted(&r.samples_us);
    let p99 = percentile(&s, 99.0).unwrap_or(0.0);
    let body: Vec<f64> = s.iter().copied().filter(|&x| x <= p99).collect();
    let tail = s.len() - body.len();
    writeln!(
        out,
        "# latency histogram, {} bytes ({} samples, usec):",
        r.size,
        s.len()
    )?;
    let bins = histogram(&body, 20);
    let most = bins.iter().map(|b| b.2).max().unwrap_or(1).max(tail).max(1);
    for (lo, hi, n) in bins {
        let bar = "#".repeat((n * 50).div_ceil(most));
        writeln!(out, "#  {lo:>10.2} - {hi:>10.2} {n:>8} {bar}")?;
    }
    if tail > 0 {
        let max = s.last().copied().unwrap_or(p99);
        let bar = "#".repeat((tail * 50).div_ceil(most));
        writeln!(
            out,
            "#  {p99:>10.2} - {max:>10.2} {tail:>8} {bar} (above p99)"
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn params(args: &[&str]) -> Result<BenchParams> {
        let cli = Cli::try_parse_from([&["linkperf", "bench"], args].concat())?;
        let Command::Bench(b) = cli.command else {
            unreachable!()
        };
        params_from(&b)
    }

    #[test]
    fn defaults_follow_perftest() {
        let p = params(&["--server", "h"]).unwrap();
        assert_eq!(p.tests, vec![BenchTest::WriteBw]);
        assert_eq!(p.sizes, vec![65536]);
        assert_eq!(p.stop, Stop::Iterations(5000));
        assert_eq!(p.tx_depth, 128);
        let p = params(&["--server", "h", "--tests", "write_bw,send_lat"]).unwrap();
        assert_eq!(p.stop, Stop::Iterations(1000));
    }

    #[test]
    fn sizes_sweeps_and_suffixes() {
        let p = params(&["--server", "h", "-s", "2,64K,8M"]).unwrap();
        assert_eq!(p.sizes, vec![2, 65536, 8 << 20]);
        let p = params(&["--server", "h", "-a", "--max-size", "1K"]).unwrap();
        assert_eq!(p.sizes, vec![2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
        let p = params(&["--server", "h", "-a"]).unwrap();
        assert_eq!(p.sizes.last(), Some(&(8 << 20)));
        let p = params(&["--server", "h", "-D", "2", "--interval", "0.5"]).unwrap();
        assert_eq!(p.stop, Stop::Duration(2.0));
        assert_eq!(p.interval, Some(0.5));
    }

    #[test]
    fn bad_options_name_themselves() {
        let e = |a: &[&str]| format!("{:#}", params(a).unwrap_err());
        assert!(e(&["--server", "h", "-s", "12Q"]).contains("expected a size"));
        assert!(e(&["--server", "h", "--mtu", "1500"]).contains("--mtu 1500"));
        assert!(e(&["--server", "h", "--timeout", "0"]).contains("--timeout 0"));
        assert!(e(&["--server", "h", "--tests", "nope"]).contains("nope"));
        assert!(e(&["--server", "h", "-n", "5", "-D", "1"]).contains("cannot be used with"));
        assert!(e(&[]).contains("--server"));
        assert!(e(&["--server", "h", "-q", "2", "--tests", "read_lat"]).contains("one QP"));
    }
}
