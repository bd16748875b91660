//! perftest `--out_json` files (strict JSON of perftest 6.20+, perftest 4.5's unquoted keys).
#![no_main]

#[path = "check.rs"]
mod check;

use linkperf::ingest::perftest::json;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let Ok(decoded) = linkperf::ingest::text::decode(bytes) else {
        return;
    };
    let lines = decoded.lines();
    if !json::detect(&lines) {
        return;
    }
    let mut problems = Vec::new();
    let parsed = json::parse("fuzz.json", &lines, &mut problems);
    check::problems_in_range(&problems, lines.len() as u32 + 1);
    match parsed {
        Ok(draft) => {
            assert!(
                draft.start <= draft.end && draft.end <= lines.len(),
                "draft outside the file"
            );
        }
        Err(p) => check::problems_in_range(&[p], lines.len() as u32 + 1),
    }
});
