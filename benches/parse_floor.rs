//! The floor under `benches/import.sh`: what one core does with the perftest transcripts in
//! memory (no process start, no file reads, no threads), step by step:
//!   1. splitting them into lines,
//!   2. the run-id hash (`ContentHash`) over every byte, which every import computes over each
//!      run's lines and which cannot change (stored runs are deduplicated by it), alone
//!      and side by side as the import hashes runs (`content_ids`: up to 32 texts in AVX-512
//!      registers where the CPU has them, else up to 12 in AVX2 ones, else four scalar lanes),
//!   3. reading every number on every line (words split at blanks; those that start with a
//!      digit read as the parsers read table cells, `ingest::common::decimal`),
//!   4. `ingest::parse_bytes` on each transcript: the whole parse of a file into runs.
//!
//! Each is printed as MB/s of transcript text, then peak memory. A parse can be no faster than
//! steps 2 and 3 together; how far it is from them is what the parser itself costs.
//! Run with `cargo bench --bench parse_floor` (`SIZE_MB=N` for the corpus size, default 64).

mod common;
use common::{env_usize, peak_rss_mib};

use linkperf::ingest::common::decimal;
use linkperf::ingest::{content_ids, parse_bytes, ContentHash};
use std::hint::black_box;
use std::time::Instant;

// The binary's allocator, so that step 4 allocates as an import does.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOC: linkperf::allocator::MiMalloc = linkperf::allocator::MiMalloc;

/// The perftest seed transcripts, the same four `benches/import.sh` copies into its corpus.
const SEEDS: [&str; 4] = [
    "fixtures/seeds/000_8f7f2e13e9bf4848.txt",
    "fixtures/seeds/001_76f1dcbf5cbef6cc.txt",
    "fixtures/seeds/002_42248bd0d2963916.txt",
    "fixtures/seeds/003_7da62a485175b0b8.txt",
];

fn main() {
    let size_mb: usize = env_usize("SIZE_MB", 64);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds: Vec<Vec<u8>> = SEEDS
        .iter()
        .map(|s| std::fs::read(root.join(s)).expect("seed transcript"))
        .collect();
    // The files of the corpus, in the order import.sh lays them out, each its own copy so that
    // the steps read memory as an import does, not four files that stay in the cache.
    let mut files: Vec<Vec<u8>> = Vec::new();
    let mut total = 0;
    while total < size_mb * 1_000_000 {
        for s in &seeds {
            files.push(s.clone());
            total += s.len();
        }
    }
    println!(
        "parse floor: {} perftest transcripts, {:.1} MB, one thread, in memory",
        files.len(),
        total as f64 / 1e6
    );
    step("split into lines", total, || {
        files
            .iter()
            .map(|f| memchr::memchr_iter(b'\n', f).count())
            .sum::<usize>()
    });
    step("run-id hash (ContentHash) of every byte", total, || {
        files
            .iter()
            .map(|f| {
                let mut h = ContentHash::new();
                h.update(f);
                h.hex().len()
            })
            .sum::<usize>()
    });
    step(
        "run-id hash, texts side by side (content_ids)",
        total,
        || {
            let texts: Vec<&[u8]> = files.iter().map(|f| f.as_slice()).collect();
            content_ids(&texts).len()
        },
    );
    step("every number read (words from a digit)", total, || {
        files
            .iter()
            .flat_map(|f| f.split(|&b| b == b'\n'))
            .flat_map(|l| l.split(|&b| b == b' ' || b == b'\t'))
            .filter(|w| w.first().is_some_and(u8::is_ascii_digit))
            .filter_map(|w| decimal(std::str::from_utf8(w).ok()?))
            .count()
    });
    step("ingest::parse_bytes (whole parse)", total, || {
        files
            .iter()
            .enumerate()
            .map(|(i, f)| parse_bytes(&format!("corpus/{i:06}.txt"), f).runs.len())
            .sum::<usize>()
    });
    println!("peak RSS {:.1} MiB", peak_rss_mib());
}

/// Runs `work` three times and prints the best throughput (the least disturbed run).
fn step(label: &str, bytes: usize, work: impl Fn() -> usize) {
    let best = (0..3)
        .map(|_| {
            let t = Instant::now();
            black_box(work());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "{label:<42} {:8.1} MB/s ({:.3} s)",
        bytes as f64 / 1e6 / best,
        best
    );
}
