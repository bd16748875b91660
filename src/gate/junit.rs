//! `gate --junit FILE`: JUnit XML for CI test views.

use super::table::num;
use super::{GatePoint, Outcome};

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: one test case per test and size (and metric); failures carry both values.
pub fn junit(points: &[GatePoint]) -> String {
    let failures = points
        .iter()
        .filter(|p| matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing))
        .count();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"linkperf gate\" tests=\"{}\" failures=\"{failures}\">\n",
        points.len()
    );
    for p in points {
        out.push_str(&format!(
            "  <testcase classname=\"{}\" name=\"{}\">",
            xml(&p.test),
            xml(&p.name())
        ));
        if matches!(p.decision.outcome, Outcome::Regressed | Outcome::Missing) {
            let msg = format!(
                "{}: baseline {} current {} ({}){}{}",
                p.decision.outcome.as_str(),
                num(p.decision.baseline_median),
                num(p.decision.current_median),
                p.decision.reason,
                if p.config_changes.is_empty() {
                    String::new()
                } else {
                    format!("; config change: {}", p.config_changes.join("; "))
                },
                if p.counters_text().is_empty() {
                    String::new()
                } else {
                    format!("; counters: {}", p.counters_text())
                }
            );
            out.push_str(&format!(
                "\n    <failure message=\"{}\">{}</failure>\n  ",
                xml(&msg),
                xml(&p.current_sources.join("\n"))
            ));
        }
        out.push_str("</testcase>\n");
    }
    out.push_str("</testsuite>\n</testsuites>\n");
    out
}
