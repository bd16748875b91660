//! The server's side of each size: prepare the buffer, answer ping-pongs or receive, wait for
//! the client's `end`, and check what arrived.

use super::loops::{completion_error, reap};
use super::resources::{check_pattern, prepare_buffers, Local};
use crate::verbs::ffi::SendOp;
use crate::verbs::options::BenchTest;
use crate::verbs::protocol::{Channel, Endpoint, Message};
use crate::verbs::rates::{marker, split_wr_id};
use anyhow::{bail, Result};
use std::time::{Duration, Instant};

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
    prepare_buffers(local, test, size);
    chan.send(&Message::Ready)?;
    let what = format!("{test} {size} bytes");
    match test {
        t if t.is_ping_pong() => ping_pong(chan, local, remote, test, size, timeout)?,
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
