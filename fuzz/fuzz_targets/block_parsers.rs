//! Each tool's block parser on its own, with no prompt to guide it: the first byte picks the
//! parser (every parser of `PARSERS` in turn), the rest is the block's text.
#![no_main]

#[path = "check.rs"]
mod check;

use linkperf::ingest::adapter::PARSERS;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let parser = PARSERS[pick as usize % PARSERS.len()];
    check::parse_as_block(bytes, |block, problems| parser.parse_block(block, problems));
});
