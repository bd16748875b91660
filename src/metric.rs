//! The metrics compare, gate and history can decide on: point columns of the schema
//! ([`crate::columns`]) with a direction. The CLI's `--metric`, the project file's gate
//! thresholds and rules, and the point pipeline all name them through this one enum, so a
//! misspelt metric is an error that lists the choices wherever it is written.

use serde::{Deserialize, Serialize};

/// Whether a larger value of a metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    HigherIsBetter,
    LowerIsBetter,
}

#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Metric {
    BwAvgGbps,
    BwPeakGbps,
    MsgRateMpps,
    Tps,
    LatTypicalUs,
    LatAvgUs,
    LatMinUs,
    LatMaxUs,
    LatP99Us,
    LatP999Us,
    LatStdevUs,
    Retransmits,
    JitterMs,
    LossPct,
}

impl Metric {
    /// Every metric, in the order `--metric` lists them.
    pub const ALL: [Metric; 14] = [
        Metric::BwAvgGbps,
        Metric::BwPeakGbps,
        Metric::MsgRateMpps,
        Metric::Tps,
        Metric::LatTypicalUs,
        Metric::LatAvgUs,
        Metric::LatMinUs,
        Metric::LatMaxUs,
        Metric::LatP99Us,
        Metric::LatP999Us,
        Metric::LatStdevUs,
        Metric::Retransmits,
        Metric::JitterMs,
        Metric::LossPct,
    ];

    /// The point column the metric reads, which is also its name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Metric::BwAvgGbps => "bw_avg_gbps",
            Metric::BwPeakGbps => "bw_peak_gbps",
            Metric::MsgRateMpps => "msg_rate_mpps",
            Metric::Tps => "tps",
            Metric::LatTypicalUs => "lat_typical_us",
            Metric::LatAvgUs => "lat_avg_us",
            Metric::LatMinUs => "lat_min_us",
            Metric::LatMaxUs => "lat_max_us",
            Metric::LatP99Us => "lat_p99_us",
            Metric::LatP999Us => "lat_p999_us",
            Metric::LatStdevUs => "lat_stdev_us",
            Metric::Retransmits => "retransmits",
            Metric::JitterMs => "jitter_ms",
            Metric::LossPct => "loss_pct",
        }
    }

    pub const fn direction(self) -> Direction {
        match self {
            Metric::BwAvgGbps | Metric::BwPeakGbps | Metric::MsgRateMpps | Metric::Tps => {
                Direction::HigherIsBetter
            }
            _ => Direction::LowerIsBetter,
        }
    }

    /// The metric called `name`, or an error listing the choices.
    pub fn parse(name: &str) -> anyhow::Result<Metric> {
        Metric::ALL
            .into_iter()
            .find(|m| m.as_str() == name)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown metric {name:?}. Choose from: {}",
                    Metric::ALL.map(Metric::as_str).join(", ")
                )
            })
    }

    /// Default relative gate thresholds: 5 % for bandwidth, message rate and transactions, 10 %
    /// for typical and average latency, 20 % for tail latency.
    pub fn default_threshold(self) -> f64 {
        match self {
            Metric::BwAvgGbps | Metric::BwPeakGbps | Metric::MsgRateMpps | Metric::Tps => 0.05,
            Metric::LatP99Us | Metric::LatP999Us | Metric::LatMaxUs => 0.20,
            _ => 0.10,
        }
    }
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_is_a_numeric_point_column_under_its_own_name() {
        use clap::ValueEnum;
        for m in Metric::ALL {
            let field = crate::columns::point_field(m.as_str()).expect("a point column");
            assert!(
                !matches!(field.access, crate::columns::Access::Str(..)),
                "{m}"
            );
            assert_eq!(m.to_possible_value().unwrap().get_name(), m.as_str());
            assert_eq!(
                serde_json::to_string(&m).unwrap(),
                format!("\"{}\"", m.as_str())
            );
            assert_eq!(Metric::parse(m.as_str()).unwrap(), m);
        }
        assert_eq!(Metric::value_variants().len(), Metric::ALL.len());
        let e = Metric::parse("bw_avg").unwrap_err().to_string();
        assert!(e.contains("Choose from: bw_avg_gbps, bw_peak_gbps"), "{e}");
    }
}
