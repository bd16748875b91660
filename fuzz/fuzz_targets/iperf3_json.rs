//! iperf3 `-J` documents and `--json-stream` events, read as a block the way iperf3's output
//! arrives: the seed corpus is the JSON fixtures, so mutations stay mostly JSON-shaped.
#![no_main]

#[path = "check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    check::parse_as_block(bytes, linkperf::ingest::iperf3::parse_block);
});
