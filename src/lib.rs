//! linkperf: reads the output of RDMA and TCP benchmark tools (perftest, iperf, qperf, ibping)
//! as people keep it, normalizes every number to canonical units with its provenance, stores
//! the results in a Parquet store and exports them.
//!
//! Data flows in one direction: `ingest` (bytes → runs) → `store` (runs ↔ Parquet) →
//! `normalize`/`compare`/`gate`/`report` (runs → views). `commands` wires the CLI commands
//! to that flow; ARCHITECTURE.md draws the layers.

pub mod benchlog;
pub mod changepoint;
pub mod cli;
pub mod columns;
pub mod commands;
pub mod compare;
pub mod config;
pub mod exit;
pub mod export;
pub mod format;
pub mod gate;
pub mod ingest;
pub mod metric;
pub mod model;
pub mod normalize;
pub mod pipeline;
pub mod report;
pub mod runner;
pub mod selection;
pub mod stats;
pub mod store;
pub mod trend;
pub mod units;
pub mod verbs;
