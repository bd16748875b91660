//! Rules over one run's values: line rate, message rate × size, signs, units.

use super::Finding;
use crate::columns::{Access, POINT_COLUMNS};
use crate::config::Config;
use crate::model::{Measurement, Run, Tool};
use crate::normalize::platform::Platform;
use crate::normalize::points::link_speed;

/// Gbit/s per MiB/s: perftest's `MB/sec` is 2^20 bytes/s.
const GBPS_PER_MIBPS: f64 = 1_048_576.0 * 8.0 / 1e9;
/// No single test today moves more than two 800G ports: a `Gb/sec` value above this cannot be
/// Gbit/s whatever the link.
const FASTEST_GBPS: f64 = 1600.0;
/// Room above the link speed before bandwidth is called impossible (clock skew between the
/// tool's timer and the wire, rounding).
const LINE_RATE_SLACK: f64 = 1.02;
/// Message sizes from which a bandwidth test is expected to run near line rate.
const LARGE_MESSAGE: u64 = 65536;

fn finding(run: &Run, line: u32, rule: &'static str, message: String) -> Finding {
    Finding {
        rule,
        source: run.source.clone(),
        line,
        test: run.test.clone(),
        message,
    }
}

/// Both directions at once: perftest `-b`, iperf `-d`/`--dualtest`/`--bidir`, qperf `*_bi_bw`.
pub fn bidirectional(run: &Run) -> bool {
    let flags = run.command.as_ref().map(|c| &c.flags);
    let has = |f: &str| flags.is_some_and(|fl| fl.contains_key(f));
    let iperf2 = run.tool == Tool::Iperf2.as_str();
    has("bidirectional")
        || iperf2 && (has("-d") || has("--dualtest"))
        || has("--bidir")
        || crate::ingest::common::has(&run.test, "_bi_")
}

/// The most bandwidth the run's links can carry: link speed × directions × ports.
fn line_limit(run: &Run, platform: &Platform) -> Option<f64> {
    let speed = link_speed(platform).filter(|s| *s > 0.0)?;
    let dual_port = run
        .command
        .as_ref()
        .is_some_and(|c| c.flags.contains_key("dualport"));
    let directions = if bidirectional(run) { 2.0 } else { 1.0 };
    Some(speed * directions * if dual_port { 2.0 } else { 1.0 })
}

pub fn check_run(run: &Run, platform: &Platform, config: &Config, out: &mut Vec<Finding>) {
    let limit = line_limit(run, platform);
    let perftest_like =
        run.tool == Tool::Perftest.as_str() || run.tool == Tool::LinkperfVerbs.as_str();
    // Asked once per run, not per row: it looks up flags and searches the test name.
    let bidirectional = bidirectional(run);
    for m in &run.measurements {
        not_a_number(run, m, out);
        let mixup = perftest_like && unit_mixup(run, m, limit, out);
        if !mixup {
            above_line_rate(run, m, limit, out);
        }
        // A unit mix-up explains the rate disagreement too: one finding, not two.
        if perftest_like && !mixup && !bidirectional {
            rate_size_mismatch(run, m, out);
        }
    }
    if perftest_like {
        below_line_rate(run, platform, config.compare.line_rate_finding_below, out);
    }
}

fn not_a_number(run: &Run, m: &Measurement, out: &mut Vec<Finding>) {
    // Every row an import reads comes here: the columns are read directly first, and by name
    // (one call through each column's getter) only for the rare row that has such a value.
    if !any_float_out_of_range(m) {
        return;
    }
    // The float columns, picked once: this runs on every row an import reads.
    type Getter = fn(&Measurement) -> Option<f64>;
    static FLOATS: std::sync::LazyLock<Vec<(&'static str, Getter)>> =
        std::sync::LazyLock::new(|| {
            POINT_COLUMNS
                .iter()
                .filter_map(|c| match c.access {
                    Access::F64(get, _) => Some((c.name, get)),
                    _ => None,
                })
                .collect()
        });
    for &(name, get) in FLOATS.iter() {
        if let Some(v) = get(m) {
            if out_of_range(v) {
                out.push(finding(
                    run,
                    m.line,
                    "not_a_number",
                    format!("{name} is {v} (`{}`)", m.raw_text.trim()),
                ));
            }
        }
    }
}

/// NaN, an infinity or a negative value: `v.is_nan() || v.is_infinite() || v < 0.0`, as two
/// comparisons (NaN fails both). Asked of every float of every row an import reads; the three
/// tests compiled to some twenty instructions of bit masks each.
fn out_of_range(v: f64) -> bool {
    !(0.0..=f64::MAX).contains(&v)
}

/// Whether any float column of `m` is [`out_of_range`]: the columns of the row itself, and
/// the sparse ones where the row holds them (most rows hold none).
fn any_float_out_of_range(m: &Measurement) -> bool {
    let out = |v: Option<f64>| v.is_some_and(out_of_range);
    let own = [
        m.bw_peak_gbps,
        m.bw_avg_gbps,
        m.msg_rate_mpps,
        m.lat_min_us,
        m.lat_max_us,
        m.lat_typical_us,
        m.lat_avg_us,
        m.lat_stdev_us,
        m.lat_p99_us,
        m.lat_p999_us,
        m.tps,
        m.cpu_util_pct,
    ];
    own.into_iter().any(out)
        || m.sparse.held().is_some_and(|s| {
            [
                s.bw_port1_gbps,
                s.msg_rate_port1_mpps,
                s.bw_port2_gbps,
                s.msg_rate_port2_mpps,
                s.interval_start_s,
                s.interval_end_s,
                s.transfer_bytes,
                s.cwnd_bytes,
                s.rtt_us,
                s.jitter_ms,
                s.loss_pct,
                s.cpu_local_pct,
                s.cpu_remote_pct,
            ]
            .into_iter()
            .any(out)
        })
}

fn above_line_rate(run: &Run, m: &Measurement, limit: Option<f64>, out: &mut Vec<Finding>) {
    let (Some(bw), Some(limit)) = (m.bw_avg_gbps, limit) else {
        return;
    };
    if bw > limit * LINE_RATE_SLACK {
        out.push(finding(
            run,
            m.line,
            "above_line_rate",
            format!(
                "{} B: {bw:.2} Gbit/s is above the {limit} Gbit/s the link carries{}",
                m.msg_size_bytes.map_or("-".into(), |s| s.to_string()),
                if bidirectional(run) {
                    " in both directions"
                } else {
                    ""
                }
            ),
        ));
    }
}

/// perftest prints bandwidth and message rate from one measurement: message rate × size is the
/// bandwidth, to the precision they are printed with (`%.2f` and `%.6f`). A disagreement means
/// a row that was edited, pasted from two runs, or read with the wrong columns.
fn rate_size_mismatch(run: &Run, m: &Measurement, out: &mut Vec<Finding>) {
    let (Some(size), Some(rate), Some(bw)) = (m.msg_size_bytes, m.msg_rate_mpps, m.bw_avg_gbps)
    else {
        return;
    };
    let gbps_per_mpps = size as f64 * 8.0 / 1e3;
    let from_rate = rate * gbps_per_mpps;
    let bw_precision = if m.raw_unit.starts_with("Gb") {
        0.005
    } else {
        0.005 * GBPS_PER_MIBPS
    };
    let tolerance = 2.0 * (0.5e-6 * gbps_per_mpps + bw_precision) + 1e-6 * bw;
    if (from_rate - bw).abs() > tolerance {
        out.push(finding(
            run,
            m.line,
            "rate_size_mismatch",
            format!(
                "{size} B × {rate} Mpps = {from_rate:.3} Gbit/s, but the row says {bw:.3} Gbit/s"
            ),
        ));
    }
}

/// True (and a finding) when the printed unit cannot be the values' unit: a `Gb/sec` value no
/// link carries that is plausible as MiB/s, or a `MB/sec` value at a large size that is a tiny
/// share of the link as MiB/s but near line rate as Gbit/s.
fn unit_mixup(run: &Run, m: &Measurement, limit: Option<f64>, out: &mut Vec<Finding>) -> bool {
    let Some(bw) = m.bw_avg_gbps else {
        return false;
    };
    let ceiling = limit.map_or(FASTEST_GBPS, |l| l * LINE_RATE_SLACK);
    let message = if m.raw_unit.starts_with("Gb") {
        (bw > ceiling && bw * GBPS_PER_MIBPS <= ceiling).then(|| {
            format!(
                "{bw} {} is more than the link carries ({ceiling:.0} Gbit/s); as MiB/s it would be {:.2} Gbit/s",
                m.raw_unit,
                bw * GBPS_PER_MIBPS
            )
        })
    } else if m.raw_unit.starts_with("MB") || m.raw_unit.starts_with("MiB") {
        let printed = bw / GBPS_PER_MIBPS;
        let large = m.msg_size_bytes.is_some_and(|s| s >= LARGE_MESSAGE);
        limit
            .filter(|&l| large && bw < 0.01 * l && printed >= 0.3 * l && printed <= l * LINE_RATE_SLACK)
            .map(|l| {
                format!(
                    "{printed} {} is {:.2} % of the {l} Gbit/s link at {} B; as Gbit/s it would be {:.0} %",
                    m.raw_unit,
                    bw / l * 100.0,
                    m.msg_size_bytes.unwrap_or(0),
                    printed / l * 100.0
                )
            })
    } else {
        None
    };
    match message {
        Some(msg) => {
            out.push(finding(run, m.line, "unit_mixup", msg));
            true
        }
        None => false,
    }
}

/// One finding per run whose best large-message bandwidth stays below `floor` × line rate.
fn below_line_rate(run: &Run, platform: &Platform, floor: f64, out: &mut Vec<Finding>) {
    let Some(limit) = line_limit(run, platform) else {
        return;
    };
    let best = run
        .measurements
        .iter()
        .filter(|m| m.msg_size_bytes.is_some_and(|s| s >= LARGE_MESSAGE))
        .filter_map(|m| Some((m.bw_avg_gbps?, m)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    if let Some((bw, m)) = best {
        let share = bw / limit;
        if share < floor {
            out.push(finding(
                run,
                m.line,
                "below_line_rate",
                format!(
                    "{} B: {bw:.2} Gbit/s is {:.1} % of the {limit} Gbit/s link (below {:.0} %): \
                     a link that negotiated a lower speed, or a bottleneck on the way",
                    m.msg_size_bytes.unwrap_or(0),
                    share * 100.0,
                    floor * 100.0
                ),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The direct reads cover every float column: a bad value in any of them is seen.
    #[test]
    fn any_float_out_of_range_reads_every_float_column() {
        assert!(!any_float_out_of_range(&Measurement::default()));
        let mut floats = 0;
        for c in POINT_COLUMNS {
            let Access::F64(_, set) = c.access else {
                continue;
            };
            floats += 1;
            for bad in [-1.0, f64::NAN, f64::INFINITY] {
                let mut m = Measurement::default();
                set(&mut m, Some(bad));
                assert!(any_float_out_of_range(&m), "{} = {bad}", c.name);
                set(&mut m, Some(1.5));
                assert!(!any_float_out_of_range(&m), "{} = 1.5", c.name);
            }
        }
        assert_eq!(floats, 25);
    }

    /// `out_of_range` answers as the three tests it replaces, at the edges of the range.
    #[test]
    fn out_of_range_is_nan_infinite_or_negative() {
        for v in [
            0.0,
            -0.0,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            5e-324,
            -5e-324,
            1.5,
            -1.5,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ] {
            assert_eq!(
                out_of_range(v),
                v.is_nan() || v.is_infinite() || v < 0.0,
                "{v}"
            );
        }
    }
}
