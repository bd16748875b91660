//! `linkperf bench` sessions: the server waits for one client; the client connects, sends its
//! parameters, and for each test sets up QPs on both sides, runs every size and collects the
//! results. Errors on either side are sent to the other before the session ends, so both
//! print the real cause.

mod latency;
mod loops;
mod resources;
mod serve;

use crate::counters::capture::{self, When};
pub use resources::{Dev, LocalSetup};

use crate::verbs::options::{BenchParams, BenchTest};
use crate::verbs::protocol::{gid_from_hex, Channel, Message};
use crate::verbs::record::{SessionInfo, SizeResult};
use anyhow::{bail, Context as _, Result};
use resources::Local;
use std::net::TcpListener;
use std::time::Duration;

/// What the client does with each finished test: print it, log it, keep it for the store.
pub type OnTest<'a> = dyn FnMut(BenchTest, &SessionInfo, &[SizeResult]) -> Result<()> + 'a;

/// Serves one client on TCP `port`, waiting at most `accept_timeout` for it.
pub fn serve(
    setup: &LocalSetup,
    port: u16,
    accept_timeout: Duration,
    say: &mut dyn FnMut(&str),
) -> Result<()> {
    // Open the device first: a wrong --device fails at once, not after a client came.
    let dev = Dev::open(setup)?;
    let listener = TcpListener::bind(("0.0.0.0", port))
        .with_context(|| format!("--port {port}: cannot listen"))?;
    say(&format!(
        "linkperf bench: {} port {} (GID index {}), waiting for a client on TCP port {port}",
        dev.info.name,
        dev.port,
        dev.gid_index.map_or("-".into(), |g| g.to_string())
    ));
    let mut chan = Channel::accept(&listener, accept_timeout)?;
    let result = serve_session(&dev, setup, &mut chan, say);
    if let Err(e) = &result {
        if !format!("{e:#}").contains("reported:") {
            chan.send_error(&format!("server: {e:#}"));
        }
    }
    result
}

fn serve_session(
    dev: &Dev,
    setup: &LocalSetup,
    chan: &mut Channel,
    say: &mut dyn FnMut(&str),
) -> Result<()> {
    let params = chan.receive_hello()?;
    dev.check(&params)?;
    chan.send(&Message::Welcome {
        version: crate::verbs::protocol::VERSION,
        device: dev.info.name.clone(),
        port: dev.port,
        gid_index: dev.gid_index.unwrap_or(0),
        active_mtu: dev.active_mtu,
        max_msg_sz: dev.max_msg_sz,
    })?;
    say(&format!("client {} connected", chan.peer()));
    let mut current: Option<(BenchTest, Local, crate::verbs::protocol::Endpoint)> = None;
    let mut counters = Vec::new();
    loop {
        match chan.recv()? {
            Message::Setup { test, mtu } => {
                // Free the previous test's QPs and buffer before creating new ones.
                drop(current.take());
                counters = read_counters(When::Before { log_line: 0 }, Vec::new());
                if mtu > dev.active_mtu {
                    bail!(
                        "--mtu {mtu}: larger than {} port {}'s active MTU {}",
                        dev.info.name,
                        dev.port,
                        dev.active_mtu
                    );
                }
                let p = BenchParams {
                    mtu: Some(mtu),
                    ..params.clone()
                };
                let local = Local::new(dev, &p, test)?;
                chan.send(&Message::Endpoint(local.endpoint(dev)))?;
                let Message::Endpoint(remote) = chan.expect("endpoint")? else {
                    unreachable!("expect checked the kind")
                };
                local.connect(dev, &p, &remote)?;
                local.post_receives(test, true)?;
                chan.send(&Message::Ready)?;
                current = Some((test, local, remote));
            }
            Message::Begin { size } => {
                let (test, local, remote) = current
                    .as_ref()
                    .context("the client began a size before setting up a test")?;
                let outcome = serve::serve_size(chan, local, remote, *test, size, setup.timeout)?;
                let (ok, detail) = match outcome {
                    Ok(d) => (true, d),
                    Err(d) => (false, d),
                };
                say(&format!(
                    "{test} {size} bytes: {}",
                    if ok {
                        format!("ok, {detail}")
                    } else {
                        format!("DATA CHECK FAILED: {detail}")
                    }
                ));
                chan.send(&Message::Verified { ok, detail })?;
            }
            Message::Teardown => {
                drop(current.take());
                let text = read_counters(When::After, std::mem::take(&mut counters));
                chan.send(&Message::Done {
                    host: hostname().unwrap_or_default(),
                    counters: String::from_utf8_lossy(&text).into_owned(),
                })?;
            }
            Message::Progress => {}
            Message::Bye => return Ok(()),
            other => bail!("unexpected {} from the client", other.kind()),
        }
    }
}

/// Runs `params` against the server at `host:port`, handing each finished test to `on_test`.
pub fn run_client(
    setup: &LocalSetup,
    host: &str,
    port: u16,
    params: &BenchParams,
    on_test: &mut OnTest,
    say: &mut dyn FnMut(&str),
) -> Result<()> {
    params.validate().map_err(anyhow::Error::msg)?;
    let dev = Dev::open(setup)?;
    dev.check(params)?;
    let mut chan = Channel::connect(host, port, setup.timeout)?;
    let result = client_session(&dev, setup, &mut chan, params, on_test, say);
    if let Err(e) = &result {
        if !format!("{e:#}").contains("reported:") {
            chan.send_error(&format!("client: {e:#}"));
        }
    }
    result
}

fn client_session(
    dev: &Dev,
    setup: &LocalSetup,
    chan: &mut Channel,
    params: &BenchParams,
    on_test: &mut OnTest,
    say: &mut dyn FnMut(&str),
) -> Result<()> {
    chan.send(&Message::hello(params.clone()))?;
    let Message::Welcome { active_mtu, .. } = chan.receive_welcome()? else {
        unreachable!("receive_welcome checked the kind")
    };
    // Both sides must use one path MTU: the requested one, else the smaller active MTU.
    let mtu = params.mtu.unwrap_or(dev.active_mtu.min(active_mtu));
    let p = BenchParams {
        mtu: Some(mtu),
        ..params.clone()
    };
    for &test in &params.tests {
        let started_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        chan.send(&Message::Setup { test, mtu })?;
        let local = Local::new(dev, &p, test)?;
        let Message::Endpoint(remote) = chan.expect("endpoint")? else {
            unreachable!("expect checked the kind")
        };
        chan.send(&Message::Endpoint(local.endpoint(dev)))?;
        local.connect(dev, &p, &remote)?;
        local.post_receives(test, false)?;
        chan.expect("ready")?;
        let mut results = Vec::new();
        for size in p.sizes_for(test) {
            resources::prepare_buffers(&local, test, size);
            chan.send(&Message::Begin { size })?;
            chan.expect("ready")?;
            let mut r = loops::run_size(chan, &local, &remote, test, size, &p, setup.timeout)?;
            chan.send(&Message::End { ops: r.ops })?;
            match chan.expect("verified")? {
                Message::Verified { ok: true, detail } => {
                    if r.verified.is_empty() {
                        r.verified = detail;
                    } else if !detail.is_empty() {
                        r.verified = format!("{}; {detail}", r.verified);
                    }
                }
                Message::Verified { detail, .. } => {
                    bail!("{test} {size} bytes: data check failed at the server: {detail}")
                }
                _ => unreachable!("expect checked the kind"),
            }
            say(&format!("{test} {size} bytes: done ({})", r.verified));
            results.push(r);
        }
        chan.send(&Message::Teardown)?;
        let Message::Done {
            host: server_host,
            counters,
        } = chan.expect("done")?
        else {
            unreachable!("expect checked the kind")
        };
        let remote_gid = gid_from_hex(&remote.qps[0].gid)?;
        let info = SessionInfo {
            host: hostname(),
            peer: chan.peer().to_string(),
            device: dev.info.name.clone(),
            port: dev.port,
            gid_index: dev.gid_index.unwrap_or(0),
            local_gid: dev.gid_text(),
            remote_gid: std::net::Ipv6Addr::from(remote_gid).to_string(),
            link_layer: dev.link_layer.clone(),
            mtu,
            local_qpns: local.qps.iter().map(|q| q.qpn()).collect(),
            remote_qpns: remote.qps.iter().map(|q| q.qpn).collect(),
            device_facts: dev.info.facts(),
            argv: std::env::args().collect(),
            started_at,
            server_counters: (Some(&server_host) != hostname().as_ref() && !counters.is_empty())
                .then_some((server_host, counters)),
        };
        drop(local);
        on_test(test, &info, &results)?;
    }
    chan.send(&Message::Bye)?;
    Ok(())
}

/// Appends one read of this host's counters (the RDMA devices' netdevs from `rdma link`) to
/// `out`; a reader that cannot run says so in its place.
fn read_counters(when: When, mut out: Vec<u8>) -> Vec<u8> {
    let rdma_link = capture::run_here(&["rdma".into(), "link".into()]).unwrap_or_default();
    let netdevs = capture::netdevs_of_rdma_link(&String::from_utf8_lossy(&rdma_link));
    // Writing to memory cannot fail.
    let _ = capture::snapshot(
        &mut out,
        when,
        &capture::commands(&netdevs),
        capture::run_here,
    );
    out
}

fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}
