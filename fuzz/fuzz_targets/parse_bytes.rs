//! The whole import path of one file: decoding, transcript splitting, detection, every parser.
#![no_main]

#[path = "check.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let result = linkperf::ingest::parse_bytes("fuzz.txt", bytes);
    check::file_result(&result, check::line_limit(bytes));
});
