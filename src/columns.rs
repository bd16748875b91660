//! The measurement schema, once: every scalar column of a run and of a measurement row, with its
//! type, unit, meaning, and how to read and write it on the record. The store's tables (both
//! ways), the export (JSON Lines, CSV, Parquet, and reading an export back), `--where` and the
//! metric frames of compare/gate/history are driven by these tables, so a column is added in one
//! place. The export's column order and the README's schema table come from [`EXPORT_COLUMNS`]
//! (a test checks the README against it).

use crate::model::{Measurement, Role, Run, RunStatus};
use polars::prelude::{Column, DataFrame};

/// How one scalar column is read from and written to a record `R` ([`Run`] or
/// [`Measurement`]). Required fields read as `Some` and take the default for a null.
pub enum Access<R: 'static> {
    Str(fn(&R) -> Option<&str>, fn(&mut R, Option<String>)),
    U32(fn(&R) -> Option<u32>, fn(&mut R, Option<u32>)),
    U64(fn(&R) -> Option<u64>, fn(&mut R, Option<u64>)),
    F64(fn(&R) -> Option<f64>, fn(&mut R, Option<f64>)),
}

/// One column of the schema.
pub struct Field<R: 'static> {
    pub name: &'static str,
    /// Whether the value may be absent (`?` in the README's type column).
    pub optional: bool,
    pub unit: &'static str,
    pub meaning: &'static str,
    pub access: Access<R>,
}

/// One value of a column, borrowed from its record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cell<'a> {
    Str(Option<&'a str>),
    U32(Option<u32>),
    U64(Option<u64>),
    F64(Option<f64>),
}

impl Cell<'_> {
    /// The value as `--where` compares it (integers in decimal, floats as Rust prints them).
    pub fn text(&self) -> Option<String> {
        match *self {
            Cell::Str(v) => v.map(str::to_string),
            Cell::U32(v) => v.map(|v| v.to_string()),
            Cell::U64(v) => v.map(|v| v.to_string()),
            Cell::F64(v) => v.map(|v| v.to_string()),
        }
    }
}

impl serde::Serialize for Cell<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Cell::Str(v) => v.serialize(s),
            Cell::U32(v) => v.serialize(s),
            Cell::U64(v) => v.serialize(s),
            Cell::F64(v) => v.serialize(s),
        }
    }
}

/// A boxed reader of one frame column: each call writes the next row's value into a record.
pub type FrameReader<'a, R> = Box<dyn FnMut(&mut R) + 'a>;

impl<R> Field<R> {
    pub fn cell<'a>(&self, r: &'a R) -> Cell<'a> {
        match self.access {
            Access::Str(get, _) => Cell::Str(get(r)),
            Access::U32(get, _) => Cell::U32(get(r)),
            Access::U64(get, _) => Cell::U64(get(r)),
            Access::F64(get, _) => Cell::F64(get(r)),
        }
    }

    /// The README's type: `string`, `int` or `float`, with `?` when optional.
    pub fn type_name(&self) -> String {
        let base = match self.access {
            Access::Str(..) => "string",
            Access::U32(..) | Access::U64(..) => "int",
            Access::F64(..) => "float",
        };
        format!("{base}{}", if self.optional { "?" } else { "" })
    }

    /// Whether the column holds an integer.
    pub fn is_integer(&self) -> bool {
        matches!(self.access, Access::U32(..) | Access::U64(..))
    }

    /// The polars column of this field over `records`, named `name`.
    pub fn frame_column<'a>(&self, name: &str, records: impl Iterator<Item = &'a R>) -> Column
    where
        R: 'a,
    {
        let name = name.into();
        match self.access {
            Access::Str(get, _) => Column::new(name, records.map(get).collect::<Vec<_>>()),
            Access::U32(get, _) => Column::new(name, records.map(get).collect::<Vec<_>>()),
            Access::U64(get, _) => Column::new(name, records.map(get).collect::<Vec<_>>()),
            Access::F64(get, _) => Column::new(name, records.map(get).collect::<Vec<_>>()),
        }
    }

    /// A reader of column `name` of `df` that writes row after row into records.
    pub fn frame_reader<'a>(
        &self,
        df: &'a DataFrame,
        name: &str,
    ) -> anyhow::Result<FrameReader<'a, R>> {
        use anyhow::Context;
        let c = df
            .column(name)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("column {name} missing"))?;
        Ok(match self.access {
            Access::Str(_, set) => {
                let mut it = c.str()?.iter();
                Box::new(move |r| set(r, it.next().flatten().map(str::to_string)))
            }
            Access::U32(_, set) => {
                let mut it = c.u32()?.iter();
                Box::new(move |r| set(r, it.next().flatten()))
            }
            Access::U64(_, set) => {
                let mut it = c.u64()?.iter();
                Box::new(move |r| set(r, it.next().flatten()))
            }
            Access::F64(_, set) => {
                let mut it = c.f64()?.iter();
                Box::new(move |r| set(r, it.next().flatten()))
            }
        })
    }

    /// Writes a JSON value (an export row's cell) into `r`; a value of another type is null.
    pub fn set_json(&self, r: &mut R, v: Option<&serde_json::Value>) {
        let int = || v.and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)));
        match self.access {
            Access::Str(_, set) => set(r, v.and_then(|v| v.as_str()).map(str::to_string)),
            Access::U32(_, set) => set(r, int().map(|v| v as u32)),
            Access::U64(_, set) => set(r, int()),
            Access::F64(_, set) => set(r, v.and_then(|v| v.as_f64())),
        }
    }
}

/// Getter and setter of a field. A setter writes `None` only over a value: the sparse columns
/// of a measurement live behind a pointer allocated on the first write (`model::Sparse`), and a
/// store read that wrote every null would allocate it for every row.
macro_rules! access {
    (str $f:ident) => {
        Access::Str(|r| r.$f.as_deref(), |r, v| {
            if v.is_some() || r.$f.is_some() {
                r.$f = v
            }
        })
    };
    (string $f:ident) => {
        Access::Str(|r| Some(&*r.$f), |r, v| r.$f = v.unwrap_or_default().into())
    };
    (line $f:ident) => {
        Access::U32(|r| Some(r.$f), |r, v| r.$f = v.unwrap_or(0))
    };
    ($kind:ident $f:ident) => {
        access!(@optional $kind $f)
    };
    (@optional u32 $f:ident) => {
        Access::U32(|r| r.$f, access!(@set $f))
    };
    (@optional u64 $f:ident) => {
        Access::U64(|r| r.$f, access!(@set $f))
    };
    (@optional f64 $f:ident) => {
        Access::F64(|r| r.$f, access!(@set $f))
    };
    (@set $f:ident) => {
        |r, v| {
            if v.is_some() || r.$f.is_some() {
                r.$f = v
            }
        }
    };
}

macro_rules! optional {
    (string) => {
        false
    };
    (line) => {
        false
    };
    ($other:ident) => {
        true
    };
}

macro_rules! field {
    ($record:ty: $kind:ident $field:ident, $unit:literal, $meaning:literal) => {
        Field::<$record> {
            name: stringify!($field),
            optional: optional!($kind),
            unit: $unit,
            meaning: $meaning,
            access: access!($kind $field),
        }
    };
}

/// The scalar columns of a run, in the store's order. Role and status are stored as text.
pub const RUN_COLUMNS: &[Field<Run>] = &[
    field!(Run: string run_id, "", "content hash of the run's block (20 hex digits)"),
    field!(Run: string source, "", "file path as given to `import`"),
    field!(Run: line line, "", "1-based line where the run starts (its prompt, or first output line)"),
    field!(Run: string tool, "", "`perftest`, `iperf2`, `iperf3`, `qperf`, `ibping`, `linkperf`"),
    field!(Run: string test, "", "`ib_write_bw`, `ib_send_lat`, `raw_ethernet_bw`, `iperf2_tcp`, `iperf2_udp`, `iperf3_tcp`, `iperf3_udp`, the qperf test (`tcp_bw`, `rc_lat`, …), `ibping`"),
    run_role(),
    run_status(),
    field!(Run: str host, "", "host name from the shell prompt"),
    field!(Run: str device, "", "RDMA device (`hns_1`, `mrdma0`, `mlx4_0`)"),
    field!(Run: u32 mtu, "B", "MTU in bytes from the banner"),
    field!(Run: str link_layer, "", "banner `Link type` (`Ethernet`, `IB`)"),
    field!(Run: str connection_type, "", "`RC`, `UC`, `UD`, `XRC`, `DC`, `RawEth`"),
    field!(Run: u32 qps, "", "number of QPs"),
];

const fn run_role() -> Field<Run> {
    Field {
        name: "role",
        optional: false,
        unit: "",
        meaning: "`client`, `server` or `unknown`",
        access: Access::Str(
            |r| Some(r.role.as_str()),
            |r, v| r.role = Role::parse(v.as_deref().unwrap_or("")),
        ),
    }
}

const fn run_status() -> Field<Run> {
    Field {
        name: "status",
        optional: false,
        unit: "",
        meaning: "`ok`, `no_results`, `interrupted`, `failed`",
        access: Access::Str(
            |r| Some(r.status.as_str()),
            |r, v| r.status = RunStatus::parse(v.as_deref().unwrap_or("ok")),
        ),
    }
}

/// The scalar columns of a measurement row, in the store's order.
pub const POINT_COLUMNS: &[Field<Measurement>] = &[
    field!(Measurement: line line, "", "1-based line of this row in `source`"),
    field!(Measurement: string raw_text, "", "the row exactly as printed"),
    field!(Measurement: string raw_unit, "", "unit the tool printed (`Gb/sec`, `MB/sec`, `MiB/sec`, `usec`)"),
    field!(Measurement: u64 msg_size_bytes, "B", "message size"),
    field!(Measurement: u64 iterations, "", "`#iterations` as printed"),
    field!(Measurement: u32 sl, "", "service level (perftest QoS table `#sl`)"),
    field!(Measurement: str stream, "", "iperf stream id (`3`, `*1`, `SUM`, iperf3 `5 TX-C`)"),
    field!(Measurement: str row_kind, "", "`interval`, `total` (iperf 2 whole-test line), `sender` / `receiver` (iperf3 summaries), `omitted`, `sample` (one ibping reply), `summary`"),
    field!(Measurement: u64 retransmits, "", "TCP retransmits (iperf3 `Retr`, iperf 2 `-e` `Rtry`)"),
    field!(Measurement: u64 lost, "", "lost UDP datagrams (iperf) or lost pings (ibping)"),
    field!(Measurement: u64 total, "", "UDP datagrams (iperf) or pings sent (ibping)"),
    field!(Measurement: f64 bw_peak_gbps, "Gbit/s", "peak bandwidth, 10^9 bit/s; null when the tool did not measure it (printed `0.00` on servers, with `-N` or `-D`)"),
    field!(Measurement: f64 bw_avg_gbps, "Gbit/s", "average bandwidth, 10^9 bit/s"),
    field!(Measurement: f64 msg_rate_mpps, "Mpps", "message rate, 10^6 messages/s"),
    field!(Measurement: f64 lat_min_us, "us", "latency minimum, µs"),
    field!(Measurement: f64 lat_max_us, "us", "latency maximum, µs"),
    field!(Measurement: f64 lat_typical_us, "us", "perftest `t_typical` (the median), µs"),
    field!(Measurement: f64 lat_avg_us, "us", "mean latency, µs"),
    field!(Measurement: f64 lat_stdev_us, "us", "latency standard deviation, µs"),
    field!(Measurement: f64 lat_p99_us, "us", "99 % latency percentile, µs"),
    field!(Measurement: f64 lat_p999_us, "us", "99.9 % latency percentile, µs"),
    field!(Measurement: f64 tps, "1/s", "transactions/s (perftest duration latency `tps average`)"),
    field!(Measurement: f64 cpu_util_pct, "%", "CPU utilisation, % (perftest `--cpu_util`)"),
    field!(Measurement: f64 bw_port1_gbps, "Gbit/s", "port 1 bandwidth (perftest `--report-per-port`)"),
    field!(Measurement: f64 msg_rate_port1_mpps, "Mpps", "port 1 message rate"),
    field!(Measurement: f64 bw_port2_gbps, "Gbit/s", "port 2 bandwidth"),
    field!(Measurement: f64 msg_rate_port2_mpps, "Mpps", "port 2 message rate"),
    field!(Measurement: f64 interval_start_s, "s", "iperf interval start, seconds from the start of the test"),
    field!(Measurement: f64 interval_end_s, "s", "iperf interval end, seconds from the start of the test"),
    field!(Measurement: f64 transfer_bytes, "B", "bytes moved (iperf `Transfer`, 1024-based units resolved)"),
    field!(Measurement: f64 cwnd_bytes, "B", "TCP congestion window (iperf3, iperf 2 `-e`)"),
    field!(Measurement: f64 rtt_us, "us", "TCP round-trip time, µs (iperf3, iperf 2 `-e`)"),
    field!(Measurement: f64 jitter_ms, "ms", "UDP jitter, ms (iperf)"),
    field!(Measurement: f64 loss_pct, "%", "lost datagrams or pings, %"),
    field!(Measurement: f64 cpu_local_pct, "%", "CPU use on this host, % (iperf3 JSON, qperf `-v`)"),
    field!(Measurement: f64 cpu_remote_pct, "%", "CPU use on the peer, % (iperf3 JSON, qperf `-v`)"),
];

/// The run column called `name`.
pub fn run_field(name: &str) -> Option<&'static Field<Run>> {
    RUN_COLUMNS.iter().find(|c| c.name == name)
}

/// The measurement column called `name`.
pub fn point_field(name: &str) -> Option<&'static Field<Measurement>> {
    POINT_COLUMNS.iter().find(|c| c.name == name)
}

/// Where an export column's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A [`RUN_COLUMNS`] field.
    Run(&'static str),
    /// A [`POINT_COLUMNS`] field.
    Point(&'static str),
    /// The import labels (an object in JSON Lines, JSON text in CSV and Parquet).
    Labels,
    /// The command line as typed.
    Command,
    /// The resolved platform name.
    Platform,
    /// Every resolved platform value with where it came from.
    Resolved,
    /// Other printed values without a column.
    Extra,
}

/// One column of `linkperf export`.
pub struct ExportColumn {
    pub name: &'static str,
    pub source: Source,
}

const fn run(name: &'static str) -> ExportColumn {
    ExportColumn {
        name,
        source: Source::Run(name),
    }
}

const fn point(name: &'static str) -> ExportColumn {
    ExportColumn {
        name,
        source: Source::Point(name),
    }
}

const fn other(name: &'static str, source: Source) -> ExportColumn {
    ExportColumn { name, source }
}

/// The export schema, in column order (the order users' scripts and the README rely on).
/// Per-port columns and `sl` are store-only.
pub const EXPORT_COLUMNS: &[ExportColumn] = &[
    run("run_id"),
    run("source"),
    point("line"),
    run("tool"),
    run("test"),
    run("role"),
    run("host"),
    run("device"),
    run("mtu"),
    run("link_layer"),
    run("connection_type"),
    run("qps"),
    point("msg_size_bytes"),
    point("iterations"),
    point("bw_peak_gbps"),
    point("bw_avg_gbps"),
    point("msg_rate_mpps"),
    point("lat_min_us"),
    point("lat_max_us"),
    point("lat_typical_us"),
    point("lat_avg_us"),
    point("lat_stdev_us"),
    point("lat_p99_us"),
    point("lat_p999_us"),
    point("raw_unit"),
    other("labels", Source::Labels),
    point("raw_text"),
    other("run_line", Source::Run("line")),
    run("status"),
    other("command", Source::Command),
    point("tps"),
    point("cpu_util_pct"),
    point("interval_start_s"),
    point("interval_end_s"),
    point("stream"),
    point("row_kind"),
    point("transfer_bytes"),
    point("retransmits"),
    point("cwnd_bytes"),
    point("rtt_us"),
    point("jitter_ms"),
    point("lost"),
    point("total"),
    point("loss_pct"),
    point("cpu_local_pct"),
    point("cpu_remote_pct"),
    other("platform", Source::Platform),
    other("resolved", Source::Resolved),
    other("extra", Source::Extra),
];

impl ExportColumn {
    /// The README's (type, meaning) of the column.
    pub fn doc(&self) -> (String, &'static str) {
        match self.source {
            Source::Run("line") => (
                "int".into(),
                "line where the run starts (its prompt, or first output line)",
            ),
            Source::Run(n) => {
                let f = run_field(n).expect("export names run columns");
                (f.type_name(), f.meaning)
            }
            Source::Point(n) => {
                let f = point_field(n).expect("export names point columns");
                (f.type_name(), f.meaning)
            }
            Source::Labels => ("object".into(), "labels given at import"),
            Source::Command => ("string?".into(), "the command line as typed"),
            Source::Platform => (
                "string".into(),
                "the resolved platform name (label, project rule, device facts or built-in)",
            ),
            Source::Resolved => (
                "object".into(),
                "every resolved platform value (`cpu`, `nic`, `driver`, …) with where it came from",
            ),
            Source::Extra => (
                "object".into(),
                "other printed values without a column (qperf `send_cost`, …), raw text",
            ),
        }
    }
}

/// The README's export schema table, generated from [`EXPORT_COLUMNS`].
pub fn export_schema_markdown() -> String {
    let mut out = String::from("| column | type | meaning |\n|---|---|---|\n");
    for c in EXPORT_COLUMNS {
        let (ty, meaning) = c.doc();
        out.push_str(&format!("| `{}` | {ty} | {meaning} |\n", c.name));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn getters_and_setters_address_their_own_field() {
        let mut m = Measurement::default();
        for (i, c) in POINT_COLUMNS.iter().enumerate() {
            c.set_json(&mut m, Some(&serde_json::json!(i + 1)));
            if let Access::Str(..) = c.access {
                c.set_json(&mut m, Some(&serde_json::json!(c.name)));
            }
        }
        for (i, c) in POINT_COLUMNS.iter().enumerate() {
            let want = match c.access {
                Access::Str(..) => Cell::Str(Some(c.name)),
                Access::U32(..) => Cell::U32(Some(i as u32 + 1)),
                Access::U64(..) => Cell::U64(Some(i as u64 + 1)),
                Access::F64(..) => Cell::F64(Some(i as f64 + 1.0)),
            };
            assert_eq!(c.cell(&m), want, "{}", c.name);
        }
        assert_eq!(m.raw_unit, "raw_unit");
        assert_eq!(m.cpu_remote_pct, Some(POINT_COLUMNS.len() as f64));
        let mut r = Run::default();
        for c in RUN_COLUMNS {
            c.set_json(&mut r, Some(&serde_json::json!(c.name)));
        }
        r.role = Role::Server;
        r.status = RunStatus::Interrupted;
        let names: Vec<&str> = RUN_COLUMNS.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "run_id",
                "source",
                "line",
                "tool",
                "test",
                "role",
                "status",
                "host",
                "device",
                "mtu",
                "link_layer",
                "connection_type",
                "qps"
            ]
        );
        assert_eq!(run_field("test").unwrap().cell(&r), Cell::Str(Some("test")));
        assert_eq!(
            run_field("role").unwrap().cell(&r),
            Cell::Str(Some("server"))
        );
        assert_eq!(
            run_field("status").unwrap().cell(&r),
            Cell::Str(Some("interrupted"))
        );
    }

    #[test]
    fn export_columns_name_schema_fields() {
        for c in EXPORT_COLUMNS {
            let _ = c.doc(); // panics on a name neither table has
        }
        let mut names: Vec<&str> = EXPORT_COLUMNS.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), EXPORT_COLUMNS.len(), "export names are unique");
    }

    #[test]
    fn the_readme_schema_table_is_the_column_table() {
        let readme = include_str!("../README.md");
        let table = export_schema_markdown();
        assert!(
            readme.contains(&table),
            "README.md's export schema differs from src/columns.rs; replace it with:\n{table}"
        );
    }
}
