//! A suite's pattern tests made into one test per pair and direction (see [`super::pattern`]),
//! each labelled with its pattern, round and hosts so `linkperf fleet` can put the pair results
//! back together.

use super::pattern;
use super::suite::{Expanded, Host, HostList, Suite};
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Ports a test's concurrent pairs spread over (a test owns ten ports from its base port).
const PORTS_PER_TEST: u16 = 10;

/// The host names of a pattern: the list, or the lines of `@FILE` (relative to `base`; blank
/// lines and `#` comments skipped).
fn host_names(list: &HostList, base: &Path) -> Result<Vec<String>> {
    match list {
        HostList::Names(n) => Ok(n.clone()),
        HostList::File(spec) => {
            let Some(file) = spec.strip_prefix('@') else {
                bail!("hosts = {spec:?}: give a list of names or \"@FILE\"");
            };
            let path = base.join(file);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("hosts = {spec:?}: cannot read {}", path.display()))?;
            Ok(text
                .lines()
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect())
        }
    }
}

/// The machine of a pattern host: see [`Host::machine`]; a host no `[[host]]` defines is its name.
fn machine(suite: &Suite, host: &str) -> String {
    suite
        .hosts
        .iter()
        .find(|h| h.name == host)
        .map_or_else(|| host.to_string(), Host::machine)
}

impl Suite {
    /// The suite with every pattern test replaced by its pairs, in round order, and every test
    /// given its port (`base_port` + 10 per test of the suite as written). A pattern host that
    /// no `[[host]]` defines is reached over ssh under its name.
    pub fn expand(&self, base: &Path, base_port: u16) -> Result<Suite> {
        let mut out = self.clone();
        out.tests.clear();
        for (i, t) in self.tests.iter().enumerate() {
            let port = u16::try_from(i)
                .ok()
                .and_then(|i| i.checked_mul(PORTS_PER_TEST))
                .and_then(|o| base_port.checked_add(o))
                .context("too many tests for the port range: lower --base-port")?;
            let (Some(p), Some(list)) = (t.pattern, &t.hosts) else {
                let mut t = t.clone();
                t.expanded = Some(Expanded {
                    labels: BTreeMap::new(),
                    port,
                });
                out.tests.push(t);
                continue;
            };
            let names = host_names(list, base)?;
            if names.len() < 2 {
                bail!("test {}: pattern {} needs at least two hosts", t.tool, p.as_str());
            }
            for n in &names {
                if !out.hosts.iter().any(|h| &h.name == n) {
                    out.hosts.push(Host {
                        name: n.clone(),
                        address: n.clone(),
                        ssh: Some(n.clone()),
                        ..Host::default()
                    });
                }
            }
            let base_name = t.name.clone().unwrap_or_else(|| t.tool.clone());
            let mut in_round = (0, 0u16);
            for slot in pattern::schedule(p, names.len(), t.bidirectional) {
                in_round = if slot.round == in_round.0 {
                    (slot.round, in_round.1 + 1)
                } else {
                    (slot.round, 0)
                };
                let (server, client) = (&names[slot.server], &names[slot.client]);
                let labels = BTreeMap::from([
                    ("pattern".to_string(), p.as_str().to_string()),
                    ("round".to_string(), slot.round.to_string()),
                    ("fleet_test".to_string(), base_name.clone()),
                    ("pair".to_string(), format!("{client}-{server}")),
                    ("server_host".to_string(), server.clone()),
                    ("client_host".to_string(), client.clone()),
                    ("server_machine".to_string(), machine(&out, server)),
                    ("client_machine".to_string(), machine(&out, client)),
                ]);
                let mut e = t.clone();
                e.pattern = None;
                e.hosts = None;
                e.server = server.clone();
                e.client = client.clone();
                e.name = Some(format!("{base_name}.{client}-{server}"));
                e.expanded = Some(Expanded {
                    labels,
                    port: port + in_round.1 % PORTS_PER_TEST,
                });
                out.tests.push(e);
            }
        }
        if out.executor == super::suite::Executor::Slurm {
            for h in &mut out.hosts {
                h.slurm_node = Some(h.node.clone().unwrap_or_else(|| h.name.clone()));
            }
        }
        out.validate()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One `[[host]]` per NIC of a machine: the machine is the ssh target without user and
    /// port, or the Slurm node; a host without either is its own machine.
    #[test]
    fn pattern_runs_name_the_machine_of_each_nic() {
        let suite: Suite = toml::from_str(
            r#"
            name = "fleet"
            [[host]]
            name = "n1-mlx5_0"
            ssh = "root@n1:2222"
            device = "mlx5_0"
            [[host]]
            name = "n1-mlx5_1"
            ssh = "n1"
            device = "mlx5_1"
            [[host]]
            name = "n2"
            node = "node02"
            [[test]]
            tool = "iperf3"
            pattern = "all-pairs"
            hosts = ["n1-mlx5_0", "n1-mlx5_1", "n2", "n3"]
            "#,
        )
        .expect("suite");
        let expanded = suite.expand(Path::new("."), 18515).expect("expanded");
        let mut machines = BTreeMap::new();
        for t in &expanded.tests {
            let labels = &t.expanded.as_ref().expect("pattern test").labels;
            for side in ["server", "client"] {
                let host = labels[&format!("{side}_host")].as_str();
                machines.insert(host.to_string(), labels[&format!("{side}_machine")].clone());
            }
        }
        let want: BTreeMap<String, String> =
            [("n1-mlx5_0", "n1"), ("n1-mlx5_1", "n1"), ("n2", "node02"), ("n3", "n3")]
                .into_iter()
                .map(|(h, m)| (h.to_string(), m.to_string()))
                .collect();
        assert_eq!(machines, want);
    }
}
