//! Compare/gate benchmark: builds a store of 10,000 runs (about 250,000 rows) by multiplying the
//! real runs of the seed transcripts (each copy gets its own run id and a platform and repeat
//! label), then times reading the store and `compare --by platform` over it, and prints peak
//! memory. Run with `cargo bench --bench store_queries` (`RUNS=N` to change the size).

mod common;
use common::{env_usize, peak_rss_mib};

use linkperf::config::Config;
use linkperf::ingest::parse_bytes;
use linkperf::normalize::{aggregate, platform, points};
use linkperf::selection::Selection;
use linkperf::store::Store;
use std::time::Instant;

fn main() {
    let target: usize = env_usize("RUNS", 10_000);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut templates = Vec::new();
    for (seed, platform) in [
        ("000_8f7f2e13e9bf4848.txt", "kunpeng920"),
        ("003_7da62a485175b0b8.txt", "s5000c-b850"),
    ] {
        let rel = format!("fixtures/seeds/{seed}");
        let bytes = std::fs::read(root.join(&rel)).expect("seed fixture");
        for mut r in parse_bytes(&rel, &bytes)
            .runs
            .into_iter()
            .filter(|r| r.tool == "perftest" && !r.measurements.is_empty())
        {
            r.labels.insert("platform".into(), platform.into());
            templates.push(r);
        }
    }
    let mut runs = Vec::with_capacity(target);
    for i in 0..target {
        let mut r = templates[i % templates.len()].clone();
        r.run_id = format!("{}-{i:06}", r.run_id);
        r.labels
            .insert("repeat".into(), (i / templates.len()).to_string());
        runs.push(r);
    }
    let rows: usize = runs.iter().map(|r| r.measurements.len()).sum();
    let tmp = tempfile::tempdir().expect("temp dir");
    // KEEP_STORE=DIR keeps the generated store there, to time the CLI verbs over it.
    let store_dir = std::env::var_os("KEEP_STORE")
        .map_or_else(|| tmp.path().join("store"), std::path::PathBuf::from);
    let store = Store::open(&store_dir, true).expect("store");
    let t = Instant::now();
    store.add(runs).expect("add");
    println!(
        "store of {target} runs, {rows} rows written in {:.2} s",
        t.elapsed().as_secs_f64()
    );

    let config = Config::default();
    let t = Instant::now();
    let loaded: Vec<_> = store
        .load()
        .expect("load")
        .into_iter()
        .map(|r| {
            let p = platform::resolve(&r, &config);
            (r, p)
        })
        .collect();
    let load_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let pts = points::points(&loaded, "platform", None).expect("points");
    let aggs = aggregate::aggregate(&pts).expect("aggregate");
    let c = linkperf::compare::compare(
        aggs,
        &linkperf::compare::Options {
            by: "platform",
            baseline: Some("kunpeng920"),
            same_within: 0.01,
            line_rate_floor: 0.9,
            noisy_cv: 0.05,
        },
    )
    .expect("compare");
    let compare_s = t.elapsed().as_secs_f64();
    println!(
        "load + resolve: {load_s:.3} s; points + aggregate + compare: {compare_s:.3} s ({} points, {} rows out); total {:.3} s",
        pts.len(),
        c.rows.len(),
        load_s + compare_s
    );
    // The report over the whole store: view model, charts and the HTML file.
    let t = Instant::now();
    let ctx = linkperf::report::model::build(
        &loaded,
        &config,
        &linkperf::report::model::Options {
            title: "bench",
            by: "platform",
            baseline: Some("kunpeng920"),
            filters: &[],
            gate: None,
            history_by: "source",
        },
    )
    .expect("report model");
    let env = linkperf::report::environment(None).expect("templates");
    let html = linkperf::report::render(&env, "report.html", &ctx, None).expect("render");
    println!(
        "report over {} runs: {:.3} s, index.html {:.2} MB, {} charts",
        loaded.len(),
        t.elapsed().as_secs_f64(),
        html.len() as f64 / 1e6,
        ctx.sections.iter().map(|s| s.charts.len()).sum::<usize>()
    );

    // The gate over the same history: even repeats are the baseline, odd ones the current runs.
    let t = Instant::now();
    let (base, cur): (Vec<_>, Vec<_>) = loaded.into_iter().partition(|(r, _)| {
        r.labels
            .get("repeat")
            .and_then(|v| v.parse::<usize>().ok())
            .is_some_and(|v| v % 2 == 0)
    });
    let pair_by = linkperf::gate::DEFAULT_PAIR_BY;
    let (base, cur) = (
        Selection::from_runs(base).expect("baseline rows"),
        Selection::from_runs(cur).expect("current rows"),
    );
    let decided = linkperf::gate::evaluate(&base, &cur, &[], pair_by, &config.gate).expect("gate");
    println!(
        "gate over {} + {} runs: {} points decided in {:.3} s",
        base.runs.len(),
        cur.runs.len(),
        decided.len(),
        t.elapsed().as_secs_f64()
    );
    println!(
        "peak RSS during load + compare + gate: {:.1} MiB",
        peak_rss_mib()
    );
}
