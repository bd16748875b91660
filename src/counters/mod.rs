//! NIC and protocol counters around a run: what changed on a host while a test ran (pause
//! frames, ECN/CNP, out-of-sequence packets, TCP retransmits, discards), so a low number comes
//! with its likely cause.
//!
//! `linkperf run` and `linkperf bench` read the counters on each host before and after every
//! test and write both reads, as the readers printed them, to a *counters file* beside the
//! run's log (`X-client.log` → `X-client.counters`, see [`sidecar_path`]):
//!
//! ```text
//! # linkperf counters host=server
//! == before log line 1
//! $ sh -c 'grep -r . /sys/class/infiniband/*/ports/*/counters …'
//! /sys/class/infiniband/rxe0/ports/1/counters/port_xmit_packets:1200
//! $ cat /proc/net/snmp
//! …
//! == after
//! …
//! ```
//!
//! Importing the log reads its counters file ([`read`]) and gives each run the counters that
//! changed ([`delta`]), each with the counters file and line of its `after` value. A file may
//! hold several before/after pairs: a pair applies to the runs of the log from its `log line`
//! on (one per test of a `linkperf bench` session).

pub mod capture;
pub mod delta;
pub mod read;

use crate::model::CounterDelta;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Extension of a counters file.
pub const EXTENSION: &str = "counters";

/// The counters file of a log: the log's path with its extension replaced.
pub fn sidecar_path(log: &Path) -> PathBuf {
    log.with_extension(EXTENSION)
}

/// Is `path` a counters file (read with its log, never imported on its own)?
pub fn is_sidecar(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Counters whose change usually explains a low number: flow control, congestion marks,
/// loss and its repair, drops and errors. They lead a summary whatever their size.
fn tells_why(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    [
        "pause",
        "pfc",
        "cnp",
        "ecn",
        "retrans",
        "out_of_seq",
        "out_of_sequence",
        "seq_err",
        "discard",
        "drop",
        "err",
        "timeout",
        "nak",
        "rnr",
        "lost",
        "loss",
        "dup",
        "buffer",
    ]
    .iter()
    .any(|k| n.contains(k))
}

/// A count with an SI suffix: `953`, `40k`, `1.2M`.
pub fn si(n: u64) -> String {
    let f = n as f64;
    let (v, suffix) = match n {
        0..=9_999 => return n.to_string(),
        10_000..=999_999 => (f / 1e3, "k"),
        1_000_000..=999_999_999 => (f / 1e6, "M"),
        1_000_000_000..=999_999_999_999 => (f / 1e9, "G"),
        _ => (f / 1e12, "T"),
    };
    if v < 10.0 {
        format!("{v:.1}{suffix}")
    } else {
        format!("{v:.0}{suffix}")
    }
}

/// The changes of `deltas` summed per counter name (over hosts, objects and runs), counters
/// that tell why first, then by size: `pause +1.2M, cnp_sent +40k`. At most `max` names.
pub fn summary<'a>(deltas: impl IntoIterator<Item = &'a CounterDelta>, max: usize) -> String {
    let mut by_name: BTreeMap<&str, u64> = BTreeMap::new();
    for d in deltas {
        let sum = by_name.entry(d.name.as_str()).or_default();
        *sum = sum.saturating_add(d.delta);
    }
    let mut named: Vec<(&str, u64)> = by_name.into_iter().collect();
    named.sort_by(|a, b| {
        tells_why(b.0)
            .cmp(&tells_why(a.0))
            .then(b.1.cmp(&a.1))
            .then(a.0.cmp(b.0))
    });
    let shown: Vec<String> = named
        .iter()
        .take(max)
        .map(|(n, d)| format!("{n} +{}", si(*d)))
        .collect();
    let mut out = shown.join(", ");
    if named.len() > max {
        out.push_str(&format!(", {} more", named.len() - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(name: &str, delta: u64) -> CounterDelta {
        CounterDelta {
            name: name.into(),
            delta,
            ..CounterDelta::default()
        }
    }

    #[test]
    fn si_suffixes() {
        assert_eq!(si(953), "953");
        assert_eq!(si(40_000), "40k");
        assert_eq!(si(1_234_567), "1.2M");
        assert_eq!(si(u64::MAX), "18446744T");
    }

    #[test]
    fn summary_puts_the_counters_that_tell_why_first() {
        let all = [
            d("port_xmit_packets", 9_000_000),
            d("rx_pause", 1_200_000),
            d("cnp_sent", 40_000),
            d("rx_pause", 5),
            d("port_rcv_packets", 10),
        ];
        assert_eq!(
            summary(&all, 3),
            "rx_pause +1.2M, cnp_sent +40k, port_xmit_packets +9.0M, 1 more"
        );
        assert_eq!(summary(&[], 3), "");
    }

    #[test]
    fn counters_files_sit_beside_their_logs() {
        let p = sidecar_path(Path::new("runs/x/ib_write_bw-r1-client.log"));
        assert_eq!(p, Path::new("runs/x/ib_write_bw-r1-client.counters"));
        assert!(is_sidecar(&p));
        assert!(!is_sidecar(Path::new("a.log")));
    }
}
