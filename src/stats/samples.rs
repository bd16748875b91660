//! Statistics over per-iteration latency samples: perftest's table columns, percentiles of any
//! order, and a histogram. Pure functions over the samples the native runner keeps.

/// Latency summary in the columns of a perftest latency table (all µs).
#[derive(Debug, Clone, PartialEq)]
pub struct LatencySummary {
    pub count: usize,
    pub min: f64,
    pub max: f64,
    /// The median, which perftest calls `t_typical`.
    pub typical: f64,
    pub avg: f64,
    /// Population standard deviation.
    pub stdev: f64,
    pub p99: f64,
    pub p999: f64,
}

/// Nearest-rank percentile of sorted samples: the smallest value with at least `p` percent
/// of the samples at or below it.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    // The small margin keeps 99.9 % of 1000 at rank 999 despite float rounding.
    let rank = ((p / 100.0) * sorted.len() as f64 - 1e-9).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

pub fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut s = samples.to_vec();
    s.sort_by(f64::total_cmp);
    s
}

pub fn summarize(samples: &[f64]) -> Option<LatencySummary> {
    if samples.is_empty() {
        return None;
    }
    let s = sorted(samples);
    let n = s.len() as f64;
    let avg = s.iter().sum::<f64>() / n;
    let var = s.iter().map(|x| (x - avg).powi(2)).sum::<f64>() / n;
    Some(LatencySummary {
        count: s.len(),
        min: s[0],
        max: s[s.len() - 1],
        typical: percentile(&s, 50.0)?,
        avg,
        stdev: var.sqrt(),
        p99: percentile(&s, 99.0)?,
        p999: percentile(&s, 99.9)?,
    })
}

/// Parses one percentile of `--percentiles 50,90,99.99`: a number in (0, 100].
pub fn parse_percentile(p: &str) -> Result<f64, String> {
    match p.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 100.0 => Ok(v),
        _ => Err(format!("{p:?}: expected a number above 0 and at most 100")),
    }
}

/// The key a percentile is stored under in a row's `extra` map: `p50`, `p99.99`.
pub fn percentile_key(p: f64) -> String {
    format!("p{p}")
}

/// Equal-width bins from min to max: (lower bound, upper bound, count).
pub fn histogram(samples: &[f64], bins: usize) -> Vec<(f64, f64, usize)> {
    if samples.is_empty() || bins == 0 {
        return Vec::new();
    }
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let width = (max - min) / bins as f64;
    let mut counts = vec![0usize; bins];
    for &x in samples {
        let i = if width > 0.0 {
            (((x - min) / width) as usize).min(bins - 1)
        } else {
            0
        };
        counts[i] += 1;
    }
    counts
        .into_iter()
        .enumerate()
        .map(|(i, c)| (min + width * i as f64, min + width * (i + 1) as f64, c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s: Vec<f64> = (1..=1000).map(f64::from).collect();
        assert_eq!(percentile(&s, 50.0), Some(500.0));
        assert_eq!(percentile(&s, 99.0), Some(990.0));
        assert_eq!(percentile(&s, 99.9), Some(999.0));
        assert_eq!(percentile(&s, 100.0), Some(1000.0));
        assert_eq!(percentile(&s, 0.0), Some(1.0));
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&s, 101.0), None);
    }

    #[test]
    fn summary_matches_hand_computation() {
        let s = summarize(&[4.0, 2.0, 6.0, 8.0]).unwrap();
        assert_eq!((s.min, s.max, s.avg, s.typical), (2.0, 8.0, 5.0, 4.0));
        assert!((s.stdev - 5f64.sqrt()).abs() < 1e-12);
        assert_eq!((s.p99, s.p999, s.count), (8.0, 8.0, 4));
        assert_eq!(summarize(&[]), None);
    }

    #[test]
    fn percentile_options() {
        assert_eq!(parse_percentile(" 99.99").unwrap(), 99.99);
        assert!(parse_percentile("0").unwrap_err().contains("\"0\""));
        assert!(parse_percentile("101").is_err());
        assert!(parse_percentile("abc").is_err());
        assert_eq!(percentile_key(99.99), "p99.99");
        assert_eq!(percentile_key(50.0), "p50");
    }

    #[test]
    fn histogram_counts_every_sample() {
        let h = histogram(&[1.0, 1.5, 2.0, 3.0, 5.0], 4);
        assert_eq!(h.len(), 4);
        assert_eq!(h.iter().map(|b| b.2).sum::<usize>(), 5);
        assert_eq!(h[0], (1.0, 2.0, 2));
        assert_eq!(h[3].2, 1);
        assert_eq!(histogram(&[3.0, 3.0], 3)[0].2, 2);
    }
}
