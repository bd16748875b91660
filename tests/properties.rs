//! Property tests of the parsers' entry points (issue #14): any input, mutated real output
//! included, reads without a panic; the transcript splitter puts every line in exactly one
//! block; unit conversions take any number and unit text.

use linkperf::ingest::{command, parse_bytes, transcript, Nothing};
use linkperf::units;
use proptest::prelude::*;
use std::path::Path;

/// Real outputs of every tool, small enough to mutate many times.
const SOURCES: &[&str] = &[
    "fixtures/seeds/003_7da62a485175b0b8.txt",
    "fixtures/perftest/rxe-lab/write_lat-unsorted-client.txt",
    "fixtures/perftest/rxe-lab/read_bw-2qp-out_json.json",
    "fixtures/iperf2/iperf2-enhanced-client.txt",
    "fixtures/iperf3/iperf3-json-client.txt",
    "fixtures/iperf3/iperf3-title-client.txt",
    "fixtures/qperf/loopback/qperf-v-tcp-udp.txt",
    "fixtures/ibping/ibping-flood-stats-900ms-max.txt",
    "fixtures/devinfo/devinfo-ibstat-fdr10.txt",
    "fixtures/linkperf-bench/all-tests.log",
];

fn source(i: usize) -> Vec<u8> {
    let rel = SOURCES[i % SOURCES.len()];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// One edit of a file: what mutation fuzzing of the fixtures did.
#[derive(Debug, Clone)]
enum Mutation {
    FlipByte(usize, u8),
    Truncate(usize),
    DuplicateLine(usize),
    DeleteLine(usize),
    Insert(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::FlipByte(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::DeleteLine),
        (
            any::<usize>(),
            prop_oneof![
                Just("é".to_string()),
                Just("\u{fffd}".to_string()),
                Just("\0".to_string()),
                Just("99999999999999999999999999".to_string()),
                Just("-nan".to_string()),
                Just("# ".to_string()),
                Just("[root@h ~]# ib_write_bw -é".to_string()),
                "\\PC{0,12}",
            ]
        )
            .prop_map(|(i, s)| Mutation::Insert(i, s)),
    ]
}

fn apply(mut bytes: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let at = |i: usize, n: usize| if n == 0 { 0 } else { i % n };
    match m {
        Mutation::FlipByte(i, b) if !bytes.is_empty() => {
            let k = at(*i, bytes.len());
            bytes[k] ^= b | 1;
        }
        Mutation::Truncate(i) => bytes.truncate(at(*i, bytes.len() + 1)),
        Mutation::DuplicateLine(i) | Mutation::DeleteLine(i) => {
            let mut lines: Vec<Vec<u8>> =
                bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            let k = at(*i, lines.len());
            if matches!(m, Mutation::DuplicateLine(_)) {
                let line = lines[k].clone();
                lines.insert(k, line);
            } else {
                lines.remove(k);
            }
            bytes = lines.join(&b'\n');
        }
        Mutation::Insert(i, s) => {
            let k = at(*i, bytes.len() + 1);
            bytes.splice(k..k, s.bytes());
        }
        Mutation::FlipByte(..) => {}
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Mutated real output reads without a panic, and says what it found: runs, problems with
    /// a line inside the file, or why there was nothing.
    #[test]
    fn mutated_real_output_never_panics(
        which in 0..SOURCES.len(),
        edits in prop::collection::vec(mutation(), 1..6),
    ) {
        let bytes = edits.iter().fold(source(which), apply);
        let r = parse_bytes("mutated.txt", &bytes);
        let lines = bytes.split(|&b| b == b'\n').count() as u32;
        for p in &r.problems {
            prop_assert!(p.line >= 1 && p.line <= lines.max(1), "{p}");
        }
        let said = !r.runs.is_empty()
            || !r.problems.is_empty()
            || matches!(r.nothing, Some(Nothing::HelpText | Nothing::VersionBanner));
        prop_assert!(said, "nothing read and nothing said");
    }

    #[test]
    fn any_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        let _ = parse_bytes("random.bin", &bytes);
    }

    #[test]
    fn any_text_never_panics(text in "\\PC{0,400}(\\n\\PC{0,80}){0,20}") {
        let _ = parse_bytes("random.txt", text.as_bytes());
    }

    /// Every line belongs to exactly one block, in order.
    #[test]
    fn the_splitter_covers_every_line_once(
        lines in prop::collection::vec(
            prop_oneof![
                "\\PC{0,40}",
                Just("[root@node1 ~]# ib_write_bw -a 10.0.0.2".to_string()),
                Just("# iperf3 -c 127.0.0.1".to_string()),
                Just("$ qperf 127.0.0.1 tcp_bw".to_string()),
                Just("#bytes #iterations BW peak[Gb/sec]".to_string()),
            ],
            0..40,
        )
    ) {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let blocks = transcript::split(&refs, None);
        // Searched in the lines' text (newlines between), the same blocks.
        let text = lines.join("\n");
        let cut: Vec<&str> = text.split('\n').collect();
        if !lines.is_empty() {
            let in_text = transcript::split(&cut, Some(&text));
            prop_assert_eq!(format!("{in_text:?}"), format!("{blocks:?}"));
        }
        let mut next = 0;
        for b in &blocks {
            prop_assert_eq!(b.start, next);
            prop_assert!(b.start <= b.output_start && b.output_start <= b.end);
            next = b.end;
        }
        prop_assert_eq!(next, lines.len());
    }

    #[test]
    fn command_lines_never_panic(line in "\\PC{0,120}") {
        let _ = command::parse(&line);
    }

    /// Conversions take any value and unit text; known units give finite values for finite
    /// input and keep the sign.
    #[test]
    fn unit_conversions_take_anything(v in any::<f64>(), unit in "\\PC{0,12}") {
        let _ = units::iperf_bytes(v, &unit);
        let _ = units::iperf_rate_gbps(v, &unit);
        let _ = units::qperf_bw_gbps(v, &unit);
        let _ = units::qperf_time_us(v, &unit);
        let _ = units::qperf_rate_mpps(v, &unit);
        let _ = units::qperf_size_bytes(v, &unit);
        let _ = units::qperf_count(&unit, Some(&unit));
        let _ = units::gbps_from_msg_rate(v, 4096);
        let finite = v.is_finite() && v.abs() < 1e200;
        for (u, f) in [
            ("Gbits/sec", units::iperf_rate_gbps as fn(f64, &str) -> Option<f64>),
            ("MBytes", units::iperf_bytes),
            ("GB/sec", units::qperf_bw_gbps),
            ("us", units::qperf_time_us),
        ] {
            let out = f(v, u).unwrap();
            if finite {
                prop_assert!(out.is_finite(), "{v} {u} -> {out}");
                prop_assert!(out == 0.0 || out.signum() == v.signum(), "{v} {u} -> {out}");
            }
        }
    }
}
