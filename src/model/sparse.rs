//! The columns of a measurement that most rows leave empty, kept behind one pointer.
//!
//! A perftest row fills a dozen columns; the per-port perftest columns and iperf's interval and
//! flow columns (19 of them, 300 bytes inline) are empty on it. A million-row table held them
//! inline at 640 bytes a row, more than eight times its text; out of line a row is half that.
//! [`Measurement`](super::Measurement) derefs to [`Sparse`], so `m.jitter_ms` reads (and
//! `m.jitter_ms = v` writes) as if the fields were its own; a row that never writes one holds
//! no allocation.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Measurement columns that most rows leave empty. `None` means "not reported".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sparse {
    /// Per-port columns of perftest `--report-per-port`.
    pub bw_port1_gbps: Option<f64>,
    pub msg_rate_port1_mpps: Option<f64>,
    pub bw_port2_gbps: Option<f64>,
    pub msg_rate_port2_mpps: Option<f64>,
    /// Service level column of the perftest QoS table (`#sl`).
    pub sl: Option<u32>,
    /// iperf interval start and end, seconds from the start of the test.
    pub interval_start_s: Option<f64>,
    pub interval_end_s: Option<f64>,
    /// iperf stream id (`3`, `*1`, `SUM`, `SUM-2`), with the iperf3 `--bidir` role (`5 TX-C`).
    pub stream: Option<String>,
    /// What the row is: `interval`, `total` (iperf2 whole-test line), `sender` / `receiver`
    /// (iperf3 summaries), `omitted` (iperf3 `-O`), `sample` (one ibping reply), `summary`.
    pub row_kind: Option<String>,
    /// Bytes moved in the interval (iperf `Transfer`, 1024-based units resolved).
    pub transfer_bytes: Option<f64>,
    pub retransmits: Option<u64>,
    pub cwnd_bytes: Option<f64>,
    pub rtt_us: Option<f64>,
    /// UDP jitter in ms, lost and total datagrams (iperf), or lost / sent packets (ibping).
    pub jitter_ms: Option<f64>,
    pub lost: Option<u64>,
    pub total: Option<u64>,
    pub loss_pct: Option<f64>,
    /// CPU use in percent on this host and on the peer (iperf3 JSON, qperf `-v`).
    pub cpu_local_pct: Option<f64>,
    pub cpu_remote_pct: Option<f64>,
}

/// What an empty slot reads as.
static EMPTY: Sparse = Sparse {
    bw_port1_gbps: None,
    msg_rate_port1_mpps: None,
    bw_port2_gbps: None,
    msg_rate_port2_mpps: None,
    sl: None,
    interval_start_s: None,
    interval_end_s: None,
    stream: None,
    row_kind: None,
    transfer_bytes: None,
    retransmits: None,
    cwnd_bytes: None,
    rtt_us: None,
    jitter_ms: None,
    lost: None,
    total: None,
    loss_pct: None,
    cpu_local_pct: None,
    cpu_remote_pct: None,
};

/// [`Sparse`] columns allocated on the first write. An empty slot and one holding only `None`s
/// are equal and serialize alike (every column, as `null`), so where a row's columns live never
/// shows.
#[derive(Debug, Clone, Default)]
pub struct SparseSlot(Option<Box<Sparse>>);

impl SparseSlot {
    pub fn get(&self) -> &Sparse {
        self.0.as_deref().unwrap_or(&EMPTY)
    }

    /// The columns, where a write allocated them.
    pub fn held(&self) -> Option<&Sparse> {
        self.0.as_deref()
    }

    pub fn get_mut(&mut self) -> &mut Sparse {
        self.0.get_or_insert_with(Box::default)
    }
}

impl From<Sparse> for SparseSlot {
    fn from(s: Sparse) -> SparseSlot {
        SparseSlot((s != EMPTY).then(|| Box::new(s)))
    }
}

impl PartialEq for SparseSlot {
    fn eq(&self, other: &SparseSlot) -> bool {
        self.get() == other.get()
    }
}

impl Serialize for SparseSlot {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SparseSlot {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<SparseSlot, D::Error> {
        Sparse::deserialize(deserializer).map(SparseSlot::from)
    }
}

impl std::ops::Deref for super::Measurement {
    type Target = Sparse;
    fn deref(&self) -> &Sparse {
        self.sparse.get()
    }
}

impl std::ops::DerefMut for super::Measurement {
    fn deref_mut(&mut self) -> &mut Sparse {
        self.sparse.get_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Measurement;

    #[test]
    #[allow(clippy::field_reassign_with_default)] // the write through `DerefMut` is the point
    fn a_row_that_never_writes_a_sparse_column_allocates_none_and_compares_equal() {
        let plain = Measurement::default();
        let mut written = Measurement::default();
        written.jitter_ms = None;
        assert!(plain.sparse.0.is_none() && written.sparse.0.is_some());
        assert_eq!(plain, written);
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            serde_json::to_string(&written).unwrap()
        );
        written.jitter_ms = Some(0.5);
        assert_ne!(plain, written);
        let back: Measurement =
            serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
        assert!(
            back.sparse.0.is_none(),
            "all-null columns read back as no allocation"
        );
        assert!(
            std::mem::size_of::<Measurement>() <= 360,
            "{}",
            std::mem::size_of::<Measurement>()
        );
    }
}
