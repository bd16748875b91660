//! Running planned runs: start the server and wait until it listens, run the client with its
//! timeout, stop what is left, and record how each side ended, several runs at a time.

use super::counters::{self, listening, Netdevs};
use super::remote::{launch, Launch};
use super::suite::{self, Host};
use crate::counters::capture::When;
use super::{display, Planned, RunRecord};
use anyhow::{Context, Result};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Starts `argv` with stdout and stderr appended to `log`, after a `$ command` line.
fn spawn_logged(launch: &Launch, log: &Path) -> Result<Child> {
    let mut f = File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    writeln!(f, "$ {}", display(&launch.shown))?;
    f.flush()?;
    let err = f.try_clone()?;
    let argv = &launch.exec;
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(if launch.tied {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::from(f))
        .stderr(Stdio::from(err))
        .spawn()
        .with_context(|| format!("cannot start {}", argv[0]))
}

/// Sends SIGINT (tools print their summary on it), then SIGKILL if the process lingers. A
/// program tied to its ssh connection ([`Launch::tied`]) is first asked through it: its input
/// closes, the remote side sends it SIGINT, and its summary comes back before ssh ends.
fn stop(child: &mut Child, grace: Duration) -> Option<i32> {
    if let Ok(Some(s)) = child.try_wait() {
        return s.code();
    }
    if let Some(input) = child.stdin.take() {
        drop(input);
        if let Some(code) = wait_exit(child, grace) {
            return code;
        }
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    if let Some(code) = wait_exit(child, grace) {
        return code;
    }
    let _ = child.kill();
    child.wait().ok().and_then(|s| s.code())
}

/// The child's exit code once it exits within `grace`; `None` while it still runs.
fn wait_exit(child: &mut Child, grace: Duration) -> Option<Option<i32>> {
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s.code());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// Waits for a child until `timeout` or an interrupt. `Err(true)` timed out, `Err(false)` interrupted.
fn wait(
    child: &mut Child,
    timeout: Duration,
    interrupted: &AtomicBool,
) -> std::result::Result<Option<i32>, bool> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(s)) = child.try_wait() {
            return Ok(s.code());
        }
        if interrupted.load(Ordering::SeqCst) {
            return Err(false);
        }
        if Instant::now() >= deadline {
            return Err(true);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs one round: runs between the same two hosts go one after another; different host pairs
/// run in parallel, at most `concurrency` at a time (each test has its own ports), and never
/// two at once on one machine ([`Host::machine`]: the NICs of one machine share its CPUs and
/// PCIe): a pair waits until both its machines are free, so a pattern's rounds keep every host
/// in one test at a time. Records come back in the batch's order.
pub(super) fn execute_batch(
    batch: &[Planned<'_>],
    concurrency: usize,
    dir: &Path,
    netdevs: &Netdevs,
    interrupted: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> Vec<RunRecord> {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, (_, s, c, _)) in batch.iter().enumerate() {
        let key = format!("{}|{}", s.name, c.name);
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(i),
            None => groups.push((key, vec![i])),
        }
    }
    let hosts_of = |g: &[usize]| {
        let (_, s, c, _) = &batch[g[0]];
        [s.machine(), c.machine()]
    };
    // Groups in the batch's order (a pattern's round order), and the hosts in a test now.
    let state = std::sync::Mutex::new((
        groups.into_iter().map(|g| g.1).collect::<std::collections::VecDeque<_>>(),
        std::collections::HashSet::<String>::new(),
    ));
    let freed = std::sync::Condvar::new();
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, 64) {
            scope.spawn(|| loop {
                let mut guard = state.lock().expect("queue");
                let group = loop {
                    let (queue, busy) = &mut *guard;
                    if queue.is_empty() {
                        break None;
                    }
                    let free = queue
                        .iter()
                        .position(|g| hosts_of(g).iter().all(|h| !busy.contains(h)));
                    if let Some(at) = free {
                        let g = queue.remove(at).expect("in range");
                        busy.extend(hosts_of(&g));
                        break Some(g);
                    }
                    guard = freed.wait(guard).expect("queue");
                };
                drop(guard);
                let Some(group) = group else { break };
                for &i in &group {
                    if interrupted.load(Ordering::SeqCst) {
                        break;
                    }
                    let (t, server, client, r) = &batch[i];
                    let record = execute(t, server, client, r, dir, netdevs, interrupted, bar);
                    results.lock().expect("results").push((i, record));
                }
                let mut guard = state.lock().expect("queue");
                for h in hosts_of(&group) {
                    guard.1.remove(&h);
                }
                freed.notify_all();
            });
        }
    });
    let mut records = results.into_inner().expect("results");
    records.sort_by_key(|(i, _)| *i);
    records.into_iter().map(|(_, r)| r).collect()
}

/// Runs one planned run: counters, server, readiness, client, timeouts, stop, counters.
#[allow(clippy::too_many_arguments)]
fn execute(
    t: &suite::Test,
    server: &Host,
    client: &Host,
    r: &suite::PlannedRun,
    dir: &Path,
    netdevs: &Netdevs,
    interrupted: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> RunRecord {
    bar.set_message(format!("{} {} → {}", r.test, client.name, server.name));
    let stem = match r.size {
        Some(s) => format!("{}-r{}-s{s}", r.test, r.repeat),
        None => format!("{}-r{}", r.test, r.repeat),
    };
    let (slog, clog) = (
        dir.join(format!("{stem}-server.log")),
        dir.join(format!("{stem}-client.log")),
    );
    let start = Instant::now();
    let (sargv, cargv) = (launch(server, &r.server), launch(client, &r.client));
    let name = |p: &Path| {
        p.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string()
    };
    let mut record = RunRecord {
        sequence: 0,
        test: r.test.clone(),
        repeat: r.repeat,
        size: r.size,
        server_command: sargv.shown.clone(),
        client_command: cargv.shown.clone(),
        server_log: name(&slog),
        client_log: name(&clog),
        server_exit: None,
        client_exit: None,
        seconds: 0.0,
        status: "ok".into(),
        error: None,
        labels: t.expanded.as_ref().map(|e| e.labels.clone()).unwrap_or_default(),
    };
    let sides = counters::sides(server, client, &slog, &clog);
    read_counters(&sides, netdevs, When::Before { log_line: 1 });
    if let Some(mut srv) = start_server(server, r.port, &sargv, &slog, interrupted, &mut record) {
        record.error = None;
        run_client(t, &cargv, &clog, interrupted, &mut record);
        // Servers that serve one client (perftest, iperf3 -1) exit by themselves.
        let grace = Instant::now() + Duration::from_secs(3);
        while Instant::now() < grace {
            if let Ok(Some(_)) = srv.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        record.server_exit = stop(&mut srv, Duration::from_secs(3));
    } else {
        record.status = "failed".into();
    }
    read_counters(&sides, netdevs, When::After);
    record.seconds = start.elapsed().as_secs_f64();
    bar.inc(1);
    record
}

/// One counters read on each side. A counters file that cannot be written loses the run its
/// counters, not its result: said on standard error.
fn read_counters(sides: &[(&Host, std::path::PathBuf)], netdevs: &Netdevs, when: When) {
    for (host, path) in sides {
        if let Err(e) = counters::read(host, netdevs, path, when) {
            eprintln!("linkperf: counters of {}: {e:#}", host.name);
        }
    }
}

/// Starts the server and waits until it listens on `port`; retries once when it dies or
/// never listens. `None` (with the record's error set) when it never did.
fn start_server(
    server: &Host,
    port: u16,
    argv: &Launch,
    log_path: &Path,
    interrupted: &AtomicBool,
    record: &mut RunRecord,
) -> Option<Child> {
    // Another program's listener would pass the listening check below and take our client.
    if listening(server, port) {
        record.error = Some(format!(
            "port {port} already has a listener on {}: another program (or a run with the same --base-port) holds it; choose another --base-port",
            server.name
        ));
        return None;
    }
    for attempt in 0..2 {
        let mut child = match spawn_logged(argv, log_path) {
            Ok(c) => c,
            Err(e) => {
                record.error = Some(format!("{e:#}"));
                return None;
            }
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline && !interrupted.load(Ordering::SeqCst) {
            if listening(server, port) {
                return Some(child);
            }
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        record.server_exit = stop(&mut child, Duration::from_secs(2));
        let log = std::fs::read_to_string(log_path).unwrap_or_default();
        record.error = Some(format!(
            "server did not listen on port {port} (attempt {}): {}",
            attempt + 1,
            last_words(&log)
        ));
    }
    None
}

/// The last two lines a server printed (its command line, the log's first, left out): tools
/// end on a line such as `iperf3: exiting` that hides the reason given just before it.
fn last_words(log: &str) -> String {
    let lines: Vec<&str> = log
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.len() {
        0 => "no output".into(),
        n => lines[n.saturating_sub(2)..].join(" / "),
    }
}

/// Runs the client to its end, its timeout or an interrupt, and records how it ended.
fn run_client(
    t: &suite::Test,
    argv: &Launch,
    log_path: &Path,
    interrupted: &AtomicBool,
    record: &mut RunRecord,
) {
    let mut cli = match spawn_logged(argv, log_path) {
        Ok(c) => c,
        Err(e) => {
            record.status = "failed".into();
            record.error = Some(format!("{e:#}"));
            return;
        }
    };
    match wait(&mut cli, Duration::from_secs(t.timeout_s), interrupted) {
        Ok(code) => {
            record.client_exit = code;
            if code != Some(0) {
                record.status = "failed".into();
                let log = std::fs::read_to_string(log_path).unwrap_or_default();
                record.error = Some(
                    log.lines()
                        .skip(1)
                        .filter(|l| !l.trim().is_empty())
                        .last()
                        .unwrap_or("client failed")
                        .to_string(),
                );
            }
        }
        Err(timed_out) => {
            record.client_exit = stop(&mut cli, Duration::from_secs(2));
            record.status = if timed_out { "timeout" } else { "interrupted" }.into();
            record.error = Some(if timed_out {
                format!("client timed out after {} s", t.timeout_s)
            } else {
                "interrupted".into()
            });
        }
    }
}
