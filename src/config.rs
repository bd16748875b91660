//! `linkperf.toml`: the project file. Rules match runs by source path glob, host or device and
//! set labels, so a lab says once that `logs/kp920/**` is "Kunpeng 920 + hns 100G" and `mrdma*`
//! devices are "B850". Errors name the file and line; unknown fields are errors, not ignored.
//!
//! ```toml
//! [[rule]]
//! source = "logs/kp920/**"   # glob on the path given to `import`
//! host = "node1-*"            # glob on the host from the shell prompt
//! device = "mrdma*"           # glob on the RDMA device
//! set = { platform = "s5000c-b850", nic = "B850", link_speed_gbps = "100" }
//!
//! [compare]
//! line_rate_finding_below = 0.90   # flag points below this share of the link speed
//! ```

use anyhow::{anyhow, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The parsed project file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default, rename = "rule")]
    pub rules: Vec<Rule>,
    #[serde(default)]
    pub compare: CompareConfig,
    #[serde(default)]
    pub gate: GateConfig,
    /// Where the file was read from (for messages); not a TOML field.
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// One labelling rule: every given matcher must match; then `set` applies.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub source: Option<String>,
    pub host: Option<String>,
    pub device: Option<String>,
    pub set: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompareConfig {
    /// Points below this share of the known link speed are reported as findings.
    #[serde(default = "default_line_rate_share")]
    pub line_rate_finding_below: f64,
    /// Repeats whose coefficient of variation exceeds this are flagged `noisy` (0.05 = 5 %).
    #[serde(default = "default_noisy_cv")]
    pub noisy_cv_above: f64,
}

/// `[gate]`: thresholds and rules of `linkperf gate`.
///
/// ```toml
/// [gate]
/// alpha = 0.05                     # significance level for repeated runs
/// missing = "fail"                 # or "ignore": a point missing from current
/// thresholds = { bw_avg_gbps = 0.05, lat_typical_us = 0.10 }
///
/// [[gate.rule]]                    # per test (and optionally metric and size range)
/// test = "ib_write_bw"
/// metric = "bw_avg_gbps"
/// threshold = 0.03
/// floor_line_rate = 0.9            # bandwidth at least 90 % of the link speed ...
/// min_size = 65536                 # ... for messages of 64 KiB and more
/// noisy_cv_above = 0.05            # flag points whose repeats vary more (CV)
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    #[serde(default)]
    pub missing: Missing,
    #[serde(default)]
    pub thresholds: BTreeMap<crate::metric::Metric, f64>,
    #[serde(default, rename = "rule")]
    pub rules: Vec<GateRule>,
    /// Points whose baseline or current repeats vary more than this (coefficient of
    /// variation) are flagged `noisy` (0.05 = 5 %).
    #[serde(default = "default_noisy_cv")]
    pub noisy_cv_above: f64,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            alpha: default_alpha(),
            missing: Missing::default(),
            thresholds: BTreeMap::new(),
            rules: Vec::new(),
            noisy_cv_above: default_noisy_cv(),
        }
    }
}

fn default_alpha() -> f64 {
    0.05
}

/// What the gate does with a baseline point the current results lack. A misspelt choice is a
/// load error that lists the choices (serde's message for an unknown variant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Missing {
    /// The gate fails.
    #[default]
    Fail,
    /// The point is reported and does not fail the gate.
    Ignore,
}

/// A per-test override of the gate's rule for a metric.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateRule {
    pub test: Option<String>,
    pub metric: Option<crate::metric::Metric>,
    pub threshold: Option<f64>,
    pub floor_line_rate: Option<f64>,
    pub min_size: Option<u64>,
    pub max_size: Option<u64>,
}

impl Default for CompareConfig {
    fn default() -> Self {
        CompareConfig {
            line_rate_finding_below: default_line_rate_share(),
            noisy_cv_above: default_noisy_cv(),
        }
    }
}

fn default_noisy_cv() -> f64 {
    0.05
}

fn default_line_rate_share() -> f64 {
    0.90
}

impl Config {
    /// Reads `path`; with `required` false a missing file gives the empty configuration.
    pub fn load(path: &Path, required: bool) -> Result<Config> {
        if !path.exists() && !required {
            return Ok(Config::default());
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut config = Config::parse(&text).map_err(|e| anyhow!("{}:{e}", path.display()))?;
        config.path = Some(path.to_path_buf());
        Ok(config)
    }

    /// Parses TOML text; the error starts with the 1-based line (`12: unknown field ...`).
    pub fn parse(text: &str) -> std::result::Result<Config, String> {
        parse_toml(text)
    }
}

/// Deserializes TOML; the error starts with the 1-based line of the problem (`12: unknown
/// field ...`) so callers can prefix the file name. Shared by the project file and suites.
pub fn parse_toml<T: serde::de::DeserializeOwned>(text: &str) -> std::result::Result<T, String> {
    toml::from_str::<T>(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        format!("{line}: {}", e.message())
    })
}

/// Shell-style glob: `*` matches within a path segment, `**` across segments, `?` one char.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some(b'*') if p.get(1) == Some(&b'*') => {
                let rest = p[2..].strip_prefix(b"/").unwrap_or(&p[2..]);
                (0..=t.len()).any(|i| go(rest, &t[i..]))
            }
            Some(b'*') => (0..=t.len())
                .take_while(|&i| i == 0 || t[i - 1] != b'/')
                .any(|i| go(&p[1..], &t[i..])),
            Some(b'?') => !t.is_empty() && t[0] != b'/' && go(&p[1..], &t[1..]),
            Some(&c) => t.first() == Some(&c) && go(&p[1..], &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("logs/kp920/**", "logs/kp920/a/b.txt"));
        assert!(glob_match("mrdma*", "mrdma0"));
        assert!(!glob_match("logs/*.txt", "logs/a/b.txt"));
        assert!(glob_match("**/000_*.txt", "fixtures/seeds/000_8f7f.txt"));
        assert!(glob_match("node?", "node1"));
    }

    #[test]
    fn errors_name_the_line() {
        let e = Config::parse("[[rule]]\ndevice = \"x\"\nset = { a = \"b\" }\ncolour = 1\n")
            .unwrap_err();
        assert!(e.starts_with("4: "), "{e}");
        assert!(e.contains("unknown field"), "{e}");
        let e = Config::parse("[[rule]\n").unwrap_err();
        assert!(e.starts_with("1: "), "{e}");
        let ok =
            Config::parse("[[rule]]\ndevice = \"mrdma*\"\nset = { platform = \"s5000c-b850\" }\n")
                .unwrap();
        assert_eq!(ok.rules[0].set["platform"], "s5000c-b850");
    }

    #[test]
    fn gate_missing_is_a_closed_choice() {
        assert_eq!(Config::default().gate.missing, Missing::Fail);
        let ok = Config::parse("[gate]\nmissing = \"ignore\"\n").unwrap();
        assert_eq!(ok.gate.missing, Missing::Ignore);
        let e = Config::parse("[gate]\nmissing = \"ignroe\"\n").unwrap_err();
        assert!(e.starts_with("2: "), "{e}");
        assert!(e.contains("`fail`") && e.contains("`ignore`"), "{e}");
    }

    #[test]
    fn gate_metrics_are_checked_where_they_are_written() {
        let ok = Config::parse(
            "[gate]\nthresholds = { bw_avg_gbps = 0.03 }\n[[gate.rule]]\nmetric = \"lat_p99_us\"\n",
        )
        .unwrap();
        assert_eq!(ok.gate.thresholds[&crate::metric::Metric::BwAvgGbps], 0.03);
        let e = Config::parse("[gate]\nthresholds = { bw_avg = 0.03 }\n").unwrap_err();
        assert!(e.contains("bw_avg_gbps"), "{e}");
        let e = Config::parse("[[gate.rule]]\nmetric = \"p99\"\n").unwrap_err();
        assert!(e.contains("lat_p99_us"), "{e}");
    }
}
