//! A file read in pieces (as the import reads large files) against the same file read whole:
//! the same runs, problems and counts, for any input and any piece size.
#![no_main]

use linkperf::ingest::{parse_bytes, stream};

libfuzzer_sys::fuzz_target!(|input: &[u8]| {
    // The first byte picks the piece size: 1 (every block its own piece) to 4081 bytes, and
    // how many threads the first pass runs on (one to three).
    let Some((&pick, bytes)) = input.split_first() else {
        return;
    };
    let piece = 1 + usize::from(pick) * 16;
    let path = std::env::temp_dir().join(format!("linkperf-fuzz-pieces-{}", std::process::id()));
    std::fs::write(&path, bytes).expect("temporary file");
    let threads = 1 + usize::from(pick % 3);
    let pieces = stream::parse_in_pieces("fuzz.txt", &path, piece, threads).expect("readable");
    let _ = std::fs::remove_file(&path);
    let Some(pieces) = pieces else {
        return; // read whole: nothing to compare
    };
    let whole = parse_bytes("fuzz.txt", bytes);
    // Compared as printed: a value that is not a number (iperf's `nan%`, which the checks
    // report) is the same in both reads but never equal to itself.
    assert_eq!(format!("{:?}", pieces.runs), format!("{:?}", whole.runs));
    assert_eq!(pieces.problems, whole.problems);
    assert_eq!(pieces.long_lines, whole.long_lines);
    assert_eq!(pieces.unreadable_blocks, whole.unreadable_blocks);
    assert_eq!(pieces.encoding, whole.encoding);
});
