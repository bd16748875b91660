//! `linkperf check`: each rule over real fixtures, modified only where the rule requires (a
//! label, one number, one header, one wrapper), and no finding on the seeds but the known one.

mod common;

use common::{linkperf, ok, root, text, SEED_003};
use std::path::Path;

const SEED_001: &str = "fixtures/seeds/001_76f1dcbf5cbef6cc.txt";

fn seed(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap()
}

/// Imports `files` (with `labels`) into a fresh store and returns `linkperf check`'s findings
/// as JSON values.
fn findings(dir: &Path, files: &[&Path], labels: &[&str]) -> Vec<serde_json::Value> {
    let store = dir.join("store");
    let _ = std::fs::remove_dir_all(&store);
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    for l in labels {
        args.extend(["--label".to_string(), l.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&linkperf(&store, &args));
    serde_json::from_str(&ok(&linkperf(&store, &["check", "--format", "json"]))).unwrap()
}

fn rules(f: &[serde_json::Value]) -> Vec<&str> {
    f.iter().map(|f| f["rule"].as_str().unwrap()).collect()
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn the_seeds_yield_no_finding_and_the_25g_nic_at_10g_is_the_known_one() {
    let tmp = tempfile::tempdir().unwrap();
    let seeds = root().join("fixtures/seeds");
    assert_eq!(
        findings(tmp.path(), &[&seeds], &[]),
        Vec::<serde_json::Value>::new()
    );
    // Labelled with the NIC's rated speed, seed 001 says what its prose says: the 25G NIC
    // linked at 10G.
    let f = findings(
        tmp.path(),
        &[&root().join(SEED_001)],
        &["link_speed_gbps=25"],
    );
    assert!(!f.is_empty());
    assert!(rules(&f).iter().all(|r| *r == "below_line_rate"), "{f:#?}");
    assert!(f[0]["message"]
        .as_str()
        .unwrap()
        .contains("39.1 % of the 25 Gbit/s link"));
    // At its real 10G, nothing.
    let f = findings(
        tmp.path(),
        &[&root().join(SEED_001)],
        &["link_speed_gbps=10"],
    );
    assert!(f.is_empty(), "{f:#?}");
}

#[test]
fn bandwidth_above_line_rate() {
    let tmp = tempfile::tempdir().unwrap();
    let f = findings(
        tmp.path(),
        &[&root().join(SEED_001)],
        &["link_speed_gbps=5"],
    );
    assert!(rules(&f).contains(&"above_line_rate"), "{f:#?}");
    let above = f.iter().find(|f| f["rule"] == "above_line_rate").unwrap();
    assert!(above["message"]
        .as_str()
        .unwrap()
        .contains("9.77 Gbit/s is above the 5 Gbit/s"));
    assert_eq!(above["line"], 44);
}

#[test]
fn message_rate_times_size_against_bandwidth() {
    let tmp = tempfile::tempdir().unwrap();
    let text = seed(SEED_001).replacen(
        "1165.17            0.018643",
        "1165.17            0.028643",
        1,
    );
    let f = findings(tmp.path(), &[&write(tmp.path(), "rate.txt", &text)], &[]);
    assert_eq!(rules(&f), vec!["rate_size_mismatch"], "{f:#?}");
    assert_eq!(f[0]["line"], 44);
    assert!(f[0]["message"]
        .as_str()
        .unwrap()
        .contains("0.028643 Mpps = 15.017 Gbit/s"));
}

#[test]
fn negative_values() {
    let tmp = tempfile::tempdir().unwrap();
    let text = seed(SEED_001).replacen(
        "1165.17            0.018643",
        "-1165.17           0.018643",
        1,
    );
    let f = findings(tmp.path(), &[&write(tmp.path(), "neg.txt", &text)], &[]);
    assert!(rules(&f).contains(&"not_a_number"), "{f:#?}");
    assert!(f.iter().any(|f| f["message"]
        .as_str()
        .unwrap()
        .starts_with("bw_avg_gbps is -9.77")));
}

#[test]
fn a_gbits_header_over_mib_values_is_a_unit_mixup() {
    let tmp = tempfile::tempdir().unwrap();
    // The first table's header says Gb/sec; its values are perftest's MiB/s.
    let text = seed(SEED_001).replacen(
        "BW peak[MB/sec]    BW average[MB/sec]",
        "BW peak[Gb/sec]    BW average[Gb/sec]",
        1,
    );
    let f = findings(
        tmp.path(),
        &[&write(tmp.path(), "unit.txt", &text)],
        &["link_speed_gbps=10"],
    );
    assert_eq!(rules(&f), vec!["unit_mixup"], "{f:#?}");
    assert!(f[0]["message"]
        .as_str()
        .unwrap()
        .contains("as MiB/s it would be 9.77 Gbit/s"));
}

#[test]
fn a_sweep_against_a_single_size_run_of_the_same_setup() {
    let tmp = tempfile::tempdir().unwrap();
    // Seed 003's `ib_write_bw -a` client block, and the same block as a single-size run: the
    // command says `-s 65536` instead of `-a`, the other sizes' rows are gone, and its
    // bandwidth and message rate at 65536 B are halved.
    let text = seed(SEED_003);
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| {
            l.contains(
                "# numactl -i 1 ib_write_bw -F -d mrdma0 -a -n 1000 -N --report_gbits 192.170.1.30",
            )
        })
        .unwrap();
    let end = start
        + 1
        + lines[start + 1..]
            .iter()
            .position(|l| l.contains("# "))
            .unwrap();
    let sweep = &lines[start..end];
    let row = sweep
        .iter()
        .find(|l| l.trim_start().starts_with("65536 "))
        .unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    let half = |i: usize, decimals: usize| {
        format!("{:.*}", decimals, cols[i].parse::<f64>().unwrap() / 2.0)
    };
    let single: Vec<String> = sweep
        .iter()
        .filter(|l| {
            let first = l.split_whitespace().next().unwrap_or("");
            !(first.parse::<u64>().is_ok() && l.split_whitespace().count() >= 4) || *l == row
        })
        .map(|l| {
            if l == row {
                l.replacen(cols[3], &half(3, 2), 1)
                    .replacen(cols[4], &half(4, 6), 1)
            } else {
                l.replacen(" -a ", " -s 65536 ", 1)
            }
        })
        .collect();
    let file = write(
        tmp.path(),
        "sweep.txt",
        &format!("{}\n{}\n", sweep.join("\n"), single.join("\n")),
    );
    let f = findings(tmp.path(), &[&file], &[]);
    assert_eq!(rules(&f), vec!["sweep_vs_single"], "{f:#?}");
    let m = f[0]["message"].as_str().unwrap();
    assert!(m.starts_with("65536 B: the sweep's bw_avg_gbps"), "{m}");
    assert!(m.contains("+100.0 % from the median"), "{m}");
}

/// A sysfs tree with the real layout for one device, read by the real `grep -H`.
fn sysfs_read(dir: &Path, device: &str, files: &[(&str, &str)]) -> String {
    let dev = dir.join("sys/class/infiniband").join(device).join("device");
    std::fs::create_dir_all(&dev).unwrap();
    for (f, v) in files {
        std::fs::write(dev.join(f), format!("{v}\n")).unwrap();
    }
    let paths: Vec<String> = files
        .iter()
        .map(|(f, _)| dev.join(f).display().to_string())
        .collect();
    let out = std::process::Command::new("grep")
        .args(["-H", "."])
        .args(&paths)
        .output()
        .unwrap();
    format!(
        "[root@node1-2 ~]# grep -H . {}\n{}",
        paths.join(" "),
        String::from_utf8(out.stdout).unwrap()
    )
}

#[test]
fn a_test_pinned_to_remote_cpus_and_a_downgraded_pcie_link() {
    let tmp = tempfile::tempdir().unwrap();
    let facts = sysfs_read(
        tmp.path(),
        "hns_2",
        &[
            ("numa_node", "1"),
            ("local_cpulist", "24-47"),
            ("current_link_speed", "8.0 GT/s PCIe"),
            ("max_link_speed", "16.0 GT/s PCIe"),
            ("current_link_width", "16"),
            ("max_link_width", "16"),
        ],
    );
    // Seed 001's first client, pinned to CPUs 16-23 (as seed 000 pins its iperf).
    let text = seed(SEED_001).replacen(
        "root@node1-2 ~]# ib_send_bw -d hns_2 192.168.104.10",
        "root@node1-2 ~]# taskset -c 16-23 ib_send_bw -d hns_2 192.168.104.10",
        1,
    );
    let file = write(tmp.path(), "pinned.txt", &format!("{facts}\n{text}"));
    let f = findings(tmp.path(), &[&file], &[]);
    let mut r = rules(&f);
    r.sort();
    r.dedup();
    assert_eq!(r, vec!["pcie_downgraded", "remote_numa"], "{f:#?}");
    let numa = f.iter().find(|f| f["rule"] == "remote_numa").unwrap();
    assert!(
        numa["message"].as_str().unwrap().contains(
            "`taskset -c 16-23`: CPU(s) 16-23 of 16-23 are not local to hns_2 (NUMA node 1, local CPUs 24-47)"
        ),
        "{numa}"
    );
    let pcie = f.iter().find(|f| f["rule"] == "pcie_downgraded").unwrap();
    assert!(pcie["message"]
        .as_str()
        .unwrap()
        .contains("speed 8.0 GT/s PCIe, its maximum is 16.0 GT/s PCIe"));
    // Pinned to the NIC's own node: no placement finding.
    let local = text.replacen("taskset -c 16-23", "taskset -c 24-31", 1);
    let file = write(tmp.path(), "local.txt", &format!("{facts}\n{local}"));
    let f = findings(tmp.path(), &[&file], &[]);
    assert_eq!(
        rules(&f).iter().filter(|r| **r == "remote_numa").count(),
        0,
        "{f:#?}"
    );
    // numactl by node.
    let by_node = text.replacen("taskset -c 16-23", "numactl --cpunodebind=0 --membind=0", 1);
    let file = write(tmp.path(), "node.txt", &format!("{facts}\n{by_node}"));
    let f = findings(tmp.path(), &[&file], &[]);
    assert!(
        f.iter().any(|f| f["rule"] == "remote_numa"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("runs on NUMA node(s) 0, hns_2 is on node 1")),
        "{f:#?}"
    );
}

#[test]
fn check_lists_rules_and_can_fail_a_pipeline() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let rules = ok(&linkperf(&store, &["check", "--rules"]));
    for r in [
        "above_line_rate",
        "rate_size_mismatch",
        "remote_numa",
        "pcie_downgraded",
    ] {
        assert!(rules.contains(r), "{rules}");
    }
    ok(&linkperf(
        &store,
        &["import", SEED_001, "--label", "link_speed_gbps=25"],
    ));
    let out = linkperf(&store, &["check", "--fail-on-findings"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("below_line_rate"));
    let out = linkperf(
        &store,
        &["check", "--where", "test=ib_read_bw", "--fail-on-findings"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = linkperf(
        &store,
        &["check", "--where", "role=server,test=ib_write_bw"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
