//! The numeric measurement columns, once: name, unit, meaning, and how to read and write each
//! on a [`Measurement`]. The store's points tables (both ways) and the metric lookup of
//! compare/gate/history are driven by this table, so a column is added in one place; a test
//! checks that the README's export schema documents every one.

use crate::model::Measurement;

/// One optional `f64` column of the measurement schema.
pub struct FloatColumn {
    pub name: &'static str,
    pub unit: &'static str,
    pub meaning: &'static str,
    pub get: fn(&Measurement) -> Option<f64>,
    pub set: fn(&mut Measurement, Option<f64>),
}

macro_rules! float_columns {
    ($( $field:ident, $unit:literal, $meaning:literal; )*) => {
        /// Every optional `f64` measurement column, in store order.
        pub const FLOAT_COLUMNS: &[FloatColumn] = &[
            $( FloatColumn {
                name: stringify!($field),
                unit: $unit,
                meaning: $meaning,
                get: |m| m.$field,
                set: |m, v| m.$field = v,
            }, )*
        ];
    };
}

float_columns! {
    bw_peak_gbps, "Gbit/s", "peak bandwidth (10^9 bit/s)";
    bw_avg_gbps, "Gbit/s", "average bandwidth (10^9 bit/s)";
    msg_rate_mpps, "Mpps", "message rate (10^6 messages/s)";
    lat_min_us, "us", "latency minimum";
    lat_max_us, "us", "latency maximum";
    lat_typical_us, "us", "perftest t_typical (the median latency)";
    lat_avg_us, "us", "mean latency";
    lat_stdev_us, "us", "latency standard deviation";
    lat_p99_us, "us", "99th latency percentile";
    lat_p999_us, "us", "99.9th latency percentile";
    tps, "1/s", "transactions per second (perftest duration latency)";
    cpu_util_pct, "%", "CPU utilisation (perftest --cpu_util)";
    bw_port1_gbps, "Gbit/s", "port 1 bandwidth (perftest --report-per-port)";
    msg_rate_port1_mpps, "Mpps", "port 1 message rate";
    bw_port2_gbps, "Gbit/s", "port 2 bandwidth";
    msg_rate_port2_mpps, "Mpps", "port 2 message rate";
    interval_start_s, "s", "iperf interval start, from the start of the test";
    interval_end_s, "s", "iperf interval end";
    transfer_bytes, "B", "bytes moved (iperf Transfer, 1024-based units resolved)";
    cwnd_bytes, "B", "TCP congestion window";
    rtt_us, "us", "TCP round-trip time";
    jitter_ms, "ms", "UDP jitter";
    loss_pct, "%", "lost datagrams or pings";
    cpu_local_pct, "%", "CPU use on this host";
    cpu_remote_pct, "%", "CPU use on the peer";
}

/// The float column called `name`.
pub fn float_column(name: &str) -> Option<&'static FloatColumn> {
    FLOAT_COLUMNS.iter().find(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getters_and_setters_address_their_own_field() {
        let mut m = Measurement::default();
        for (i, c) in FLOAT_COLUMNS.iter().enumerate() {
            (c.set)(&mut m, Some(i as f64));
        }
        for (i, c) in FLOAT_COLUMNS.iter().enumerate() {
            assert_eq!((c.get)(&m), Some(i as f64), "{}", c.name);
        }
        assert_eq!(m.bw_avg_gbps, Some(1.0));
        assert_eq!(m.cpu_remote_pct, Some(24.0));
    }

    #[test]
    fn the_readme_documents_every_float_column() {
        let readme = include_str!("../README.md");
        let schema = &readme[readme.find("## Export schema").unwrap()..];
        let schema = &schema[..schema.find("## Store layout").unwrap()];
        // Per-port columns are store-only (not exported); the rest appear by name or as the
        // named ends of a range (`lat_min_us` … `lat_max_us`).
        for c in FLOAT_COLUMNS.iter().filter(|c| !c.name.contains("port")) {
            assert!(
                schema.contains(&format!("`{}`", c.name)),
                "README export schema lacks {}",
                c.name
            );
        }
    }
}
