//! `linkperf compare` over the seeds: Kunpeng 920 (seed 000) against Phytium S5000C + B850
//! (seed 003), MTU 1024 against 4096, line rate on the 10G link of seed 001, and bad input.

mod common;
use common::{linkperf, ok};

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

fn two_platforms() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/seeds/000_8f7f2e13e9bf4848.txt",
            "--label",
            "platform=kunpeng920",
        ],
    ));
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/seeds/003_7da62a485175b0b8.txt",
            "--label",
            "platform=s5000c-b850",
        ],
    ));
    (tmp, store)
}

fn json(store: &Path, args: &[&str]) -> Value {
    let mut a = vec!["compare", "--format", "json"];
    a.extend_from_slice(args);
    serde_json::from_str(&ok(&linkperf(store, &a))).unwrap()
}

/// The cell of `group` in the row for `size`.
fn cell<'a>(c: &'a Value, size: u64, group: &str) -> &'a Value {
    let row = c["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"]["msg_size_bytes"] == size)
        .unwrap();
    row["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["group"] == group)
        .unwrap()
}

#[test]
fn kunpeng920_against_s5000c_b850() {
    let (_tmp, store) = two_platforms();
    let c = json(
        &store,
        &[
            "--by",
            "platform",
            "--baseline",
            "kunpeng920",
            "--metric",
            "msg_rate_mpps",
            "--where",
            "test=ib_write_bw,mtu=4096,role=client",
        ],
    );
    assert_eq!(cell(&c, 2, "kunpeng920")["stats"]["median"], 4.48161);
    assert_eq!(cell(&c, 2, "s5000c-b850")["stats"]["median"], 2.570949);
    assert_eq!(cell(&c, 2, "s5000c-b850")["verdict"], "worse");

    let c = json(
        &store,
        &[
            "--baseline",
            "kunpeng920",
            "--where",
            "test=ib_write_bw,mtu=4096,role=client",
        ],
    );
    assert_eq!(cell(&c, 8_388_608, "kunpeng920")["stats"]["median"], 97.56);
    assert_eq!(cell(&c, 8_388_608, "s5000c-b850")["stats"]["median"], 98.03);
    // +0.5 %: within the default 1 % tolerance.
    assert_eq!(cell(&c, 8_388_608, "s5000c-b850")["verdict"], "same");

    let c = json(
        &store,
        &[
            "--baseline",
            "kunpeng920",
            "--where",
            "test=ib_write_lat,mtu=4096",
        ],
    );
    assert_eq!(cell(&c, 2, "kunpeng920")["stats"]["median"], 1.97);
    assert_eq!(cell(&c, 2, "s5000c-b850")["stats"]["median"], 5.43);
    assert_eq!(cell(&c, 2, "s5000c-b850")["verdict"], "worse");

    // The table says the same, readable.
    let table = ok(&linkperf(
        &store,
        &[
            "compare",
            "--baseline",
            "kunpeng920",
            "--where",
            "test=ib_write_lat,mtu=4096",
        ],
    ));
    let two = table
        .lines()
        .find(|l| l.contains("ib_write_lat") && l.split_whitespace().nth(5) == Some("2"))
        .unwrap();
    assert!(
        two.contains("1.97") && two.contains("5.43") && two.contains("2.76× worse"),
        "{two}"
    );
    let md = ok(&linkperf(
        &store,
        &[
            "compare",
            "--format",
            "markdown",
            "--where",
            "test=ib_write_lat,mtu=4096",
        ],
    ));
    assert!(md.starts_with("| test | role |"), "{md}");
}

#[test]
fn mtu_1024_against_4096() {
    let (_tmp, store) = two_platforms();
    let c = json(
        &store,
        &[
            "--by",
            "mtu",
            "--where",
            "platform=kunpeng920,test=ib_send_bw,role=client",
        ],
    );
    assert_eq!(c["groups"], serde_json::json!(["1024", "4096"]));
    assert_eq!(cell(&c, 8_388_608, "1024")["stats"]["median"], 91.42);
    // The seed prints 97.55 for ib_send_bw at MTU 4096 (97.56 is ib_write_bw and ib_read_bw).
    assert_eq!(cell(&c, 8_388_608, "4096")["stats"]["median"], 97.55);
    assert_eq!(cell(&c, 8_388_608, "4096")["verdict"], "better");
}

#[test]
fn line_rate_of_the_10g_link() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/seeds/001_76f1dcbf5cbef6cc.txt",
            "--label",
            "link_speed_gbps=10",
        ],
    ));
    let c = json(&store, &["--where", "test=ib_send_bw,role=client"]);
    let share = c["rows"][0]["cells"][0]["line_rate_share"]
        .as_f64()
        .unwrap();
    assert!((share - 0.977).abs() < 5e-4, "{share}");
    let table = ok(&linkperf(
        &store,
        &["compare", "--where", "test=ib_send_bw,role=client"],
    ));
    assert!(table.contains("97.7 %"), "{table}");
    // With a 25G label the same run is a finding: the 25G NIC negotiated 10G.
    let store25 = tmp.path().join("store25");
    ok(&linkperf(
        &store25,
        &[
            "import",
            "fixtures/seeds/001_76f1dcbf5cbef6cc.txt",
            "--label",
            "link_speed_gbps=25",
        ],
    ));
    let table = ok(&linkperf(
        &store25,
        &["compare", "--where", "test=ib_send_bw,role=client"],
    ));
    assert!(
        table.contains("Findings:") && table.contains("39.1 % of the 25 Gbit/s link"),
        "{table}"
    );
}

#[test]
fn project_file_rules_label_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    ok(&linkperf(
        &store,
        &[
            "import",
            "fixtures/seeds/003_7da62a485175b0b8.txt",
            "fixtures/seeds/000_8f7f2e13e9bf4848.txt",
        ],
    ));
    let config = tmp.path().join("linkperf.toml");
    std::fs::write(&config, "[[rule]]\ndevice = \"mrdma*\"\nset = { platform = \"s5000c-b850\", nic = \"B850\" }\n\n[[rule]]\nsource = \"**/000_*.txt\"\nset = { platform = \"kunpeng920\" }\n").unwrap();
    let cfg = config.to_str().unwrap();
    let ls = ok(&linkperf(
        &store,
        &[
            "--config",
            cfg,
            "ls",
            "--where",
            "platform=s5000c-b850,tool=perftest",
        ],
    ));
    assert!(
        ls.contains("platform=s5000c-b850 (config)") && ls.contains("nic=B850 (config)"),
        "{ls}"
    );
    let c = json(
        &store,
        &[
            "--config",
            cfg,
            "--baseline",
            "kunpeng920",
            "--where",
            "test=ib_write_lat,mtu=4096",
        ],
    );
    assert_eq!(cell(&c, 2, "s5000c-b850")["stats"]["median"], 5.43);
    let rows = ok(&linkperf(
        &store,
        &[
            "--config",
            cfg,
            "export",
            "--where",
            "platform=kunpeng920,test=ib_send_lat,mtu=4096",
        ],
    ));
    let first: Value = serde_json::from_str(rows.lines().next().unwrap()).unwrap();
    assert_eq!(first["platform"], "kunpeng920");
    assert_eq!(first["resolved"]["platform"]["from"], "config");
    assert_eq!(first["resolved"]["nic"]["from"], "built_in");
}

#[test]
fn bad_input_exits_2_with_choices() {
    let (tmp, store) = two_platforms();
    let err = |o: Output| {
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
        String::from_utf8(o.stderr).unwrap()
    };
    let e = err(linkperf(&store, &["compare", "--by", "colour"]));
    assert!(
        e.contains("Choose from: platform") && e.contains("mtu"),
        "{e}"
    );
    let e = err(linkperf(&store, &["compare", "--baseline", "nope"]));
    assert!(e.contains("Choose from: kunpeng920, s5000c-b850"), "{e}");
    let e = err(linkperf(&store, &["compare", "--metric", "speed"]));
    assert!(e.contains("possible values: bw_avg_gbps"), "{e}");
    let e = err(linkperf(&store, &["compare", "--where", "nic=none"]));
    assert!(e.contains("selection is empty"), "{e}");
    let bad = tmp.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[rule]]\ndevice = \"x\"\nset = { a = \"b\" }\n\n[[rule]\n",
    )
    .unwrap();
    let e = err(linkperf(
        &store,
        &["--config", bad.to_str().unwrap(), "compare"],
    ));
    assert!(e.contains("bad.toml:5:"), "{e}");
    std::fs::write(&bad, "[[rule]]\ndevices = \"x\"\nset = {}\n").unwrap();
    let e = err(linkperf(
        &store,
        &["--config", bad.to_str().unwrap(), "compare"],
    ));
    assert!(
        e.contains("bad.toml:2:") && e.contains("unknown field"),
        "{e}"
    );
}

#[test]
fn the_example_project_file_parses() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("linkperf.toml.example"),
    )
    .unwrap();
    let c = linkperf::config::Config::parse(&text).unwrap();
    assert_eq!(c.rules.len(), 2);
    assert_eq!(c.gate.rules[0].min_size, Some(65536));
}
