//! From two reads to what changed: the counters whose value moved, with wraps, resets and
//! saturated counters said as such, and each run of a log given the pair that covers it.

use super::read::{CountersFile, Pair, Reading};
use crate::model::{CounterDelta, Run};
use std::collections::{HashMap, HashSet};

/// How a counter moved from `before` to `after`: the change and what to know about it. `None`
/// when it did not move.
///
/// A value that went down wrapped if it fits in 32 bits (32-bit hardware and sysfs counters
/// wrap at 2^32); a larger one was reset, and what it counts since the reset is all that is
/// known. InfiniBand's 32-bit port counters stop at their maximum instead of wrapping: a
/// counter that ends there counted at least the change shown.
pub fn change(before: u64, after: u64) -> Option<(u64, Option<&'static str>)> {
    const MAX32: u64 = u32::MAX as u64;
    if after == before {
        return None;
    }
    if after > before {
        let saturated = after == MAX32 || after == u64::MAX;
        return Some((after - before, saturated.then_some("saturated: at least")));
    }
    if before <= MAX32 {
        return Some((MAX32 - before + after + 1, Some("wrapped at 2^32")));
    }
    (after > 0).then_some((after, Some("reset during the run: counts since the reset")))
}

/// The counters that changed between a pair's reads, in the order of the `after` read. A value
/// `rdma statistic show` repeats from sysfs `hw_counters` is kept once, from sysfs.
pub fn deltas(host: &str, pair: &Pair, source: &str) -> Vec<CounterDelta> {
    let Some(after) = &pair.after else {
        return Vec::new();
    };
    let key = |r: &Reading| (r.group, r.object.clone(), r.name.clone());
    let before: HashMap<_, u64> = pair.before.iter().map(|r| (key(r), r.value)).collect();
    let from_sysfs: HashSet<(String, String)> = after
        .iter()
        .filter(|r| r.group == "hw_counters")
        .map(|r| (r.object.clone(), r.name.clone()))
        .collect();
    after
        .iter()
        .filter(|r| {
            r.group != "rdma statistic" || !from_sysfs.contains(&(r.object.clone(), r.name.clone()))
        })
        .filter_map(|r| {
            let &b = before.get(&key(r))?;
            let (delta, note) = change(b, r.value)?;
            Some(CounterDelta {
                host: host.to_string(),
                group: r.group.to_string(),
                object: r.object.clone(),
                name: r.name.clone(),
                before: b,
                after: r.value,
                delta,
                note: note.map(str::to_string),
                source: source.to_string(),
                line: r.line,
            })
        })
        .collect()
}

/// Gives each run, per host, the counters of the last pair that starts at or before its first
/// line, and the placement of its device. Pairs without an `after` read (a run cut short) give nothing.
pub fn attach(file: &CountersFile, source: &str, runs: &mut [Run]) {
    let per_pair: Vec<(&str, u32, Vec<CounterDelta>)> = file
        .pairs
        .iter()
        .map(|p| (p.host.as_str(), p.log_line, deltas(&p.host, p, source)))
        .collect();
    let mut hosts: Vec<&str> = per_pair.iter().map(|p| p.0).collect();
    hosts.sort_unstable();
    hosts.dedup();
    for run in runs {
        run.counters.clear();
        for host in &hosts {
            let covering = per_pair
                .iter()
                .rev()
                .find(|(h, from, _)| h == host && *from <= run.line);
            if let Some((_, _, d)) = covering {
                run.counters.extend(d.iter().cloned());
            }
        }
        // The placement of the run's device, as a device listing of the transcript would give.
        for (device, f, value) in &file.placement {
            if run.device.as_deref() == Some(device.as_str()) {
                run.facts
                    .entry(format!("device.pci.{f}").into())
                    .or_insert_with(|| value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_that_go_down_wrapped_or_were_reset() {
        assert_eq!(change(5, 5), None);
        assert_eq!(change(5, 12), Some((7, None)));
        assert_eq!(
            change(u32::MAX as u64 - 2, 4),
            Some((7, Some("wrapped at 2^32")))
        );
        assert_eq!(
            change(1 << 40, 30),
            Some((30, Some("reset during the run: counts since the reset")))
        );
        assert_eq!(change(1 << 40, 0), None);
        assert_eq!(
            change(100, u32::MAX as u64),
            Some((u32::MAX as u64 - 100, Some("saturated: at least")))
        );
    }
}
