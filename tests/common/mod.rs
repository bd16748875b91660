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

/// The one run directory `linkperf run` made under `runs`.
pub fn run_dir(runs: &Path) -> PathBuf {
    std::fs::read_dir(runs)
        .unwrap()
        .next()
        .expect("a run directory")
        .unwrap()
        .path()
}

/// `linkperf run SUITE` keeping its run directory under `runs`, the test's own ports from
/// `base_port` (each test its own block), and `extra` arguments.
pub fn run_suite(store: &Path, suite: &str, runs: &Path, base_port: u16, extra: &[&str]) -> Output {
    let port = base_port.to_string();
    let args = [
        "run",
        suite,
        "--runs-dir",
        runs.to_str().unwrap(),
        "--base-port",
        &port,
    ];
    linkperf(store, &[&args[..], extra].concat())
}

/// The `manifest.json` of the one run directory under `runs`.
pub fn read_manifest(runs: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(run_dir(runs).join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
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

/// Runs a shell command that must succeed (network namespace set-up).
pub fn sh(cmd: &str) {
    let o = Command::new("sh").args(["-c", cmd]).output().expect("sh");
    assert!(
        o.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Network namespaces need root and `tools`. Outside CI a run without them says why it skips;
/// under CI (`CI=true`, `.ci/run` runs as root and installs them) it must run.
pub fn can_make_namespaces(tools: &[&str]) -> bool {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let found = tools.iter().all(|t| {
        Command::new("sh")
            .args(["-c", &format!("command -v {t}")])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !(root && found) && std::env::var("CI").as_deref() != Ok("true") {
        eprintln!(
            "skipped: network namespaces need root and {}",
            tools.join(", ")
        );
        return false;
    }
    true
}
