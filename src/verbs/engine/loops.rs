//! The timed loops. The client drives every test; the server prepares its buffer, answers
//! ping-pongs and receives, and checks what arrived. Every spin has a deadline.

use super::resources::{check_pattern, pattern, Local};
use crate::verbs::ffi::{Completion, SendOp};
use crate::verbs::options::{BenchParams, BenchTest, Stop};
use crate::verbs::protocol::{Channel, Endpoint, Message};
use crate::verbs::record::{Interval, SizeResult};
use anyhow::{bail, Context as _, Result};
use std::time::{Duration, Instant};

const SEQ_BITS: u32 = 40;
const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

fn wr_id(qp: usize, seq: u64) -> u64 {
    ((qp as u64) << SEQ_BITS) | seq
}

fn split_wr_id(id: u64) -> (usize, u64) {
    ((id >> SEQ_BITS) as usize, id & SEQ_MASK)
}

/// The ping-pong marker of iteration `i`: never 0, different from the previous one.
fn marker(i: u64) -> u8 {
    (i % 255) as u8 + 1
}

fn completion_error(wc: &Completion, what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what}: work completion failed: {} (status {}); did the peer stop?",
        wc.status_text(),
        wc.status
    )
}

/// Keeps the server's wait alive while the client measures: a `progress` message a second.
struct Pace<'a> {
    chan: &'a mut Channel,
    last: Instant,
}

impl Pace<'_> {
    fn beat(&mut self) -> Result<()> {
        if self.last.elapsed() >= Duration::from_secs(1) {
            self.chan.send(&Message::Progress)?;
            self.last = Instant::now();
        }
        Ok(())
    }
}

/// Client: puts its buffer in the state the test starts from (before `begin`).
pub fn prepare_client(local: &Local, test: BenchTest, size: u64) {
    let n = size as usize;
    for q in 0..local.qps.len() {
        local.mr.fill(local.recv_area(q), n, |_| 0);
        local.mr.fill(local.send_area(q), n, pattern(size));
    }
    if test.is_atomic() {
        local.mr.set_word(local.recv_area(0), 0);
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

/// The best rate over windows of at least 1 ms (and 1 % of the run), so one early completion
/// batch cannot pass for the link's peak.
fn peak_gbps(events: &[(f64, u64)], elapsed: f64) -> Option<f64> {
    let window = (elapsed / 100.0).max(1e-3);
    let (mut start, mut bytes, mut best) = (0.0, 0u64, None::<f64>);
    for &(t, b) in events {
        bytes += b;
        // The tolerance keeps float noise in completion times from merging two windows.
        if t - start >= window * (1.0 - 1e-9) {
            let rate = bytes as f64 * 8.0 / (t - start) / 1e9;
            best = Some(best.map_or(rate, |x: f64| x.max(rate)));
            start = t;
            bytes = 0;
        }
    }
    best
}

/// Bytes completed per `step` seconds, from completion events.
fn intervals(events: &[(f64, u64)], step: f64, elapsed: f64) -> Vec<Interval> {
    let n = (elapsed / step).ceil().max(1.0) as usize;
    let mut out: Vec<Interval> = (0..n)
        .map(|i| Interval {
            start_s: i as f64 * step,
            end_s: ((i + 1) as f64 * step).min(elapsed.max(step * i as f64)),
            bytes: 0,
        })
        .collect();
    for &(t, b) in events {
        let i = ((t / step) as usize).min(n - 1);
        out[i].bytes += b;
    }
    // A last slice much shorter than a step holds only the drain of the requests in flight at
    // the deadline; alone it would show a burst rate the link never ran at.
    if out.len() >= 2 && out[n - 1].end_s - out[n - 1].start_s < step / 2.0 {
        let last = out.pop().expect("two slices");
        let prev = out.last_mut().expect("one slice");
        prev.end_s = last.end_s;
        prev.bytes += last.bytes;
    }
    out
}

/// Polls the send CQ until `want` completions arrived or the deadline passed.
fn reap(
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

fn latency(
    pace: &mut Pace,
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    size: u64,
    params: &BenchParams,
    timeout: Duration,
) -> Result<SizeResult> {
    let qp = &local.qps[0];
    let n = size as usize;
    let (recv_off, send_off) = (local.recv_area(0), local.send_area(0));
    let remote_recv = remote.addr + recv_off as u64;
    let remote_send = remote.addr + send_off as u64;
    let inline = size <= params.inline_size as u64
        && matches!(test, BenchTest::WriteLat | BenchTest::SendLat);
    let more = |i: u64, start: Instant| match params.stop {
        Stop::Iterations(n) => i < n,
        Stop::Duration(d) => start.elapsed().as_secs_f64() < d,
    };
    let what = format!("{test} {size} bytes");
    let mut samples = Vec::new();
    let mut wcs = Vec::with_capacity(16);
    let mut unreaped = 0usize;
    let start = Instant::now();
    let mut i = 0u64;
    while more(i, start) {
        match test {
            BenchTest::WriteLat => {
                let m = marker(i);
                local.mr.set_byte(send_off + n - 1, m);
                let t0 = Instant::now();
                qp.post_send(
                    SendOp::Write {
                        remote_addr: remote_recv,
                        rkey: remote.rkey,
                    },
                    i,
                    send_off,
                    size as u32,
                    true,
                    inline,
                )?;
                unreaped += 1;
                let mut spins = 0u64;
                while local.mr.byte(recv_off + n - 1) != m {
                    spins += 1;
                    if spins & 0xffff == 0 {
                        local.send_cq.poll(&mut wcs)?;
                        if let Some(wc) = wcs.iter().find(|w| !w.ok()) {
                            return Err(completion_error(wc, &what));
                        }
                        unreaped -= wcs.len().min(unreaped);
                        if t0.elapsed() > timeout {
                            bail!(
                                "{what}: no pong to ping {i} within {} s",
                                timeout.as_secs_f64()
                            );
                        }
                    }
                }
                samples.push(t0.elapsed().as_nanos() as f64 / 2000.0);
            }
            BenchTest::SendLat => {
                let t0 = Instant::now();
                qp.post_send(SendOp::Send, i, send_off, size as u32, true, inline)?;
                unreaped += 1;
                let mut spins = 0u64;
                loop {
                    local.recv_cq.poll(&mut wcs)?;
                    if let Some(wc) = wcs.first() {
                        if !wc.ok() {
                            return Err(completion_error(wc, &what));
                        }
                        if wc.byte_len as u64 != size {
                            bail!("{what}: pong {i} carried {} bytes", wc.byte_len);
                        }
                        break;
                    }
                    spins += 1;
                    if spins & 0xffff == 0 && t0.elapsed() > timeout {
                        bail!(
                            "{what}: no pong to ping {i} within {} s",
                            timeout.as_secs_f64()
                        );
                    }
                }
                samples.push(t0.elapsed().as_nanos() as f64 / 2000.0);
                qp.post_recv(i + 1, recv_off, local.stride as u32)?;
            }
            BenchTest::ReadLat => {
                let t0 = Instant::now();
                qp.post_send(
                    SendOp::Read {
                        remote_addr: remote_send,
                        rkey: remote.rkey,
                    },
                    i,
                    recv_off,
                    size as u32,
                    true,
                    false,
                )?;
                reap(local, &mut wcs, 1, &what, timeout)?;
                samples.push(t0.elapsed().as_nanos() as f64 / 1000.0);
            }
            BenchTest::FetchAddLat | BenchTest::CmpSwapLat => {
                local.mr.set_word(recv_off, 0xdead_beef_dead_beef);
                let op = if test == BenchTest::FetchAddLat {
                    SendOp::FetchAdd {
                        remote_addr: remote_recv,
                        rkey: remote.rkey,
                        add: 1,
                    }
                } else {
                    SendOp::CmpSwap {
                        remote_addr: remote_recv,
                        rkey: remote.rkey,
                        compare: i,
                        swap: i + 1,
                    }
                };
                let t0 = Instant::now();
                qp.post_send(op, i, recv_off, 8, true, false)?;
                reap(local, &mut wcs, 1, &what, timeout)?;
                samples.push(t0.elapsed().as_nanos() as f64 / 1000.0);
                // The old value comes back: it must be exactly the count so far. Devices may
                // hand it back in either byte order; both are accepted, garbage is not.
                let old = local.mr.word(recv_off);
                if old != i && old.swap_bytes() != i {
                    bail!("{what}: operation {i} returned {old:#x}, expected {i}");
                }
            }
            _ => unreachable!("bandwidth tests are measured elsewhere"),
        }
        if unreaped >= 64 {
            local.send_cq.poll(&mut wcs)?;
            if let Some(wc) = wcs.iter().find(|w| !w.ok()) {
                return Err(completion_error(wc, &what));
            }
            unreaped -= wcs.len().min(unreaped);
        }
        pace.beat()?;
        i += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    if unreaped > 0 {
        reap(local, &mut wcs, unreaped, &what, timeout)?;
    }
    Ok(SizeResult {
        size,
        ops: i,
        total_ops: i,
        qps: 1,
        elapsed_s: elapsed,
        peak_gbps: None,
        samples_us: samples,
        intervals: Vec::new(),
        verified: String::new(),
    })
}

/// Server: one size of one test, from `begin` to the client's `end`. Returns what the check
/// of the server's buffer found.
pub fn serve_size(
    chan: &mut Channel,
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    size: u64,
    timeout: Duration,
) -> Result<Result<String, String>> {
    let n = size as usize;
    let qps = local.qps.len();
    for q in 0..qps {
        local.mr.fill(local.recv_area(q), n, |_| 0);
        local.mr.fill(local.send_area(q), n, pattern(size));
    }
    if test.is_atomic() {
        local.mr.set_word(local.recv_area(0), 0);
    }
    chan.send(&Message::Ready)?;
    let what = format!("{test} {size} bytes");
    match test {
        BenchTest::WriteLat | BenchTest::SendLat => {
            ping_pong(chan, local, remote, test, size, timeout)?
        }
        BenchTest::SendBw => receive_all(chan, local, size, timeout)?,
        _ => {
            let ops = wait_end(chan)?;
            if test.is_atomic() {
                let w = local.mr.word(local.recv_area(0));
                if w != ops && w.swap_bytes() != ops {
                    return Ok(Err(format!(
                        "{what}: the counter is {w:#x} after {ops} operations"
                    )));
                }
                return Ok(Ok(format!("counter = {ops} after {ops} atomic operations")));
            }
            if test == BenchTest::ReadBw || test == BenchTest::ReadLat {
                return Ok(Ok("the client checks what it read".into()));
            }
        }
    }
    let skip_last = test == BenchTest::WriteLat;
    for q in 0..qps {
        if let Err(e) = check_pattern(&local.mr, local.recv_area(q), n, size, skip_last) {
            return Ok(Err(format!("QP {q}: {e}")));
        }
    }
    Ok(Ok(format!("{n} bytes checked at the server")))
}

/// Waits for the client's `end`, accepting its progress messages.
fn wait_end(chan: &mut Channel) -> Result<u64> {
    loop {
        match chan.recv()? {
            Message::Progress => continue,
            Message::End { ops } => return Ok(ops),
            other => bail!("expected end, got {}", other.kind()),
        }
    }
}

/// A message that arrived while spinning: `Some(ops)` at the end of the size.
fn poll_channel(chan: &mut Channel, heard: &mut Instant) -> Result<Option<u64>> {
    while let Some(m) = chan.try_recv()? {
        *heard = Instant::now();
        match m {
            Message::Progress => {}
            Message::End { ops } => return Ok(Some(ops)),
            other => bail!("expected end, got {}", other.kind()),
        }
    }
    Ok(None)
}

fn ping_pong(
    chan: &mut Channel,
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    size: u64,
    timeout: Duration,
) -> Result<()> {
    let qp = &local.qps[0];
    let n = size as usize;
    let (recv_off, send_off) = (local.recv_area(0), local.send_area(0));
    let what = format!("{test} {size} bytes");
    let mut wcs = Vec::with_capacity(16);
    let mut heard = Instant::now();
    let mut unreaped = 0usize;
    let mut i = 0u64;
    loop {
        let mut spins = 0u64;
        // Wait for ping i (or the end of the size).
        let arrived = loop {
            let got = match test {
                BenchTest::WriteLat => local.mr.byte(recv_off + n - 1) == marker(i),
                _ => {
                    local.recv_cq.poll(&mut wcs)?;
                    if let Some(wc) = wcs.first() {
                        if !wc.ok() {
                            return Err(completion_error(wc, &what));
                        }
                        if wc.byte_len as u64 != size {
                            bail!("{what}: ping {i} carried {} bytes", wc.byte_len);
                        }
                        true
                    } else {
                        false
                    }
                }
            };
            if got {
                break true;
            }
            spins += 1;
            if spins & 0xffff == 0 {
                if let Some(ops) = poll_channel(chan, &mut heard)? {
                    if ops != i {
                        bail!("{what}: the client counted {ops} pings, the server answered {i}");
                    }
                    break false;
                }
                if heard.elapsed() > timeout {
                    bail!(
                        "{what}: no ping and no message for {} s",
                        timeout.as_secs_f64()
                    );
                }
            }
        };
        if !arrived {
            break;
        }
        heard = Instant::now();
        if test == BenchTest::WriteLat {
            local.mr.set_byte(send_off + n - 1, marker(i));
            qp.post_send(
                SendOp::Write {
                    remote_addr: remote.addr + recv_off as u64,
                    rkey: remote.rkey,
                },
                i,
                send_off,
                size as u32,
                true,
                false,
            )?;
        } else {
            qp.post_recv(i + 1, recv_off, local.stride as u32)?;
            qp.post_send(SendOp::Send, i, send_off, size as u32, true, false)?;
        }
        unreaped += 1;
        if unreaped >= 64 {
            unreaped -= reap(local, &mut wcs, 1, &what, timeout)?.min(unreaped);
        }
        i += 1;
    }
    if unreaped > 0 {
        reap(local, &mut wcs, unreaped, &what, timeout)?;
    }
    Ok(())
}

fn receive_all(chan: &mut Channel, local: &Local, size: u64, timeout: Duration) -> Result<()> {
    let qps = local.qps.len();
    let what = format!("send_bw {size} bytes");
    let mut counts = vec![0u64; qps];
    let mut wrong_len = 0u64;
    let mut target = None;
    let mut wcs = Vec::with_capacity(16);
    let mut heard = Instant::now();
    let mut idle = 0u64;
    loop {
        local.recv_cq.poll(&mut wcs)?;
        for wc in &wcs {
            if !wc.ok() {
                return Err(completion_error(wc, &what));
            }
            let (q, _) = split_wr_id(wc.wr_id);
            counts[q] += 1;
            if wc.byte_len as u64 != size {
                wrong_len += 1;
            }
            local.qps[q].post_recv(wc.wr_id, local.recv_area(q), local.stride as u32)?;
        }
        if wcs.is_empty() {
            idle += 1;
            if idle & 0xfff == 0 {
                if let Some(ops) = poll_channel(chan, &mut heard)? {
                    target = Some(ops);
                }
                if heard.elapsed() > timeout {
                    bail!(
                        "{what}: received {} message(s), then nothing for {} s",
                        counts.iter().sum::<u64>(),
                        timeout.as_secs_f64()
                    );
                }
            }
        } else {
            heard = Instant::now();
        }
        if let Some(t) = target {
            if counts.iter().all(|&c| c >= t) {
                break;
            }
        }
    }
    if wrong_len > 0 {
        bail!("{what}: {wrong_len} message(s) arrived with the wrong length");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_request_ids_keep_qp_and_sequence() {
        assert_eq!(split_wr_id(wr_id(3, 12345)), (3, 12345));
        assert_eq!(split_wr_id(wr_id(0, SEQ_MASK)), (0, SEQ_MASK));
    }

    #[test]
    fn markers_never_repeat_back_to_back_and_are_never_zero() {
        for i in 0..1000 {
            assert_ne!(marker(i), 0);
            assert_ne!(marker(i), marker(i + 1));
        }
    }

    #[test]
    fn peak_uses_windows_and_intervals_sum_to_the_total() {
        // 1 MB per ms for 10 ms, then one 5 MB burst in a single ms.
        let mut ev: Vec<(f64, u64)> = (1..=10).map(|i| (i as f64 * 1e-3, 1_000_000)).collect();
        ev.push((11e-3, 5_000_000));
        let peak = peak_gbps(&ev, 11e-3).unwrap();
        assert!((peak - 40.0).abs() < 1e-6, "{peak}");
        let iv = intervals(&ev, 5e-3, 11e-3);
        // [0, 5) ms, then [5, 11] ms: the 1 ms tail joins the slice before it.
        assert_eq!(iv.len(), 2);
        assert_eq!(iv.iter().map(|i| i.bytes).sum::<u64>(), 15_000_000);
        assert!((iv[1].end_s - 11e-3).abs() < 1e-12);
        assert_eq!(intervals(&ev, 4e-3, 11e-3).len(), 3);
    }
}
