//! Device facts: `ibv_devinfo` (with and without `-v`), `ibv_devices`, `ibstat`, `rdma link`
//! and the device's PCI placement read from sysfs ([`super::sysfs`], as `pci.numa_node`, …).
//! Each device becomes a run of tool `devinfo` without measurements whose facts are the device
//! and port attributes (`fw_ver`, `vendor_id`, `port1.active_mtu`, `port1.link_layer`,
//! `port1.rate_gbps`, `port1.netdev`, ...). `ingest` copies them onto the benchmark runs of the
//! same transcript and device, so a report can say "hns_0, vendor 0x19e5, fw 0.277.001, active
//! MTU 4096, Ethernet".

use super::adapter::Block;
use super::{Problem, RunDraft};
use crate::ingest::common::TrimWs;
use crate::ingest::file_lines::FileLines;
use crate::model::RunStatus;
use std::collections::{BTreeMap, HashMap};

// Markers: `hca_id:`, `CA '`, `link … state …` and `…/…: state …`, sysfs paths.
crate::ingest::adapter::declare_parser!(DevInfo, DevInfo,
    markers: &["hca_id:", "CA '", " state ", "/class/infiniband/"],
    fn reports_empty(&self) -> bool {
        false
    }
);

/// Does a block without a command look like device information?
pub fn detect(lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        l.starts_with("hca_id:")
            || l.starts_with("CA '")
            || (l.starts_with("link ") && l.contains(" state "))
            || (l.contains(": state ") && l.split(": ").next().is_some_and(|i| i.contains('/')))
            || super::sysfs::device_file(l).is_some()
    })
}

/// The most devices one listing may name. A host with every SR-IOV function of several NICs
/// enabled lists a few thousand; a listing of more is not a host's, and the devices past the
/// limit are cut off with a problem, so its memory stays bounded.
pub const MAX_DEVICES: usize = 16_384;

/// The devices of a listing in order of appearance: (name, facts, first line), with an index
/// by name (a listing of 100,000 devices must not search the list per line), and the first of
/// the lines about devices past [`MAX_DEVICES`] with their count.
#[derive(Default)]
struct Devices {
    list: Vec<(String, crate::model::Facts, usize)>,
    index: HashMap<String, usize>,
    skipped: Option<(usize, usize)>,
}

fn entry<'a>(
    devices: &'a mut Devices,
    name: &str,
    line: usize,
) -> Option<&'a mut crate::model::Facts> {
    let pos = match devices.index.get(name) {
        Some(&pos) => pos,
        None if devices.list.len() >= MAX_DEVICES => {
            devices.skipped.get_or_insert((line, 0)).1 += 1;
            return None;
        }
        None => {
            devices.index.insert(name.to_string(), devices.list.len());
            devices.list.push((name.to_string(), BTreeMap::new(), line));
            devices.list.len() - 1
        }
    };
    Some(&mut devices.list[pos].1)
}

fn key(k: &str) -> String {
    super::common::snake_key(k)
}

/// `ibv_devinfo`: `hca_id:`, device keys, `port: N` and the port's keys (TAB or space indented).
fn ibv_devinfo(all: FileLines, range: std::ops::Range<usize>, devices: &mut Devices) {
    let mut current: Option<String> = None;
    let mut port: Option<String> = None;
    for i in range {
        let t = all[i].trim_ws();
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim_ws(), v.trim_ws());
        if k == "hca_id" {
            current = Some(v.to_string());
            port = None;
            entry(devices, v, i);
            continue;
        }
        let Some(dev) = current.as_deref() else {
            continue;
        };
        let Some(facts) = entry(devices, dev, i) else {
            continue;
        };
        if k == "port" {
            port = Some(v.to_string());
            continue;
        }
        if v.is_empty() {
            continue;
        }
        let name = if let Some(gid) = k.strip_prefix("GID[").and_then(|g| g.strip_suffix(']')) {
            format!("gid{}", gid.trim_ws())
        } else {
            key(k)
        };
        match &port {
            Some(p) => facts.insert(["port", p, ".", &name].concat().into(), v.to_string()),
            None => facts.insert(name.into(), v.to_string()),
        };
    }
}

/// `4X (2)` × `25.0 Gbps (32)` → 100 Gbit/s of signalling rate.
fn rate_from_width_speed(width: &str, speed: &str) -> Option<f64> {
    let lanes: f64 = width.split('X').next()?.trim_ws().parse().ok()?;
    let per_lane: f64 = speed.split_whitespace().next()?.parse().ok()?;
    Some(lanes * per_lane)
}

/// `ibstat`: `CA 'name'` (or `CA: 'name'`), keys, `Port N:` and the port's keys.
fn ibstat(all: FileLines, range: std::ops::Range<usize>, devices: &mut Devices) {
    let mut current: Option<String> = None;
    let mut port: Option<String> = None;
    for i in range {
        let t = all[i].trim_ws();
        if let Some(name) = t.strip_prefix("CA '").or_else(|| t.strip_prefix("CA: '")) {
            let name = name.trim_end_matches('\'').to_string();
            entry(devices, &name, i);
            current = Some(name);
            port = None;
            continue;
        }
        let Some(dev) = current.as_deref() else {
            continue;
        };
        if let Some(p) = t.strip_prefix("Port ").and_then(|p| p.strip_suffix(':')) {
            port = Some(p.to_string());
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let Some(facts) = entry(devices, dev, i) else {
            continue;
        };
        let name = key(k);
        match &port {
            Some(p) => facts.insert(
                ["port", p, ".", &name].concat().into(),
                v.trim_ws().to_string(),
            ),
            None => facts.insert(name.into(), v.trim_ws().to_string()),
        };
    }
}

/// `ibv_devices`: a table of device name and node GUID.
fn ibv_devices(all: FileLines, range: std::ops::Range<usize>, devices: &mut Devices) {
    for i in range {
        let words: Vec<&str> = all[i].split_whitespace().collect();
        if let [name, guid] = words.as_slice() {
            if *name == "device" || name.starts_with('-') {
                continue;
            }
            if guid.len() == 16 && guid.bytes().all(|b| b.is_ascii_hexdigit()) {
                if let Some(facts) = entry(devices, name, i) {
                    facts.insert("node_guid".into(), (*guid).to_string());
                }
            }
        }
    }
}

/// `rdma link`: `link hns_0/1 state ACTIVE physical_state LINK_UP netdev enp125s0f0 ` (or the
/// pre-5.5 form `1/1: mlx5_0/1: state ...`), plus an optional `caps: <...>` line.
fn rdma_link(all: FileLines, range: std::ops::Range<usize>, devices: &mut Devices) {
    let mut last: Option<(String, String)> = None;
    for i in range {
        let t = all[i].trim_ws();
        if let Some(caps) = t.strip_prefix("caps:") {
            if let Some((dev, port)) = &last {
                if let Some(facts) = entry(devices, dev, i) {
                    facts.insert(
                        ["port", port, ".caps"].concat().into(),
                        caps.trim_ws().to_string(),
                    );
                }
            }
            continue;
        }
        let rest = if let Some(r) = t.strip_prefix("link ") {
            r
        } else if let Some((_, r)) = t.split_once(": ").filter(|(idx, _)| idx.contains('/')) {
            r
        } else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some((dev, port)) = words
            .next()
            .and_then(|w| w.trim_end_matches(':').split_once('/'))
        else {
            continue;
        };
        let (dev, port) = (dev.to_string(), port.to_string());
        let pairs: Vec<&str> = words.collect();
        let Some(facts) = entry(devices, &dev, i) else {
            continue;
        };
        for kv in pairs.chunks(2) {
            if let [k, v] = kv {
                facts.insert(["port", &port, ".", k].concat().into(), (*v).to_string());
            }
        }
        last = Some((dev, port));
    }
}

/// `grep -H . /sys/class/infiniband/*/device/numa_node …`: `pci.FILE` facts per device.
fn sysfs(all: FileLines, range: std::ops::Range<usize>, devices: &mut Devices) {
    for i in range {
        if let Some((device, file, value)) = super::sysfs::device_file(all[i]) {
            if let Some(facts) = entry(devices, device, i) {
                facts.insert(["pci.", file].concat().into(), value.to_string());
            }
        }
    }
}

/// Parses one block of device information into one draft per device.
pub fn parse_block(block: &Block, problems: &mut Vec<Problem>) -> Vec<RunDraft> {
    let (source, all, range, command) = block.parts();
    let program = command.map(|c| c.program.as_ref());
    let text = &all[range.clone()];
    let mut devices = Devices::default();
    let test = match program {
        Some("ibv_devinfo") => {
            ibv_devinfo(all, range.clone(), &mut devices);
            "ibv_devinfo"
        }
        Some("ibstat") => {
            ibstat(all, range.clone(), &mut devices);
            "ibstat"
        }
        Some("ibv_devices") => {
            ibv_devices(all, range.clone(), &mut devices);
            "ibv_devices"
        }
        Some("rdma") => {
            rdma_link(all, range.clone(), &mut devices);
            "rdma_link"
        }
        _ if text.iter().any(|l| l.starts_with("hca_id:")) => {
            ibv_devinfo(all, range.clone(), &mut devices);
            "ibv_devinfo"
        }
        _ if text.iter().any(|l| l.starts_with("CA '")) => {
            ibstat(all, range.clone(), &mut devices);
            "ibstat"
        }
        _ if text.iter().any(|l| super::sysfs::device_file(l).is_some()) => {
            sysfs(all, range.clone(), &mut devices);
            "sysfs"
        }
        _ => {
            rdma_link(all, range.clone(), &mut devices);
            "rdma_link"
        }
    };
    if let Some((first, lines)) = devices.skipped {
        problems.push(Problem::new(
            source,
            first as u32 + 1,
            format!(
                "device listing names more than {MAX_DEVICES} devices; \
                 {lines} line(s) about the devices past the limit are skipped"
            ),
        ));
    }
    // Each device's run covers its own lines, up to the next device's first line: one block
    // listing many devices must not hash the rest of the block once per device.
    let mut starts: Vec<usize> = devices.list.iter().map(|d| d.2).collect();
    starts.sort_unstable();
    devices
        .list
        .into_iter()
        .map(|(device, mut facts, first)| {
            let next = starts.partition_point(|&s| s <= first);
            let end = starts.get(next).copied().unwrap_or(range.end);
            // Columns every run has: the device, and for port 1 its MTU and link layer.
            facts.insert("device".into(), device);
            if let Some(mtu) = facts
                .get("port1.active_mtu")
                .and_then(|m| m.split_whitespace().next())
            {
                facts.insert("mtu".into(), mtu.to_string());
            }
            if let Some(ll) = facts.get("port1.link_layer").cloned() {
                facts.insert("link_type".into(), ll);
            }
            // Each port once (its keys sort together: `port1.` before `port10.`); once per key
            // of the port, some twenty times, gave the same result.
            let mut ports: Vec<String> = facts
                .keys()
                .filter_map(|k| {
                    k.strip_prefix("port")
                        .and_then(|p| p.split_once('.'))
                        .map(|(p, _)| p.to_string())
                })
                .collect();
            ports.dedup();
            for p in ports {
                let port_key = |name: &str| ["port", &p, ".", name].concat();
                let width = facts.get(port_key("active_width").as_str()).cloned();
                let speed = facts.get(port_key("active_speed").as_str()).cloned();
                if let Some(rate) = width
                    .zip(speed)
                    .and_then(|(w, s)| rate_from_width_speed(&w, &s))
                {
                    facts.insert(port_key("rate_gbps").into(), format!("{rate}"));
                }
                if let Some(rate) = facts
                    .get(port_key("rate").as_str())
                    .and_then(|r| r.split_whitespace().next())
                {
                    let rate = rate.to_string();
                    facts.insert(port_key("rate_gbps").into(), rate);
                }
            }
            RunDraft {
                test: Some(test.into()),
                status: RunStatus::Ok,
                facts,
                ..RunDraft::new(crate::model::Tool::DevInfo, first..end)
            }
        })
        .collect()
}
