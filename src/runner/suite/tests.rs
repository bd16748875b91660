use super::*;

#[test]
fn perftest_plan() {
    let suite = Suite::parse(
        "name = \"s\"\n[[host]]\nname = \"a\"\naddress = \"10.0.2.15\"\ndevice = \"rxe0\"\ngid_index = 1\nwrapper = [\"numactl\", \"-i\", \"1\"]\n[[test]]\ntool = \"ib_write_bw\"\nserver = \"a\"\nclient = \"a\"\nsizes = \"all\"\niterations = 5\nargs = [\"--report_gbits\"]\n",
    )
    .unwrap();
    let h = suite.host("a").unwrap();
    let runs = plan(&suite.tests[0], h, h, 18600);
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0].client.0,
        [
            "numactl",
            "-i",
            "1",
            "ib_write_bw",
            "-p",
            "18600",
            "-d",
            "rxe0",
            "-x",
            "1",
            "-a",
            "-n",
            "5",
            "--report_gbits",
            "10.0.2.15"
        ]
    );
    assert_eq!(runs[0].server.0.last().unwrap(), "--report_gbits");
}

#[test]
fn native_runner_plan() {
    let suite = Suite::parse(
        "name = \"s\"\n[[host]]\nname = \"a\"\naddress = \"10.0.2.15\"\ndevice = \"rxe0\"\ngid_index = 1\n[[host]]\nname = \"b\"\nssh = \"lab@b\"\ndevice = \"mlx5_0\"\n[[test]]\ntool = \"linkperf-verbs\"\nserver = \"a\"\nclient = \"b\"\ntests = [\"write_bw\", \"read_lat\"]\nsizes = [2, 65536]\niterations = 50\n",
    )
    .unwrap();
    let (a, b) = (suite.host("a").unwrap(), suite.host("b").unwrap());
    let runs = plan(&suite.tests[0], a, b, 18600);
    // One session sweeps the whole size list.
    assert_eq!(runs.len(), 1);
    let server = &runs[0].server.0;
    assert!(
        server[0].ends_with("linkperf") || server[0].contains("linkperf"),
        "{server:?}"
    );
    assert_eq!(
        server[1..],
        [
            "bench",
            "--listen",
            "--accept-timeout",
            "120",
            "-p",
            "18600",
            "-d",
            "rxe0",
            "-x",
            "1"
        ]
    );
    assert_eq!(
        runs[0].client.0,
        [
            "linkperf",
            "bench",
            "--server",
            "10.0.2.15",
            "-p",
            "18600",
            "-d",
            "mlx5_0",
            "--no-store",
            "--log",
            "-",
            "--tests",
            "write_bw,read_lat",
            "-s",
            "2,65536",
            "-n",
            "50"
        ]
    );
}

#[test]
fn ssh_quotes_the_remote_side() {
    let h = Host {
        name: "b".into(),
        address: "b".into(),
        ssh: Some("lab@b:2222".into()),
        ..Host::default()
    };
    let v = on_host(
        &h,
        &Argv(vec![
            "iperf3".into(),
            "-c".into(),
            "a b".into(),
            "$(rm -rf /)".into(),
        ]),
    );
    assert_eq!(
        v[..7],
        [
            "ssh",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            "-p",
            "2222"
        ]
    );
    assert_eq!(v.last().unwrap(), "iperf3 -c 'a b' '$(rm -rf /)'");
}

#[test]
fn bad_suites_are_rejected_with_the_line() {
    assert!(Suite::parse(
        "name = \"s\"\n[[test]]\ntool = \"iperf3\"\nserver = \"x\"\nclient = \"x\"\n"
    )
    .unwrap_err()
    .contains("no host named"));
    assert!(Suite::parse("name = \"s\"\ncolour = 1\n")
        .unwrap_err()
        .starts_with("2: "));
    assert!(
        Suite::parse("name = \"s\"\n[[host]]\nname = \"a\"\nssh = \"-oProxyCommand=x\"\n").is_err()
    );
    assert!(Suite::parse("name = \"s\"\n[[host]]\nname = \"a\"\n[[test]]\ntool = \"rm\"\nserver = \"a\"\nclient = \"a\"\n").is_err());
}
