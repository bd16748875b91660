//! Device facts through libibverbs: what `ibv_devinfo -v` prints, for `linkperf devices` and
//! for the facts stored with every native bench run.

use super::device::*;
use super::ffi::{Context, DeviceList};
use anyhow::{bail, Context as _, Result};
use std::ffi::CStr;
use std::rc::Rc;

/// The error both `devices` and `bench` give on a machine without RDMA devices.
pub const NO_DEVICES: &str = "no RDMA devices found";

fn device_list() -> Result<DeviceList> {
    // Without the kernel's RDMA subsystem the list call itself fails (ENOSYS): for the user
    // that is the same as an empty list.
    let list = DeviceList::new().map_err(|e| anyhow::anyhow!("{NO_DEVICES} ({e})"))?;
    if list.names().is_empty() {
        bail!(NO_DEVICES);
    }
    Ok(list)
}

/// Every device with its ports, in the order libibverbs lists them.
pub fn list_devices(only: Option<&str>) -> Result<Vec<DeviceInfo>> {
    let list = device_list()?;
    let names = list.names();
    let wanted: Vec<&String> = match only {
        Some(n) => {
            let Some(n) = names.iter().find(|x| *x == n) else {
                bail!(
                    "--device {n}: no such RDMA device (found: {})",
                    names.join(", ")
                );
            };
            vec![n]
        }
        None => names.iter().collect(),
    };
    wanted
        .into_iter()
        .map(|n| {
            let ctx = list
                .open(n)
                .with_context(|| format!("{n}: cannot open the device"))?
                .with_context(|| format!("{n}: device disappeared"))?;
            describe(&ctx)
        })
        .collect()
}

/// Opens a device by name, or the first one when no name is given.
pub fn open(name: Option<&str>) -> Result<(Rc<Context>, DeviceInfo)> {
    let list = device_list()?;
    let names = list.names();
    let name = match name {
        Some(n) if names.iter().any(|x| x == n) => n.to_string(),
        Some(n) => bail!(
            "--device {n}: no such RDMA device (found: {})",
            names.join(", ")
        ),
        None => names[0].clone(),
    };
    let ctx = list
        .open(&name)
        .with_context(|| format!("{name}: cannot open the device"))?
        .with_context(|| format!("{name}: device disappeared"))?;
    let info = describe(&ctx)?;
    Ok((ctx, info))
}

fn c_string(chars: &[std::os::raw::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    CStr::from_bytes_until_nul(&[bytes.as_slice(), &[0]].concat())
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn describe(ctx: &Context) -> Result<DeviceInfo> {
    let d = ctx
        .query_device()
        .with_context(|| format!("{}: ibv_query_device failed", ctx.name))?;
    let mut ports = Vec::new();
    for port in 1..=d.phys_port_cnt {
        let p = ctx
            .query_port(port)
            .with_context(|| format!("{} port {port}: ibv_query_port failed", ctx.name))?;
        let gids = (0..p.gid_tbl_len.max(0) as u32)
            .filter_map(|i| {
                ctx.query_gid(port, i)
                    .map(|(raw, t)| GidEntry::new(i, raw, t))
            })
            .collect();
        let mtu = |code: u32| {
            Coded::new(
                mtu_bytes(code).map_or("invalid MTU".into(), |b| b.to_string()),
                code,
            )
        };
        ports.push(PortInfo {
            port,
            state: Coded::new(port_state_name(p.state), p.state),
            phys_state: Coded::new(phys_state_name(p.phys_state as u32), p.phys_state as u32),
            max_mtu: mtu(p.max_mtu),
            active_mtu: mtu(p.active_mtu),
            link_layer: link_layer_name(p.link_layer).to_string(),
            lid: p.lid,
            sm_lid: p.sm_lid,
            max_msg_sz: p.max_msg_sz as u64,
            gid_tbl_len: p.gid_tbl_len,
            active_width: PortInfo::width_coded(p.active_width),
            active_speed: PortInfo::speed_coded(p.active_speed),
            rate_gbps: PortInfo::rate(p.active_width, p.active_speed),
            gids,
        });
    }
    Ok(DeviceInfo {
        name: ctx.name.clone(),
        transport: transport_name(ctx.transport),
        fw_ver: c_string(&d.fw_ver),
        node_guid: guid_string(d.node_guid),
        sys_image_guid: guid_string(d.sys_image_guid),
        vendor_id: d.vendor_id,
        vendor_part_id: d.vendor_part_id,
        hw_ver: d.hw_ver,
        phys_port_cnt: d.phys_port_cnt,
        max_mr_size: d.max_mr_size,
        max_qp: d.max_qp,
        max_qp_wr: d.max_qp_wr,
        max_cqe: d.max_cqe,
        max_mr: d.max_mr,
        max_qp_rd_atom: d.max_qp_rd_atom,
        max_qp_init_rd_atom: d.max_qp_init_rd_atom,
        atomic_cap: atomic_cap_name(d.atomic_cap),
        ports,
    })
}
