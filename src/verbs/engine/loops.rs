//! The client's timed loops: it drives every test, measures bandwidth here and latency in
//! [`super::latency`], and checks what it read; the server's side is [`super::serve`]. Every
//! spin has a deadline.

use super::latency::latency;
use super::resources::{check_pattern, Local};
use crate::verbs::ffi::{Completion, SendOp};
use crate::verbs::options::{BenchParams, BenchTest, Stop};
use crate::verbs::protocol::{Channel, Endpoint, Message};
use crate::verbs::rates::{intervals, peak_gbps, split_wr_id, wr_id};
use crate::verbs::record::SizeResult;
use anyhow::{bail, Context as _, Result};
use std::time::{Duration, Instant};

pub(super) fn completion_error(wc: &Completion, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what}: work completion failed: {} (status {}); did the peer stop?",
        wc.status_text(),
        wc.status
    )
}

/// Keeps the server's wait alive while the client measures: a `progress` message a second.
pub(super) struct Pace<'a> {
    chan: &'a mut Channel,
    last: Instant,
}

impl Pace<'_> {
    pub(super) fn beat(&mut self) -> Result<()> {
        if self.last.elapsed() >= Duration::from_secs(1) {
            self.chan.send(&Message::Progress)?;
            self.last = Instant::now();
        }
        Ok(())
    }
}

/// Client: measures one size.
pub fn run_size(
    chan: &mut Channel,
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    size: u64,
    params: &BenchParams,
    timeout: Duration,
) -> Result<SizeResult> {
    let mut pace = Pace {
        chan,
        last: Instant::now(),
    };
    let mut r = if test.is_bandwidth() {
        bandwidth(&mut pace, local, remote, test, size, params, timeout)?
    } else {
        latency(&mut pace, local, remote, test, size, params, timeout)?
    };
    // What the client itself can check: data it read or was answered with.
    let n = size as usize;
    let local_check = match test {
        BenchTest::ReadBw | BenchTest::ReadLat => (0..local.qps.len())
            .map(|q| check_pattern(&local.mr, local.recv_area(q), n, size, false))
            .collect::<Result<Vec<_>, _>>()
            .map(|_| format!("{n} bytes read back and checked")),
        BenchTest::WriteLat => check_pattern(&local.mr, local.recv_area(0), n, size, true)
            .map(|_| format!("{n} bytes of the last pong checked")),
        BenchTest::SendLat => check_pattern(&local.mr, local.recv_area(0), n, size, false)
            .map(|_| format!("{n} bytes of the last pong checked")),
        _ => Ok(String::new()),
    };
    match local_check {
        Ok(s) => r.verified = s,
        Err(e) => bail!("{test} {size} bytes: data check failed at the client: {e}"),
    }
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
fn post_bw(
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    q: usize,
    seq: u64,
    size: u64,
    signaled: bool,
    inline: bool,
) -> Result<()> {
    let (op, offset) = match test {
        BenchTest::WriteBw => (
            SendOp::Write {
                remote_addr: remote.addr + local.recv_area(q) as u64,
                rkey: remote.rkey,
            },
            local.send_area(q),
        ),
        BenchTest::ReadBw => (
            SendOp::Read {
                remote_addr: remote.addr + local.send_area(q) as u64,
                rkey: remote.rkey,
            },
            local.recv_area(q),
        ),
        _ => (SendOp::Send, local.send_area(q)),
    };
    let inline = inline && test != BenchTest::ReadBw;
    local.qps[q]
        .post_send(op, wr_id(q, seq), offset, size as u32, signaled, inline)
        .with_context(|| format!("{test}: ibv_post_send failed on QP {q}"))
}

#[allow(clippy::too_many_arguments)]
fn bandwidth(
    pace: &mut Pace,
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    size: u64,
    params: &BenchParams,
    timeout: Duration,
) -> Result<SizeResult> {
    let qps = local.qps.len();
    let depth = local.tx_depth as u64;
    // Signal one work request in `cq_mod`, as perftest does: completions cost. Bandwidth over
    // time needs finer completion times, so it signals more often.
    let cq_mod = if params.interval.is_some() {
        depth.clamp(1, 16)
    } else {
        depth.clamp(1, 100)
    };
    let inline = size <= params.inline_size as u64;
    let (target, deadline) = match params.stop {
        Stop::Iterations(n) => (n, None),
        Stop::Duration(d) => (u64::MAX, Some(Duration::from_secs_f64(d))),
    };
    let mut posted = vec![0u64; qps];
    let mut done = vec![0u64; qps];
    let mut last_signaled = vec![true; qps];
    let mut events: Vec<(f64, u64)> = Vec::new();
    let mut wcs = Vec::with_capacity(16);
    let start = Instant::now();
    let mut last_progress = start;
    let mut posting = true;
    loop {
        if posting && deadline.is_some_and(|d| start.elapsed() >= d) {
            posting = false;
            // Whatever was posted last must be signaled, or its completion would never be
            // seen and the next size could start while it is still in flight.
            for q in 0..qps {
                if !last_signaled[q] {
                    post_bw(local, remote, test, q, posted[q], size, true, inline)?;
                    posted[q] += 1;
                }
            }
        }
        if posting {
            for q in 0..qps {
                while posted[q] < target && posted[q] - done[q] < depth {
                    let seq = posted[q];
                    let signaled = (seq + 1).is_multiple_of(cq_mod) || seq + 1 == target;
                    post_bw(local, remote, test, q, seq, size, signaled, inline)?;
                    posted[q] += 1;
                    last_signaled[q] = signaled;
                }
            }
            if posted.iter().all(|&p| p >= target) {
                posting = false;
            }
        }
        local
            .send_cq
            .poll(&mut wcs)
            .with_context(|| format!("{test}: polling the CQ failed"))?;
        if wcs.is_empty() {
            if !posting && done == posted {
                break;
            }
            if last_progress.elapsed() > timeout {
                bail!(
                    "{test} {size} bytes: no completion within {} s ({} of {} work requests done); did the peer stop?",
                    timeout.as_secs_f64(),
                    done.iter().sum::<u64>(),
                    posted.iter().sum::<u64>()
                );
            }
            pace.beat()?;
            continue;
        }
        let now = start.elapsed().as_secs_f64();
        for wc in &wcs {
            if !wc.ok() {
                return Err(completion_error(wc, &format!("{test} {size} bytes")));
            }
            let (q, seq) = split_wr_id(wc.wr_id);
            let newly = seq + 1 - done[q];
            done[q] = seq + 1;
            events.push((now, newly * size));
        }
        last_progress = Instant::now();
        pace.beat()?;
        if !posting && done == posted {
            break;
        }
    }
    let elapsed = events.last().map_or(0.0, |e| e.0);
    let total_ops: u64 = done.iter().sum();
    Ok(SizeResult {
        size,
        ops: total_ops / qps as u64,
        total_ops,
        qps: qps as u32,
        elapsed_s: elapsed,
        peak_gbps: peak_gbps(&events, elapsed),
        samples_us: Vec::new(),
        intervals: params
            .interval
            .map(|s| intervals(&events, s, elapsed))
            .unwrap_or_default(),
        verified: String::new(),
    })
}

/// Polls the send CQ until `want` completions arrived or the deadline passed.
pub(super) fn reap(
    local: &Local,
    wcs: &mut Vec<Completion>,
    want: usize,
    what: &str,
    timeout: Duration,
) -> Result<usize> {
    let start = Instant::now();
    let mut got = 0;
    loop {
        local.send_cq.poll(wcs)?;
        for wc in wcs.iter() {
            if !wc.ok() {
                return Err(completion_error(wc, what));
            }
        }
        got += wcs.len();
        if got >= want {
            return Ok(got);
        }
        if start.elapsed() > timeout {
            bail!(
                "{what}: no completion within {} s; did the peer stop?",
                timeout.as_secs_f64()
            );
        }
    }
}
