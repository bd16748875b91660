//! Placement: where a test ran against where its NIC sits. A test pinned to CPUs of another
//! NUMA node than the NIC's crosses the socket interconnect for every buffer, and a PCIe link
//! that trained below its maximum caps the NIC; both cut bandwidth by large factors.
//!
//! The NIC's side comes from its device's sysfs files (`device.pci.numa_node`,
//! `device.pci.local_cpulist`, `device.pci.current_link_*` and `max_link_*` facts: a
//! `grep -H . /sys/class/infiniband/…` in the transcript, or the counters file `linkperf run`
//! and `linkperf bench` write); the test's side from `taskset` and `numactl` in its command line.

use super::Finding;
use crate::model::Run;

/// CPUs of a Linux CPU list (`0-3,8,10-11`); `None` for anything else.
pub fn cpu_list(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 65_536 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    Some(out)
}

/// What a wrapper pins the test to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pinning {
    Cpus(Vec<u32>),
    Nodes(Vec<u32>),
}

/// The pinning of one wrapper: `taskset -c LIST`, `taskset MASK`, `numactl -C/--physcpubind
/// LIST`, `numactl -N/--cpunodebind NODES`. Memory-only policies (`numactl -i 1`) pin nothing.
pub fn pinning(wrapper: &str) -> Option<Pinning> {
    let words: Vec<&str> = wrapper.split_whitespace().collect();
    let value = |i: usize| words.get(i + 1).copied();
    match *words.first()? {
        "taskset" => {
            for (i, w) in words.iter().enumerate().skip(1) {
                match *w {
                    "-c" | "--cpu-list" => return value(i).and_then(cpu_list).map(Pinning::Cpus),
                    "-p" | "--pid" | "-a" | "--all-tasks" => continue,
                    mask if !mask.starts_with('-') => return mask_cpus(mask).map(Pinning::Cpus),
                    _ => {}
                }
            }
            None
        }
        "numactl" => {
            let mut out = None;
            for (i, w) in words.iter().enumerate() {
                let (flag, inline) = match w.split_once('=') {
                    Some((f, v)) => (f, Some(v)),
                    None => (*w, None),
                };
                let v = inline.or_else(|| value(i));
                match flag {
                    "-C" | "--physcpubind" => out = v.and_then(cpu_list).map(Pinning::Cpus),
                    "-N" | "--cpunodebind" if out.is_none() => {
                        out = v.and_then(cpu_list).map(Pinning::Nodes)
                    }
                    _ => {}
                }
            }
            out
        }
        _ => None,
    }
}

/// `taskset 0xff00` (hexadecimal, `0x` optional).
fn mask_cpus(mask: &str) -> Option<Vec<u32>> {
    let hex = mask.trim_start_matches("0x").replace(',', "");
    if hex.is_empty() || hex.len() > 64 {
        return None;
    }
    let mut out = Vec::new();
    for (i, c) in hex.chars().rev().enumerate() {
        let nibble = c.to_digit(16)?;
        out.extend((0..4).filter(|b| nibble & (1 << b) != 0).map(|b| i as u32 * 4 + b));
    }
    Some(out)
}

fn list_text(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The leading number of `8.0 GT/s PCIe` or `16`; `None` for `Unknown`.
fn leading_number(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

pub fn check_run(run: &Run, out: &mut Vec<Finding>) {
    // Both rules compare with the NIC's sysfs facts: without any (most runs) there is nothing
    // to compare, and no key is built to look for one.
    if !run.has_facts_under("device.pci.") {
        return;
    }
    let fact = |k: &str| {
        run.facts
            .get(["device.pci.", k].concat().as_str())
            .map(String::as_str)
    };
    let device = run.device.as_deref().unwrap_or("the NIC");
    let mut push = |rule: &'static str, message: String| {
        out.push(Finding {
            rule,
            source: run.source.clone(),
            line: run.line,
            test: run.test.clone(),
            message,
        })
    };
    let node = fact("numa_node").and_then(|n| n.trim().parse::<i64>().ok());
    let local = fact("local_cpulist").and_then(cpu_list);
    let wrappers = run.command.as_ref().map(|c| c.wrappers.as_slice()).unwrap_or(&[]);
    for w in wrappers {
        match pinning(w) {
            Some(Pinning::Cpus(cpus)) => {
                let Some(local) = &local else { continue };
                let remote: Vec<u32> = cpus.iter().copied().filter(|c| !local.contains(c)).collect();
                if !remote.is_empty() {
                    push(
                        "remote_numa",
                        format!(
                            "`{w}`: CPU(s) {} of {} are not local to {device} (NUMA node {}, local CPUs {})",
                            list_text(&remote),
                            list_text(&cpus),
                            node.map_or("?".into(), |n| n.to_string()),
                            list_text(local)
                        ),
                    );
                }
            }
            Some(Pinning::Nodes(nodes)) => {
                let Some(node) = node.filter(|n| *n >= 0) else {
                    continue;
                };
                if !nodes.contains(&(node as u32)) {
                    push(
                        "remote_numa",
                        format!(
                            "`{w}`: runs on NUMA node(s) {}, {device} is on node {node}",
                            list_text(&nodes)
                        ),
                    );
                }
            }
            None => {}
        }
    }
    for (what, unit) in [("speed", ""), ("width", "x")] {
        let current = fact(&["current_link_", what].concat());
        let max = fact(&["max_link_", what].concat());
        if let (Some(c), Some(m)) = (current, max) {
            if let (Some(cv), Some(mv)) = (leading_number(c), leading_number(m)) {
                if cv < mv {
                    push(
                        "pcie_downgraded",
                        format!("{device}'s PCIe link trained at {what} {unit}{c}, its maximum is {unit}{m}"),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_pin_cpus_or_nodes() {
        assert_eq!(pinning("taskset -c 16-23"), Some(Pinning::Cpus((16..=23).collect())));
        assert_eq!(pinning("taskset 0x30"), Some(Pinning::Cpus(vec![4, 5])));
        assert_eq!(pinning("numactl -C 0,2-3"), Some(Pinning::Cpus(vec![0, 2, 3])));
        assert_eq!(pinning("numactl --cpunodebind=1 --membind=1"), Some(Pinning::Nodes(vec![1])));
        assert_eq!(pinning("numactl -N 0 -m 0"), Some(Pinning::Nodes(vec![0])));
        assert_eq!(pinning("numactl -i 1"), None);
        assert_eq!(list_text(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }
}
