//! perftest `--out_json` files (strict JSON of perftest 6.20+, perftest 4.5's unquoted keys).
#![no_main]

#[path = "check.rs"]
mod check;

use linkperf::ingest::perftest::json;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    check::parse_as_block(bytes, |block, problems| {
        let lines = block.lines.slice(block.range.clone());
        if !json::detect(lines) {
            return Vec::new();
        }
        match json::parse(block.source, lines, problems) {
            Ok(draft) => vec![draft],
            Err(p) => {
                problems.push(p);
                Vec::new()
            }
        }
    });
});
