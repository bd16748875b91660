//! How many repeats a test still needs. A fixed count runs that many; `repeats = "auto"` reads
//! each repeat's client log as it finishes (the same parsers as `import`), and stops once the
//! 95 % bootstrap confidence interval of every point's median is narrower than the target share
//! of that median, after its minimum, or at its cap. Why it stopped goes into the manifest.
//! The values are the numbers the tool printed: iperf3's text rounds a rate to three significant
//! digits, so repeats can print the same rate and give an interval of zero width; a target below
//! that resolution wants the tool's full-precision output (`client_args = ["-J"]`).

use super::suite::{Auto, Repeats, Test};
use super::RunRecord;
use crate::normalize::platform::Platform;
use crate::normalize::points::{self, PointKey};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// How an `auto` test stopped.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub test: String,
    pub repeats: u32,
    /// `target` (every interval narrow enough), `cap` (`max_repeats` reached) or `interrupted`.
    pub stopped: String,
    /// The widest interval, relative to its median, after the last repeat.
    pub widest_ci: Option<f64>,
    pub target_ci: f64,
    /// The point whose interval was widest.
    pub widest_point: Option<String>,
}

/// The repeat state of one test.
pub struct State {
    name: String,
    repeats: Repeats,
    auto: Auto,
    /// The repeat the next round runs.
    pub next_repeat: u32,
    /// Every headline value of every finished repeat, by point.
    values: BTreeMap<PointKey, Vec<f64>>,
    stopped: Option<&'static str>,
    widest: Option<(f64, String)>,
}

impl State {
    pub fn new(test: &Test) -> State {
        State {
            name: test.name.clone().unwrap_or_else(|| test.tool.clone()),
            repeats: test.repeats.clone(),
            auto: test.auto.clone(),
            next_repeat: 1,
            values: BTreeMap::new(),
            stopped: None,
            widest: None,
        }
    }

    pub fn done(&self) -> bool {
        match self.repeats {
            Repeats::Count(n) => self.next_repeat > n.max(1),
            Repeats::Auto(_) => self.stopped.is_some(),
        }
    }

    /// Takes the records of the repeat that just ran.
    pub fn record(&mut self, records: &[&RunRecord], dir: &Path) {
        let repeat = self.next_repeat;
        self.next_repeat += 1;
        if !self.repeats.is_auto() {
            return;
        }
        if records.iter().any(|r| r.status == "interrupted") {
            self.stopped = Some("interrupted");
            return;
        }
        for r in records.iter().filter(|r| r.status == "ok") {
            let path = dir.join(&r.client_log);
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let runs: Vec<_> = crate::ingest::parse_bytes(&path.display().to_string(), &bytes)
                .runs
                .into_iter()
                .map(|run| (run, Platform::new()))
                .collect();
            for p in points::points(&runs, "tool", None).unwrap_or_default() {
                self.values.entry(p.key).or_default().push(p.value);
            }
        }
        self.widest = self
            .values
            .iter()
            .map(|(k, v)| {
                let width = match crate::stats::median_ci(v, 0.95) {
                    Some((lo, hi)) => {
                        let m = crate::stats::median(v);
                        if m == 0.0 {
                            f64::INFINITY
                        } else {
                            (hi - lo) / m.abs()
                        }
                    }
                    None => f64::INFINITY,
                };
                let size = k
                    .msg_size_bytes
                    .map(|b| format!(" {b} B"))
                    .unwrap_or_default();
                (width, format!("{} {}{size} {}", k.test, k.role, k.metric))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0));
        let narrow = self
            .widest
            .as_ref()
            .is_some_and(|(w, _)| *w <= self.auto.target_ci);
        if repeat >= self.auto.min_repeats && narrow {
            self.stopped = Some("target");
        } else if repeat >= self.auto.max_repeats {
            self.stopped = Some("cap");
        }
    }

    /// What the manifest says of an `auto` test; None for a fixed count.
    pub fn outcome(self) -> Option<Outcome> {
        if !self.repeats.is_auto() {
            return None;
        }
        Some(Outcome {
            test: self.name,
            repeats: self.next_repeat - 1,
            stopped: self.stopped.unwrap_or("interrupted").to_string(),
            widest_ci: self.widest.as_ref().map(|w| w.0).filter(|w| w.is_finite()),
            target_ci: self.auto.target_ci,
            widest_point: self.widest.map(|w| w.1),
        })
    }
}
