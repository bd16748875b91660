//! The native verbs runner: `linkperf devices` and `linkperf bench` talk to the RDMA device
//! through libibverbs (`rdma-sys`), without perftest installed.
//!
//! Everything that needs no device — the device facts model, bench options, the out-of-band
//! protocol and the store rows — is plain Rust and always built. The FFI (`ffi`),
//! the device queries (`query`) and the measurement loops (`engine`) need the cargo feature
//! `verbs`, which needs rdma-core's headers and libclang at build time.

pub mod device;
pub mod options;
pub mod protocol;
pub mod rates;
pub mod record;

#[cfg(feature = "verbs")]
pub mod engine;
#[cfg(feature = "verbs")]
mod ffi;
#[cfg(feature = "verbs")]
pub mod query;

/// Whether this build can talk to RDMA devices.
pub const AVAILABLE: bool = cfg!(feature = "verbs");
