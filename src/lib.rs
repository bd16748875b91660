//! linkperf: reads the output of RDMA and TCP benchmark tools (perftest, iperf, qperf, ibping)
//! as people keep it, normalizes every number to canonical units with its provenance, stores
//! the results in a Parquet store and exports them.
//!
//! Data flows in one direction: `ingest` (bytes → runs) → `store` (runs ↔ Parquet) →
//! `normalize`/`compare`/`gate`/`report` (runs → views). `commands` wires the CLI commands
//! to that flow; ARCHITECTURE.md draws the layers.

/// The binary's allocator (and the benchmarks'): the `mimalloc` feature, on by default.
#[cfg(feature = "mimalloc")]
pub mod allocator;
pub mod benchlog;
pub mod counters;
pub mod ingest;
pub mod model;
pub mod stats;
pub mod units;
pub mod verbs;

/// `println!` that hands back the write's error instead of panicking: `linkperf import ... |
/// head` closes the pipe early, and `main` ends the command quietly on a broken pipe.
#[cfg(feature = "store")]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `print!` as [`outln`] writes: the error handed back, not a panic.
#[cfg(feature = "store")]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// The modules over the Parquet store (polars) and the commands: the `store` feature, on by
/// default. Without it the crate is the parsers alone, which is what the fuzz targets build.
macro_rules! with_store {
    ($($module:ident),* $(,)?) => {
        $(
            #[cfg(feature = "store")]
            pub mod $module;
        )*
    };
}

with_store!(
    changepoint,
    check,
    cli,
    columns,
    commands,
    compare,
    config,
    exit,
    export,
    fleet,
    format,
    gate,
    metric,
    normalize,
    pipeline,
    report,
    runner,
    selection,
    store,
    trend,
);
