# Sourced by the benchmark scripts: builds linkperf in PROFILE (release by default, as
# `cargo bench` would; PROFILE=dev for a quick look) and sets $profile and $bin.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/linkperf-target}"
profile="${PROFILE:-release}"
if [ "$profile" = release ]; then
  cargo build --quiet --locked --release
  bin="$CARGO_TARGET_DIR/release/linkperf"
else
  cargo build --quiet --locked
  bin="$CARGO_TARGET_DIR/debug/linkperf"
fi
