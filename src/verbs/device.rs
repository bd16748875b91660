//! What `linkperf devices` reports about an RDMA device, independent of how it was queried.
//! The facts use the names and value formats of `ibv_devinfo -v`, so a device listed by the
//! native runner and one imported from an `ibv_devinfo` log carry the same `device.*` facts.

use serde::Serialize;
use std::collections::BTreeMap;
use std::net::Ipv6Addr;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceInfo {
    pub name: String,
    /// `InfiniBand (0)`, `iWARP (1)`, ... as `ibv_devinfo` prints the transport type.
    pub transport: String,
    pub fw_ver: String,
    /// `5054:00ff:fe12:3456`: four groups of four hex digits, network order.
    pub node_guid: String,
    pub sys_image_guid: String,
    pub vendor_id: u32,
    pub vendor_part_id: u32,
    pub hw_ver: u32,
    pub phys_port_cnt: u8,
    pub max_mr_size: u64,
    pub max_qp: i32,
    pub max_qp_wr: i32,
    pub max_cqe: i32,
    pub max_mr: i32,
    pub max_qp_rd_atom: i32,
    pub max_qp_init_rd_atom: i32,
    /// `ATOMIC_HCA (1)`, `ATOMIC_NONE (0)`, `ATOMIC_GLOB (2)`.
    pub atomic_cap: String,
    pub ports: Vec<PortInfo>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortInfo {
    pub port: u8,
    pub state: Coded,
    pub phys_state: Coded,
    /// Bytes; the code is the `ibv_mtu` enum value.
    pub max_mtu: Coded,
    pub active_mtu: Coded,
    pub link_layer: String,
    pub lid: u16,
    pub sm_lid: u16,
    pub max_msg_sz: u64,
    pub gid_tbl_len: i32,
    pub active_width: Coded,
    pub active_speed: Coded,
    /// Lanes × per-lane signalling rate, as `ibstat` prints `Rate:`; `None` for unknown codes.
    pub rate_gbps: Option<f64>,
    pub gids: Vec<GidEntry>,
}

/// A value `ibv_devinfo` prints with its numeric code: `PORT_ACTIVE (4)`, `1024 (3)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coded {
    pub name: String,
    pub code: u32,
}

impl Coded {
    pub fn new(name: impl Into<String>, code: u32) -> Coded {
        Coded {
            name: name.into(),
            code,
        }
    }
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.code)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GidEntry {
    pub index: u32,
    /// As `inet_ntop` writes it: `fe80::5054:ff:fe12:3456`, `::ffff:10.0.2.15`.
    pub gid: String,
    /// `IB`, `RoCE v1` or `RoCE v2`.
    pub gid_type: String,
    pub ipv4_mapped: bool,
}

impl GidEntry {
    pub fn new(index: u32, raw: [u8; 16], type_code: u32) -> GidEntry {
        let addr = Ipv6Addr::from(raw);
        GidEntry {
            index,
            gid: addr.to_string(),
            gid_type: gid_type_name(type_code).to_string(),
            ipv4_mapped: addr.to_ipv4_mapped().is_some(),
        }
    }
}

pub fn gid_type_name(code: u32) -> &'static str {
    match code {
        0 => "IB",
        1 => "RoCE v1",
        2 => "RoCE v2",
        _ => "unknown",
    }
}

pub fn transport_name(code: i32) -> String {
    let name = match code {
        0 => "InfiniBand",
        1 => "iWARP",
        2 => "usNIC",
        3 => "usNIC UDP",
        4 => "unspecified",
        _ => "invalid transport",
    };
    format!("{name} ({code})")
}

pub fn port_state_name(code: u32) -> &'static str {
    match code {
        0 => "PORT_NOP",
        1 => "PORT_DOWN",
        2 => "PORT_INIT",
        3 => "PORT_ARMED",
        4 => "PORT_ACTIVE",
        5 => "PORT_ACTIVE_DEFER",
        _ => "invalid state",
    }
}

pub fn phys_state_name(code: u32) -> &'static str {
    match code {
        1 => "SLEEP",
        2 => "POLLING",
        3 => "DISABLED",
        4 => "PORT_CONFIGURATION TRAINNING",
        5 => "LINK_UP",
        6 => "LINK_ERROR_RECOVERY",
        7 => "PHY TEST",
        _ => "invalid physical state",
    }
}

/// `ibv_mtu` enum value → bytes (1 → 256 … 5 → 4096).
pub fn mtu_bytes(code: u32) -> Option<u32> {
    (1..=5).contains(&code).then(|| 128u32 << code)
}

/// Bytes → `ibv_mtu` enum value.
pub fn mtu_code(bytes: u32) -> Option<u32> {
    (1..=5).find(|&c| 128u32 << c == bytes)
}

pub fn link_layer_name(code: u8) -> &'static str {
    match code {
        1 => "InfiniBand",
        2 => "Ethernet",
        _ => "Unknown",
    }
}

/// `active_width` code → lane count (`ibv_devinfo`'s `width_str`).
pub fn width_lanes(code: u8) -> Option<u32> {
    match code {
        1 => Some(1),
        2 => Some(4),
        4 => Some(8),
        8 => Some(12),
        16 => Some(2),
        _ => None,
    }
}

/// `active_speed` code → per-lane signalling rate as `ibv_devinfo` prints it, in Gbit/s.
pub fn speed_per_lane(code: u8) -> Option<f64> {
    match code {
        1 => Some(2.5),
        2 => Some(5.0),
        4 | 8 => Some(10.0),
        16 => Some(14.0),
        32 => Some(25.0),
        64 => Some(50.0),
        128 => Some(100.0),
        _ => None,
    }
}

pub fn atomic_cap_name(code: u32) -> String {
    let name = match code {
        0 => "ATOMIC_NONE",
        1 => "ATOMIC_HCA",
        2 => "ATOMIC_GLOB",
        _ => "invalid",
    };
    format!("{name} ({code})")
}

/// Formats a big-endian GUID the way `ibv_devinfo` does: `5054:00ff:fe12:3456`.
pub fn guid_string(be: u64) -> String {
    let v = u64::from_be(be);
    format!(
        "{:04x}:{:04x}:{:04x}:{:04x}",
        v >> 48,
        (v >> 32) & 0xffff,
        (v >> 16) & 0xffff,
        v & 0xffff
    )
}

impl PortInfo {
    /// Width and speed as printed: `1X (1)`, `2.5 Gbps (1)`.
    pub fn width_coded(code: u8) -> Coded {
        let name = width_lanes(code).map_or("invalid width".to_string(), |l| format!("{l}X"));
        Coded::new(name, code as u32)
    }

    pub fn speed_coded(code: u8) -> Coded {
        let name =
            speed_per_lane(code).map_or("invalid speed".to_string(), |s| format!("{s:.1} Gbps"));
        Coded::new(name, code as u32)
    }

    pub fn rate(width: u8, speed: u8) -> Option<f64> {
        Some(width_lanes(width)? as f64 * speed_per_lane(speed)?)
    }

    /// The GID a RoCE peer is best reached by when no index is given: an IPv4-mapped RoCE v2
    /// GID (routable, what most RoCE fabrics use), else any RoCE v2 GID, else index 0.
    pub fn default_gid_index(&self) -> u32 {
        let v2 = |g: &&GidEntry| g.gid_type == "RoCE v2";
        self.gids
            .iter()
            .filter(v2)
            .find(|g| g.ipv4_mapped)
            .or_else(|| self.gids.iter().find(v2))
            .map_or(0, |g| g.index)
    }
}

/// One port's `(key, value)` lines, in `ibv_devinfo -v` order.
type PortEntries = (u8, Vec<(String, String)>);

impl DeviceInfo {
    /// Device-level facts, then per port, in `ibv_devinfo -v` order and format.
    fn entries(&self) -> (Vec<(&'static str, String)>, Vec<PortEntries>) {
        let dev = vec![
            ("transport", self.transport.clone()),
            ("fw_ver", self.fw_ver.clone()),
            ("node_guid", self.node_guid.clone()),
            ("sys_image_guid", self.sys_image_guid.clone()),
            ("vendor_id", format!("{:#x}", self.vendor_id)),
            ("vendor_part_id", self.vendor_part_id.to_string()),
            ("hw_ver", format!("{:#x}", self.hw_ver)),
            ("phys_port_cnt", self.phys_port_cnt.to_string()),
            ("max_mr_size", format!("{:#x}", self.max_mr_size)),
            ("max_qp", self.max_qp.to_string()),
            ("max_qp_wr", self.max_qp_wr.to_string()),
            ("max_cqe", self.max_cqe.to_string()),
            ("max_mr", self.max_mr.to_string()),
            ("max_qp_rd_atom", self.max_qp_rd_atom.to_string()),
            ("max_qp_init_rd_atom", self.max_qp_init_rd_atom.to_string()),
            ("atomic_cap", self.atomic_cap.clone()),
        ];
        let ports = self
            .ports
            .iter()
            .map(|p| {
                let mut e: Vec<(String, String)> = vec![
                    ("state".into(), p.state.to_string()),
                    ("max_mtu".into(), p.max_mtu.to_string()),
                    ("active_mtu".into(), p.active_mtu.to_string()),
                    ("sm_lid".into(), p.sm_lid.to_string()),
                    ("port_lid".into(), p.lid.to_string()),
                    ("link_layer".into(), p.link_layer.clone()),
                    ("max_msg_sz".into(), format!("{:#x}", p.max_msg_sz)),
                    ("gid_tbl_len".into(), p.gid_tbl_len.to_string()),
                    ("active_width".into(), p.active_width.to_string()),
                    ("active_speed".into(), p.active_speed.to_string()),
                    ("phys_state".into(), p.phys_state.to_string()),
                ];
                for g in &p.gids {
                    e.push((
                        format!("GID[{:>3}]", g.index),
                        format!("{}, {}", g.gid, g.gid_type),
                    ));
                }
                (p.port, e)
            })
            .collect();
        (dev, ports)
    }

    /// Text in the layout of `ibv_devinfo -v` (the subset of keys the runner reads).
    pub fn render(&self) -> String {
        let (dev, ports) = self.entries();
        let mut out = format!("hca_id:\t{}\n", self.name);
        for (k, v) in dev {
            out.push_str(&format!("\t{k}:\t\t\t{v}\n"));
        }
        for (port, entries) in ports {
            out.push_str(&format!("\t\tport:\t{port}\n"));
            for (k, v) in entries {
                out.push_str(&format!("\t\t\t{k}:\t\t{v}\n"));
            }
            if let Some(p) = self.ports.iter().find(|p| p.port == port) {
                if let Some(rate) = p.rate_gbps {
                    out.push_str(&format!("\t\t\trate:\t\t{rate} Gb/sec\n"));
                }
            }
        }
        out
    }

    /// The facts an `ibv_devinfo -v` import of this device yields (same keys and values):
    /// `fw_ver`, `port1.active_mtu` = `1024 (3)`, `port1.gid1` = `::ffff:10.0.2.15, RoCE v2`, ...
    pub fn facts(&self) -> BTreeMap<String, String> {
        let (dev, ports) = self.entries();
        let mut facts: BTreeMap<String, String> =
            dev.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        for (port, entries) in ports {
            for (k, v) in entries {
                let k = match k.strip_prefix("GID[").and_then(|g| g.strip_suffix(']')) {
                    Some(i) => format!("gid{}", i.trim()),
                    None => k,
                };
                facts.insert(format!("port{port}.{k}"), v);
            }
        }
        for p in &self.ports {
            if let Some(rate) = p.rate_gbps {
                facts.insert(format!("port{}.rate_gbps", p.port), format!("{rate}"));
            }
        }
        facts
    }

    pub fn port(&self, port: u8) -> Option<&PortInfo> {
        self.ports.iter().find(|p| p.port == port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_match_ibv_devinfo_names() {
        assert_eq!(mtu_bytes(3), Some(1024));
        assert_eq!(mtu_bytes(5), Some(4096));
        assert_eq!(mtu_bytes(6), None);
        assert_eq!(mtu_code(4096), Some(5));
        assert_eq!(mtu_code(1000), None);
        assert_eq!(PortInfo::width_coded(2).to_string(), "4X (2)");
        assert_eq!(PortInfo::speed_coded(32).to_string(), "25.0 Gbps (32)");
        assert_eq!(PortInfo::speed_coded(1).to_string(), "2.5 Gbps (1)");
        assert_eq!(PortInfo::rate(2, 32), Some(100.0));
        assert_eq!(PortInfo::rate(1, 1), Some(2.5));
        assert_eq!(PortInfo::rate(3, 1), None);
        assert_eq!(transport_name(0), "InfiniBand (0)");
        assert_eq!(
            guid_string(u64::from_be(0x5054_00ff_fe12_3456)),
            "5054:00ff:fe12:3456"
        );
    }

    #[test]
    fn gids_print_like_inet_ntop() {
        let mut raw = [0u8; 16];
        raw[10] = 0xff;
        raw[11] = 0xff;
        raw[12..].copy_from_slice(&[10, 0, 2, 15]);
        let g = GidEntry::new(1, raw, 2);
        assert_eq!(g.gid, "::ffff:10.0.2.15");
        assert!(g.ipv4_mapped);
        assert_eq!(g.gid_type, "RoCE v2");
        let mut ll = [0u8; 16];
        ll[0] = 0xfe;
        ll[1] = 0x80;
        ll[8..].copy_from_slice(&[0x50, 0x54, 0, 0xff, 0xfe, 0x12, 0x34, 0x56]);
        assert_eq!(GidEntry::new(0, ll, 2).gid, "fe80::5054:ff:fe12:3456");
    }
}
