//! Links the `linkperf` binary as a position-dependent executable on x86-64 Linux.
//!
//! As a position-independent one, the loader applied some 124,000 relocations (every vtable
//! and constant table pointer in polars, arrow and our crate) to the binary's pages at every
//! start, before `main`: a sixth of the instructions of a small import. Linked at its address,
//! those pointers are already right in the file.
fn main() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if target == "x86_64-unknown-linux-gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
