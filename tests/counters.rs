//! Counters around each run, for real: two network namespaces routed through a third that
//! drops packets on the way (`tc netem loss 1%`, or a token bucket with a short queue where
//! the kernel has no netem), iperf3 between them through `linkperf run`
//! with each namespace a host (`wrapper = ["ip", "netns", "exec", …]`). The client's TCP
//! retransmits must be stored, non-zero, and equal to what this test reads from the client
//! namespace's `/proc/net/snmp` before and after the whole `linkperf run` (nothing else runs
//! in that namespace). Needs root, iproute2 and iperf3 (`.ci/run` installs them).

mod common;

use common::{can_make_namespaces, linkperf, ok, run_suite, sh, text};
use std::process::Command;

/// Namespaces `NAMEa` (10.78.1.1) and `NAMEb` (10.78.2.1), routed through `NAMEr`, whose
/// link towards `a` drops what it cannot queue; all removed on drop.
struct Namespaces(String);

impl Namespaces {
    fn new(name: &str) -> Namespaces {
        let n = Namespaces(name.to_string());
        drop(Namespaces(name.to_string())); // what an earlier killed run left
        sh(&format!(
            "for n in a r b; do ip netns add {name}$n && ip -n {name}$n link set lo up; done && \
             ip link add {name}a0 netns {name}a type veth peer name {name}r0 netns {name}r && \
             ip link add {name}b0 netns {name}b type veth peer name {name}r1 netns {name}r && \
             ip -n {name}a addr add 10.78.1.1/24 dev {name}a0 && \
             ip -n {name}r addr add 10.78.1.254/24 dev {name}r0 && \
             ip -n {name}b addr add 10.78.2.1/24 dev {name}b0 && \
             ip -n {name}r addr add 10.78.2.254/24 dev {name}r1 && \
             ip -n {name}a link set {name}a0 up && ip -n {name}r link set {name}r0 up && \
             ip -n {name}r link set {name}r1 up && ip -n {name}b link set {name}b0 up && \
             ip -n {name}a route add default via 10.78.1.254 && \
             ip -n {name}b route add default via 10.78.2.254 && \
             ip netns exec {name}r sysctl -qw net.ipv4.ip_forward=1"
        ));
        // Loss on the way from b to a, at the router: netem's 1 % where the kernel has netem.
        // This machine's kernel has no sch_netem; there a token bucket with a short queue
        // drops what does not fit, and TCP repairs those losses the same way.
        let netem = format!("ip netns exec {name}r tc qdisc add dev {name}r0 root netem loss 1%");
        if !Command::new("sh")
            .args(["-c", &netem])
            .status()
            .unwrap()
            .success()
        {
            sh(&format!(
                "ip netns exec {name}r tc qdisc add dev {name}r0 root tbf rate 500mbit burst 32kb limit 64kb"
            ));
        }
        n
    }

    fn retransmits(&self, ns: &str) -> u64 {
        let o = Command::new("ip")
            .args([
                "netns",
                "exec",
                &format!("{}{ns}", self.0),
                "cat",
                "/proc/net/snmp",
            ])
            .output()
            .expect("ip netns exec");
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        let tcp: Vec<&str> = text.lines().filter(|l| l.starts_with("Tcp:")).collect();
        let names: Vec<&str> = tcp[0].split_whitespace().collect();
        let values: Vec<&str> = tcp[1].split_whitespace().collect();
        let i = names.iter().position(|n| *n == "RetransSegs").unwrap();
        values[i].parse().unwrap()
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for side in ["a", "r", "b"] {
            let _ = Command::new("ip")
                .args(["netns", "del", &format!("{}{side}", self.0)])
                .output();
        }
    }
}

#[test]
fn tcp_retransmits_under_netem_loss_are_stored_with_the_run() {
    if !can_make_namespaces(&["ip", "tc", "iperf3"]) {
        return;
    }
    let ns = Namespaces::new(&format!("lpc{}", std::process::id() % 100_000));
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("loss.toml");
    std::fs::write(
        &suite,
        format!(
            "name = \"loss\"\n\
             [[host]]\nname = \"a\"\naddress = \"10.78.1.1\"\nwrapper = [\"ip\", \"netns\", \"exec\", \"{0}a\"]\n\
             [[host]]\nname = \"b\"\naddress = \"10.78.2.1\"\nwrapper = [\"ip\", \"netns\", \"exec\", \"{0}b\"]\n\
             [[test]]\ntool = \"iperf3\"\nserver = \"a\"\nclient = \"b\"\nduration = 2\n",
            ns.0
        ),
    )
    .unwrap();
    let store = dir.path().join("store");
    let runs = dir.path().join("runs");
    let before = ns.retransmits("b");
    let out = run_suite(
        &store,
        suite.to_str().unwrap(),
        &runs,
        25310,
        &["--no-report"],
    );
    let after = ns.retransmits("b");
    assert!(text(&out).contains("1 of 1 runs passed"), "{}", text(&out));
    let rows = export(&store, "role=client");
    let retrans: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["name"] == "RetransSegs" && r["host"] == "b")
        .collect();
    assert_eq!(retrans.len(), 1, "{rows:#?}");
    let stored = retrans[0]["delta"].as_u64().unwrap();
    assert!(stored > 0, "1 % loss and no retransmit?\n{rows:#?}");
    assert_eq!(stored, after - before, "{rows:#?}");
    // The value points at its line in the counters file beside the client's log.
    let file = retrans[0]["counters_source"].as_str().unwrap();
    assert!(file.ends_with("iperf3-r1-client.counters"), "{file}");
    let line = retrans[0]["counters_line"].as_u64().unwrap() as usize;
    let text = std::fs::read_to_string(file).unwrap();
    let values = text.lines().nth(line - 1).unwrap();
    assert!(values.starts_with("Tcp: "), "{values}");
    // The server's side was read in its own namespace, into its own counters file.
    let server = export(&store, "role=server");
    assert!(!server.is_empty());
    for r in &server {
        assert_eq!(r["host"], "a", "{r}");
        assert!(r["counters_source"]
            .as_str()
            .unwrap()
            .ends_with("iperf3-r1-server.counters"));
    }
    // The report names it in its counters section.
    let report = dir.path().join("report");
    ok(&linkperf(
        &store,
        &["report", "-o", report.to_str().unwrap(), "--format", "md"],
    ));
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    let row = md
        .lines()
        .find(|l| l.starts_with("| iperf3_tcp | client |"))
        .unwrap_or_else(|| panic!("no counters row for the client:\n{md}"));
    assert!(
        row.contains(&format!("RetransSegs +{}", linkperf::counters::si(stored))),
        "{row}"
    );
}

fn export(store: &std::path::Path, filter: &str) -> Vec<serde_json::Value> {
    ok(&linkperf(
        store,
        &["export", "--counters", "--where", filter],
    ))
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

const LAB_LOG: &str = "fixtures/counters/rxe-lab-ib_write_bw-client.log";
const LAB_COUNTERS: &str = "fixtures/counters/rxe-lab-ib_write_bw-client.counters";

/// The counters file `linkperf run` wrote in the Soft-RoCE lab around one `ib_write_bw`
/// (fixtures/counters/GENERATED-BY-lab.sh): every line reads, rxe0's hardware counters moved,
/// `rdma statistic show` repeats them and is kept once, gauges and settings are left out.
#[test]
fn a_lab_counters_file_reads_back() {
    use linkperf::counters::{delta, read};
    let text = std::fs::read_to_string(common::root().join(LAB_COUNTERS)).unwrap();
    let file = read::parse(&text);
    assert!(file.problems.is_empty(), "{:?}", file.problems);
    assert_eq!(file.host, "guest");
    assert_eq!(file.pairs.len(), 1);
    // rxe0 is a software device: it has no PCI placement to read.
    assert!(file.placement.is_empty());
    let deltas = delta::deltas(&file.host, &file.pairs[0], LAB_COUNTERS);
    let get = |group: &str, name: &str| {
        deltas
            .iter()
            .find(|d| d.group == group && d.name == name)
            .map(|d| d.delta)
    };
    let sent = get("hw_counters", "sent_pkts").expect("rxe0 sent packets");
    assert!(sent > 1000, "{sent}");
    assert_eq!(
        get("rdma statistic", "sent_pkts"),
        None,
        "kept once, from sysfs"
    );
    assert_eq!(
        get("hw_counters", "lifespan"),
        None,
        "a setting that did not move"
    );
    assert!(
        get("snmp", "ActiveOpens").is_some(),
        "perftest's TCP handshake"
    );
    assert_eq!(get("snmp", "CurrEstab"), None, "a gauge");
    // Every delta is its two values' difference, and its line holds the after value.
    let lines: Vec<&str> = text.lines().collect();
    for d in &deltas {
        assert_eq!(d.delta, d.after - d.before, "{d:?}");
        let line = lines[d.line as usize - 1];
        assert!(
            line.contains(&d.after.to_string()) && line.contains(&d.name) || d.group == "snmp",
            "{d:?}: {line}"
        );
    }
}

/// Importing the lab log reads its counters file: the stored run carries the same deltas.
#[test]
fn importing_a_log_reads_its_counters_file() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let out = ok(&linkperf(&store, &["import", LAB_LOG]));
    assert!(!out.contains("problem"), "{out}");
    let rows = export(&store, "test=ib_write_bw");
    let file_text = std::fs::read_to_string(common::root().join(LAB_COUNTERS)).unwrap();
    let file = linkperf::counters::read::parse(&file_text);
    let deltas = linkperf::counters::delta::deltas(&file.host, &file.pairs[0], LAB_COUNTERS);
    assert_eq!(rows.len(), deltas.len());
    for (r, d) in rows.iter().zip(&deltas) {
        assert_eq!(r["name"], d.name.as_str());
        assert_eq!(r["delta"], d.delta);
        assert_eq!(r["counters_source"], LAB_COUNTERS);
        assert_eq!(r["source"], LAB_LOG);
    }
    // Its directory imported: the log found by the listing reads the counters file the listing
    // found beside it (a listed directory's logs look for none the listing did not hold).
    let from_dir = tmp.path().join("from-dir");
    // (The log and the note of how it was made: the counters file is read with the log.)
    let out = text(&linkperf(&from_dir, &["import", "fixtures/counters"]));
    assert!(out.contains("read 2 file(s)"), "{out}");
    let dir_rows = export(&from_dir, "test=ib_write_bw");
    assert_eq!(dir_rows, rows);
    // Given alone, a counters file is not a log.
    let out = linkperf(&store, &["import", LAB_COUNTERS]);
    assert!(
        text(&out).contains("a counters file is read with its log"),
        "{}",
        text(&out)
    );
}

/// A counters file with a second host's reads (what `linkperf bench` appends for a server on
/// another host): each run gets both hosts' changes, each under its host. The second host's
/// reads here are the lab file's own, under another name.
#[test]
fn a_second_hosts_reads_apply_to_the_same_runs() {
    use linkperf::counters::{capture::LocalFile, delta, read};
    let tmp = tempfile::tempdir().unwrap();
    let lab = std::fs::read_to_string(common::root().join(LAB_COUNTERS)).unwrap();
    let path = tmp.path().join("bench.counters");
    let sections =
        lab.split_once('\n')
            .unwrap()
            .1
            .replacen("== before log line 1", "== before log line 0", 1);
    // The file as the lab wrote it, then the other host's reads appended.
    let appender = LocalFile::create(&path, "guest").unwrap();
    std::fs::write(&path, &lab).unwrap();
    appender
        .append_other("server", &sections, 1, "guest")
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let parsed = read::parse(&text);
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    assert_eq!(parsed.pairs.len(), 2);
    assert_eq!(parsed.pairs[1].host, "server");
    assert_eq!(parsed.pairs[1].log_line, 1);
    let mut runs = vec![linkperf::model::Run {
        line: 1,
        ..Default::default()
    }];
    delta::attach(&parsed, "bench.counters", &mut runs);
    let sent: Vec<(&str, u64)> = runs[0]
        .counters
        .iter()
        .filter(|c| c.name == "sent_pkts")
        .map(|c| (c.host.as_str(), c.delta))
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0].1, sent[1].1);
    assert_eq!(
        sent.iter().map(|s| s.0).collect::<Vec<_>>(),
        vec!["guest", "server"]
    );
}

/// `gate` names the counters that changed across both sides next to each verdict, from raw
/// logs (their counters files are read with them) as from the store.
#[test]
fn gate_shows_counters_next_to_each_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(&store, &["import", LAB_LOG]));
    let json = tmp.path().join("gate.json");
    let out = linkperf(
        &store,
        &[
            "gate",
            "--baseline",
            LAB_LOG,
            "--current-where",
            "test=ib_write_bw",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("counters"), "{}", text(&out));
    let gate: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let points = gate["points"].as_array().unwrap();
    assert!(!points.is_empty());
    for p in points {
        let (current, baseline) = (
            p["counters"].as_str().unwrap(),
            p["baseline_counters"].as_str().unwrap(),
        );
        assert!(current.contains("sent_pkts +"), "{p}");
        assert_eq!(current, baseline, "the same run on both sides");
    }
}
