//! Change points in a metric's history: PELT (pruned exact linear time, Killick et al. 2012)
//! with a Gaussian mean-shift cost and a BIC-style penalty, so a slow drift made of steps each
//! under the gate's threshold is still found. Pure functions.

/// A detected shift of the mean.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChangePoint {
    /// Index of the first value of the new segment.
    pub index: usize,
    pub mean_before: f64,
    pub mean_after: f64,
    /// (after − before) / before.
    pub relative_change: f64,
}

/// Sum of squared deviations from the mean of `x[a..b]`, from prefix sums.
fn cost(s1: &[f64], s2: &[f64], a: usize, b: usize) -> f64 {
    let n = (b - a) as f64;
    let sum = s1[b] - s1[a];
    let sq = s2[b] - s2[a];
    (sq - sum * sum / n).max(0.0)
}

/// Noise variance estimated robustly from successive differences (MAD / 0.6745, / √2), so a
/// shift of the mean does not inflate it.
fn noise_variance(x: &[f64]) -> f64 {
    let mut d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    if d.is_empty() {
        return 0.0;
    }
    d.sort_by(f64::total_cmp);
    let mad = d[d.len() / 2];
    let sigma = mad / 0.6745 / std::f64::consts::SQRT_2;
    sigma * sigma
}

/// Finds mean shifts in `x` (at least `min_segment` values per segment). `min_relative` drops
/// shifts smaller than that share of the mean (noise-level steps on a very quiet series).
pub fn detect(x: &[f64], min_segment: usize, min_relative: f64) -> Vec<ChangePoint> {
    let n = x.len();
    let min_segment = min_segment.max(1);
    if n < 2 * min_segment {
        return Vec::new();
    }
    let mut s1 = vec![0.0; n + 1];
    let mut s2 = vec![0.0; n + 1];
    for (i, v) in x.iter().enumerate() {
        s1[i + 1] = s1[i] + v;
        s2[i + 1] = s2[i] + v * v;
    }
    let mean = s1[n] / n as f64;
    // A floor on the variance keeps perfectly flat series from splitting on rounding.
    let var = noise_variance(x)
        .max((mean.abs() * 1e-6).powi(2))
        .max(f64::MIN_POSITIVE);
    let penalty = 2.0 * var * (n as f64).ln().max(1.0);
    let mut f = vec![f64::INFINITY; n + 1];
    f[0] = -penalty;
    let mut last = vec![0usize; n + 1];
    let mut candidates: Vec<usize> = vec![0];
    for t in min_segment..=n {
        let mut best = f64::INFINITY;
        let mut arg = 0;
        for &s in &candidates {
            if t - s < min_segment {
                continue;
            }
            let v = f[s] + cost(&s1, &s2, s, t) + penalty;
            if v < best {
                best = v;
                arg = s;
            }
        }
        f[t] = best;
        last[t] = arg;
        // PELT pruning: a start that cannot win again is dropped.
        candidates.retain(|&s| t - s < min_segment || f[s] + cost(&s1, &s2, s, t) <= f[t]);
        if t + 1 >= min_segment {
            candidates.push(t + 1 - min_segment);
            candidates.sort_unstable();
            candidates.dedup();
        }
    }
    let mut cuts = Vec::new();
    let mut t = n;
    while t > 0 {
        let s = last[t];
        if s > 0 {
            cuts.push(s);
        }
        t = s;
    }
    cuts.sort_unstable();
    let mut bounds = vec![0];
    bounds.extend(&cuts);
    bounds.push(n);
    let seg_mean = |a: usize, b: usize| (s1[b] - s1[a]) / (b - a) as f64;
    let mut out = Vec::new();
    for w in bounds.windows(3) {
        let before = seg_mean(w[0], w[1]);
        let after = seg_mean(w[1], w[2]);
        let rel = if before != 0.0 {
            (after - before) / before.abs()
        } else {
            0.0
        };
        if rel.abs() >= min_relative {
            out.push(ChangePoint {
                index: w[1],
                mean_before: before,
                mean_after: after,
                relative_change: rel,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_step() {
        let mut x = vec![97.5, 97.6, 97.4, 97.5, 97.6, 97.5];
        x.extend([91.4, 91.5, 91.3, 91.4, 91.4, 91.5]);
        let c = detect(&x, 2, 0.005);
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].index, 6);
        assert!((c[0].relative_change + 0.0626).abs() < 0.001, "{c:?}");
    }

    #[test]
    fn a_slow_drift_of_small_steps_is_found() {
        // Three steps of -2 % each: every one is under a 5 % gate threshold.
        let mut x = Vec::new();
        for level in [100.0, 98.0, 96.04, 94.12] {
            x.extend([level, level + 0.1, level - 0.1, level + 0.05, level - 0.05]);
        }
        let c = detect(&x, 3, 0.005);
        assert_eq!(
            c.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![5, 10, 15],
            "{c:?}"
        );
    }

    #[test]
    fn noise_alone_has_no_change_point() {
        let x = [
            97.5, 97.7, 97.4, 97.6, 97.5, 97.3, 97.6, 97.5, 97.7, 97.4, 97.5, 97.6,
        ];
        assert!(detect(&x, 2, 0.005).is_empty());
        assert!(detect(&[1.0, 2.0], 2, 0.0).is_empty());
    }
}
