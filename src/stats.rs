//! Statistics for deciding whether a change is real: the median, and the Mann-Whitney U test
//! (exact distribution for small samples without ties, normal approximation with tie
//! correction otherwise). Pure functions.

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

#[cfg(test)]
mod tests {
    use super::*;

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
