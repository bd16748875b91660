//! Aggregation of repeated runs of the same point with a polars lazy group-by: group by
//! (group, key) and take
//! n, median, mean, min, max and standard deviation of the value; the coefficient of variation
//! is stddev / mean. The individual runs stay reachable through `run_ids` and `sources`.

use super::points::{Point, PointKey};
use anyhow::Result;
use polars::prelude::{col, Column, DataFrame, DataType, IntoLazy};
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

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
    pub run_ids: Vec<String>,
    /// `source:line` of every value, for provenance.
    pub sources: Vec<String>,
    /// The individual values, in run order.
    pub values: Vec<f64>,
}

fn column_f64(df: &DataFrame, name: &str) -> Result<Vec<f64>> {
    let c = df.column(name)?.cast(&DataType::Float64)?;
    Ok(c.f64()?.iter().map(|v| v.unwrap_or(0.0)).collect())
}

/// Aggregates points per (group, key), sorted by key then group.
pub fn aggregate(points: &[Point]) -> Result<Vec<Aggregate>> {
    if points.is_empty() {
        return Ok(Vec::new());
    }
    // Each distinct (group, key) gets a small integer id, so polars groups one u32 column
    // instead of nine string columns.
    let mut ids: HashMap<(&str, &PointKey), u32> = HashMap::new();
    let mut members: Vec<Vec<&Point>> = Vec::new();
    let gid: Vec<u32> = points
        .iter()
        .map(|p| {
            let next = ids.len() as u32;
            let id = *ids.entry((p.group.as_str(), &p.key)).or_insert(next);
            if id == next {
                members.push(Vec::new());
            }
            members[id as usize].push(p);
            id
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
    // One lazy group-by computes every statistic in a single pass over the groups.
    let v = || col("value");
    let stats = df
        .lazy()
        .group_by([col("gid")])
        .agg([
            v().median().alias("median"),
            v().mean().alias("mean"),
            v().min().alias("min"),
            v().max().alias("max"),
            v().std(1).alias("std"),
            v().count().alias("n"),
        ])
        .collect()?;
    let ids_out: Vec<u32> = stats
        .column("gid")?
        .u32()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect();
    let med = column_f64(&stats, "median")?;
    let mean = column_f64(&stats, "mean")?;
    let min = column_f64(&stats, "min")?;
    let max = column_f64(&stats, "max")?;
    let std = column_f64(&stats, "std")?;
    let count = column_f64(&stats, "n")?;
    let mut out = Vec::with_capacity(ids_out.len());
    for (row, id) in ids_out.into_iter().enumerate() {
        let group_points = &members[id as usize];
        let first = group_points[0];
        let n = count[row] as usize;
        let stddev = if n > 1 { std[row] } else { 0.0 };
        let run_ids: BTreeSet<String> = group_points.iter().map(|p| p.run_id.clone()).collect();
        out.push(Aggregate {
            group: first.group.clone(),
            key: first.key.clone(),
            n,
            median: med[row],
            mean: mean[row],
            min: min[row],
            max: max[row],
            stddev,
            cv: if n > 1 && mean[row] != 0.0 {
                stddev / mean[row].abs()
            } else {
                0.0
            },
            link_speed_gbps: first.link_speed_gbps,
            run_ids: run_ids.into_iter().collect(),
            sources: group_points
                .iter()
                .map(|p| format!("{}:{}", p.source, p.line))
                .collect(),
            values: group_points.iter().map(|p| p.value).collect(),
        });
    }
    out.sort_by(|a, b| (&a.key, &a.group).cmp(&(&b.key, &b.group)));
    Ok(out)
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
        assert_eq!(a.run_ids, vec!["r1", "r2", "r3"]);
        assert_eq!((agg[1].n, agg[1].stddev, agg[1].cv), (1, 0.0, 0.0));
    }
}
