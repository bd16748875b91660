//! The on-disk schema: how [`Run`]s and [`Measurement`]s become two polars frames (one row per
//! run, one row per measurement) and back. Maps and lists (flags, facts, labels, notes) are
//! stored as JSON text so the Parquet files stay readable by any engine (DuckDB, Spark, pandas).

use crate::columns::{POINT_COLUMNS, RUN_COLUMNS};
use crate::model::{CommandLine, CounterDelta, Measurement, Run};
use anyhow::{Context, Result};
use polars::prelude::{Column, DataFrame};

/// Version of the layout below; bumped on any incompatible change. Version 1 kept one batch
/// directory per import under `batches/` and had no `run_seq` or `label:*` columns.
pub const SCHEMA_VERSION: u32 = 2;

/// Run columns that only displays need (the command line, notes and error): commands that compute
/// over many runs (compare, gate) leave them unread, and the runs come back without them.
pub const DETAIL_COLUMNS: &[&str] = &[
    "command", "program", "wrappers", "flags", "peer", "pipe", "notes", "error",
];

/// Column of every table that holds the store-wide sequence number of the run.
pub const RUN_SEQ: &str = "run_seq";
/// Prefix of the per-label columns of the runs table (`label:platform`), which let `--where`
/// on a label be pushed down to Parquet row-group statistics.
pub const LABEL_PREFIX: &str = "label:";

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("maps of strings serialize")
}

/// One frame row per run; `seqs` are the runs' store sequence numbers, in the same order.
pub fn runs_frame(runs: &[Run], seqs: &[u64], imported_at: &[i64]) -> Result<DataFrame> {
    let s = |f: &dyn Fn(&Run) -> Option<String>| runs.iter().map(f).collect::<Vec<_>>();
    let cmd = |f: &dyn Fn(&CommandLine) -> Option<String>| {
        runs.iter()
            .map(|r| r.command.as_ref().and_then(f))
            .collect::<Vec<_>>()
    };
    let mut columns = vec![Column::new(RUN_SEQ.into(), seqs.to_vec())];
    columns.extend(
        RUN_COLUMNS
            .iter()
            .map(|c| c.frame_column(c.name, runs.iter())),
    );
    columns.extend([
        Column::new("command".into(), cmd(&|c| Some(c.raw.clone()))),
        Column::new("program".into(), cmd(&|c| Some(c.program.to_string()))),
        Column::new("wrappers".into(), cmd(&|c| Some(json(&c.wrappers)))),
        Column::new("flags".into(), cmd(&|c| Some(json(&c.flags)))),
        Column::new("peer".into(), cmd(&|c| c.peer.clone())),
        Column::new("pipe".into(), cmd(&|c| c.pipe.clone())),
        Column::new("facts".into(), s(&|r| Some(json(&r.facts)))),
        Column::new("notes".into(), s(&|r| Some(json(&r.notes)))),
        Column::new("error".into(), s(&|r| r.error.clone())),
        Column::new("labels".into(), s(&|r| Some(json(&r.labels)))),
        Column::new("imported_at".into(), imported_at.to_vec()),
    ]);
    let keys: std::collections::BTreeSet<&String> =
        runs.iter().flat_map(|r| r.labels.keys()).collect();
    for k in keys {
        columns.push(Column::new(
            format!("{LABEL_PREFIX}{k}").into(),
            runs.iter()
                .map(|r| r.labels.get(k).map(String::as_str))
                .collect::<Vec<_>>(),
        ));
    }
    Ok(DataFrame::new(runs.len(), columns)?)
}

/// One frame row per measurement, keyed by `run_id` (and `run_seq`, in the same order as
/// `runs`).
pub fn points_frame(runs: &[Run], seqs: &[u64]) -> Result<DataFrame> {
    let points: Vec<(&str, &Measurement)> = runs
        .iter()
        .flat_map(|r| r.measurements.iter().map(move |m| (r.run_id.as_str(), m)))
        .collect();
    let point_seqs: Vec<u64> = runs
        .iter()
        .zip(seqs)
        .flat_map(|(r, &s)| std::iter::repeat_n(s, r.measurements.len()))
        .collect();
    let mut columns = vec![
        Column::new(RUN_SEQ.into(), point_seqs),
        Column::new(
            "run_id".into(),
            points.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
        ),
    ];
    columns.extend(
        POINT_COLUMNS
            .iter()
            .map(|c| c.frame_column(c.name, points.iter().map(|(_, m)| *m))),
    );
    columns.push(Column::new(
        "extra".into(),
        points
            .iter()
            .map(|(_, m)| json(&m.extra))
            .collect::<Vec<_>>(),
    ));
    Ok(DataFrame::new(points.len(), columns)?)
}

/// Lazy column readers: values are produced row by row from the frame, so loading a store
/// never holds a second copy of every column.
type Cells<'a, T> = Box<dyn Iterator<Item = Option<T>> + 'a>;

fn str_iter<'a>(df: &'a DataFrame, name: &str) -> Result<Cells<'a, String>> {
    let c = df
        .column(name)
        .map_err(anyhow::Error::from)
        .with_context(|| format!("column {name} missing"))?
        .str()?;
    Ok(Box::new(c.iter().map(|v| v.map(str::to_string))))
}

/// Like [`str_iter`], with nulls for a column the reader left out (one of [`DETAIL_COLUMNS`]).
fn detail_iter<'a>(df: &'a DataFrame, name: &str) -> Result<Cells<'a, String>> {
    if df.column(name).is_err() {
        return Ok(Box::new(std::iter::repeat(None)));
    }
    str_iter(df, name)
}

fn u32_iter<'a>(df: &'a DataFrame, name: &str) -> Result<Cells<'a, u32>> {
    Ok(Box::new(df.column(name)?.u32()?.iter()))
}

fn u64_iter<'a>(df: &'a DataFrame, name: &str) -> Result<Cells<'a, u64>> {
    Ok(Box::new(df.column(name)?.u64()?.iter()))
}

fn f64_iter<'a>(df: &'a DataFrame, name: &str) -> Result<Cells<'a, f64>> {
    Ok(Box::new(df.column(name)?.f64()?.iter()))
}

fn parse_json<T: serde::de::DeserializeOwned + Default>(s: Option<String>) -> Result<T> {
    match s {
        // The common case of an empty map or list, without the parser.
        Some(s) if s == "{}" || s == "[]" => Ok(T::default()),
        Some(s) => serde_json::from_str(&s).context("corrupt JSON in a store column"),
        None => Ok(T::default()),
    }
}

/// The `run_seq` column of a runs frame.
pub fn run_seqs(df: &DataFrame) -> Result<Vec<u64>> {
    Ok(u64_iter(df, RUN_SEQ)?.map(|s| s.unwrap_or(0)).collect())
}

/// Rebuilds runs (without measurements) from a runs frame.
pub fn runs_from_frame(df: &DataFrame) -> Result<Vec<Run>> {
    let n = df.height();
    let mut scalars = RUN_COLUMNS
        .iter()
        .map(|c| c.frame_reader(df, c.name))
        .collect::<Result<Vec<_>>>()?;
    let mut command = detail_iter(df, "command")?;
    let mut program = detail_iter(df, "program")?;
    let mut wrappers = detail_iter(df, "wrappers")?;
    let mut flags = detail_iter(df, "flags")?;
    let mut peer = detail_iter(df, "peer")?;
    let mut pipe = detail_iter(df, "pipe")?;
    let mut facts = str_iter(df, "facts")?;
    let mut notes = detail_iter(df, "notes")?;
    let mut error = detail_iter(df, "error")?;
    let mut labels = str_iter(df, "labels")?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut run = Run::default();
        for read in &mut scalars {
            read(&mut run);
        }
        let raw = command.next().flatten();
        let prog = program.next().flatten();
        let wr: Vec<String> = parse_json(wrappers.next().flatten())?;
        let fl: crate::model::Flags = parse_json(flags.next().flatten())?;
        let pe = peer.next().flatten();
        let pi = pipe.next().flatten();
        run.command = raw.map(|raw| CommandLine {
            raw,
            wrappers: wr,
            program: prog.unwrap_or_default().into(),
            flags: fl,
            peer: pe,
            pipe: pi,
        });
        run.facts = parse_json(facts.next().flatten())?;
        run.notes = parse_json(notes.next().flatten())?;
        run.error = error.next().flatten();
        run.labels = parse_json(labels.next().flatten())?;
        out.push(run);
    }
    Ok(out)
}

/// Rebuilds measurements from a points frame, as (run_id, measurement) pairs in file order.
pub fn points_from_frame(df: &DataFrame) -> Result<Vec<(String, Measurement)>> {
    let mut out = Vec::with_capacity(df.height());
    for_each_point(df, |id, m| {
        out.push((id.to_string(), m));
        Ok(())
    })?;
    Ok(out)
}

/// Hands each measurement of a points frame, in file order, to `f` with its run id; nothing
/// is collected, so a reader can move each one straight into its run.
pub fn for_each_point(
    df: &DataFrame,
    mut f: impl FnMut(&str, Measurement) -> Result<()>,
) -> Result<()> {
    let n = df.height();
    let ids = df.column("run_id")?.str()?;
    let mut run_id = ids.iter();
    let mut scalars = POINT_COLUMNS
        .iter()
        .map(|c| c.frame_reader(df, c.name))
        .collect::<Result<Vec<_>>>()?;
    let mut extra = str_iter(df, "extra")?;
    for _ in 0..n {
        let mut m = Measurement::default();
        for read in &mut scalars {
            read(&mut m);
        }
        m.extra = parse_json(extra.next().flatten())?;
        f(run_id.next().flatten().unwrap_or_default(), m)?;
    }
    Ok(())
}

/// Per-iteration latency samples, one frame row per sample: (`run_id`, `point` = index of the
/// measurement within its run, `seq`, `latency_us`). `None` when no run has samples, so batches
/// without them (most imported logs) get no samples file at all.
pub fn samples_frame(runs: &[Run], run_seqs: &[u64]) -> Result<Option<DataFrame>> {
    let (mut ids, mut points, mut seqs, mut values, mut rs) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (r, &run_seq) in runs.iter().zip(run_seqs) {
        for (p, m) in r.measurements.iter().enumerate() {
            for (i, &v) in m.samples_us.iter().enumerate() {
                rs.push(run_seq);
                ids.push(r.run_id.as_str());
                points.push(p as u32);
                seqs.push(i as u32);
                values.push(v);
            }
        }
    }
    if values.is_empty() {
        return Ok(None);
    }
    Ok(Some(DataFrame::new(
        values.len(),
        vec![
            Column::new(RUN_SEQ.into(), rs),
            Column::new("run_id".into(), ids),
            Column::new("point".into(), points),
            Column::new("seq".into(), seqs),
            Column::new("latency_us".into(), values),
        ],
    )?))
}

/// Puts samples back on the measurements they belong to, in `seq` order.
pub fn attach_samples(df: &DataFrame, runs: &mut [Run]) -> Result<()> {
    let index: std::collections::HashMap<String, usize> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.run_id.clone(), i))
        .collect();
    let ids = str_iter(df, "run_id")?;
    let points = u32_iter(df, "point")?;
    let seqs = u32_iter(df, "seq")?;
    let values = f64_iter(df, "latency_us")?;
    let mut rows: Vec<(usize, usize, u32, f64)> = Vec::with_capacity(df.height());
    for (((id, p), seq), v) in ids.zip(points).zip(seqs).zip(values) {
        let (Some(id), Some(p), Some(seq), Some(v)) = (id, p, seq, v) else {
            anyhow::bail!("a samples row has an empty cell");
        };
        if let Some(&r) = index.get(&id) {
            rows.push((r, p as usize, seq, v));
        }
    }
    rows.sort_by_key(|&(r, p, seq, _)| (r, p, seq));
    for (r, p, _, v) in rows {
        let Some(m) = runs[r].measurements.get_mut(p) else {
            anyhow::bail!(
                "run {}: samples for point {p}, which it does not have",
                runs[r].run_id
            );
        };
        m.samples_us.push(v);
    }
    Ok(())
}

/// Counter changes, one frame row per counter of a run (see [`crate::counters`]). `None` when
/// no run has any, so batches of plain imported logs get no counters file.
pub fn counters_frame(runs: &[Run], run_seqs: &[u64]) -> Result<Option<DataFrame>> {
    let rows: Vec<(u64, &str, &CounterDelta)> = runs
        .iter()
        .zip(run_seqs)
        .flat_map(|(r, &seq)| r.counters.iter().map(move |c| (seq, r.run_id.as_str(), c)))
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let s = |f: &dyn Fn(&CounterDelta) -> &str| rows.iter().map(|r| f(r.2)).collect::<Vec<_>>();
    let n = |f: &dyn Fn(&CounterDelta) -> u64| rows.iter().map(|r| f(r.2)).collect::<Vec<_>>();
    Ok(Some(DataFrame::new(
        rows.len(),
        vec![
            Column::new(RUN_SEQ.into(), rows.iter().map(|r| r.0).collect::<Vec<_>>()),
            Column::new("run_id".into(), rows.iter().map(|r| r.1).collect::<Vec<_>>()),
            Column::new("host".into(), s(&|c| &c.host)),
            Column::new("group".into(), s(&|c| &c.group)),
            Column::new("object".into(), s(&|c| &c.object)),
            Column::new("name".into(), s(&|c| &c.name)),
            Column::new("before".into(), n(&|c| c.before)),
            Column::new("after".into(), n(&|c| c.after)),
            Column::new("delta".into(), n(&|c| c.delta)),
            Column::new(
                "note".into(),
                rows.iter().map(|r| r.2.note.as_deref()).collect::<Vec<_>>(),
            ),
            Column::new("source".into(), s(&|c| &c.source)),
            Column::new("line".into(), rows.iter().map(|r| r.2.line).collect::<Vec<_>>()),
        ],
    )?))
}

/// Puts counter changes back on their runs, in file order.
pub fn attach_counters(df: &DataFrame, runs: &mut [Run]) -> Result<()> {
    let index: std::collections::HashMap<String, usize> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| (r.run_id.clone(), i))
        .collect();
    let mut ids = str_iter(df, "run_id")?;
    let mut text: Vec<Cells<String>> = ["host", "group", "object", "name", "note", "source"]
        .iter()
        .map(|c| str_iter(df, c))
        .collect::<Result<_>>()?;
    let mut numbers: Vec<Cells<u64>> = ["before", "after", "delta"]
        .iter()
        .map(|c| u64_iter(df, c))
        .collect::<Result<_>>()?;
    let mut lines = u32_iter(df, "line")?;
    for _ in 0..df.height() {
        let id = ids.next().flatten();
        let t: Vec<Option<String>> = text.iter_mut().map(|c| c.next().flatten()).collect();
        let v: Vec<Option<u64>> = numbers.iter_mut().map(|c| c.next().flatten()).collect();
        let line = lines.next().flatten();
        let (Some(id), [Some(host), Some(group), Some(object), Some(name), note, Some(source)], [Some(before), Some(after), Some(delta)], Some(line)) =
            (id, &t[..], &v[..], line)
        else {
            anyhow::bail!("a counters row has an empty cell");
        };
        if let Some(&r) = index.get(&id) {
            runs[r].counters.push(CounterDelta {
                host: host.clone(),
                group: group.clone(),
                object: object.clone(),
                name: name.clone(),
                before: *before,
                after: *after,
                delta: *delta,
                note: note.clone(),
                source: source.clone(),
                line,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Role, RunStatus};

    #[test]
    fn frames_round_trip_every_field() {
        let m = Measurement {
            line: 7,
            raw_text: "[SUM] 0.0-15.8 sec 180 GBytes 97.9 Gbits/sec".into(),
            raw_unit: "Gbits/sec".into(),
            msg_size_bytes: Some(2),
            iterations: Some(1000),
            bw_peak_gbps: Some(1.0),
            bw_avg_gbps: Some(2.0),
            msg_rate_mpps: Some(3.0),
            lat_min_us: Some(4.0),
            lat_max_us: Some(5.0),
            lat_typical_us: Some(6.0),
            lat_avg_us: Some(7.0),
            lat_stdev_us: Some(8.0),
            lat_p99_us: Some(9.0),
            lat_p999_us: Some(10.0),
            tps: Some(11.0),
            cpu_util_pct: Some(12.0),
            extra: [("send_cost".to_string(), "1.38 sec/GB".to_string())].into(),
            samples_us: Vec::new(),
            sparse: crate::model::Sparse {
                bw_port1_gbps: Some(13.0),
                msg_rate_port1_mpps: Some(14.0),
                bw_port2_gbps: Some(15.0),
                msg_rate_port2_mpps: Some(16.0),
                sl: Some(17),
                interval_start_s: Some(18.0),
                interval_end_s: Some(19.0),
                stream: Some("SUM".into()),
                row_kind: Some("total".into()),
                transfer_bytes: Some(20.0),
                retransmits: Some(21),
                cwnd_bytes: Some(22.0),
                rtt_us: Some(23.0),
                jitter_ms: Some(24.0),
                lost: Some(25),
                total: Some(26),
                loss_pct: Some(27.0),
                cpu_local_pct: Some(28.0),
                cpu_remote_pct: Some(29.0),
            }
            .into(),
        };
        let run = Run {
            run_id: "abc".into(),
            source: "x.txt".into(),
            line: 3,
            tool: "iperf2".into(),
            test: "iperf2_tcp".into(),
            role: Role::Server,
            status: RunStatus::Ok,
            host: Some("h".into()),
            command: Some(CommandLine {
                raw: "iperf -s".into(),
                wrappers: vec!["taskset -c 1".into()],
                program: "iperf".into(),
                flags: [("-s".into(), "true".into())].into(),
                peer: None,
                pipe: Some("grep SUM".into()),
            }),
            device: Some("hns_1".into()),
            mtu: Some(4096),
            link_layer: Some("Ethernet".into()),
            connection_type: Some("RC".into()),
            qps: Some(2),
            facts: [("k".into(), "v".to_string())].into(),
            notes: vec!["n".into()],
            error: Some("e".into()),
            labels: [("platform".to_string(), "kp".to_string())].into(),
            measurements: vec![m.clone()],
            counters: vec![],
        };
        let frame = runs_frame(std::slice::from_ref(&run), &[7], &[0]).unwrap();
        assert_eq!(
            frame
                .column("label:platform")
                .unwrap()
                .str()
                .unwrap()
                .get(0),
            Some("kp")
        );
        let runs = runs_from_frame(&frame).unwrap();
        let points =
            points_from_frame(&points_frame(std::slice::from_ref(&run), &[7]).unwrap()).unwrap();
        let mut back = runs[0].clone();
        back.measurements = points.into_iter().map(|(_, m)| m).collect();
        assert_eq!(back, run);
    }
}
