//! Links the `linkperf` binary as a position-dependent executable on x86-64 Linux.
//!
//! As a position-independent one, the loader applied some 124,000 relocations (every vtable
//! and constant table pointer in polars, arrow and our crate) to the binary's pages at every
//! start, before `main`: 1.6 M instructions (7 % of a dry-run import of 300 small iperf/qperf
//! files), and 2.4 MB of the binary's pages written, which each process then held as its own
//! memory. Linked at its address, those pointers are already right in the file. The price: the
//! executable's own code and data lie at a fixed address (libraries, heap and stack do not).
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target == "x86_64-unknown-linux-gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
