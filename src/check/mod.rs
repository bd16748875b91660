//! Findings about numbers that cannot be right, or setups that make them low: `linkperf check`,
//! the import summary and the report's findings. A finding is not an error: the value stays
//! stored as read, with a line that says what to look at and where.
//!
//! Rules, each in one function (see [`RULES`]):
//! - values ([`values`]): bandwidth above line rate, message rate × size against bandwidth,
//!   negative or NaN values, a unit that does not fit the values, bandwidth far below line rate;
//! - sweeps ([`sweep`]): a sweep's value at a size against single-size runs of the same setup;
//! - placement ([`placement`]): a test on CPUs of another NUMA node than its NIC, a PCIe link
//!   trained below its maximum.

pub mod placement;
pub mod sweep;
mod sweep_rows;
pub mod values;

use crate::config::Config;
use crate::model::Run;
use crate::normalize::platform::Platform;
use serde::Serialize;
use std::borrow::Borrow;

/// Every rule, with what it means (the README's table and `linkperf check --rules`).
pub const RULES: &[(&str, &str)] = &[
    (
        "above_line_rate",
        "bandwidth above the link speed (twice it for bidirectional tests)",
    ),
    (
        "rate_size_mismatch",
        "perftest message rate × message size disagrees with the bandwidth beyond printing precision",
    ),
    ("not_a_number", "a negative, NaN or infinite value"),
    (
        "unit_mixup",
        "values that only make sense in another unit than the one printed",
    ),
    (
        "below_line_rate",
        "large-message bandwidth far below the link speed (a link that negotiated less, a bottleneck)",
    ),
    (
        "sweep_vs_single",
        "a sweep's value at a size disagrees with single-size runs of the same setup beyond noise",
    ),
    (
        "remote_numa",
        "the test ran on CPUs of another NUMA node than its NIC's",
    ),
    (
        "pcie_downgraded",
        "the NIC's PCIe link trained below its maximum speed or width",
    ),
];

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// One of [`RULES`].
    pub rule: &'static str,
    pub source: String,
    pub line: u32,
    pub test: String,
    pub message: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {}: {} {}",
            self.source, self.line, self.rule, self.test, self.message
        )
    }
}

/// Every finding over `selected`, in source and line order.
/// Over owned runs or borrowed ones (`import` checks each file's runs without copying them).
pub fn check<R: Borrow<Run>>(selected: &[(R, Platform)], config: &Config) -> Vec<Finding> {
    let mut checker = Checker::new(config);
    for (run, platform) in selected {
        checker.add(run.borrow(), platform);
    }
    checker.finish()
}

/// The rules over runs given one at a time: the per-run rules at once, the sweep rule (which
/// compares runs) when finished. Checkers of consecutive parts of a file merge into the one
/// the whole file would have.
#[derive(Debug)]
pub struct Checker<'c> {
    config: &'c Config,
    findings: Vec<Finding>,
    sweeps: sweep::Sweeps,
}

impl<'c> Checker<'c> {
    pub fn new(config: &'c Config) -> Checker<'c> {
        Checker {
            config,
            findings: Vec::new(),
            sweeps: sweep::Sweeps::default(),
        }
    }

    pub fn add(&mut self, run: &Run, platform: &Platform) {
        values::check_run(run, platform, self.config, &mut self.findings);
        placement::check_run(run, &mut self.findings);
        self.sweeps.add(run, platform);
    }

    /// Takes what `later` saw, as if its runs had been added after these.
    pub fn merge(&mut self, later: Checker) {
        self.findings.extend(later.findings);
        self.sweeps.merge(later.sweeps);
    }

    /// Every finding, in source and line order.
    pub fn finish(mut self) -> Vec<Finding> {
        self.sweeps.finish(&mut self.findings);
        let mut out = self.findings;
        out.sort_by(|a, b| {
            (&a.source, a.line, a.rule, &a.message).cmp(&(&b.source, b.line, b.rule, &b.message))
        });
        out.dedup();
        out
    }
}
