use super::*;

#[test]
fn words_without_quotes_split_as_the_quote_reader_and_split_whitespace_split_them() {
    let mut lines = crate::ingest::fixture_lines_with(&["fixtures"], "");
    lines.extend(
        [
            "a\u{3000}b\tc  d ",
            "",
            "   ",
            "-x\u{85}y",
            // Whitespace to `split_whitespace` that `split_ascii_whitespace` does not split
            // at (a vertical tab, a no-break space), and the ASCII whitespace both split at.
            "ib_write_bw\u{b}-a -d\u{a0}mlx5_0",
            "iperf3 -c\x0c10.0.0.1\r-t 3\n-i 1\t-J",
        ]
        .map(String::from),
    );
    let mut checked = 0;
    for line in lines.iter().filter(|l| !l.contains(['\'', '"'])) {
        assert_eq!(words(line), quoted_words(line), "{line:?}");
        assert!(split_words(line).eq(line.split_whitespace()), "{line:?}");
        assert!(words(line).iter().all(|w| matches!(w, Cow::Borrowed(_))));
        checked += 1;
    }
    assert!(checked > 1000, "{checked}");
}

/// A flag's name is borrowed when linkperf knows it (every short flag of a printable ASCII
/// character, the option tables' names, `"true"`) and reads as the text typed either way.
#[test]
fn known_flag_names_are_borrowed() {
    let line = "ib_write_bw -d mlx5_0 -aF --report_gbit --size=64 --no_such_flag=1 -é ";
    let perftest = parse(line).expect("a command");
    let names: Vec<&str> = perftest.flags.keys().map(|k| k.as_ref()).collect();
    assert_eq!(
        names,
        [
            "-é",
            "CPU-freq",
            "all",
            "ib-dev",
            "no_such_flag",
            "report_gbits",
            "size"
        ]
    );
    let iperf = parse("iperf3 -c 10.0.0.1 -t 3 --json-stream --zz -R").expect("a command");
    let qperf = parse("qperf -vvu -t 5 -oo msg_size:1 -vq h tcp_bw").expect("a command");
    for c in [&perftest, &iperf, &qperf] {
        for (k, v) in &c.flags {
            let owned = matches!(k.as_ref(), "no_such_flag" | "-é" | "--zz" | "-vq");
            assert_eq!(matches!(k, Cow::Owned(_)), owned, "{k}");
            assert!(v != "true" || matches!(v, Cow::Borrowed(_)), "{k}");
        }
        assert!(matches!(c.program, Cow::Borrowed(_)), "{}", c.program);
    }
    assert_eq!(iperf.flags["--json-stream"], "true");
    assert_eq!(iperf.flags["-t"], "3");
    assert_eq!(qperf.flags["-vvu"], "true");
    for c in '!'..='~' {
        let flag = format!("-{c}");
        let name = options::flag_name(&flag, &[]);
        assert!(matches!(name, Cow::Borrowed(_)) && name == flag, "{flag}");
    }
    assert!(matches!(
        parse("ib_write_bw2 -a").unwrap().program,
        Cow::Owned(_)
    ));
}

/// `program` finds the program `parse` finds, on every line of the fixtures (prompts, output
/// and prose alike) and on wrapped, quoted, redirected and piped commands.
#[test]
fn program_alone_is_the_program_parse_finds() {
    let mut lines = crate::ingest::fixture_lines_with(&["fixtures"], "");
    lines.extend(
        [
            "numactl -i 1 -C 3 ib_write_bw -a",
            "taskset -c 16-23 timeout 60 /usr/bin/iperf3 -c x",
            "env A=B sudo -u lab qperf h tcp_bw",
            "2>/dev/null > out & ",
            "'ib_read_lat' -d \"mlx5 0\"",
            "stdbuf -oL | grep x",
            "srun --nodelist n1 -- ib_send_bw",
            "  |",
            "",
        ]
        .map(String::from),
    );
    let mut programs = 0;
    for line in &lines {
        let parsed = parse(line).map(|c| c.program);
        assert_eq!(program(line), parsed, "{line:?}");
        programs += usize::from(parsed.is_some_and(|p| tool_family(&p).is_some()));
    }
    assert!(programs > 40, "{programs}");
}

#[test]
fn srun_is_a_wrapper() {
    let c = parse(
        "srun --nodelist lp1 --nodes=1 --ntasks=1 --overlap --quiet --quit-on-interrupt -- iperf3 -c 10.0.0.2 -p 5201",
    )
    .unwrap();
    assert_eq!(c.program, "iperf3");
    assert_eq!(c.peer.as_deref(), Some("10.0.0.2"));
    assert!(c.wrappers[0].starts_with("srun --nodelist lp1"));
}

#[test]
fn numactl_and_perftest_flags() {
    let c =
        parse("numactl -i 1 ib_write_bw -F -d mrdma0 -a -n 1000 -N --report_gbits 192.170.1.30")
            .unwrap();
    assert_eq!(c.wrappers, vec!["numactl -i 1"]);
    assert_eq!(c.program, "ib_write_bw");
    assert_eq!(c.flags["ib-dev"], "mrdma0");
    assert_eq!(c.flags["iters"], "1000");
    assert_eq!(c.flags["all"], "true");
    assert_eq!(c.flags["noPeak"], "true");
    assert_eq!(c.flags["CPU-freq"], "true");
    assert_eq!(c.flags["report_gbits"], "true");
    assert_eq!(c.peer.as_deref(), Some("192.170.1.30"));
}

#[test]
fn a_multibyte_flag_character_is_read_not_split() {
    // Mutation fuzzing found `&a[..2]` panicking on `-é…`: a byte slice inside a character.
    let c = parse("ib_write_bw -éx -dé mlx5_0 -\u{fffd}").unwrap();
    assert_eq!(c.flags["-é"], "true");
    assert_eq!(c.flags["-x"], "true");
    assert_eq!(c.flags["ib-dev"], "é");
    assert_eq!(c.flags["-\u{fffd}"], "true");
    assert_eq!(c.peer.as_deref(), Some("mlx5_0"));
}

#[test]
fn abbreviated_report_gbit_and_peer_first() {
    let c = parse("ib_send_bw -d hns_1 192.170.1.10 -a --report_gbit").unwrap();
    assert_eq!(c.flags["report_gbits"], "true");
    assert_eq!(c.peer.as_deref(), Some("192.170.1.10"));
    let s = parse("ib_send_bw -d hns_1 -a --report_gbit").unwrap();
    assert_eq!(s.peer, None);
}

#[test]
fn taskset_and_pipe() {
    let c = parse("taskset -c 16-23 iperf -c 192.170.1.110 -p 7000 -t 60 -i 1 -P 5 | grep SUM")
        .unwrap();
    assert_eq!(c.wrappers, vec!["taskset -c 16-23"]);
    assert_eq!(c.program, "iperf");
    assert_eq!(c.pipe.as_deref(), Some("grep SUM"));
}

#[test]
fn qperf_host_and_tests() {
    let c = parse("qperf -v -i mlx4_0:2 172.16.50.11 conf").unwrap();
    assert_eq!(c.peer.as_deref(), Some("172.16.50.11"));
    assert_eq!(c.flags["-i"], "mlx4_0:2");
    assert_eq!(c.flags["tests"], "conf");
    let c = parse("qperf 172.16.50.11 -oo msg_size:1:64K:*2 -vu tcp_lat").unwrap();
    assert_eq!(c.flags["-oo"], "msg_size:1:64K:*2");
    assert_eq!(c.flags["tests"], "tcp_lat");
    let c = parse("iperf3 -c 127.0.0.1 -p 5201 -t 2 -P 2").unwrap();
    assert_eq!(c.peer.as_deref(), Some("127.0.0.1"));
}

#[test]
fn attached_values_and_long_equals() {
    let c = parse("sudo ib_read_lat -s64 -x 3 --out_json_file=/tmp/r.json -q 4 host1").unwrap();
    assert_eq!(c.wrappers, vec!["sudo"]);
    assert_eq!(c.flags["size"], "64");
    assert_eq!(c.flags["gid-index"], "3");
    assert_eq!(c.flags["qp"], "4");
    assert_eq!(c.flags["out_json_file"], "/tmp/r.json");
    assert_eq!(c.peer.as_deref(), Some("host1"));
}
