//! Builds a large store for `benches/store_scale.sh` from copies of the real seed transcripts:
//! each nightly "build" gets `RUNS_PER_BUILD` runs cycled from the parsed seeds (seed 000 as
//! platform kunpeng920, seed 003 as s5000c-b850), with its own run ids and the labels
//! `platform`, `build`, `rc` (two builds per release candidate) and `node` (one of 20 hosts).
//! Runs go through the store's own write path, one transaction per `RUNS_PER_BATCH` runs, so
//! "few large imports" and "thousands of small imports" are the same data.
//!
//!     cargo run --example gen_store -- STORE RUNS RUNS_PER_BATCH [RUNS_PER_BUILD]

use linkperf::ingest::parse_bytes;
use linkperf::store::Store;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [store, runs, per_batch, rest @ ..] = args.as_slice() else {
        anyhow::bail!("usage: gen_store STORE RUNS RUNS_PER_BATCH [RUNS_PER_BUILD]");
    };
    let total: usize = runs.parse()?;
    let per_batch: usize = per_batch.parse()?;
    let per_build: usize = rest.first().map_or(Ok(300), |s| s.parse())?;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut templates = Vec::new();
    for (seed, platform) in [
        ("000_8f7f2e13e9bf4848.txt", "kunpeng920"),
        ("003_7da62a485175b0b8.txt", "s5000c-b850"),
    ] {
        let rel = format!("fixtures/seeds/{seed}");
        let bytes = std::fs::read(root.join(&rel))?;
        for mut r in parse_bytes(&rel, &bytes).runs {
            r.labels.insert("platform".into(), platform.into());
            templates.push(r);
        }
    }
    let store = Store::open(std::path::Path::new(store), true)?;
    let mut tx = store.begin()?;
    let mut in_batch = 0;
    for i in 0..total {
        let build = i / per_build + 1;
        let mut r = templates[i % templates.len()].clone();
        r.run_id = format!("{}-{i:07}", r.run_id);
        r.labels.insert("build".into(), build.to_string());
        r.labels
            .insert("rc".into(), (build.div_ceil(2)).to_string());
        r.labels
            .insert("node".into(), format!("node{:02}", build % 20));
        tx.add(vec![r])?;
        in_batch += 1;
        if in_batch == per_batch {
            tx.commit()?;
            tx = store.begin()?;
            in_batch = 0;
        }
    }
    tx.commit()?;
    Ok(())
}
