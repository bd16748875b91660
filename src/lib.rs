//! linkperf: reads the output of RDMA and TCP benchmark tools (perftest, iperf, qperf, ibping)
//! as people keep it, normalizes every number to canonical units with its provenance, stores
//! the results in a Parquet store and exports them.
//!
//! Data flows in one direction: `ingest` (bytes → runs) → `store` (runs ↔ Parquet) →
//! `normalize`/`compare`/`gate`/`report` (runs → views). `commands` wires the CLI commands
//! to that flow; ARCHITECTURE.md draws the layers.

pub mod benchlog;
#[cfg(feature = "store")]
pub mod changepoint;
#[cfg(feature = "store")]
pub mod cli;
#[cfg(feature = "store")]
pub mod columns;
#[cfg(feature = "store")]
pub mod commands;
#[cfg(feature = "store")]
pub mod compare;
#[cfg(feature = "store")]
pub mod config;
#[cfg(feature = "store")]
pub mod exit;
#[cfg(feature = "store")]
pub mod export;
#[cfg(feature = "store")]
pub mod format;
#[cfg(feature = "store")]
pub mod gate;
pub mod ingest;
#[cfg(feature = "store")]
pub mod metric;
pub mod model;
#[cfg(feature = "store")]
pub mod normalize;
#[cfg(feature = "store")]
pub mod pipeline;
#[cfg(feature = "store")]
pub mod report;
#[cfg(feature = "store")]
pub mod runner;
#[cfg(feature = "store")]
pub mod selection;
pub mod stats;
#[cfg(feature = "store")]
pub mod store;
#[cfg(feature = "store")]
pub mod trend;
pub mod units;
pub mod verbs;
