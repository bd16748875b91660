//! Latency percentiles computed from raw per-iteration samples (`linkperf bench`, perftest
//! `-H`/`-U`), charted against message size.

use super::view::{chart, Chart};
use crate::model::Run;
use crate::normalize::platform::Platform;
use crate::normalize::points;
use crate::report::charts::{self, Series, XAxis, XyChart};
use anyhow::Result;
use std::collections::{BTreeMap, BTreeSet};

/// Percentiles a raw-sample chart can show, with the fewest samples that resolve each one.
const SAMPLE_PERCENTILES: [(f64, &str, usize); 5] = [
    (50.0, "p50", 1),
    (90.0, "p90", 10),
    (99.0, "p99", 100),
    (99.9, "p99.9", 1000),
    (99.99, "p99.99", 10000),
];

/// Latency percentiles computed from raw per-iteration samples (`linkperf bench`, perftest
/// `-H`/`-U`) by message size: tails of any order, not just the p99/p99.9 perftest prints.
/// Repeats of a point are pooled; client-side samples are preferred, as for the other charts.
/// A percentile is drawn only at sizes with enough samples to resolve it.
pub(super) fn sample_percentile_chart(
    test: &str,
    selected: &[(Run, Platform)],
    by: &str,
    colours: &BTreeMap<String, usize>,
) -> Result<Option<Chart>> {
    let (series, counts) = sample_percentile_series(test, selected, by, colours);
    let (Some(lo), Some(hi)) = (counts.first(), counts.last()) else {
        return Ok(None);
    };
    let n = if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}–{hi}")
    };
    let title = format!("{test}: latency percentiles from raw samples ({n} per size)");
    let svg = latency_by_size_svg(title.clone(), series)?;
    Ok(Some(chart(test, "samples", title, svg)))
}

/// Latency against message size, on a log scale: a sweep's latencies span decades.
pub(super) fn latency_by_size_svg(title: String, series: Vec<Series>) -> Result<String> {
    charts::render_xy(&XyChart {
        title,
        x_axis: XAxis::Bytes,
        x_desc: "message size".into(),
        y_desc: "latency (µs, log scale)".into(),
        y_log: true,
        series,
        hlines: vec![],
        ..Default::default()
    })
}

/// The series of [`sample_percentile_chart`] and the sample counts per (group, size) behind them.
fn sample_percentile_series(
    test: &str,
    selected: &[(Run, Platform)],
    by: &str,
    colours: &BTreeMap<String, usize>,
) -> (Vec<Series>, BTreeSet<usize>) {
    let with_samples: Vec<&(Run, Platform)> = selected
        .iter()
        .filter(|(r, _)| r.test == test)
        .filter(|(r, _)| r.measurements.iter().any(|m| !m.samples_us.is_empty()))
        .collect();
    let any_client = with_samples
        .iter()
        .any(|(r, _)| r.role == crate::model::Role::Client);
    let mut pooled: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
    for (r, p) in with_samples {
        if any_client && r.role != crate::model::Role::Client {
            continue;
        }
        let Some(group) = points::dimension(r, p, by) else {
            continue;
        };
        for m in &r.measurements {
            if let Some(size) = m.msg_size_bytes.filter(|_| !m.samples_us.is_empty()) {
                let e = pooled.entry(group.clone()).or_default().entry(size);
                e.or_default().extend_from_slice(&m.samples_us);
            }
        }
    }
    let mut series = Vec::new();
    let mut counts = BTreeSet::new();
    for (group, sizes) in &pooled {
        let base = colours.get(group).copied().unwrap_or(0);
        let sorted: BTreeMap<u64, Vec<f64>> = sizes
            .iter()
            .map(|(size, v)| (*size, crate::stats::samples::sorted(v)))
            .collect();
        counts.extend(sorted.values().map(Vec::len));
        for (i, (p, name, min_n)) in SAMPLE_PERCENTILES.iter().enumerate() {
            let points: Vec<(f64, f64)> = sorted
                .iter()
                .filter(|(_, v)| v.len() >= *min_n)
                .filter_map(|(size, v)| {
                    Some((*size as f64, crate::stats::samples::percentile(v, *p)?))
                })
                .collect();
            if points.is_empty() {
                continue;
            }
            series.push(Series {
                name: format!("{group} {name}"),
                points,
                whiskers: vec![],
                dashed: i > 0,
                colour: base + usize::from(i > 0),
            });
        }
    }
    (series, counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab_runs(file: &str) -> Vec<(Run, Platform)> {
        let path = format!("fixtures/perftest/rxe-lab/{file}");
        let bytes = std::fs::read(format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        crate::ingest::parse_bytes(&path, &bytes)
            .runs
            .into_iter()
            .map(|r| (r, Platform::new()))
            .collect()
    }

    #[test]
    fn raw_sample_percentiles_by_size_prefer_the_client() {
        let mut runs = lab_runs("read_lat-sweep-unsorted-client.txt");
        runs.extend(lab_runs("write_lat-unsorted-server.txt"));
        let colours = BTreeMap::from([("perftest".to_string(), 3)]);
        let (series, counts) = sample_percentile_series("ib_read_lat", &runs, "tool", &colours);
        // Five samples per size resolve the median only.
        assert_eq!(counts, BTreeSet::from([5]));
        assert_eq!(series.len(), 1);
        assert_eq!(
            (series[0].name.as_str(), series[0].colour),
            ("perftest p50", 3)
        );
        assert_eq!(series[0].points.len(), 23);
        // 2 B: 2449.19 253.873 113.246 95.412 89.6668 → nearest-rank median 113.246.
        assert_eq!(series[0].points[0], (2.0, 113.246));

        // 39 samples resolve p90 too; the tails are dashed in the group's second colour.
        let (series, _) = sample_percentile_series("ib_write_lat", &runs, "tool", &colours);
        let names: Vec<_> = series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["perftest p50", "perftest p90"]);
        assert!(series[1].dashed && series[1].colour == 4);
        let client_only = lab_runs("write_lat-unsorted-client.txt");
        let mut both = client_only.clone();
        both.extend(lab_runs("write_lat-unsorted-server.txt"));
        let (from_both, _) = sample_percentile_series("ib_write_lat", &both, "tool", &colours);
        let (from_client, _) =
            sample_percentile_series("ib_write_lat", &client_only, "tool", &colours);
        assert_eq!(from_both[0].points, from_client[0].points);

        assert!(
            sample_percentile_series("ib_send_bw", &runs, "tool", &colours)
                .0
                .is_empty()
        );
    }
}
