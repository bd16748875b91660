//! Aggregation of repeated runs of the same point with a polars lazy group-by: group by
//! (group, key) and take
//! n, median, mean, min, max and standard deviation of the value; the coefficient of variation
//! is stddev / mean. The individual runs stay reachable through `run_ids` and `sources`.

use super::platform::Platform;
use super::points::{self, Point, PointKey, RunKey};
use crate::model::Run;
use anyhow::{Context, Result};
use polars::prelude::{col, Column, DataFrame, DataType, IntoLazy};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Statistics of one point in one group.
#[derive(Debug, Clone, Serialize)]
pub struct Aggregate {
    pub group: String,
    pub key: PointKey,
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); 0 for a single run.
    pub stddev: f64,
    /// stddev / mean; 0 for a single run.
    pub cv: f64,
    pub link_speed_gbps: Option<f64>,
    /// Shared with the selection's other aggregates: one allocation per run, not per point.
    pub run_ids: Vec<Arc<str>>,
    /// `source:line` of every value, for provenance.
    pub sources: Vec<String>,
    /// The individual values, in run order.
    pub values: Vec<f64>,
}

fn column_f64(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let c = df.column(name)?.cast(&DataType::Float64)?;
    Ok(c.f64()?.iter().map(|v| v.unwrap_or(0.0)).collect())
}

/// One group of values: its statistics and the input rows it holds, in input order.
pub struct Group {
    pub rows: Vec<u32>,
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub stddev: f64,
}

/// Groups the rows of `frame` by the `keys` columns and computes n, median, mean, min, max and
/// the sample standard deviation of its `value` column in one lazy group-by; groups come in the
/// order of their first row.
pub fn group_stats(frame: DataFrame, keys: &[&str]) -> Result<Vec<Group>> {
    if frame.height() == 0 {
        return Ok(Vec::new());
    }
    let v = || col("value");
    let stats = frame
        .lazy()
        .with_row_index("row", None)
        .group_by_stable(keys.iter().map(|k| col(*k)).collect::<Vec<_>>())
        .agg([
            v().median().alias("median"),
            v().mean().alias("mean"),
            v().min().alias("min"),
            v().max().alias("max"),
            v().std(1).alias("std"),
            v().count().alias("n"),
            col("row"),
        ])
        .collect()?;
    let med = column_f64(&stats, "median")?;
    let mean = column_f64(&stats, "mean")?;
    let min = column_f64(&stats, "min")?;
    let max = column_f64(&stats, "max")?;
    let std = column_f64(&stats, "std")?;
    let count = column_f64(&stats, "n")?;
    let mut out = Vec::with_capacity(stats.height());
    let lists = stats.column("row")?.list()?;
    for i in 0..stats.height() {
        let rows = lists.get_as_series(i).context("a group without rows")?;
        let rows: Vec<u32> = rows
            .cast(&DataType::UInt32)?
            .u32()?
            .iter()
            .map(|r| r.unwrap_or(0))
            .collect();
        let n = count[i] as usize;
        out.push(Group {
            rows,
            n,
            median: med[i],
            mean: mean[i],
            min: min[i],
            max: max[i],
            stddev: if n > 1 { std[i] } else { 0.0 },
        });
    }
    Ok(out)
}

impl Aggregate {
    /// The aggregate of `group`, whose rows are points of one group and key; `point(row)` gives
    /// each row's (value, `source:line`); `run_ids` are the group's runs, sorted and distinct.
    fn of(
        group: &Group,
        name: String,
        key: PointKey,
        link_speed_gbps: Option<f64>,
        run_ids: Vec<Arc<str>>,
        point: impl Fn(u32) -> (f64, String),
    ) -> Aggregate {
        let mut sources = Vec::with_capacity(group.rows.len());
        let mut values = Vec::with_capacity(group.rows.len());
        for &row in &group.rows {
            let (value, source) = point(row);
            sources.push(source);
            values.push(value);
        }
        Aggregate {
            group: name,
            key,
            n: group.n,
            median: group.median,
            mean: group.mean,
            min: group.min,
            max: group.max,
            stddev: group.stddev,
            cv: if group.n > 1 && group.mean != 0.0 {
                group.stddev / group.mean.abs()
            } else {
                0.0
            },
            link_speed_gbps,
            run_ids,
            sources,
            values,
        }
    }
}

/// `prefix` (`source:`) followed by `line`.
pub fn with_line(prefix: &str, line: u32) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(prefix.len() + 10);
    s.push_str(prefix);
    write!(s, "{line}").expect("writing to a String cannot fail");
    s
}

fn sorted(mut aggs: Vec<Aggregate>) -> Vec<Aggregate> {
    aggs.sort_by(|a, b| (&a.key, &a.group).cmp(&(&b.key, &b.group)));
    aggs
}

/// Aggregates points per (group, key), sorted by key then group.
pub fn aggregate(points: &[Point]) -> Result<Vec<Aggregate>> {
    // Each distinct (group, key) gets a small integer id, so polars groups one u32 column
    // instead of nine string columns.
    let mut ids: HashMap<(&str, &PointKey), u32> = HashMap::new();
    let gid: Vec<u32> = points
        .iter()
        .map(|p| {
            let next = ids.len() as u32;
            *ids.entry((p.group.as_str(), &p.key)).or_insert(next)
        })
        .collect();
    let df = DataFrame::new(
        points.len(),
        vec![
            Column::new("gid".into(), gid),
            Column::new(
                "value".into(),
                points.iter().map(|p| p.value).collect::<Vec<f64>>(),
            ),
        ],
    )?;
    let groups = group_stats(df, &["gid"])?;
    Ok(sorted(
        groups
            .iter()
            .map(|g| {
                let first = &points[g.rows[0] as usize];
                let run_ids: BTreeSet<&str> = g
                    .rows
                    .iter()
                    .map(|&row| points[row as usize].run_id.as_str())
                    .collect();
                Aggregate::of(
                    g,
                    first.group.clone(),
                    first.key.clone(),
                    first.link_speed_gbps,
                    run_ids.into_iter().map(Arc::from).collect(),
                    |row| {
                        let p = &points[row as usize];
                        (p.value, format!("{}:{}", p.source, p.line))
                    },
                )
            })
            .collect(),
    ))
}

/// Aggregates the points of a selection in columns (`rows`: the measurement rows of `runs`, as
/// [`points::values`] reads them) grouped by `by`, without building a point per row: the
/// per-run part of each key is computed once per run and joined by run index. The same result
/// as [`aggregate`] over [`points::points`].
pub fn aggregate_rows(
    runs: &[(Run, Platform)],
    rows: &DataFrame,
    by: &str,
    metric: Option<&str>,
) -> Result<Vec<Aggregate>> {
    // Runs with equal keys share an id, so their points aggregate together.
    let mut ids: HashMap<RunKey, u32> = HashMap::new();
    let mut keys: Vec<RunKey> = Vec::new();
    let run_key: Vec<Option<u32>> = runs
        .iter()
        .map(|(r, p)| {
            let key = RunKey::of(r, p, by)?;
            Some(*ids.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                keys.len() as u32 - 1
            }))
        })
        .collect();
    let values = points::values(rows, metric)?;
    let kid: Vec<Option<u32>> = values
        .column("run")?
        .u32()?
        .iter()
        .map(|r| r.and_then(|r| run_key[r as usize]))
        .collect();
    let mut values = values;
    values.with_column(Column::new("kid".into(), kid))?;
    let values = values.lazy().filter(col("kid").is_not_null()).collect()?;
    let cols = points::ValueColumns::of(&values)?;
    let kid = values.column("kid")?.u32()?;
    // Each run's rank among the selection's run ids: a group's ids are then sorted as integers,
    // not compared as strings once per point.
    let mut by_id: Vec<usize> = (0..runs.len()).collect();
    by_id.sort_unstable_by(|&a, &b| runs[a].0.run_id.cmp(&runs[b].0.run_id));
    let shared_ids: Vec<Arc<str>> = runs
        .iter()
        .map(|(r, _)| Arc::from(r.run_id.as_str()))
        .collect();
    // `source:` of each run, so a point's provenance is one copy and its line number.
    let prefixes: Vec<String> = runs.iter().map(|(r, _)| format!("{}:", r.source)).collect();
    let mut rank = vec![0u32; runs.len()];
    for (i, &run) in by_id.iter().enumerate() {
        rank[run] = i as u32;
    }
    let groups = group_stats(values.clone(), &["kid", "msg_size_bytes", "metric"])?;
    Ok(sorted(
        groups
            .iter()
            .map(|g| {
                let first = g.rows[0] as usize;
                let (run, _, size, metric, _) = cols.row(first);
                let key = &keys[kid.get(first).unwrap_or(0) as usize];
                let mut ranks: Vec<u32> = g
                    .rows
                    .iter()
                    .map(|&row| rank[cols.row(row as usize).0])
                    .collect();
                ranks.sort_unstable();
                ranks.dedup();
                let mut run_ids: Vec<Arc<str>> = ranks
                    .into_iter()
                    .map(|r| shared_ids[by_id[r as usize]].clone())
                    .collect();
                run_ids.dedup();
                Aggregate::of(
                    g,
                    key.group.clone(),
                    key.point_key(size, points::metric_name(metric)),
                    points::link_speed(&runs[run].1),
                    run_ids,
                    |row| {
                        let (run, line, _, _, value) = cols.row(row as usize);
                        (value, with_line(&prefixes[run], line))
                    },
                )
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(group: &str, value: f64, run: &str) -> Point {
        Point {
            group: group.into(),
            key: PointKey {
                tool: "perftest".into(),
                test: "ib_write_bw".into(),
                role: "client".into(),
                connection_type: "RC".into(),
                mtu: "4096".into(),
                qps: "1".into(),
                msg_size_bytes: Some(65536),
                metric: "bw_avg_gbps".into(),
            },
            value,
            run_id: run.into(),
            source: "f.txt".into(),
            line: 1,
            link_speed_gbps: None,
        }
    }

    #[test]
    fn repeats_are_aggregated() {
        let pts = vec![
            point("a", 10.0, "r1"),
            point("a", 12.0, "r2"),
            point("a", 14.0, "r3"),
            point("b", 5.0, "r4"),
        ];
        let agg = aggregate(&pts).unwrap();
        assert_eq!(agg.len(), 2);
        let a = &agg[0];
        assert_eq!(
            (a.group.as_str(), a.n, a.median, a.mean, a.min, a.max),
            ("a", 3, 12.0, 12.0, 10.0, 14.0)
        );
        assert!((a.stddev - 2.0).abs() < 1e-12);
        assert!((a.cv - 2.0 / 12.0).abs() < 1e-12);
        let ids: Vec<&str> = a.run_ids.iter().map(|s| &**s).collect();
        assert_eq!(ids, vec!["r1", "r2", "r3"]);
        assert_eq!((agg[1].n, agg[1].stddev, agg[1].cv), (1, 0.0, 0.0));
    }
}
