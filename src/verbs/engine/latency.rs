//! The client's latency loops: one timed operation per iteration, one sample each. Write and
//! send latency are ping-pongs (half the round trip, as perftest reports them); read and
//! atomic latency time one operation's completion (the full round trip).

use super::loops::{completion_error, reap, Pace};
use super::resources::Local;
use crate::verbs::ffi::{Completion, SendOp};
use crate::verbs::options::{BenchParams, BenchTest, Stop};
use crate::verbs::protocol::Endpoint;
use crate::verbs::rates::marker;
use crate::verbs::record::SizeResult;
use anyhow::{bail, Result};
use std::time::{Duration, Instant};

/// What every iteration of one size needs.
struct Iteration<'a> {
    local: &'a Local,
    remote: &'a Endpoint,
    test: BenchTest,
    size: u64,
    inline: bool,
    recv_off: usize,
    send_off: usize,
    what: String,
    timeout: Duration,
    wcs: Vec<Completion>,
    /// Signaled sends whose completions have not been polled yet.
    unreaped: usize,
}

pub(super) fn latency(
    pace: &mut Pace,
    local: &Local,
    remote: &Endpoint,
    test: BenchTest,
    size: u64,
    params: &BenchParams,
    timeout: Duration,
) -> Result<SizeResult> {
    let mut it = Iteration {
        local,
        remote,
        test,
        size,
        inline: size <= params.inline_size as u64 && test.is_ping_pong(),
        recv_off: local.recv_area(0),
        send_off: local.send_area(0),
        what: format!("{test} {size} bytes"),
        timeout,
        wcs: Vec::with_capacity(16),
        unreaped: 0,
    };
    let more = |i: u64, start: Instant| match params.stop {
        Stop::Iterations(n) => i < n,
        Stop::Duration(d) => start.elapsed().as_secs_f64() < d,
    };
    let mut samples = Vec::new();
    let start = Instant::now();
    let mut i = 0u64;
    while more(i, start) {
        samples.push(match test {
            BenchTest::WriteLat => it.write_ping(i)?,
            BenchTest::SendLat => it.send_ping(i)?,
            BenchTest::ReadLat => it.read(i)?,
            BenchTest::FetchAddLat | BenchTest::CmpSwapLat => it.atomic(i)?,
            _ => unreachable!("bandwidth tests are measured elsewhere"),
        });
        if it.unreaped >= 64 {
            it.poll_sends()?;
        }
        pace.beat()?;
        i += 1;
    }
    let elapsed = start.elapsed().as_secs_f64();
    if it.unreaped > 0 {
        reap(local, &mut it.wcs, it.unreaped, &it.what, timeout)?;
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

impl Iteration<'_> {
    fn n(&self) -> usize {
        self.size as usize
    }

    fn no_pong(&self, i: u64) -> anyhow::Error {
        anyhow::anyhow!(
            "{}: no pong to ping {i} within {} s",
            self.what,
            self.timeout.as_secs_f64()
        )
    }

    /// Polls the send completions that piled up; a failed one ends the test.
    fn poll_sends(&mut self) -> Result<()> {
        self.local.send_cq.poll(&mut self.wcs)?;
        if let Some(wc) = self.wcs.iter().find(|w| !w.ok()) {
            return Err(completion_error(wc, &self.what));
        }
        self.unreaped -= self.wcs.len().min(self.unreaped);
        Ok(())
    }

    /// Posts ping `i` from the send area, signaled, inline where allowed.
    fn post_ping(&mut self, op: SendOp, i: u64) -> Result<()> {
        self.local.qps[0].post_send(op, i, self.send_off, self.size as u32, true, self.inline)?;
        self.unreaped += 1;
        Ok(())
    }

    /// Writes ping `i` (its last byte a fresh marker) and spins until the pong's marker lands.
    fn write_ping(&mut self, i: u64) -> Result<f64> {
        let (n, local) = (self.n(), self.local);
        let m = marker(i);
        local.mr.set_byte(self.send_off + n - 1, m);
        let t0 = Instant::now();
        self.post_ping(
            SendOp::Write {
                remote_addr: self.remote.addr + self.recv_off as u64,
                rkey: self.remote.rkey,
            },
            i,
        )?;
        let mut spins = 0u64;
        while local.mr.byte(self.recv_off + n - 1) != m {
            spins += 1;
            if spins & 0xffff == 0 {
                self.poll_sends()?;
                if t0.elapsed() > self.timeout {
                    return Err(self.no_pong(i));
                }
            }
        }
        Ok(t0.elapsed().as_nanos() as f64 / 2000.0)
    }

    /// Sends ping `i` and waits for the pong's receive completion.
    fn send_ping(&mut self, i: u64) -> Result<f64> {
        let local = self.local;
        let t0 = Instant::now();
        self.post_ping(SendOp::Send, i)?;
        let mut spins = 0u64;
        loop {
            local.recv_cq.poll(&mut self.wcs)?;
            if let Some(wc) = self.wcs.first() {
                if !wc.ok() {
                    return Err(completion_error(wc, &self.what));
                }
                if wc.byte_len as u64 != self.size {
                    bail!("{}: pong {i} carried {} bytes", self.what, wc.byte_len);
                }
                break;
            }
            spins += 1;
            if spins & 0xffff == 0 && t0.elapsed() > self.timeout {
                return Err(self.no_pong(i));
            }
        }
        let sample = t0.elapsed().as_nanos() as f64 / 2000.0;
        local.qps[0].post_recv(i + 1, self.recv_off, local.stride as u32)?;
        Ok(sample)
    }

    /// Reads the peer's buffer once.
    fn read(&mut self, i: u64) -> Result<f64> {
        let t0 = Instant::now();
        self.local.qps[0].post_send(
            SendOp::Read {
                remote_addr: self.remote.addr + self.send_off as u64,
                rkey: self.remote.rkey,
            },
            i,
            self.recv_off,
            self.size as u32,
            true,
            false,
        )?;
        reap(self.local, &mut self.wcs, 1, &self.what, self.timeout)?;
        Ok(t0.elapsed().as_nanos() as f64 / 1000.0)
    }

    /// One fetch-and-add or compare-and-swap on the peer's counter, whose old value must be
    /// exactly the count so far.
    fn atomic(&mut self, i: u64) -> Result<f64> {
        let local = self.local;
        local.mr.set_word(self.recv_off, 0xdead_beef_dead_beef);
        let remote_addr = self.remote.addr + self.recv_off as u64;
        let rkey = self.remote.rkey;
        let op = if self.test == BenchTest::FetchAddLat {
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add: 1,
            }
        } else {
            SendOp::CmpSwap {
                remote_addr,
                rkey,
                compare: i,
                swap: i + 1,
            }
        };
        let t0 = Instant::now();
        local.qps[0].post_send(op, i, self.recv_off, 8, true, false)?;
        reap(local, &mut self.wcs, 1, &self.what, self.timeout)?;
        let sample = t0.elapsed().as_nanos() as f64 / 1000.0;
        // Devices may hand the old value back in either byte order; both are accepted,
        // garbage is not.
        let old = local.mr.word(self.recv_off);
        if old != i && old.swap_bytes() != i {
            bail!(
                "{}: operation {i} returned {old:#x}, expected {i}",
                self.what
            );
        }
        Ok(sample)
    }
}
