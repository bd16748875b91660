//! Fleet qualification for real: six network namespaces on a Linux bridge (10.77.0.1–6, each
//! link shaped to 200 Mbit/s by a token bucket so the results do not depend on the CPU), iperf3
//! all-pairs between them through `linkperf run` (hosts whose `wrapper` is `ip netns exec`),
//! and `linkperf fleet` naming the culprit: a host whose link is shaped to a quarter of the
//! others', or, with every host fine, the one pair whose direct path is. Needs root, iproute2
//! and iperf3 (`.ci/run` installs them).

mod common;

use common::{can_make_namespaces, linkperf, ok, sh, text};
use std::path::Path;
use std::process::Command;

const HOSTS: usize = 6;
const RATE: &str = "200mbit";
const SLOW: &str = "50mbit";

/// Namespaces `Pn1`…`Pn6` with veths `Pv1`… into a bridge in namespace `Pbr`; removed on drop.
struct Fleet(String);

impl Fleet {
    fn new(p: &str) -> Fleet {
        let f = Fleet(p.to_string());
        drop(Fleet(p.to_string())); // what an earlier killed run left
        sh(&format!(
            "ip netns add {p}br && ip -n {p}br link add {p}br type bridge && ip -n {p}br link set {p}br up"
        ));
        for i in 1..=HOSTS {
            sh(&format!(
                "ip netns add {p}n{i} && ip -n {p}n{i} link set lo up && \
                 ip link add {p}v{i} netns {p}n{i} type veth peer name {p}b{i} netns {p}br && \
                 ip -n {p}br link set {p}b{i} master {p}br && ip -n {p}br link set {p}b{i} up && \
                 ip -n {p}n{i} addr add 10.77.0.{i}/24 dev {p}v{i} && ip -n {p}n{i} link set {p}v{i} up"
            ));
            f.shape(i, RATE);
        }
        f
    }

    /// Shapes host `i`'s link both ways: its egress, and the bridge port's egress towards it.
    fn shape(&self, i: usize, rate: &str) {
        let p = &self.0;
        for (ns, dev) in [
            (format!("{p}n{i}"), format!("{p}v{i}")),
            (format!("{p}br"), format!("{p}b{i}")),
        ] {
            sh(&format!(
                "ip netns exec {ns} tc qdisc replace dev {dev} root tbf rate {rate} burst 64kb latency 50ms"
            ));
        }
    }

    /// A direct, shaped path between hosts `a` and `b`: their traffic to each other leaves the
    /// bridge for it (a /32 route each way).
    fn slow_pair(&self, a: usize, b: usize, rate: &str) {
        let p = &self.0;
        sh(&format!(
            "ip link add {p}d{a}{b} netns {p}n{a} type veth peer name {p}d{b}{a} netns {p}n{b} && \
             ip -n {p}n{a} link set {p}d{a}{b} up && ip -n {p}n{b} link set {p}d{b}{a} up && \
             ip -n {p}n{a} route add 10.77.0.{b}/32 dev {p}d{a}{b} && \
             ip -n {p}n{b} route add 10.77.0.{a}/32 dev {p}d{b}{a} && \
             ip netns exec {p}n{a} tc qdisc add dev {p}d{a}{b} root tbf rate {rate} burst 64kb latency 50ms && \
             ip netns exec {p}n{b} tc qdisc add dev {p}d{b}{a} root tbf rate {rate} burst 64kb latency 50ms"
        ));
    }

    fn suite(&self, dir: &Path, pattern: &str, qperf: bool) -> std::path::PathBuf {
        let mut s = String::from("name = \"fleet\"\nconcurrency = 3\n");
        for i in 1..=HOSTS {
            s.push_str(&format!(
                "[[host]]\nname = \"n{i}\"\naddress = \"10.77.0.{i}\"\nwrapper = [\"ip\", \"netns\", \"exec\", \"{}n{i}\"]\n",
                self.0
            ));
        }
        let names: Vec<String> = (1..=HOSTS).map(|i| format!("\"n{i}\"")).collect();
        s.push_str(&format!(
            "[[test]]\ntool = \"iperf3\"\nname = \"tcp\"\npattern = \"{pattern}\"\nhosts = [{}]\nduration = 1\n",
            names.join(", ")
        ));
        if qperf {
            s.push_str(&format!(
                "[[test]]\ntool = \"qperf\"\nname = \"qperf\"\npattern = \"{pattern}\"\nhosts = [{}]\ntests = [\"tcp_bw\"]\nduration = 1\n",
                names.join(", ")
            ));
        }
        let path = dir.join(format!("{pattern}.toml"));
        std::fs::write(&path, s).unwrap();
        path
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        let p = &self.0;
        let mut names = vec![format!("{p}br")];
        names.extend((1..=HOSTS).map(|i| format!("{p}n{i}")));
        for n in names {
            let _ = Command::new("ip").args(["netns", "del", &n]).output();
        }
    }
}

/// Runs `suite` and asserts that every test passed.
fn run_passing(store: &Path, suite: &Path, runs: &Path, port: u16) {
    let out = common::run_suite(store, suite.to_str().unwrap(), runs, port, &["--no-report"]);
    assert!(out.status.success(), "{}", text(&out));
}

fn fleet_json(store: &Path) -> (Option<i32>, serde_json::Value) {
    let out = linkperf(store, &["fleet", "--format", "json"]);
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out))),
    )
}

fn suspects(group: &serde_json::Value) -> Vec<(String, String)> {
    group["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap().into(),
                s["name"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn all_pairs_names_the_slow_host_then_the_slow_pair() {
    if !can_make_namespaces(&["ip", "tc", "iperf3", "qperf"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let fleet = Fleet::new(&format!("lpf{}", std::process::id() % 100_000));
    // 1. Host n3's link at a quarter of the others'.
    fleet.shape(3, SLOW);
    let store = tmp.path().join("store");
    run_passing(
        &store,
        &fleet.suite(tmp.path(), "all-pairs", true),
        &tmp.path().join("runs"),
        26000,
    );
    let (code, v) = fleet_json(&store);
    assert_eq!(code, Some(1), "{v:#}");
    // One group per tool's test: iperf3 and qperf both name n3, from 15 pairs each.
    let groups = v.as_array().unwrap();
    assert_eq!(groups.len(), 2, "{v:#}");
    for g in groups {
        assert_eq!(
            suspects(g),
            vec![("host".to_string(), "n3".to_string())],
            "{g:#}"
        );
        assert_eq!(g["cells"].as_array().unwrap().len(), 15, "every pair once");
    }
    // The report shows the matrix with n3's row and column as the outlier.
    let report = tmp.path().join("report");
    ok(&linkperf(
        &store,
        &["report", "-o", report.to_str().unwrap(), "--format", "md"],
    ));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("## Fleet") && md.contains("suspect host n3"),
        "{md}"
    );
    let svg = std::fs::read_to_string(report.join("charts/fleet-tcp-matrix.svg")).unwrap();
    // Values on dark red (below 0.55× the median) are printed in white: n3's row and column,
    // ten cells, and no other.
    let white = svg
        .split("<text")
        .skip(1)
        .filter(|t| {
            t.split('>')
                .next()
                .unwrap_or("")
                .contains("fill=\"#FFFFFF\"")
        })
        .count();
    assert_eq!(white, 10, "n3's row and column");
    // The rounds kept each host in one test at a time: 6 hosts, 5 rounds of 3 pairs.
    let rows = ok(&linkperf(
        &store,
        &[
            "export",
            "--where",
            "pattern=all-pairs,role=client,fleet_test=tcp",
        ],
    ));
    let mut runs: std::collections::BTreeMap<String, (u32, String, String)> = Default::default();
    for l in rows.lines() {
        let r: serde_json::Value = serde_json::from_str(l).unwrap();
        let label = |k: &str| r["labels"][k].as_str().unwrap().to_string();
        runs.insert(
            r["run_id"].as_str().unwrap().into(),
            (
                label("round").parse().unwrap(),
                label("server_host"),
                label("client_host"),
            ),
        );
    }
    assert_eq!(runs.len(), 15);
    for (round, server, client) in runs.values() {
        assert!((1..=5).contains(round) && server != client);
    }
    for round in 1..=5 {
        let mut hosts: Vec<&String> = runs
            .values()
            .filter(|r| r.0 == round)
            .flat_map(|r| [&r.1, &r.2])
            .collect();
        assert_eq!(hosts.len(), 6, "round {round}");
        hosts.sort();
        hosts.dedup();
        assert_eq!(hosts.len(), 6, "a host twice in round {round}");
    }

    // 2. Every host fine, the direct path between n2 and n5 slow: the pair, not a host.
    fleet.shape(3, RATE);
    fleet.slow_pair(2, 5, SLOW);
    let store2 = tmp.path().join("store2");
    run_passing(
        &store2,
        &fleet.suite(tmp.path(), "all-pairs", false),
        &tmp.path().join("runs2"),
        26100,
    );
    let (code, v) = fleet_json(&store2);
    assert_eq!(code, Some(1), "{v:#}");
    assert_eq!(
        suspects(&v[0]),
        vec![("pair".to_string(), "n2–n5".to_string())],
        "{v:#}"
    );
}

#[test]
fn ring_and_one_to_many_run_the_expected_pairs() {
    let tmp = tempfile::tempdir().unwrap();
    // The plan alone (--dry-run): no namespaces needed.
    let fleet = Fleet("unused".into());
    for (pattern, pairs) in [
        (
            "ring",
            vec!["n2-n1", "n4-n3", "n6-n5", "n3-n2", "n5-n4", "n1-n6"],
        ),
        (
            "one-to-many",
            vec!["n1-n2", "n1-n3", "n1-n4", "n1-n5", "n1-n6"],
        ),
    ] {
        let suite = fleet.suite(tmp.path(), pattern, false);
        let out = ok(&linkperf(
            &tmp.path().join("store"),
            &["run", suite.to_str().unwrap(), "--dry-run"],
        ));
        let planned: Vec<&str> = out
            .lines()
            .filter_map(|l| l.strip_prefix("tcp."))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        assert_eq!(planned, pairs, "{pattern}\n{out}");
    }
    std::mem::forget(fleet); // nothing was created
}
