//! The option tables of the tools a command line is taken apart for, and the flag names
//! borrowed from them ([`flag_name`]): a command line is taken apart for every run an import
//! reads, and an owned copy of each flag's name was an allocation and a free.

use crate::model::{word, Word};

/// perftest short options that take a value, with their canonical long names.
pub(super) const PERFTEST_VALUE: &[(&str, &str)] = &[
    ("-d", "ib-dev"),
    ("-i", "ib-port"),
    ("-m", "mtu"),
    ("-c", "connection"),
    ("-s", "size"),
    ("-n", "iters"),
    ("-q", "qp"),
    ("-t", "tx-depth"),
    ("-r", "rx-depth"),
    ("-p", "port"),
    ("-u", "qp-timeout"),
    ("-S", "sl"),
    ("-x", "gid-index"),
    ("-D", "duration"),
    ("-f", "margin"),
    ("-l", "post_list"),
    ("-Q", "cq-mod"),
    ("-I", "inline_size"),
    ("-o", "outs"),
    ("-E", "dest_mac"),
    ("-B", "source_mac"),
    ("-J", "dest_ip"),
    ("-j", "source_ip"),
    ("-K", "dest_port"),
    ("-k", "source_port"),
    ("-T", "tos"),
    ("-L", "hop_limit"),
    ("-w", "limit_bw"),
    ("-y", "limit_msgrate"),
    ("-W", "report-counters"),
    ("-X", "vector"),
    ("-g", "mcg"),
    ("-M", "MGID"),
    ("-A", "atomic_type"),
    ("-Y", "raw_ipv6"),
];

/// perftest short options without a value.
pub(super) const PERFTEST_SWITCH: &[(&str, &str)] = &[
    ("-a", "all"),
    ("-b", "bidirectional"),
    ("-F", "CPU-freq"),
    ("-N", "noPeak"),
    ("-R", "rdma_cm"),
    ("-e", "events"),
    ("-z", "com_rdma_cm"),
    ("-O", "dualport"),
    ("-C", "report-cycles"),
    ("-H", "report-histogram"),
    ("-U", "report-unsorted"),
    ("-Z", "server"),
    ("-P", "client"),
    ("-h", "help"),
    ("-V", "version"),
    ("-G", "use_rss"),
    ("-v", "mac_fwd"),
];

/// perftest long options that take a value (as a separate word or after `=`).
pub(super) const PERFTEST_LONG_VALUE: &[&str] = &[
    "ib-dev",
    "ib-port",
    "mtu",
    "connection",
    "size",
    "iters",
    "qp",
    "tx-depth",
    "rx-depth",
    "port",
    "qp-timeout",
    "sl",
    "gid-index",
    "duration",
    "margin",
    "post_list",
    "recv_post_list",
    "cq-mod",
    "inline_size",
    "outs",
    "dest_mac",
    "source_mac",
    "dest_ip",
    "source_ip",
    "dest_port",
    "source_port",
    "tos",
    "hop_limit",
    "limit_bw",
    "limit_msgrate",
    "out_json_file",
    "mmap",
    "mmap-offset",
    "use_cuda",
    "use_rocm",
    "flows",
    "burst_size",
    "rate_limit",
    "rate_units",
    "rate_limit_type",
    "output",
    "dlid",
    "wait_destroy",
    "retry_count",
    "atomic_type",
    "server_ip",
    "client_ip",
    "payload_file_path",
    "vlan_pcp",
    "vlan_en",
];

/// The `"true"` of a flag without a value.
pub(super) const TRUE: Word = Word::Borrowed("true");

/// Every `-X` for a printable ASCII `X`, one after another.
const SHORT_FLAGS: &str = {
    const BYTES: [u8; 2 * 94] = {
        let mut b = [0; 2 * 94];
        let mut i = 0;
        while i < 94 {
            b[2 * i] = b'-';
            b[2 * i + 1] = b'!' + i as u8;
            i += 1;
        }
        b
    };
    match std::str::from_utf8(&BYTES) {
        Ok(s) => s,
        Err(_) => panic!("ASCII is UTF-8"),
    }
};

/// A flag's name as typed: a short flag (`-c`) borrowed from [`SHORT_FLAGS`], one of `known`
/// borrowed from there, any other copied.
pub(super) fn flag_name(flag: &str, known: &[&'static str]) -> Word {
    match *flag.as_bytes() {
        [b'-', c @ b'!'..=b'~'] => {
            let at = 2 * usize::from(c - b'!');
            Word::Borrowed(&SHORT_FLAGS[at..at + 2])
        }
        _ => word(flag, known),
    }
}

/// qperf options that take a value (`qperf --help options`).
pub(super) const QPERF_VALUE: &[&str] = &[
    "-ar", "-ca", "-cm", "-cp", "-e", "-f", "-fl", "-i", "-ip", "-lp", "-m", "-mt", "-n", "-o",
    "-oo", "-r", "-sr", "-t", "-to", "-ts", "-ul", "-uu", "-ub", "-lp", "-rm", "-sm", "-sl",
];

/// qperf's verbose switches (`-v` itself is a short flag), borrowed as flag names.
pub(super) const QPERF_VERBOSE: &[&str] = &[
    "-vb", "-vc", "-vl", "-vs", "-vt", "-vu", "-vv", "-vvb", "-vvc", "-vvl", "-vvs", "-vvt", "-vvu",
];

/// iperf 2 and iperf3 long options, borrowed as flag names (any other is copied).
pub(super) const LONG_FLAGS: &[&str] = &[
    "--bandwidth",
    "--bidir",
    "--bitrate",
    "--client",
    "--dualtest",
    "--enhanced",
    "--format",
    "--full-duplex",
    "--get-server-output",
    "--help",
    "--interval",
    "--json",
    "--json-stream",
    "--len",
    "--length",
    "--omit",
    "--one-off",
    "--parallel",
    "--port",
    "--reverse",
    "--server",
    "--time",
    "--timestamps",
    "--title",
    "--udp",
    "--version",
];
