//! Statistics for deciding whether a change is real: the median, the Mann-Whitney U test
//! (exact distribution for small samples without ties, normal approximation with tie
//! correction otherwise), and percentile-bootstrap confidence intervals of a median and of a
//! ratio of medians, drawn from a seeded generator so every output is reproducible. Pure
//! functions. [`samples`] holds the statistics of per-iteration latency samples (percentiles,
//! perftest's summary columns, histograms), shared by the native runner and the report.

pub mod samples;

/// Median of a non-empty slice (mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Result of a Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the first sample.
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// True when the exact distribution was used.
    pub exact: bool,
}

/// Ranks of the pooled samples (average ranks for ties) and the tie correction term
/// Σ(t³ − t) over tie groups.
fn ranks(a: &[f64], b: &[f64]) -> (Vec<f64>, f64) {
    let mut pooled: Vec<(f64, usize)> = a.iter().chain(b).copied().zip(0..).collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let mut r = vec![0.0; pooled.len()];
    let mut ties = 0.0;
    let mut i = 0;
    while i < pooled.len() {
        let mut j = i;
        while j + 1 < pooled.len() && pooled[j + 1].0 == pooled[i].0 {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        for item in &pooled[i..=j] {
            r[item.1] = avg;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    (r, ties)
}

/// Number of ways to reach each U value for samples of sizes n1 and n2 (no ties).
fn u_distribution(n1: usize, n2: usize) -> Vec<f64> {
    // f[i][j][u]: arrangements of i values of sample 1 and j of sample 2 giving U = u.
    let max_u = n1 * n2;
    let mut prev: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
    for row in prev.iter_mut() {
        row[0] = 1.0;
    }
    for _ in 1..=n1 {
        let mut cur: Vec<Vec<f64>> = vec![vec![0.0; max_u + 1]; n2 + 1];
        cur[0][0] = 1.0;
        for j in 1..=n2 {
            for u in 0..=max_u {
                // The largest value is from sample 1 (it beats all j values of sample 2) or from sample 2.
                let from1 = if u >= j { prev[j][u - j] } else { 0.0 };
                cur[j][u] = from1 + cur[j - 1][u];
            }
        }
        prev = cur;
    }
    prev[n2].clone()
}

/// Two-sided Mann-Whitney U test of `a` against `b`.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    let (r, ties) = ranks(a, b);
    let r1: f64 = r[..n1].iter().sum();
    let u1 = r1 - (n1 * (n1 + 1)) as f64 / 2.0;
    let mean_u = (n1 * n2) as f64 / 2.0;
    if ties == 0.0 && n1 * n2 <= 400 {
        let dist = u_distribution(n1, n2);
        let total: f64 = dist.iter().sum();
        let k = u1.min((n1 * n2) as f64 - u1).round() as usize;
        let tail: f64 = dist[..=k].iter().sum::<f64>() / total;
        return Some(MannWhitney {
            u: u1,
            p_value: (2.0 * tail).min(1.0),
            exact: true,
        });
    }
    let n = (n1 + n2) as f64;
    let var = (n1 * n2) as f64 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(MannWhitney {
            u: u1,
            p_value: 1.0,
            exact: false,
        });
    }
    // Continuity correction of 0.5 towards the mean.
    let z = ((u1 - mean_u).abs() - 0.5).max(0.0) / var.sqrt();
    Some(MannWhitney {
        u: u1,
        p_value: (2.0 * (1.0 - normal_cdf(z))).min(1.0),
        exact: false,
    })
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 erf, error < 1.5e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    let erf = if x >= 0.0 { y } else { -y };
    0.5 * (1.0 + erf)
}

/// SplitMix64: a small, fast, seedable generator (Steele, Lea, Flood 2014); enough for
/// resampling and shuffling, and the same numbers on every machine.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform index below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * n as f64) as usize % n
    }

    /// Fisher–Yates shuffle.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// Resamples drawn for a bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Seed of every bootstrap interval, so the same values always give the same interval.
pub const BOOTSTRAP_SEED: u64 = 0x6c69_6e6b_7065_7266; // "linkperf"

fn resample_median(values: &[f64], rng: &mut Rng, buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    buf.extend((0..values.len()).map(|_| values[rng.below(values.len())]));
    median(buf)
}

/// The `level` quantile interval of sorted bootstrap statistics.
fn percentile_interval(mut stats: Vec<f64>, level: f64) -> (f64, f64) {
    stats.sort_by(f64::total_cmp);
    let n = stats.len();
    let tail = (1.0 - level) / 2.0;
    let at = |q: f64| stats[((q * n as f64).floor() as usize).min(n - 1)];
    (at(tail), at(1.0 - tail))
}

/// Percentile-bootstrap `level` (0.95) confidence interval of the median of `values`; None for
/// fewer than two values.
pub fn median_ci(values: &[f64], level: f64) -> Option<(f64, f64)> {
    if values.len() < 2 {
        return None;
    }
    let mut rng = Rng::new(BOOTSTRAP_SEED);
    let mut buf = Vec::with_capacity(values.len());
    let stats = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| resample_median(values, &mut rng, &mut buf))
        .collect();
    Some(percentile_interval(stats, level))
}

/// Above this many values a side, [`ratio_ci95`] uses order statistics instead of resampling
/// (2,000 medians of a 100,000-run selection would take longer than the query).
pub const BOOTSTRAP_MAX_N: usize = 200;

/// 95 % confidence interval of median(`current`) / median(`baseline`): the percentile bootstrap
/// for the usual handful of repeats; for large samples the distribution-free order-statistic
/// interval of each median (ranks n/2 ± 1.96 √n / 2) combined by the delta method. Also says
/// which method. None when a side is empty, both have one value, or a median is zero.
pub fn ratio_ci95(baseline: &[f64], current: &[f64]) -> Option<((f64, f64), &'static str)> {
    if baseline.len().max(current.len()) <= BOOTSTRAP_MAX_N {
        return ratio_ci(baseline, current, 0.95).map(|ci| (ci, "bootstrap"));
    }
    let spread = |v: &[f64]| -> Option<(f64, f64)> {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len() as f64;
        let half = 1.959_964 * n.sqrt() / 2.0;
        let lo = ((n / 2.0 - half).floor().max(0.0)) as usize;
        let hi = ((n / 2.0 + half).ceil() as usize).min(s.len() - 1);
        let m = median(&s);
        // The interval's half-width as a standard error of the median.
        (m != 0.0).then(|| (m, (s[hi] - s[lo]) / (2.0 * 1.959_964)))
    };
    if baseline.is_empty() || current.is_empty() {
        return None;
    }
    let ((mb, sb), (mc, sc)) = (spread(baseline)?, spread(current)?);
    let r = mc / mb;
    let se = r.abs() * ((sc / mc).powi(2) + (sb / mb).powi(2)).sqrt();
    Some(((r - 1.959_964 * se, r + 1.959_964 * se), "order statistics"))
}

/// Percentile-bootstrap `level` confidence interval of median(`current`) / median(`baseline`),
/// each side resampled on its own; None when a side is empty or both have a single value (there
/// is nothing to resample), or the baseline's median can be zero.
pub fn ratio_ci(baseline: &[f64], current: &[f64], level: f64) -> Option<(f64, f64)> {
    if baseline.is_empty() || current.is_empty() || (baseline.len() < 2 && current.len() < 2) {
        return None;
    }
    let mut rng = Rng::new(BOOTSTRAP_SEED);
    let (mut b, mut c) = (Vec::new(), Vec::new());
    let mut stats = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        let base = resample_median(baseline, &mut rng, &mut b);
        if base == 0.0 {
            return None;
        }
        stats.push(resample_median(current, &mut rng, &mut c) / base);
    }
    Some(percentile_interval(stats, level))
}

/// Sample coefficient of variation (stddev / |mean|); 0 for fewer than two values.
pub fn cv(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    if mean == 0.0 {
        0.0
    } else {
        var.sqrt() / mean.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_intervals_cover_the_median_and_are_reproducible() {
        let v = [10.0, 10.2, 9.9, 10.1, 10.0, 9.8, 10.3];
        let (lo, hi) = median_ci(&v, 0.95).unwrap();
        assert!(
            lo <= 10.0 && 10.0 <= hi && lo >= 9.8 && hi <= 10.3,
            "{lo} {hi}"
        );
        assert_eq!(
            median_ci(&v, 0.95),
            Some((lo, hi)),
            "seeded: the same every time"
        );
        assert_eq!(median_ci(&[5.0, 5.0, 5.0], 0.95), Some((5.0, 5.0)));
        assert_eq!(median_ci(&[5.0], 0.95), None);
        let (lo, hi) = ratio_ci(&[100.0, 101.0, 99.0], &[90.0, 91.0, 89.0], 0.95).unwrap();
        assert!(
            lo >= 89.0 / 101.0 && hi <= 91.0 / 99.0 && lo < 0.9 && hi > 0.9,
            "{lo} {hi}"
        );
        assert_eq!(ratio_ci(&[100.0], &[90.0], 0.95), None);
        assert_eq!(ratio_ci(&[0.0, 0.0], &[1.0, 2.0], 0.95), None);
        // Large samples: order statistics; the interval holds the true ratio 0.9.
        let base: Vec<f64> = (0..1000).map(|i| 100.0 + (i % 10) as f64 * 0.1).collect();
        let cur: Vec<f64> = base.iter().map(|v| v * 0.9).collect();
        let ((lo, hi), method) = ratio_ci95(&base, &cur).unwrap();
        assert_eq!(method, "order statistics");
        assert!(
            lo < 0.9 + 1e-12 && hi > 0.9 - 1e-12 && hi - lo < 0.01,
            "{lo} {hi}"
        );
        assert_eq!(ratio_ci95(&[1.0, 2.0], &[2.0, 4.0]).unwrap().1, "bootstrap");
    }

    #[test]
    fn seeded_shuffle_is_a_permutation_and_repeats() {
        let mut a: Vec<u32> = (0..10).collect();
        let mut b = a.clone();
        Rng::new(7).shuffle(&mut a);
        Rng::new(7).shuffle(&mut b);
        assert_eq!(a, b);
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..10).collect::<Vec<_>>());
        assert_ne!(a, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn exact_p_values() {
        // Complete separation of 5 vs 5: p = 2 / C(10,5) = 2/252.
        let m = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!(m.exact);
        assert_eq!(m.u, 0.0);
        assert!((m.p_value - 2.0 / 252.0).abs() < 1e-12);
        // Interleaved samples are not significant.
        let m = mann_whitney(&[1.0, 3.0, 5.0, 7.0, 9.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!(m.p_value > 0.5, "{m:?}");
    }

    #[test]
    fn normal_approximation_with_ties() {
        let a = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0];
        let b = [4.0, 4.0, 5.0, 5.0, 6.0, 6.0];
        let m = mann_whitney(&a, &b).unwrap();
        assert!(!m.exact);
        assert!(m.p_value < 0.01, "{m:?}");
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
    }
}
