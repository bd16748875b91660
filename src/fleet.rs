//! Which host (or which pair) is slow: per-host effects fitted to pair results.
//!
//! Each pair's value is modelled on the log scale as `fleet + host_a + host_b + residual`: a
//! slow NIC, cable or port lowers every pair its host is in (a host effect), a bad path between
//! two otherwise good hosts lowers one pair (a residual). The fit is a symmetric median polish:
//! each host's effect is the median, over its pairs, of what the pair has beyond the fleet and
//! the partner's effect, iterated; medians make a few bad pairs or hosts unable to drag the
//! others. A host (or pair) is a suspect when its effect is below `1 - threshold` of the fleet
//! and beyond the noise of the residuals (4 robust standard deviations).

use crate::metric::Direction;
use crate::model::{Role, Run};
use crate::normalize::platform::Platform;
use crate::normalize::points;
use anyhow::Result;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// One measured pair: the value, and where it was read.
#[derive(Debug, Clone)]
pub struct Observation {
    pub server: String,
    pub client: String,
    pub value: f64,
    pub source: String,
}

/// A host's fitted effect: its pairs' typical value relative to the fleet's (1.0 = typical).
#[derive(Debug, Clone, Serialize)]
pub struct HostEffect {
    pub host: String,
    pub ratio: f64,
    pub pairs: usize,
}

/// One pair's cell of the matrix: the median of its observations (both directions, repeats)
/// and what the host effects predict for it.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub a: String,
    pub b: String,
    pub value: f64,
    pub expected: f64,
    /// value / expected.
    pub residual: f64,
    pub sources: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Suspect {
    /// `host` or `pair`.
    pub kind: &'static str,
    /// The host, or `a–b`.
    pub name: String,
    /// Its effect: the host's ratio, or the pair's value / expected.
    pub ratio: f64,
    /// The pairs that show it, worst first: (pair, value, source:line).
    pub evidence: Vec<(String, f64, String)>,
}

impl Suspect {
    /// `suspect host n3: 0.25× the fleet; n1–n3 0.0481 (source:line), …`.
    pub fn describe(&self) -> String {
        let evidence: Vec<String> = self
            .evidence
            .iter()
            .map(|(pair, v, src)| format!("{pair} {} ({src})", crate::format::num(*v)))
            .collect();
        format!(
            "suspect {} {}: {:.2}× the fleet; {}",
            self.kind,
            self.name,
            self.ratio,
            evidence.join(", ")
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    /// The fleet median of the pair values.
    pub median: f64,
    pub hosts: Vec<HostEffect>,
    pub cells: Vec<Cell>,
    pub suspects: Vec<Suspect>,
    /// Robust standard deviation of the log residuals (the fit's noise).
    pub noise: f64,
    /// Per machine, when some machine has several endpoints (a `[[host]]` per NIC): the
    /// median of its endpoints' effects (see [`by_machine`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub machines: Vec<HostEffect>,
}

/// One test and size of a selection, fitted.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub test: String,
    pub msg_size_bytes: Option<u64>,
    pub metric: String,
    #[serde(flatten)]
    pub fit: Fit,
}

/// The pair results of `selected`: the `metric` of client runs that carry `server_host` and
/// `client_host` labels (`linkperf run` puts them on pattern tests), fitted per (test, size).
/// Latency is fitted as its reciprocal, so a lower effect is always the worse one.
pub fn groups(selected: &[(Run, Platform)], metric: &str, threshold: f64) -> Result<Vec<Group>> {
    let higher_is_better = points::direction(metric)? == Direction::HigherIsBetter;
    let pattern_runs: Vec<(Run, Platform)> = selected
        .iter()
        .filter(|(r, _)| r.role == Role::Client && r.labels.contains_key("server_host"))
        .cloned()
        .collect();
    let by_id: HashMap<&str, &Run> = pattern_runs.iter().map(|(r, _)| (r.run_id.as_str(), r)).collect();
    let mut by_key: BTreeMap<(String, Option<u64>), Vec<Observation>> = BTreeMap::new();
    let mut machine_of: HashMap<String, String> = HashMap::new();
    for (r, _) in &pattern_runs {
        for side in ["server", "client"] {
            let host = r.labels.get(&format!("{side}_host"));
            let machine = r.labels.get(&format!("{side}_machine"));
            if let (Some(h), Some(m)) = (host, machine) {
                machine_of.insert(h.clone(), m.clone());
            }
        }
    }
    for p in points::points(&pattern_runs, "platform", Some(metric))? {
        let Some(r) = by_id.get(p.run_id.as_str()) else {
            continue;
        };
        let (Some(server), Some(client)) = (r.labels.get("server_host"), r.labels.get("client_host"))
        else {
            continue;
        };
        if p.value <= 0.0 {
            continue;
        }
        let test = r.labels.get("fleet_test").cloned().unwrap_or_else(|| r.test.clone());
        by_key.entry((test, p.key.msg_size_bytes)).or_default().push(Observation {
            server: server.clone(),
            client: client.clone(),
            value: if higher_is_better { p.value } else { 1.0 / p.value },
            source: format!("{}:{}", p.source, p.line),
        });
    }
    Ok(by_key
        .into_iter()
        .map(|((test, msg_size_bytes), obs)| {
            let mut fit = fit(&obs, threshold);
            by_machine(&mut fit, &machine_of);
            Group {
                test,
                msg_size_bytes,
                metric: metric.to_string(),
                fit,
            }
        })
        .collect())
}

/// Endpoints of one machine (a `[[host]]` per NIC, `machine_of` maps each to its machine):
/// the machine's effect is the median of its endpoints'. A machine whose every endpoint is a
/// suspect is one suspect host; an endpoint that is a suspect while another endpoint of its
/// machine is not is a suspect device (`ep on machine`). Nothing changes when every machine
/// has one endpoint.
pub fn by_machine(fit: &mut Fit, machine_of: &HashMap<String, String>) {
    let machine = |h: &str| machine_of.get(h).map_or(h, String::as_str).to_string();
    let mut endpoints: BTreeMap<String, Vec<&HostEffect>> = BTreeMap::new();
    for h in &fit.hosts {
        endpoints.entry(machine(&h.host)).or_default().push(h);
    }
    if endpoints.values().all(|e| e.len() < 2) {
        return;
    }
    fit.machines = endpoints
        .iter()
        .map(|(m, eps)| HostEffect {
            host: m.clone(),
            ratio: median(&mut eps.iter().map(|e| e.ratio).collect::<Vec<_>>()),
            pairs: eps.iter().map(|e| e.pairs).sum(),
        })
        .collect();
    let suspect_hosts: Vec<String> = fit
        .suspects
        .iter()
        .filter(|s| s.kind == "host")
        .map(|s| s.name.clone())
        .collect();
    let mut out: Vec<Suspect> = Vec::new();
    for s in std::mem::take(&mut fit.suspects) {
        if s.kind != "host" {
            out.push(s);
            continue;
        }
        let m = machine(&s.name);
        let eps = &endpoints[&m];
        if eps.len() < 2 {
            out.push(s);
        } else if eps.iter().all(|e| suspect_hosts.contains(&e.host)) {
            match out.iter_mut().find(|o| o.kind == "host" && o.name == m) {
                Some(o) => o.evidence.extend(s.evidence),
                None => out.push(Suspect {
                    kind: "host",
                    ratio: fit.machines.iter().find(|x| x.host == m).map_or(s.ratio, |x| x.ratio),
                    name: m,
                    evidence: s.evidence,
                }),
            }
        } else {
            out.push(Suspect {
                kind: "device",
                name: format!("{} on {m}", s.name),
                ..s
            });
        }
    }
    out.sort_by(|x, y| x.ratio.total_cmp(&y.ratio));
    fit.suspects = out;
}

/// How many robust standard deviations an effect must lie below zero.
const NOISE_SIGMAS: f64 = 4.0;
const ITERATIONS: usize = 20;

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *m;
    if v.len() % 2 == 1 {
        upper
    } else {
        let lower = v[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// Fits host effects to `observations` of a metric where higher is better (pass reciprocal
/// values for latency). `threshold`: 0.1 flags what is more than 10 % below the fleet.
pub fn fit(observations: &[Observation], threshold: f64) -> Fit {
    // Hosts by name, cells by unordered pair.
    let mut names: Vec<&str> = observations
        .iter()
        .flat_map(|o| [o.server.as_str(), o.client.as_str()])
        .collect();
    names.sort_unstable();
    names.dedup();
    let id: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut by_pair: BTreeMap<(usize, usize), (Vec<f64>, Vec<String>)> = BTreeMap::new();
    for o in observations.iter().filter(|o| o.value > 0.0 && o.server != o.client) {
        let (a, b) = (id[o.server.as_str()], id[o.client.as_str()]);
        let e = by_pair.entry((a.min(b), a.max(b))).or_default();
        e.0.push(o.value.ln());
        e.1.push(o.source.clone());
    }
    let cells: Vec<((usize, usize), f64, Vec<String>)> = by_pair
        .into_iter()
        .map(|(k, (mut v, s))| (k, median(&mut v), s))
        .collect();
    let n = names.len();
    let mut adjacency: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &((a, b), y, _) in &cells {
        adjacency[a].push((b, y));
        adjacency[b].push((a, y));
    }
    let mut fleet = median(&mut cells.iter().map(|c| c.1).collect::<Vec<_>>());
    let mut h = vec![0.0; n];
    let mut scratch = Vec::new();
    for _ in 0..ITERATIONS {
        for i in 0..n {
            scratch.clear();
            scratch.extend(adjacency[i].iter().map(|&(j, y)| y - fleet - h[j]));
            h[i] = median(&mut scratch);
        }
        let centre = median(&mut h.clone());
        fleet += centre;
        h.iter_mut().for_each(|x| *x -= centre);
    }
    let mut residuals: Vec<f64> = cells.iter().map(|&((a, b), y, _)| y - fleet - h[a] - h[b]).collect();
    let mut abs: Vec<f64> = residuals.iter().map(|r| r.abs()).collect();
    let noise = 1.4826 * median(&mut abs);
    let limit = (1.0 - threshold).ln().min(-NOISE_SIGMAS * noise);
    let pair_name = |a: usize, b: usize| format!("{}–{}", names[a], names[b]);
    let mut suspects = Vec::new();
    for (i, &effect) in h.iter().enumerate() {
        if effect < limit {
            let mut evidence: Vec<(String, f64, String)> = cells
                .iter()
                .filter(|((a, b), _, _)| *a == i || *b == i)
                .map(|&((a, b), y, ref s)| (pair_name(a, b), y.exp(), s[0].clone()))
                .collect();
            evidence.sort_by(|x, y| x.1.total_cmp(&y.1));
            evidence.truncate(5);
            suspects.push(Suspect {
                kind: "host",
                name: names[i].to_string(),
                ratio: effect.exp(),
                evidence,
            });
        }
    }
    for (&((a, b), y, ref s), &r) in cells.iter().zip(&residuals) {
        if r < limit {
            suspects.push(Suspect {
                kind: "pair",
                name: pair_name(a, b),
                ratio: r.exp(),
                evidence: vec![(pair_name(a, b), y.exp(), s[0].clone())],
            });
        }
    }
    suspects.sort_by(|x, y| x.ratio.total_cmp(&y.ratio));
    let cells = cells
        .iter()
        .zip(residuals.iter_mut())
        .map(|(((a, b), y, s), r)| Cell {
            a: names[*a].to_string(),
            b: names[*b].to_string(),
            value: y.exp(),
            expected: (fleet + h[*a] + h[*b]).exp(),
            residual: r.exp(),
            sources: s.clone(),
        })
        .collect();
    Fit {
        median: fleet.exp(),
        hosts: names
            .iter()
            .zip(&h)
            .enumerate()
            .map(|(i, (n, e))| HostEffect {
                host: n.to_string(),
                ratio: e.exp(),
                pairs: adjacency[i].len(),
            })
            .collect(),
        cells,
        suspects,
        noise,
        machines: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::pattern::{schedule, Pattern};

    /// Synthetic pair results over `n` hosts from an all-pairs schedule, with a deterministic
    /// ±2 % jitter: hosts in `slow_hosts` at 40 %, pairs in `slow_pairs` at 50 %.
    fn fleet(n: usize, slow_hosts: &[usize], slow_pairs: &[(usize, usize)]) -> Vec<Observation> {
        let mut rng = crate::stats::Rng::new(7);
        schedule(Pattern::AllPairs, n, false)
            .into_iter()
            .map(|s| {
                let jitter = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let mut v = 100.0 * (0.98 + 0.04 * jitter);
                for h in [s.server, s.client] {
                    if slow_hosts.contains(&h) {
                        v *= 0.4;
                    }
                }
                let pair = (s.server.min(s.client), s.server.max(s.client));
                if slow_pairs.contains(&pair) {
                    v *= 0.5;
                }
                Observation {
                    server: format!("h{:04}", s.server),
                    client: format!("h{:04}", s.client),
                    value: v,
                    source: format!("synthetic:{}", s.round),
                }
            })
            .collect()
    }

    fn named(f: &Fit) -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = f.suspects.iter().map(|s| (s.kind, s.name.as_str())).collect();
        v.sort();
        v
    }

    #[test]
    fn one_slow_host_among_six_is_named_not_its_pairs() {
        let f = fit(&fleet(6, &[2], &[]), 0.1);
        assert_eq!(named(&f), vec![("host", "h0002")]);
        assert!((f.suspects[0].ratio - 0.4).abs() < 0.05, "{:?}", f.suspects[0]);
        assert_eq!(f.suspects[0].evidence.len(), 5);
    }

    #[test]
    fn one_slow_pair_among_good_hosts_is_the_pair() {
        let f = fit(&fleet(6, &[], &[(1, 4)]), 0.1);
        assert_eq!(named(&f), vec![("pair", "h0001–h0004")]);
    }

    #[test]
    fn a_quiet_fleet_has_no_suspect() {
        assert!(fit(&fleet(6, &[], &[]), 0.1).suspects.is_empty());
    }

    /// Four machines with two NICs each, one `[[host]]` per NIC: one slow NIC is a device of
    /// its machine; a machine whose two NICs are both slow is the host.
    #[test]
    fn endpoints_of_one_machine_name_the_device_or_the_machine() {
        let obs = fleet(8, &[3, 4, 5], &[]);
        // Endpoints h0000..h0007: machine m{i/2}; h0003 alone slow on m1, m2 both slow.
        let machine_of: HashMap<String, String> =
            (0..8).map(|i| (format!("h{i:04}"), format!("m{}", i / 2))).collect();
        let mut f = fit(&obs, 0.1);
        by_machine(&mut f, &machine_of);
        assert_eq!(
            named(&f),
            vec![("device", "h0003 on m1"), ("host", "m2")],
            "{:?}",
            f.suspects
        );
        assert_eq!(f.machines.len(), 4);
        assert_eq!(f.suspects.iter().find(|s| s.kind == "host").unwrap().evidence.len(), 10);
    }

    /// 1,000 hosts, all 499,500 pairs, three bad hosts and one bad pair (between good hosts).
    /// `benches/fleet.sh` times it.
    #[test]
    fn a_thousand_hosts_with_three_bad_hosts_and_one_bad_pair() {
        let obs = fleet(1000, &[17, 400, 999], &[(5, 6)]);
        assert_eq!(obs.len(), 499_500);
        let f = fit(&obs, 0.1);
        assert_eq!(
            named(&f),
            vec![
                ("host", "h0017"),
                ("host", "h0400"),
                ("host", "h0999"),
                ("pair", "h0005–h0006")
            ]
        );
    }
}
