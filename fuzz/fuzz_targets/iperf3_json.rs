//! iperf3 `-J` documents, read as a block the way `iperf3 -J` output arrives: the seed corpus is
//! the JSON fixtures, so mutations stay mostly JSON-shaped.
#![no_main]

#[path = "check.rs"]
mod check;

use linkperf::ingest::adapter::Block;
use linkperf::ingest::iperf3;

libfuzzer_sys::fuzz_target!(|bytes: &[u8]| {
    let Ok(decoded) = linkperf::ingest::text::decode(bytes) else {
        return;
    };
    let lines = decoded.lines();
    let block = Block {
        source: "fuzz.json",
        lines: &lines,
        range: 0..lines.len(),
        command: None,
        named: true,
    };
    let mut problems = Vec::new();
    let drafts = iperf3::parse_block(&block, &mut problems);
    check::problems_in_range(&problems, lines.len() as u32 + 1);
    for d in &drafts {
        assert!(
            d.start <= d.end && d.end <= lines.len(),
            "draft outside the file"
        );
    }
});
