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

/// iperf 2 and iperf3 byte amounts (`Transfer`, `Cwnd`): `KBytes`, `MBytes`, ... are powers of
/// 1024 (`kConversion[]` in iperf2 `stdio.c`, `conversion_bytes[]` in iperf3 `units.c`).
pub fn iperf_bytes(value: f64, unit: &str) -> Option<f64> {
    let factor = match unit.trim_end_matches('s') {
        "Byte" => 1.0,
        "KByte" => 1024.0,
        "MByte" => 1024.0 * 1024.0,
        "GByte" => 1024.0 * 1024.0 * 1024.0,
        "TByte" => 1024.0f64.powi(4),
        "PByte" => 1024.0f64.powi(5),
        _ => return None,
    };
    Some(value * factor)
}

/// A unit label as printed, for a row's `raw_unit`: borrowed from [`PRINTED`] when it is one
/// of them (no copy per row), else an owned copy.
pub fn printed(label: &str) -> crate::model::Word {
    crate::model::word(label, PRINTED)
}

/// The unit labels the parsers read, as printed: perftest's table headers, iperf 2 and iperf3
/// rates, qperf's bandwidths, times and rates.
const PRINTED: &[&str] = &[
    "Gb/sec",
    "MB/sec",
    "MiB/sec",
    "usec",
    "cycles",
    "Mpps",
    "bits/sec",
    "Kbits/sec",
    "Mbits/sec",
    "Gbits/sec",
    "Tbits/sec",
    "Bytes/sec",
    "KBytes/sec",
    "MBytes/sec",
    "GBytes/sec",
    "bytes/sec",
    "KB/sec",
    "GB/sec",
    "Kb/sec",
    "Mb/sec",
    "ns",
    "us",
    "ms",
    "sec",
    "/sec",
    "K/sec",
    "M/sec",
    "G/sec",
];

/// iperf 2 and iperf3 rates in Gbit/s: `Kbits/sec` ... are powers of 1000
/// (`kConversionForBits[]`); upper-case `-f K/M/G` rates (`MBytes/sec`) are bytes, powers of 1024.
pub fn iperf_rate_gbps(value: f64, unit: &str) -> Option<f64> {
    let per_sec = unit.strip_suffix("/sec")?;
    let bits = match per_sec {
        "bits" => 1.0,
        "Kbits" => 1e3,
        "Mbits" => 1e6,
        "Gbits" => 1e9,
        "Tbits" => 1e12,
        "Pbits" => 1e15,
        bytes => iperf_bytes(1.0, bytes)? * 8.0,
    };
    Some(value * bits / 1e9)
}

/// qperf bandwidth in Gbit/s. qperf is 1000-based throughout: `GB/sec` = 10^9 bytes/s; with
/// `-ub` it prints bits (`Gb/sec`); with `-uu` plain `bytes/sec` or `bits/sec`.
pub fn qperf_bw_gbps(value: f64, unit: &str) -> Option<f64> {
    let bytes_or_bits = unit.strip_suffix("/sec")?;
    let (scale, bits) = match bytes_or_bits {
        "bytes" => (1.0, false),
        "KB" => (1e3, false),
        "MB" => (1e6, false),
        "GB" => (1e9, false),
        "TB" => (1e12, false),
        "bits" => (1.0, true),
        "Kb" => (1e3, true),
        "Mb" => (1e6, true),
        "Gb" => (1e9, true),
        "Tb" => (1e12, true),
        _ => return None,
    };
    Some(value * scale * if bits { 1.0 } else { 8.0 } / 1e9)
}

/// qperf times (`ns us ms sec`) in µs.
pub fn qperf_time_us(value: f64, unit: &str) -> Option<f64> {
    Some(match unit {
        "ns" => value / 1e3,
        "us" => value,
        "ms" => value * 1e3,
        "sec" => value * 1e6,
        _ => return None,
    })
}

/// qperf message rates (`/sec K/sec M/sec G/sec`) in Mpps.
pub fn qperf_rate_mpps(value: f64, unit: &str) -> Option<f64> {
    Some(match unit {
        "/sec" => value / 1e6,
        "K/sec" => value / 1e3,
        "M/sec" => value,
        "G/sec" => value * 1e3,
        _ => return None,
    })
}

/// qperf sizes: `bytes KB MB GB` are powers of 1000, `KiB MiB GiB` powers of 1024.
pub fn qperf_size_bytes(value: f64, unit: &str) -> Option<f64> {
    Some(match unit {
        "bytes" | "byte" => value,
        "KB" => value * 1e3,
        "MB" => value * 1e6,
        "GB" => value * 1e9,
        "KiB" => value * 1024.0,
        "MiB" => value * 1024.0 * 1024.0,
        "GiB" => value * 1024.0f64.powi(3),
        _ => return None,
    })
}

/// qperf counts: `29,973`, `6.42 million`, `1.2 billion`.
pub fn qperf_count(value: &str, word: Option<&str>) -> Option<f64> {
    // Most counts have no thousands separator: parsed where they stand, not copied first.
    let v: f64 = if value.contains(',') {
        value.replace(',', "").parse().ok()?
    } else {
        value.parse().ok()?
    };
    Some(match word {
        None | Some("") => v,
        Some("thousand") => v * 1e3,
        Some("million") => v * 1e6,
        Some("billion") => v * 1e9,
        Some("trillion") => v * 1e12,
        Some(_) => return None,
    })
}

#[cfg(test)]
mod tcp_unit_tests {
    use super::*;

    #[test]
    fn iperf_bytes_are_binary_and_bits_decimal() {
        assert_eq!(
            iperf_bytes(180.0, "GBytes"),
            Some(180.0 * (1u64 << 30) as f64)
        );
        assert_eq!(iperf_bytes(128.0, "KByte"), Some(131072.0));
        assert_eq!(iperf_rate_gbps(97.9, "Gbits/sec"), Some(97.9));
        assert_eq!(iperf_rate_gbps(943.0, "Mbits/sec"), Some(0.943));
        // -f M: bytes per second, 1024-based.
        assert_eq!(
            iperf_rate_gbps(1.0, "MBytes/sec"),
            Some(8.0 * 1048576.0 / 1e9)
        );
        assert_eq!(iperf_rate_gbps(1.0, "parsecs/sec"), None);
    }

    #[test]
    fn qperf_is_decimal() {
        // Seed 002: tcp_bw 3.96 GB/sec = 31.68 Gbit/s.
        assert!((qperf_bw_gbps(3.96, "GB/sec").unwrap() - 31.68).abs() < 1e-9);
        assert_eq!(qperf_bw_gbps(7.19, "Gb/sec"), Some(7.19));
        assert_eq!(qperf_time_us(4831.0, "ns"), Some(4.831));
        assert_eq!(qperf_rate_mpps(12.5, "K/sec"), Some(0.0125));
        assert_eq!(qperf_size_bytes(1.0, "KiB"), Some(1024.0));
        assert_eq!(qperf_count("29,973", None), Some(29973.0));
        assert_eq!(qperf_count("6.42", Some("million")), Some(6.42e6));
    }
}
