//! Helpers shared by the CLI test binaries: run the `linkperf` binary against a store with a
//! clean environment, and read its output.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const SEED_000: &str = "fixtures/seeds/000_8f7f2e13e9bf4848.txt";
pub const SEED_003: &str = "fixtures/seeds/003_7da62a485175b0b8.txt";

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `linkperf` in the project root with `store`, extra environment `env`, and none of the
/// variables that would change its behaviour inherited from the test runner.
pub fn linkperf_env(store: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_linkperf"));
    c.current_dir(root())
        .env("LINKPERF_STORE", store)
        .args(args);
    for var in ["LINKPERF_CONFIG", "GITHUB_STEP_SUMMARY", "GITHUB_ACTIONS"] {
        c.env_remove(var);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run linkperf")
}

pub fn linkperf(store: &Path, args: &[&str]) -> Output {
    linkperf_env(store, args, &[])
}

/// Standard output and standard error together.
pub fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr)
}

/// Asserts success and returns standard output.
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\n{}",
        o.status.code(),
        text(o)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}
