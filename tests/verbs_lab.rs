//! The native verbs runner against a real RDMA device. These tests need `rxe0` and are
//! ignored in a plain `cargo test`; `tests/lab/verbs.sh` runs them inside the Soft-RoCE lab
//! (`../shared/lab/`), where server and client share the guest's one device.
#![cfg(feature = "verbs")]

mod common;

use linkperf::verbs::engine::{self, LocalSetup};
use linkperf::verbs::options::{BenchParams, BenchTest, Stop};
use linkperf::verbs::protocol::{Channel, Message, VERSION};
use linkperf::verbs::record::{SessionInfo, SizeResult};
use std::net::TcpListener;
use std::process::Command;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

const LAB: &str = "needs an RDMA device (rxe0): run tests/lab/verbs.sh";

fn setup(timeout: f64) -> LocalSetup {
    LocalSetup {
        device: Some("rxe0".into()),
        ib_port: 1,
        gid_index: None,
        timeout: Duration::from_secs_f64(timeout),
    }
}

fn params(tests: &[BenchTest], sizes: &[u64], stop: Stop) -> BenchParams {
    BenchParams {
        tests: tests.to_vec(),
        sizes: sizes.to_vec(),
        stop,
        tx_depth: 64,
        qps: 1,
        inline_size: 0,
        mtu: None,
        interval: None,
    }
}

static NEXT_PORT: AtomicU16 = AtomicU16::new(19500);

fn port() -> u16 {
    NEXT_PORT.fetch_add(1, Ordering::SeqCst)
}

/// Runs a real server thread and a client in this process; returns the client's results.
fn bench(p: &BenchParams) -> anyhow::Result<Vec<(BenchTest, SessionInfo, Vec<SizeResult>)>> {
    let port = port();
    let server = std::thread::spawn(move || {
        engine::serve(&setup(20.0), port, Duration::from_secs(30), &mut |_| {})
    });
    let mut out = Vec::new();
    let r = engine::run_client(
        &setup(20.0),
        "127.0.0.1",
        port,
        p,
        &mut |t, info, results| {
            out.push((t, info.clone(), results.to_vec()));
            Ok(())
        },
        &mut |_| {},
    );
    let s = server.join().expect("server thread");
    r?;
    s?;
    Ok(out)
}

/// Lines of `rdma resource show <kind>` owned by a user process. The kernel names the owning
/// thread, not the process, so this counts every user's objects: in the lab guest (tests run
/// one at a time) that is this test's alone. The kernel's own objects carry no pid.
fn owned(kind: &str) -> usize {
    let out = Command::new("rdma")
        .args(["resource", "show", kind])
        .output()
        .expect("rdma (iproute2)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(" pid "))
        .count()
}

fn assert_nothing_leaked(after: &str) {
    assert_eq!(owned("qp"), 0, "QPs left after {after}");
    assert_eq!(owned("mr"), 0, "MRs left after {after}");
    assert_eq!(owned("cq"), 0, "CQs left after {after}");
    assert_eq!(owned("pd"), 0, "PDs left after {after}");
}

#[test]
#[ignore = "needs an RDMA device (rxe0): run tests/lab/verbs.sh"]
fn devices_reports_what_ibv_devinfo_reports() {
    let _ = LAB;
    let out = Command::new("ibv_devinfo")
        .args(["-v", "-d", "rxe0"])
        .output()
        .expect("ibv_devinfo");
    let text = format!(
        "$ ibv_devinfo -v -d rxe0\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let parsed = linkperf::ingest::parse_bytes("ibv_devinfo.txt", text.as_bytes());
    let theirs = &parsed.runs[0].facts;
    let ours = linkperf::verbs::query::list_devices(Some("rxe0")).unwrap();
    let facts = ours[0].facts();
    for key in [
        "transport",
        "fw_ver",
        "node_guid",
        "sys_image_guid",
        "vendor_id",
        "vendor_part_id",
        "hw_ver",
        "phys_port_cnt",
        "max_mr_size",
        "max_qp",
        "max_qp_wr",
        "max_cqe",
        "max_qp_rd_atom",
        "atomic_cap",
        "port1.state",
        "port1.max_mtu",
        "port1.active_mtu",
        "port1.link_layer",
        "port1.max_msg_sz",
        "port1.gid_tbl_len",
        "port1.active_width",
        "port1.active_speed",
        "port1.phys_state",
        "port1.gid0",
        "port1.gid1",
        "port1.rate_gbps",
    ] {
        assert_eq!(
            facts.get(key),
            theirs.get(key),
            "{key}: linkperf devices vs ibv_devinfo -v"
        );
        assert!(facts.contains_key(key), "{key} missing");
    }
    // Every GID ibv_devinfo lists, with its type, and no other.
    let gids = |f: &mut dyn Iterator<Item = (&str, &String)>| {
        f.filter(|(k, _)| k.starts_with("port1.gid") && *k != "port1.gid_tbl_len")
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        gids(&mut facts.iter().map(|(k, v)| (k.as_str(), v))),
        gids(&mut theirs.iter().map(|(k, v)| (&**k, v)))
    );
    assert!(theirs["port1.gid1"].ends_with("RoCE v2"));

    // The CLI: text like ibv_devinfo, JSON, and the wrong device.
    let store = tempfile::tempdir().unwrap();
    let text = common::ok(&common::linkperf(store.path(), &["devices"]));
    assert!(text.starts_with("hca_id:\trxe0\n"), "{text}");
    assert!(text.contains("::ffff:10.0.2.15, RoCE v2"), "{text}");
    let json = common::ok(&common::linkperf(
        store.path(),
        &["devices", "--format", "json"],
    ));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["name"], "rxe0");
    assert_eq!(v[0]["ports"][0]["link_layer"], "Ethernet");
    assert_eq!(v[0]["ports"][0]["rate_gbps"], 2.5);
    let o = common::linkperf(store.path(), &["devices", "-d", "mlx5_9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::text(&o).contains("--device mlx5_9: no such RDMA device (found: rxe0)"));
}

#[test]
#[ignore = "needs an RDMA device (rxe0): run tests/lab/verbs.sh"]
fn every_test_completes_with_checked_data() {
    let sizes = [2, 4096, 65536, 1 << 20];
    let p = params(&BenchTest::ALL, &sizes, Stop::Iterations(40));
    let out = bench(&p).unwrap();
    assert_eq!(out.len(), 8);
    for (test, info, results) in &out {
        let expect: Vec<u64> = if test.is_atomic() {
            vec![8]
        } else {
            sizes.to_vec()
        };
        assert_eq!(
            results.iter().map(|r| r.size).collect::<Vec<_>>(),
            expect,
            "{test}"
        );
        for r in results {
            assert_eq!(r.ops, 40, "{test} {}", r.size);
            assert!(
                !r.verified.is_empty(),
                "{test} {}: nothing verified",
                r.size
            );
            assert!(r.elapsed_s > 0.0);
            if test.is_bandwidth() {
                assert!(r.bw_gbps() > 0.0, "{test} {}", r.size);
            } else {
                assert_eq!(r.samples_us.len(), 40, "{test} {}", r.size);
                assert!(r.samples_us.iter().all(|&s| s > 0.0));
            }
        }
        assert_eq!(info.device, "rxe0");
        assert_eq!(info.link_layer, "Ethernet");
        assert_eq!(info.device_facts["port1.link_layer"], "Ethernet");
    }
    let verified: Vec<&str> = out
        .iter()
        .flat_map(|(_, _, rs)| rs.iter().map(|r| r.verified.as_str()))
        .collect();
    assert!(verified
        .iter()
        .any(|v| v.contains("1048576 bytes checked at the server")));
    assert!(verified
        .iter()
        .any(|v| v.contains("1048576 bytes read back and checked")));
    assert!(verified
        .iter()
        .any(|v| v.contains("counter = 40 after 40 atomic operations")));
    assert_nothing_leaked("a complete session");
}

#[test]
#[ignore = "needs an RDMA device (rxe0): run tests/lab/verbs.sh"]
fn timed_runs_record_bandwidth_over_time_on_several_qps() {
    let mut p = params(
        &[BenchTest::WriteBw, BenchTest::SendBw],
        &[65536],
        Stop::Duration(1.0),
    );
    p.qps = 2;
    p.interval = Some(0.25);
    let out = bench(&p).unwrap();
    for (test, _, results) in &out {
        let r = &results[0];
        assert_eq!(r.qps, 2);
        assert!(r.total_ops >= 2, "{test}");
        assert!(r.elapsed_s >= 1.0, "{test}: {}", r.elapsed_s);
        assert!(r.intervals.len() >= 4, "{test}: {:?}", r.intervals);
        let bytes: u64 = r.intervals.iter().map(|i| i.bytes).sum();
        assert_eq!(bytes as f64, r.total_bytes(), "{test}");
        assert!(
            r.verified.contains("65536 bytes checked at the server"),
            "{test}"
        );
    }
    assert_nothing_leaked("a timed session");
}

#[test]
#[ignore = "needs an RDMA device (rxe0): run tests/lab/verbs.sh"]
fn inline_sends_and_a_smaller_path_mtu_take_effect() {
    let mut p = params(
        &[BenchTest::WriteLat, BenchTest::SendLat, BenchTest::SendBw],
        &[2, 64, 4096],
        Stop::Iterations(30),
    );
    p.inline_size = 64;
    p.mtu = Some(512);
    let out = bench(&p).unwrap();
    for (test, info, results) in &out {
        assert_eq!(info.mtu, 512, "{test}");
        assert_eq!(results.len(), 3, "{test}");
        assert!(results.iter().all(|r| !r.verified.is_empty()), "{test}");
    }
    assert_nothing_leaked("inline and MTU sessions");
}

fn client_error(setup: &LocalSetup, port: u16, p: &BenchParams) -> String {
    let r = engine::run_client(
        setup,
        "127.0.0.1",
        port,
        p,
        &mut |_, _, _| Ok(()),
        &mut |_| {},
    );
    format!("{:#}", r.expect_err("the client should fail"))
}

#[test]
#[ignore = "needs an RDMA device (rxe0): run tests/lab/verbs.sh"]
fn bad_input_names_the_parameter_and_leaks_nothing() {
    let p = params(&[BenchTest::WriteBw], &[4096], Stop::Iterations(10));
    let unused = port();
    let s = |f: fn(&mut LocalSetup)| {
        let mut s = setup(2.0);
        f(&mut s);
        s
    };
    let e = client_error(&s(|s| s.device = Some("mlx5_9".into())), unused, &p);
    assert!(
        e.contains("--device mlx5_9: no such RDMA device (found: rxe0)"),
        "{e}"
    );
    let e = client_error(&s(|s| s.ib_port = 2), unused, &p);
    assert!(e.contains("--ib-port 2: rxe0 has 1 port(s)"), "{e}");
    let e = client_error(&s(|s| s.gid_index = Some(5000)), unused, &p);
    assert!(e.contains("--gid-index 5000: out of range"), "{e}");
    let e = client_error(&s(|s| s.gid_index = Some(700)), unused, &p);
    // The GID table grows as the guest's addresses come up (the IPv6 link-local
    // one arrives after DAD), so only its start is fixed.
    assert!(
        e.contains("--gid-index 700: rxe0 port 1 has no GID at index 700 (valid: 0, 1"),
        "{e}"
    );
    let big = params(&[BenchTest::WriteBw], &[16 << 20], Stop::Iterations(1));
    let e = client_error(&setup(2.0), unused, &big);
    assert!(
        e.contains("--size 16777216: larger than rxe0 port 1 allows (max_msg_sz 8388608)"),
        "{e}"
    );
    let mut mtu = p.clone();
    mtu.mtu = Some(4096);
    let e = client_error(&setup(2.0), unused, &mtu);
    assert!(
        e.contains("--mtu 4096: larger than rxe0 port 1's active MTU 1024"),
        "{e}"
    );

    // Nobody listening: an error within the timeout, not a hang.
    let t = Instant::now();
    let e = client_error(&setup(1.0), unused, &p);
    assert!(
        e.contains(&format!("server 127.0.0.1:{unused}: no answer within 1 s")),
        "{e}"
    );
    assert!(t.elapsed() < Duration::from_secs(10));

    // A server speaking another protocol version.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let vport = listener.local_addr().unwrap().port();
    let fake = std::thread::spawn(move || {
        let mut c = Channel::accept(&listener, Duration::from_secs(10)).unwrap();
        let _ = c.recv();
        c.send(&Message::Welcome {
            version: VERSION + 1,
            device: "rxe0".into(),
            port: 1,
            gid_index: 1,
            active_mtu: 1024,
            max_msg_sz: 1 << 23,
        })
        .unwrap();
    });
    let e = client_error(&setup(5.0), vport, &p);
    fake.join().unwrap();
    assert!(
        e.contains(&format!(
            "server speaks linkperf-verbs protocol version {}",
            VERSION + 1
        )),
        "{e}"
    );
    assert_nothing_leaked("refused sessions");

    // A peer that answers the handshake, hands over a QP that does not exist, then goes
    // silent: the client's QP exists (seen below), its writes fail, and all is freed.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = listener.local_addr().unwrap().port();
    let fake = std::thread::spawn(move || {
        let mut c = Channel::accept(&listener, Duration::from_secs(10)).unwrap();
        let _ = c.recv();
        c.send(&Message::Welcome {
            version: VERSION,
            device: "rxe0".into(),
            port: 1,
            gid_index: 1,
            active_mtu: 1024,
            max_msg_sz: 1 << 23,
        })
        .unwrap();
        let _setup = c.recv().unwrap();
        let mut gid = [0u8; 16];
        gid[10] = 0xff;
        gid[11] = 0xff;
        gid[12..].copy_from_slice(&[10, 0, 2, 15]);
        c.send(&Message::Endpoint(linkperf::verbs::protocol::Endpoint {
            qps: vec![linkperf::verbs::protocol::QpAddress {
                lid: 0,
                qpn: 0xfffff0,
                psn: 0,
                gid: linkperf::verbs::protocol::gid_hex(&gid),
            }],
            addr: 0x1000,
            rkey: 0xdead,
            len: 1 << 30,
        }))
        .unwrap();
        let _their_endpoint = c.recv().unwrap();
        let qps_while_connected = owned("qp");
        c.send(&Message::Ready).unwrap();
        let _begin = c.recv();
        c.send(&Message::Ready).unwrap();
        // Silent from here; keep the socket open until the client gives up.
        while c.recv().is_ok() {}
        qps_while_connected
    });
    let t = Instant::now();
    let e = client_error(&setup(3.0), sport, &p);
    let seen = fake.join().unwrap();
    assert!(
        seen >= 1,
        "the client's QP was not visible while it was connected"
    );
    assert!(
        e.contains("work completion failed") || e.contains("no completion within"),
        "{e}"
    );
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "took {:?}",
        t.elapsed()
    );
    assert_nothing_leaked("a peer that vanished mid-test");
}

/// Waits until something listens on local TCP `port` (perftest's server is ready then).
fn wait_listening(port: u16) {
    let needle = format!(":{port:04X} 00000000:0000 0A");
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(20) {
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
        if tcp.contains(&needle) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on TCP {port}");
}

/// Runs a perftest pair on rxe0 and returns the client's output as a transcript.
fn perftest(program: &str, args: &[&str]) -> String {
    let common = ["-d", "rxe0", "-x", "1"];
    let server = Command::new(program)
        .args(common)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("perftest");
    wait_listening(18515);
    let client = Command::new(program)
        .args(common)
        .args(args)
        .arg("10.0.2.15")
        .output()
        .expect("perftest client");
    let mut server = server;
    let _ = server.wait();
    assert!(
        client.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&client.stderr)
    );
    format!(
        "$ {program} {} {} 10.0.2.15\n{}",
        common.join(" "),
        args.join(" "),
        String::from_utf8_lossy(&client.stdout)
    )
}

/// The canonical columns a row fills (provenance and free-form extras aside).
fn shape(m: &linkperf::model::Measurement) -> Vec<String> {
    let v = serde_json::to_value(m).unwrap();
    let mut keys: Vec<String> = v
        .as_object()
        .unwrap()
        .iter()
        .filter(|(k, v)| {
            !v.is_null()
                && !["line", "raw_text", "raw_unit", "extra", "samples_us"].contains(&k.as_str())
        })
        .map(|(k, _)| k.clone())
        .collect();
    keys.sort();
    keys
}

#[test]
#[ignore = "needs an RDMA device (rxe0): run tests/lab/verbs.sh"]
fn rows_have_the_shape_of_perftest_rows() {
    for (test, program) in [
        (BenchTest::WriteBw, "ib_write_bw"),
        (BenchTest::SendBw, "ib_send_bw"),
        (BenchTest::WriteLat, "ib_write_lat"),
        (BenchTest::ReadLat, "ib_read_lat"),
    ] {
        let text = perftest(program, &["-s", "4096", "-n", "100"]);
        let parsed = linkperf::ingest::parse_bytes(&format!("{program}.txt"), text.as_bytes());
        let theirs = &parsed.runs[0];
        assert_eq!(theirs.test, program);
        let p = params(&[test], &[4096], Stop::Iterations(100));
        let (t, info, results) = bench(&p).unwrap().remove(0);
        let rendered = linkperf::benchlog::write::render_test(t, &results, &p, &info, &[99.99]);
        let ours = linkperf::pipeline::bench_run(&info, "bench.log", 1, &rendered).unwrap();
        assert_eq!(ours.test, theirs.test);
        assert_eq!(
            ours.measurements.len(),
            theirs.measurements.len(),
            "{program}"
        );
        let (a, b) = (&ours.measurements[0], &theirs.measurements[0]);
        assert_eq!(
            shape(a),
            shape(b),
            "{program}: linkperf-verbs vs perftest columns"
        );
        assert_eq!(
            a.raw_unit,
            if test.is_bandwidth() {
                "Gb/sec"
            } else {
                "usec"
            }
        );
        assert_eq!(
            (a.msg_size_bytes, a.iterations),
            (b.msg_size_bytes, b.iterations)
        );
        assert_eq!(ours.mtu, theirs.mtu, "{program}: path MTU");
        assert_eq!(ours.link_layer, theirs.link_layer, "{program}");
    }
}
