//! Every unit conversion linkperf does, and what each tool means by its unit labels.
//!
//! Canonical units: bandwidth in Gbit/s (10^9 bit/s), message rate in Mpps (10^6 msg/s),
//! latency in µs, sizes in bytes. The facts below were read from the tools' sources
//! (see `../shared/reference/FORMATS.md`):
//! - perftest `MB/sec` and `MiB/sec` are both 2^20 bytes/s (the label changed in 6.22, the
//!   divisor never did); `Gb/sec` (`--report_gbits`) is 10^9 bit/s; `MsgRate[Mpps]` is 10^6/s;
//!   latency columns are µs.

use std::fmt;

/// A bandwidth unit as printed by a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BwUnit {
    /// perftest `MB/sec` / `MiB/sec`: 2^20 bytes per second.
    PerftestMiBps,
    /// perftest `Gb/sec`: 10^9 bits per second.
    PerftestGbps,
}

impl BwUnit {
    /// Parses the unit inside perftest's header brackets (`BW average[MB/sec]`).
    pub fn from_perftest_label(label: &str) -> Option<BwUnit> {
        match label {
            "MB/sec" | "MiB/sec" => Some(BwUnit::PerftestMiBps),
            "Gb/sec" => Some(BwUnit::PerftestGbps),
            _ => None,
        }
    }

    /// Converts a value in this unit to Gbit/s.
    pub fn to_gbps(self, value: f64) -> f64 {
        match self {
            BwUnit::PerftestMiBps => value * MIB as f64 * 8.0 / 1e9,
            BwUnit::PerftestGbps => value,
        }
    }
}

impl fmt::Display for BwUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BwUnit::PerftestMiBps => "MiB/sec",
            BwUnit::PerftestGbps => "Gb/sec",
        })
    }
}

/// 2^20 bytes.
pub const MIB: u64 = 1 << 20;

/// Bytes per second carried by `msg_rate_mpps` messages of `size` bytes, in Gbit/s.
/// Used to infer the unit of perftest JSON files, which record none.
pub fn gbps_from_msg_rate(msg_rate_mpps: f64, size_bytes: u64) -> f64 {
    msg_rate_mpps * 1e6 * size_bytes as f64 * 8.0 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perftest_mb_per_sec_is_mebibytes() {
        // Seed 001: 1165.17 MB/sec on a link that negotiated 10G.
        let g = BwUnit::PerftestMiBps.to_gbps(1165.17);
        assert!((g - 9.774_19).abs() < 1e-4, "{g}");
        assert_eq!(
            BwUnit::from_perftest_label("MiB/sec"),
            BwUnit::from_perftest_label("MB/sec")
        );
    }

    #[test]
    fn perftest_gb_per_sec_is_decimal_bits() {
        assert_eq!(BwUnit::PerftestGbps.to_gbps(97.56), 97.56);
        assert_eq!(BwUnit::from_perftest_label("GB/sec"), None);
    }

    #[test]
    fn help_text_factor_matches() {
        // perftest's help: "Factor=10^9/(2^20*8)=119.2; MiB=Gb_result * factor".
        let one_gbps_in_mib = 1.0 / BwUnit::PerftestMiBps.to_gbps(1.0);
        assert!((one_gbps_in_mib - 119.209).abs() < 1e-3);
    }

    #[test]
    fn msg_rate_gives_bandwidth() {
        // Seed 000, ib_write_bw MTU 4096, 8388608 B: 0.001454 Mpps ≈ 97.56 Gb/s (rounded rate).
        let g = gbps_from_msg_rate(0.001454, 8_388_608);
        assert!((g - 97.56).abs() < 0.1, "{g}");
    }
}
