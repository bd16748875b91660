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

/// The machine a host runs on: its Slurm node, its ssh target without user and port, or its
/// name. A machine with one `[[host]]` per NIC has several hosts (`linkperf fleet` then tells a
/// slow NIC from a slow machine).
fn machine(suite: &Suite, host: &str) -> String {
    let Some(h) = suite.hosts.iter().find(|h| h.name == host) else {
        return host.to_string();
    };
    if let Some(node) = &h.node {
        return node.clone();
    }
    match &h.ssh {
        Some(target) => {
            let t = target.rsplit('@').next().unwrap_or(target);
            t.rsplit_once(':')
                .filter(|(_, p)| p.parse::<u16>().is_ok())
                .map_or(t, |(h, _)| h)
                .to_string()
        }
        None => h.name.clone(),
    }
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
