//! Each tool's block parser on its own, with no prompt to guide it: the first byte picks the
//! parser (every parser of `PARSERS` in turn), the rest is the block's text.
#![no_main]

#[path = "check.rs"]
mod check;

use linkperf::ingest::adapter::{Block, PARSERS};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let Ok(decoded) = linkperf::ingest::text::decode(bytes) else {
        return;
    };
    let lines = decoded.lines();
    let parser = PARSERS[pick as usize % PARSERS.len()];
    let block = Block {
        source: "fuzz.txt",
        lines: &lines,
        range: 0..lines.len(),
        command: None,
        named: true,
    };
    let mut problems = Vec::new();
    let drafts = parser.parse_block(&block, &mut problems);
    let limit = lines.len() as u32 + 1;
    check::problems_in_range(&problems, limit);
    for d in &drafts {
        assert!(
            d.start <= d.end && d.end <= lines.len(),
            "draft outside its block"
        );
    }
});
