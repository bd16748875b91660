//! iperf 2, iperf3, qperf, ibping and device facts: the checks of the parsers issue over the
//! seed documents and over output recorded from the real tools on loopback.

use linkperf::ingest::{parse_bytes, FileResult};
use linkperf::model::{Measurement, Role, Run, RunStatus};
use std::path::Path;

fn parse(rel: &str) -> FileResult {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    parse_bytes(rel, &bytes)
}

fn runs<'a>(r: &'a FileResult, tool: &str) -> Vec<&'a Run> {
    r.runs.iter().filter(|r| r.tool == tool).collect()
}

fn kind<'a>(run: &'a Run, stream: &str, kind: &str) -> Vec<&'a Measurement> {
    run.measurements
        .iter()
        .filter(|m| m.stream.as_deref() == Some(stream) && m.row_kind.as_deref() == Some(kind))
        .collect()
}

const GIB: f64 = (1u64 << 30) as f64;

#[test]
fn seed_000_iperf2_servers_and_clients() {
    let r = parse("fixtures/seeds/000_8f7f2e13e9bf4848.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let iperf = runs(&r, "iperf2");
    assert_eq!(iperf.len(), 4, "two server sessions and two clients");
    let servers: Vec<_> = iperf.iter().filter(|r| r.role == Role::Server).collect();
    assert_eq!(servers.len(), 2);
    // Session 1: 4 streams + SUM; session 2: 5 streams + SUM.
    assert_eq!(servers[0].measurements.len(), 5);
    assert_eq!(servers[1].measurements.len(), 6);
    let sum = kind(servers[0], "SUM", "total");
    assert_eq!(sum.len(), 1);
    assert_eq!(sum[0].bw_avg_gbps, Some(97.9));
    assert_eq!(sum[0].transfer_bytes, Some(180.0 * GIB));
    assert_eq!(
        (sum[0].interval_start_s, sum[0].interval_end_s),
        (Some(0.0), Some(15.8))
    );
    assert_eq!(servers[0].facts["streams"], "4");
    assert_eq!(servers[1].facts["streams"], "5");
    assert_eq!(
        servers[0].command.as_ref().unwrap().wrappers,
        vec!["taskset -c 16-23"]
    );

    let clients: Vec<_> = iperf.iter().filter(|r| r.role == Role::Client).collect();
    // -P 4 -i 10, stopped with ^C at 15.8 s: one interval and one total line per stream and SUM.
    assert_eq!(clients[0].measurements.len(), 10);
    assert_eq!(
        kind(clients[0], "SUM", "interval")[0].bw_avg_gbps,
        Some(97.8)
    );
    assert_eq!(
        kind(clients[0], "3", "total")[0].transfer_bytes,
        Some(44.3 * GIB)
    );
    assert_eq!(
        clients[0].command.as_ref().unwrap().peer.as_deref(),
        Some("192.170.10.10")
    );
    // -P 5: two intervals and the totals, 6 lines each.
    assert_eq!(clients[1].measurements.len(), 18);
    assert_eq!(
        kind(clients[1], "SUM", "total")[0].transfer_bytes,
        Some(244.0 * GIB)
    );
}

#[test]
fn seed_003_grep_sum_captures() {
    let r = parse("fixtures/seeds/003_7da62a485175b0b8.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let iperf = runs(&r, "iperf2");
    assert_eq!(iperf.len(), 2);
    assert_eq!(iperf[0].measurements.len(), 55);
    assert_eq!(iperf[1].measurements.len(), 61);
    assert!(iperf.iter().all(|r| r
        .measurements
        .iter()
        .all(|m| m.stream.as_deref() == Some("SUM"))));
    assert_eq!(
        iperf[0].command.as_ref().unwrap().pipe.as_deref(),
        Some("grep SUM")
    );
    // The first capture was cut at 55 s: every row is an interval.
    assert!(kind(iperf[0], "SUM", "total").is_empty());
    let last = iperf[1].measurements.last().unwrap();
    assert_eq!(last.row_kind.as_deref(), Some("total"));
    assert_eq!(
        (last.interval_start_s, last.interval_end_s),
        (Some(0.0), Some(60.0))
    );
    assert_eq!(last.transfer_bytes, Some(656.0 * GIB));
    assert_eq!(last.bw_avg_gbps, Some(93.9));
    // `0.0- 1.0 sec` (space after the dash) reads as 0..1.
    let first = &iperf[1].measurements[0];
    assert_eq!(
        (
            first.interval_start_s,
            first.interval_end_s,
            first.bw_avg_gbps
        ),
        (Some(0.0), Some(1.0), Some(87.9))
    );
}

#[test]
fn seed_002_qperf_ibping_and_device_facts() {
    let r = parse("fixtures/seeds/002_42248bd0d2963916.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let qperf = runs(&r, "qperf");
    let tcp_bw = qperf.iter().find(|r| r.test == "tcp_bw").unwrap();
    let bw = tcp_bw.measurements[0].bw_avg_gbps.unwrap();
    assert!((bw - 31.68).abs() < 1e-9, "{bw}");
    assert_eq!(tcp_bw.measurements[0].raw_unit, "GB/sec");
    let lat: Vec<_> = qperf.iter().filter(|r| r.test == "tcp_lat").collect();
    assert_eq!(lat[0].measurements[0].lat_avg_us, Some(11.1));
    let sweep = lat.iter().find(|r| r.measurements.len() > 1).unwrap();
    let sizes: Vec<u64> = sweep
        .measurements
        .iter()
        .filter_map(|m| m.msg_size_bytes)
        .collect();
    assert_eq!(sizes.len(), 17);
    assert_eq!(sizes, (0..17).map(|i| 1u64 << i).collect::<Vec<_>>());
    assert_eq!(sweep.measurements[16].lat_avg_us, Some(59.3));
    let conf = qperf.iter().find(|r| r.test == "conf").unwrap();
    assert_eq!(conf.facts["loc_node"], "storage02");
    assert_eq!(conf.facts["loc_cpu"], "20 Cores: Mixed CPUs");
    assert_eq!(conf.facts["loc_os"], "Linux 4.18.0-477.13.1.el8_8.x86_64");
    assert_eq!(conf.facts["loc_qperf"], "0.4.11");
    assert_eq!(tcp_bw.facts["conf.rem_node"], "storage01");

    let ping = runs(&r, "ibping");
    let client = ping.iter().find(|r| r.role == Role::Client).unwrap();
    let pongs: Vec<_> = client
        .measurements
        .iter()
        .filter(|m| m.row_kind.as_deref() == Some("sample"))
        .collect();
    assert_eq!(pongs.len(), 10);
    assert_eq!(pongs[0].lat_avg_us, Some(19.0));
    let summary = client
        .measurements
        .iter()
        .find(|m| m.row_kind.as_deref() == Some("summary"))
        .unwrap();
    assert_eq!(
        (summary.total, summary.lost, summary.loss_pct),
        (Some(10), Some(0), Some(0.0))
    );
    assert_eq!(summary.lat_avg_us, Some(20.0));
    assert!(client.facts["suspect"].contains("10x too small"));
    assert_eq!(
        ping.iter().find(|r| r.role == Role::Server).unwrap().status,
        RunStatus::NoResults
    );

    let dev = runs(&r, "devinfo");
    let ibstat = dev
        .iter()
        .find(|r| r.test == "ibstat" && r.host.as_deref() == Some("storage02"))
        .unwrap();
    assert_eq!(ibstat.device.as_deref(), Some("mlx4_0"));
    assert_eq!(ibstat.facts["firmware_version"], "2.42.5000");
    assert_eq!(ibstat.facts["port2.state"], "Active");
    assert_eq!(ibstat.facts["port2.rate_gbps"], "56");
    assert_eq!(ibstat.facts["port2.link_layer"], "InfiniBand");
    let devices: Vec<_> = dev
        .iter()
        .filter(|r| r.test == "ibv_devices" && r.host.as_deref() == Some("storage03"))
        .collect();
    assert_eq!(devices.len(), 3);
    assert!(devices
        .iter()
        .any(|d| d.facts["node_guid"] == "248a070300ea0390"));
    // The perftest runs on mlx4_0 carry the facts of the device listings of their host.
    // The ib_read_lat server ran on storage03, whose mlx4_0 was listed: it carries those facts.
    // The client ran on storage01, which was never listed.
    let perf = runs(&r, "perftest");
    let server = perf.iter().find(|r| r.role == Role::Server).unwrap();
    assert_eq!(server.host.as_deref(), Some("storage03"));
    assert_eq!(server.facts["device.firmware_version"], "2.42.5000");
    assert_eq!(server.facts["device.port1.rate_gbps"], "56");
    let client = perf.iter().find(|r| r.role == Role::Client).unwrap();
    assert!(!client.facts.contains_key("device.firmware_version"));
}

#[test]
fn seed_000_device_facts_for_hns() {
    let r = parse("fixtures/seeds/000_8f7f2e13e9bf4848.txt");
    let dev = runs(&r, "devinfo");
    let hns0 = dev.iter().find(|r| r.test == "ibv_devinfo").unwrap();
    assert_eq!(hns0.device.as_deref(), Some("hns_0"));
    assert_eq!(hns0.facts["vendor_id"], "0x19e5");
    assert_eq!(hns0.facts["fw_ver"], "0.277.001");
    assert_eq!(hns0.facts["port1.active_mtu"], "4096 (5)");
    assert_eq!(hns0.link_layer.as_deref(), Some("Ethernet"));
    assert_eq!(hns0.mtu, Some(4096));
    let links: Vec<_> = dev.iter().filter(|r| r.test == "rdma_link").collect();
    let hns1 = links
        .iter()
        .find(|r| r.device.as_deref() == Some("hns_1"))
        .unwrap();
    assert_eq!(hns1.facts["port1.netdev"], "enp125s0f1");
    assert_eq!(hns1.facts["port1.state"], "DOWN");
    let hns0_link = links
        .iter()
        .find(|r| r.device.as_deref() == Some("hns_0"))
        .unwrap();
    assert_eq!(hns0_link.facts["port1.physical_state"], "LINK_UP");
    // perftest ran on hns_1: it gets hns_1's link facts.
    let perf = runs(&r, "perftest");
    assert!(perf
        .iter()
        .all(|r| r.facts.get("device.port1.netdev").map(String::as_str) == Some("enp125s0f1")));
}

#[test]
fn loopback_iperf2_modes() {
    let r = parse("fixtures/iperf2/iperf2-udp-client.txt");
    let run = &r.runs[0];
    assert_eq!((run.test.as_str(), run.role), ("iperf2_udp", Role::Client));
    let server_report = run
        .measurements
        .iter()
        .find(|m| m.jitter_ms.is_some())
        .unwrap();
    assert_eq!(server_report.row_kind.as_deref(), Some("server_report"));
    assert_eq!(
        kind(run, "1", "total")[0].raw_text,
        "[  1] 0.0000-2.0002 sec  25.0 MBytes   105 Mbits/sec"
    );
    assert_eq!(
        (server_report.lost, server_report.total),
        (Some(0), Some(17837))
    );

    let r = parse("fixtures/iperf2/iperf2-format-M-client.txt");
    let m = &r.runs[0].measurements[0];
    assert_eq!(m.raw_unit, "MBytes/sec");
    assert!((m.bw_avg_gbps.unwrap() - 878.0 * 8.0 * 1048576.0 / 1e9).abs() < 1e-9);

    let r = parse("fixtures/iperf2/iperf2-csv-client.txt");
    let run = &r.runs[0];
    assert_eq!(run.measurements.len(), 6);
    assert_eq!(run.measurements[0].transfer_bytes, Some(672_137_276.0));
    assert_eq!(run.measurements[0].bw_avg_gbps, Some(5.377098208));
    assert_eq!(run.facts["format"], "csv");

    let r = parse("fixtures/iperf2/iperf2-enhanced-client.txt");
    let m = &r.runs[0].measurements[0];
    assert_eq!((m.retransmits, m.rtt_us), (Some(2), Some(390.0)));

    let r = parse("fixtures/iperf2/iperf2-full-duplex-client.txt");
    let streams: Vec<_> = r.runs[0]
        .measurements
        .iter()
        .filter_map(|m| m.stream.as_deref())
        .collect();
    assert_eq!(streams, vec!["1", "*1", "SUM"]);

    let r = parse("fixtures/iperf2/iperf2-connection-refused.txt");
    assert_eq!(r.runs[0].status, RunStatus::Failed);
    assert!(r.runs[0]
        .error
        .as_deref()
        .unwrap()
        .contains("Connection refused"));

    let r = parse("fixtures/iperf2/iperf2-multi-session-server.txt");
    assert!(r.runs.len() >= 5, "one run per client session");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
}

#[test]
fn loopback_iperf3_modes() {
    let r = parse("fixtures/iperf3/iperf3-tcp-P2-client.txt");
    let run = &r.runs[0];
    assert_eq!(run.test, "iperf3_tcp");
    let sender = kind(run, "SUM", "sender");
    assert_eq!(
        (sender[0].bw_avg_gbps, sender[0].retransmits),
        (Some(7.37), Some(83))
    );
    assert_eq!(
        kind(run, "SUM", "receiver")[0].transfer_bytes,
        Some(1.72 * GIB)
    );
    assert_eq!(
        kind(run, "5", "interval")[0].cwnd_bytes,
        Some(767.0 * 1024.0)
    );

    let r = parse("fixtures/iperf3/iperf3-json-client.txt");
    let run = &r.runs[0];
    assert_eq!((run.role, run.status), (Role::Client, RunStatus::Ok));
    let sent = kind(run, "SUM", "sender");
    assert_eq!(sent.len(), 1);
    assert!(sent[0].bw_avg_gbps.unwrap() > 0.0 && sent[0].cpu_local_pct.is_some());
    assert_eq!(run.facts["version"], "iperf 3.12");

    let r = parse("fixtures/iperf3/iperf3-json-connection-refused.txt");
    assert_eq!(r.runs[0].status, RunStatus::Failed);
    assert!(r.runs[0]
        .error
        .as_deref()
        .unwrap()
        .contains("Connection refused"));

    let r = parse("fixtures/iperf3/iperf3-busy-client.txt");
    assert_eq!(r.runs[0].status, RunStatus::Failed);
    assert!(r.runs[0].error.as_deref().unwrap().contains("busy"));

    let r = parse("fixtures/iperf3/iperf3-udp-client.txt");
    let run = &r.runs[0];
    assert_eq!(run.test, "iperf3_udp");
    let recv = kind(run, "5", "receiver");
    assert_eq!(
        (recv[0].jitter_ms, recv[0].lost, recv[0].total),
        (Some(0.005), Some(0), Some(763))
    );

    let r = parse("fixtures/iperf3/iperf3-bidir-client.txt");
    assert_eq!(
        kind(&r.runs[0], "7 RX-C", "receiver")[0].bw_avg_gbps,
        Some(3.99)
    );

    let r = parse("fixtures/iperf3/iperf3-reverse-omit-client.txt");
    assert_eq!(
        r.runs[0]
            .measurements
            .iter()
            .filter(|m| m.row_kind.as_deref() == Some("omitted"))
            .count(),
        1
    );

    let r = parse("fixtures/iperf3/iperf3-timestamps-client.txt");
    assert_eq!(kind(&r.runs[0], "5", "sender")[0].bw_avg_gbps, Some(13.216));
}

#[test]
fn loopback_qperf_units_and_errors() {
    let r = parse("fixtures/qperf/loopback/qperf-uu-tcp_bw-tcp_lat.txt");
    let bw = r.runs.iter().find(|r| r.test == "tcp_bw").unwrap();
    assert_eq!(
        bw.measurements[0].bw_avg_gbps,
        Some(848_560_128.0 * 8.0 / 1e9)
    );
    let lat = r.runs.iter().find(|r| r.test == "tcp_lat").unwrap();
    assert_eq!(lat.measurements[0].lat_avg_us, Some(4.831));

    let r = parse("fixtures/qperf/loopback/qperf-ub-tcp_bw.txt");
    assert_eq!(r.runs[0].measurements[0].bw_avg_gbps, Some(7.19));

    let r = parse("fixtures/qperf/loopback/qperf-vv-tcp_bw.txt");
    let m = &r.runs[0].measurements[0];
    assert_eq!(m.msg_size_bytes, Some(65536));
    assert_eq!(m.extra["send_msgs"], "29,973");
    assert_eq!(m.cpu_local_pct, Some(200.0));

    let r = parse("fixtures/qperf/qperf-v-tcp-udp-conf-port-commified.txt");
    let udp = r.runs.iter().find(|r| r.test == "udp_bw").unwrap();
    assert_eq!(
        udp.measurements[0].bw_avg_gbps,
        Some(7.83e6 * 8.0 / 1e9),
        "recv_bw is what arrived"
    );
    assert_eq!(udp.measurements[0].msg_rate_mpps, Some(239.0 / 1e6));
    assert_eq!(udp.measurements[0].extra["port"], "4,001");

    let r = parse("fixtures/qperf/loopback/qperf-unknown-test.txt");
    assert_eq!(
        (r.runs[0].test.as_str(), r.runs[0].status),
        ("foo_bw", RunStatus::Failed)
    );
    assert!(r.runs[0].error.as_deref().unwrap().contains("bad test"));
    let r = parse("fixtures/qperf/loopback/qperf-no-server.txt");
    assert_eq!(r.runs[0].status, RunStatus::Failed);
    assert!(r.runs[0]
        .error
        .as_deref()
        .unwrap()
        .contains("failed to connect"));
}

#[test]
fn ibping_flood_900ms_is_suspect() {
    let r = parse("fixtures/ibping/ibping-flood-stats-900ms-max.txt");
    let run = &r.runs[0];
    let s = &run.measurements[0];
    assert_eq!((s.total, s.lost), (Some(10000), Some(0)));
    assert_eq!(s.lat_max_us, Some(900_015.0));
    assert!(run.facts["suspect"].contains("900 ms"));
}

#[test]
fn device_listings_from_samples_and_lab() {
    let r = parse("fixtures/devinfo/devinfo-ibstat-fdr10.txt");
    assert_eq!(r.runs[0].facts["port1.rate"], "40 (FDR10)");
    assert_eq!(r.runs[0].facts["port1.rate_gbps"], "40");
    let r = parse("fixtures/devinfo/devinfo-rdma-link-legacy-detail.txt");
    assert_eq!(r.runs[0].device.as_deref(), Some("mlx5_3"));
    assert_eq!(r.runs[0].facts["port1.netdev"], "ens7");
    assert_eq!(r.runs[0].facts["port1.caps"], "<CM, IP_BASED_GIDS>");
    let r = parse("fixtures/devinfo/devinfo-ibv_devinfo-efa-unspecified.txt");
    assert_eq!(r.runs[0].facts["transport"], "unspecified (4)");
    assert_eq!(r.runs[0].link_layer.as_deref(), Some("Unspecified"));
    let r = parse("fixtures/devinfo/rxe-lab/ibv_devinfo.txt");
    assert_eq!(
        (r.runs[0].device.as_deref(), r.runs[0].mtu),
        (Some("rxe0"), Some(1024))
    );
}

#[test]
fn qperf_rdma_tests_over_soft_roce() {
    let r = parse("fixtures/qperf/rxe-lab/qperf-rc-rdma.txt");
    let tests: Vec<&str> = r.runs.iter().map(|r| r.test.as_str()).collect();
    assert_eq!(tests.len(), 5, "{tests:?}");
    let write_lat = r
        .runs
        .iter()
        .find(|r| r.test == "rc_rdma_write_lat")
        .unwrap();
    assert_eq!(write_lat.measurements[0].lat_avg_us, Some(1530.0));
    let write_bw = r
        .runs
        .iter()
        .find(|r| r.test == "rc_rdma_write_bw")
        .unwrap();
    assert_eq!(write_bw.measurements[0].bw_avg_gbps, Some(13e6 * 8.0 / 1e9));

    let r = parse("fixtures/qperf/rxe-lab/qperf-rc-atomics.txt");
    let cas = r
        .runs
        .iter()
        .find(|r| r.test == "rc_compare_swap_mr")
        .unwrap();
    assert_eq!(cas.measurements[0].msg_rate_mpps, Some(0.0148));

    let r = parse("fixtures/qperf/rxe-lab/qperf-sweep-rc-lat.txt");
    let sizes: Vec<u64> = r.runs[0]
        .measurements
        .iter()
        .filter_map(|m| m.msg_size_bytes)
        .collect();
    assert_eq!(sizes, vec![1, 4, 16, 64, 256, 1024, 4096]);
    assert_eq!(r.runs[0].measurements[0].lat_avg_us, Some(810.0));

    // A test the server could not set up is a failed run with the server's words; the -cm1
    // warning is kept as a fact, not taken for the error.
    let r = parse("fixtures/qperf/rxe-lab/qperf-uc-tests.txt");
    let uc = &r.runs[0];
    assert_eq!((uc.test.as_str(), uc.status), ("uc_bw", RunStatus::Failed));
    assert!(uc
        .error
        .as_deref()
        .unwrap()
        .contains("failed to modify QP to RTR"));
    assert!(uc.facts["warning"].contains("-cm1 set but not used"));

    let r = parse("fixtures/qperf/rxe-lab/qperf-xrc-ver-tests.txt");
    assert_eq!(r.runs[0].status, RunStatus::Failed);
}

#[test]
fn iperf3_warning_before_json() {
    let r = parse("fixtures/iperf3/iperf3-json-warning-first-client.txt");
    let run = &r.runs[0];
    assert_eq!(run.status, RunStatus::Ok);
    assert!(
        run.notes
            .iter()
            .any(|n| n.contains("Report format (-f) flag ignored")),
        "{:?}",
        run.notes
    );
    assert!(run
        .measurements
        .iter()
        .any(|m| m.row_kind.as_deref() == Some("receiver")));
}

#[test]
fn qperf_warning_lines_between_test_and_values() {
    // `-cm1` means nothing to TCP tests: qperf says so between the test name and its values.
    let r = parse("fixtures/qperf/loopback/qperf-warning-cm1-tcp_bw-tcp_lat.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let q = runs(&r, "qperf");
    assert_eq!(q.len(), 2);
    let bw = q.iter().find(|r| r.test == "tcp_bw").unwrap();
    assert!((bw.measurements[0].bw_avg_gbps.unwrap() - 1.74 * 8.0).abs() < 1e-9);
    assert_eq!(
        bw.facts["warning"],
        "warning: -cm1 set but not used in test tcp_bw"
    );
    let lat = q.iter().find(|r| r.test == "tcp_lat").unwrap();
    assert_eq!(lat.measurements[0].lat_avg_us, Some(31.8));
    // Kept without its command line, the same output is still found by its content.
    let r = parse("fixtures/qperf/loopback/qperf-warning-f1-bare.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let q = runs(&r, "qperf");
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].test, "tcp_bw");
    assert!((q[0].measurements[0].bw_avg_gbps.unwrap() - 2.81 * 8.0).abs() < 1e-9);
    assert_eq!(
        q[0].facts["warning"],
        "warning: -f1 set but not used in test tcp_bw"
    );
}

#[test]
fn iperf3_title_prefix() {
    // `-T node-a` prefixes every line with `node-a:  `.
    let r = parse("fixtures/iperf3/iperf3-title-client.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let run = runs(&r, "iperf3")[0];
    assert_eq!((run.role, run.test.as_str()), (Role::Client, "iperf3_tcp"));
    assert_eq!(run.facts["title"], "node-a");
    assert_eq!(run.facts["connecting_to"], "127.0.0.1, port 5209");
    let iv = kind(run, "5", "interval");
    assert_eq!(iv.len(), 2);
    assert_eq!(iv[0].transfer_bytes, Some(2.11 * GIB));
    assert_eq!(iv[0].bw_avg_gbps, Some(18.2));
    assert_eq!(iv[0].cwnd_bytes, Some(3.0 * (1u64 << 20) as f64));
    assert!(
        iv[0].raw_text.starts_with("node-a:  [  5]"),
        "raw text kept whole"
    );
    let sender = kind(run, "5", "sender");
    assert_eq!(
        (sender[0].bw_avg_gbps, sender[0].retransmits),
        (Some(18.4), Some(0))
    );
    assert_eq!(kind(run, "5", "receiver")[0].bw_avg_gbps, Some(18.4));
    // Bare, the prefix itself tells the title.
    let r = parse("fixtures/iperf3/iperf3-title-bare-client.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let run = runs(&r, "iperf3")[0];
    assert_eq!(run.facts["title"], "node-b");
    assert_eq!(run.role, Role::Client);
    let sender = kind(run, "5", "sender");
    assert_eq!(sender[0].transfer_bytes, Some(3.72 * GIB));
    assert_eq!(
        (sender[0].bw_avg_gbps, sender[0].retransmits),
        (Some(16.0), Some(11))
    );
    assert_eq!(kind(run, "5", "receiver")[0].bw_avg_gbps, Some(15.9));
    assert_eq!(
        kind(run, "5", "interval")[1].cwnd_bytes,
        Some(1.87 * (1u64 << 20) as f64)
    );
}

#[test]
fn comments_that_name_a_command_stand_for_its_prompt() {
    let r = parse("fixtures/commented/qperf-notes-name-the-commands.txt");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    let q = runs(&r, "qperf");
    assert_eq!(q.len(), 2, "{q:?}");
    // `# cmd: qperf 127.0.0.1 foo_bw`: the failed run is kept with its error, not lost.
    assert_eq!(
        (q[0].test.as_str(), q[0].status),
        ("foo_bw", RunStatus::Failed)
    );
    assert_eq!(q[0].line, 3);
    assert!(q[0].error.as_deref().unwrap().contains("bad test"));
    // `# node A, …` is a comment; `# command: …` names the next run's command.
    assert_eq!(q[1].test, "tcp_bw");
    assert_eq!(
        q[1].command.as_ref().unwrap().raw,
        "qperf 127.0.0.1 -t 1 -f1 tcp_bw"
    );
    assert!((q[1].measurements[0].bw_avg_gbps.unwrap() - 2.81 * 8.0).abs() < 1e-9);
}
