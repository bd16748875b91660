//! The device one side measures on (checked against the options) and the verbs resources of
//! one test: PD, one registered buffer, CQs and the QPs, connected to the peer's.

use crate::verbs::device::{mtu_bytes, mtu_code, DeviceInfo, PortInfo};
use crate::verbs::ffi::{Context, Cq, Mr, Pd, Qp, QpCaps, RemoteQp};
use crate::verbs::options::{BenchParams, BenchTest};
use crate::verbs::protocol::{gid_from_hex, gid_hex, Endpoint, QpAddress};
use crate::verbs::query;
use anyhow::{bail, Context as _, Result};
use std::rc::Rc;
use std::time::Duration;

/// Where this side measures: from the command line.
#[derive(Debug, Clone)]
pub struct LocalSetup {
    pub device: Option<String>,
    pub ib_port: u8,
    pub gid_index: Option<u32>,
    /// Limit on every wait: the peer's messages and the device's completions.
    pub timeout: Duration,
}

/// An opened device and port, checked.
pub struct Dev {
    pub ctx: Rc<Context>,
    pub info: DeviceInfo,
    pub port: u8,
    /// `None` on InfiniBand without `--gid-index`: address by LID, no GRH.
    pub gid_index: Option<u32>,
    pub gid: [u8; 16],
    pub lid: u16,
    pub active_mtu: u32,
    pub max_msg_sz: u64,
    pub link_layer: String,
    pub max_rd_atomic: u8,
}

impl Dev {
    pub fn open(setup: &LocalSetup) -> Result<Dev> {
        let (ctx, info) = query::open(setup.device.as_deref())?;
        let port: &PortInfo = info.port(setup.ib_port).with_context(|| {
            format!(
                "--ib-port {}: {} has {} port(s)",
                setup.ib_port, info.name, info.phys_port_cnt
            )
        })?;
        if port.state.code != 4 {
            bail!(
                "--ib-port {}: {} port {} is {}, not PORT_ACTIVE",
                setup.ib_port,
                info.name,
                setup.ib_port,
                port.state
            );
        }
        let ethernet = port.link_layer == "Ethernet";
        let gid_index = match setup.gid_index {
            Some(i) => Some(i),
            None if ethernet => Some(port.default_gid_index()),
            None => None,
        };
        let gid = match gid_index {
            Some(i) => {
                let valid: Vec<String> = port.gids.iter().map(|g| g.index.to_string()).collect();
                if i >= port.gid_tbl_len.max(0) as u32 {
                    bail!(
                        "--gid-index {i}: out of range, {} port {} has a GID table of {} entries (valid: {})",
                        info.name, setup.ib_port, port.gid_tbl_len, valid.join(", ")
                    );
                }
                ctx.query_gid(setup.ib_port, i)
                    .map(|(raw, _)| raw)
                    .with_context(|| {
                        format!(
                            "--gid-index {i}: {} port {} has no GID at index {i} (valid: {})",
                            info.name,
                            setup.ib_port,
                            valid.join(", ")
                        )
                    })?
            }
            None => [0u8; 16],
        };
        let rd_atom = info.max_qp_rd_atom.clamp(1, 16) as u8;
        Ok(Dev {
            port: setup.ib_port,
            gid_index,
            gid,
            lid: port.lid,
            active_mtu: mtu_bytes(port.active_mtu.code).unwrap_or(1024),
            max_msg_sz: port.max_msg_sz,
            link_layer: port.link_layer.clone(),
            max_rd_atomic: rd_atom,
            ctx,
            info,
        })
    }

    /// Checks what only the device can tell; messages name the option at fault.
    pub fn check(&self, params: &BenchParams) -> Result<()> {
        if let Some(mtu) = params.mtu {
            if mtu > self.active_mtu {
                bail!(
                    "--mtu {mtu}: larger than {} port {}'s active MTU {}",
                    self.info.name,
                    self.port,
                    self.active_mtu
                );
            }
        }
        let max = params.max_size();
        if max > self.max_msg_sz {
            bail!(
                "--size {max}: larger than {} port {} allows (max_msg_sz {})",
                self.info.name,
                self.port,
                self.max_msg_sz
            );
        }
        let need = buffer_len(params) as u64;
        if need > self.info.max_mr_size {
            bail!(
                "--size {max} with --qps {}: needs a {need}-byte buffer, larger than {}'s max_mr_size {}",
                params.qps,
                self.info.name,
                self.info.max_mr_size
            );
        }
        Ok(())
    }

    pub fn path_mtu(&self, params: &BenchParams) -> u32 {
        params.mtu.unwrap_or(self.active_mtu)
    }

    pub fn gid_text(&self) -> String {
        std::net::Ipv6Addr::from(self.gid).to_string()
    }
}

/// Per QP the buffer holds a receive area and a send area, each `stride` bytes: what the peer
/// writes, sends or atomically updates lands in the receive area; what this side writes or
/// sends, and what the peer reads, comes from the send area.
pub fn stride(params: &BenchParams) -> usize {
    let max = params.max_size().max(64) as usize;
    max.div_ceil(4096) * 4096
}

pub fn buffer_len(params: &BenchParams) -> usize {
    2 * stride(params) * params.qps as usize
}

/// The verbs resources of one test. Field order is drop order: QPs first.
pub struct Local {
    pub qps: Vec<Qp>,
    pub mr: Rc<Mr>,
    pub send_cq: Rc<Cq>,
    pub recv_cq: Rc<Cq>,
    _pd: Rc<Pd>,
    psns: Vec<u32>,
    pub stride: usize,
    pub tx_depth: u32,
    pub rx_depth: u32,
}

impl Local {
    pub fn new(dev: &Dev, params: &BenchParams, test: BenchTest) -> Result<Local> {
        let name = &dev.info.name;
        let pd = Pd::new(&dev.ctx).with_context(|| format!("{name}: ibv_alloc_pd failed"))?;
        let len = buffer_len(params);
        let mr = Mr::new(&pd, len)
            .with_context(|| format!("{name}: cannot register a {len}-byte buffer"))?;
        let tx_depth = if test.is_bandwidth() {
            params.tx_depth
        } else {
            LAT_SQ_DEPTH
        };
        let rx_depth = if test.uses_receives() { RX_DEPTH } else { 1 };
        let send_cq = Cq::new(&dev.ctx, tx_depth * params.qps + 16)
            .with_context(|| format!("{name}: ibv_create_cq failed"))?;
        let recv_cq = Cq::new(&dev.ctx, rx_depth * params.qps + 16)
            .with_context(|| format!("{name}: ibv_create_cq failed"))?;
        let caps = QpCaps {
            max_send_wr: tx_depth,
            max_recv_wr: rx_depth,
            max_inline_data: params.inline_size,
        };
        let qps = (0..params.qps)
            .map(|_| {
                Qp::new(&pd, &send_cq, &recv_cq, &mr, &caps).map_err(|e| {
                    if params.inline_size > 0 {
                        anyhow::anyhow!(
                            "{name}: cannot create a QP with --inline-size {} and --tx-depth {tx_depth}: {e}",
                            params.inline_size
                        )
                    } else {
                        anyhow::anyhow!("{name}: cannot create a QP with --tx-depth {tx_depth}: {e}")
                    }
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
            ^ std::process::id();
        let psns = (0..params.qps)
            .map(|i| (seed.wrapping_mul(2_654_435_761).wrapping_add(i * 7919)) & 0xff_ffff)
            .collect();
        Ok(Local {
            qps,
            mr,
            send_cq,
            recv_cq,
            _pd: pd,
            psns,
            stride: stride(params),
            tx_depth,
            rx_depth,
        })
    }

    pub fn endpoint(&self, dev: &Dev) -> Endpoint {
        Endpoint {
            qps: self
                .qps
                .iter()
                .zip(&self.psns)
                .map(|(qp, &psn)| QpAddress {
                    lid: dev.lid,
                    qpn: qp.qpn(),
                    psn,
                    gid: gid_hex(&dev.gid),
                })
                .collect(),
            addr: self.mr.addr(),
            rkey: self.mr.rkey(),
            len: self.mr.len() as u64,
        }
    }

    /// Moves every QP through INIT and RTR to RTS, against the peer's QP of the same index.
    pub fn connect(&self, dev: &Dev, params: &BenchParams, remote: &Endpoint) -> Result<()> {
        if remote.qps.len() != self.qps.len() {
            bail!(
                "the peer has {} QP(s), this side {}",
                remote.qps.len(),
                self.qps.len()
            );
        }
        if remote.len < self.mr.len() as u64 {
            bail!(
                "the peer's buffer is {} bytes, smaller than this side's {}",
                remote.len,
                self.mr.len()
            );
        }
        let mtu = dev.path_mtu(params);
        let code = mtu_code(mtu).with_context(|| format!("--mtu {mtu}: not a verbs MTU"))?;
        for (i, (qp, r)) in self.qps.iter().zip(&remote.qps).enumerate() {
            let gid = gid_from_hex(&r.gid)?;
            let remote_qp = RemoteQp {
                qpn: r.qpn,
                psn: r.psn,
                lid: r.lid,
                gid: dev.gid_index.map(|_| gid),
            };
            let what = |step: &str| format!("QP {i} (QPN {:#x}): move to {step} failed", qp.qpn());
            qp.to_init(dev.port).with_context(|| what("INIT"))?;
            qp.to_rtr(
                dev.port,
                code,
                dev.gid_index.unwrap_or(0) as u8,
                dev.max_rd_atomic,
                &remote_qp,
            )
            .with_context(|| what("RTR (check --gid-index and --mtu on both sides)"))?;
            qp.to_rts(self.psns[i], dev.max_rd_atomic)
                .with_context(|| what("RTS"))?;
        }
        Ok(())
    }

    /// Posts the receives a send test keeps outstanding, each over the whole receive area so
    /// they fit every size of the sweep: `rx_depth` per QP on the receiving side of send_bw,
    /// one on both sides of send_lat (reposted after each message).
    pub fn post_receives(&self, test: BenchTest, server: bool) -> Result<()> {
        let per_qp = match test {
            BenchTest::SendBw if server => self.rx_depth as u64,
            BenchTest::SendLat => 1,
            _ => 0,
        };
        for (q, qp) in self.qps.iter().enumerate() {
            for k in 0..per_qp {
                qp.post_recv(recv_wr_id(q, k), self.recv_area(q), self.stride as u32)
                    .with_context(|| format!("{test}: QP {q}: posting receive {k} failed"))?;
            }
        }
        Ok(())
    }

    pub fn recv_area(&self, qp: usize) -> usize {
        2 * self.stride * qp
    }

    pub fn send_area(&self, qp: usize) -> usize {
        2 * self.stride * qp + self.stride
    }
}

/// Receive work request ids carry the QP index like send ones.
pub fn recv_wr_id(qp: usize, seq: u64) -> u64 {
    ((qp as u64) << 40) | seq
}

/// Send queue depth of latency tests: one ping in flight, room for unreaped completions.
pub const LAT_SQ_DEPTH: u32 = 128;
/// Receives kept posted per QP in send tests.
pub const RX_DEPTH: u32 = 512;

/// The byte pattern a size's payload carries, never 0 so a cleared buffer cannot pass.
/// Puts both sides' buffers in the state a test of `size` starts from: receive areas zeroed,
/// send areas holding the pattern, the atomic counter at 0.
pub fn prepare_buffers(local: &Local, test: BenchTest, size: u64) {
    let n = size as usize;
    for q in 0..local.qps.len() {
        local.mr.fill(local.recv_area(q), n, |_| 0);
        local.mr.fill(local.send_area(q), n, pattern(size));
    }
    if test.is_atomic() {
        local.mr.set_word(local.recv_area(0), 0);
    }
}

pub fn pattern(size: u64) -> impl Fn(usize) -> u8 {
    move |j| 1 + ((j as u64 * 31 + size) % 251) as u8
}

/// Checks `len` bytes at `offset` against the pattern of `size`, skipping the last byte when
/// it carries a ping-pong marker. Returns the first mismatch.
pub fn check_pattern(
    mr: &Mr,
    offset: usize,
    len: usize,
    size: u64,
    skip_last: bool,
) -> Result<(), String> {
    let data = mr.read(offset, len);
    let p = pattern(size);
    let upto = if skip_last {
        len.saturating_sub(1)
    } else {
        len
    };
    match (0..upto).find(|&j| data[j] != p(j)) {
        None => Ok(()),
        Some(j) => Err(format!(
            "byte {j} of {len} is {:#04x}, expected {:#04x}",
            data[j],
            p(j)
        )),
    }
}
