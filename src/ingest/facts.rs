//! Facts one part of a file gives the runs of all of it: device listings (`ibv_devinfo`,
//! `ibstat`, `rdma link`) describe the devices the benchmark runs used, and qperf `conf`
//! describes both hosts of the qperf tests. A listing may come before or after the runs, so they
//! are collected over the whole file ([`FileFacts::add`]) before any run takes them
//! ([`FileFacts::apply`]); a file read in pieces collects them in a first pass.

use crate::model::{Facts, Run, Tool};
use std::collections::BTreeMap;

/// (host from the prompt, device) → the merged listing of that device.
type Listings = BTreeMap<(Option<String>, String), Facts>;

#[derive(Debug, Default)]
pub struct FileFacts {
    /// The first listing of a key wins, as a transcript that lists a device twice describes
    /// it first as the runs found it.
    devices: Listings,
    /// qperf `conf` facts; a later `conf` overrides an earlier one key by key.
    qperf_conf: Facts,
}

impl FileFacts {
    /// Takes the facts of `runs`, which come after those already taken in the file.
    pub fn add(&mut self, runs: &[Run]) {
        for r in runs {
            if r.tool == Tool::DevInfo {
                let Some(device) = r.device.clone() else {
                    continue;
                };
                let merged = self.devices.entry((r.host.clone(), device)).or_default();
                for (k, v) in &r.facts {
                    merged.entry(k.clone()).or_insert_with(|| v.clone());
                }
            } else if r.tool == Tool::Qperf && r.test == "conf" {
                self.qperf_conf
                    .extend(r.facts.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    }

    /// Takes the facts of a later part of the file, as [`FileFacts::add`] would have taken its
    /// runs after those of this part.
    pub fn merge(&mut self, later: FileFacts) {
        for (key, listing) in later.devices {
            let merged = self.devices.entry(key).or_default();
            for (k, v) in listing {
                merged.entry(k).or_insert(v);
            }
        }
        self.qperf_conf.extend(later.qperf_conf);
    }

    /// Copies device facts onto the benchmark runs of their device, under `device.` keys, and
    /// qperf `conf` onto the other qperf runs, under `conf.` keys; a fact already there wins.
    pub fn apply(&self, runs: &mut [Run]) {
        if !self.devices.is_empty() {
            for run in runs.iter_mut().filter(|r| r.tool != Tool::DevInfo) {
                self.apply_device(run);
            }
        }
        if !self.qperf_conf.is_empty() {
            for run in runs
                .iter_mut()
                .filter(|r| r.tool == Tool::Qperf && r.test != "conf")
            {
                for (k, v) in &self.qperf_conf {
                    run.facts
                        .entry(["conf.", k].concat().into())
                        .or_insert_with(|| v.clone());
                }
            }
        }
    }

    fn apply_device(&self, run: &mut Run) {
        let Some(device) = run.device.clone() else {
            return;
        };
        // Same host first; a listing without a host (bare capture) applies to any host; a run
        // without a host takes the listing of any host (in host order).
        let mut sources: Vec<&Facts> = Vec::new();
        sources.extend(self.devices.get(&(run.host.clone(), device.clone())));
        if run.host.is_some() {
            sources.extend(self.devices.get(&(None, device.clone())));
        } else {
            sources.extend(
                self.devices
                    .iter()
                    .filter(|((_, d), _)| d == &device)
                    .map(|(_, f)| f),
            );
        }
        for facts in sources {
            for (k, v) in facts {
                if !matches!(&**k, "device" | "mtu" | "link_type") {
                    run.facts
                        .entry(["device.", k].concat().into())
                        .or_insert_with(|| v.clone());
                }
            }
        }
    }
}
