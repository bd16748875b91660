#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS (default 60) each, from a seed corpus built out of
# fixtures/, and fails on the first crash, hang (over 10 s on one input) or memory blow-up
# (over 2 GiB). A crashing input is copied to fixtures/invalid/fuzz-TARGET-HASH so that the
# import tests keep it as a regression case once its bug is fixed.
#
#   bash fuzz/run.sh                 # all targets, 60 s each
#   FUZZ_SECONDS=10 bash fuzz/run.sh parse_bytes
#
# Needs the nightly toolchain and cargo-fuzz (installed here when missing). Builds into
# FUZZ_TARGET_DIR (default /var/tmp/linkperf-fuzz-target) so the build stays warm between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
target_dir=${FUZZ_TARGET_DIR:-/var/tmp/linkperf-fuzz-target}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(parse_bytes block_parsers perftest_json iperf3_json counters_file read_in_pieces)

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
cargo +nightly fuzz build --target-dir "$target_dir"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed() { # seed TARGET FILES...: one corpus entry per file (the file's bytes)
  local t=$1; shift
  mkdir -p "$work/$t"
  for f in "$@"; do cp "$f" "$work/$t/$(sha1sum "$f" | cut -c1-16)"; done
}
mapfile -t all < <(find fixtures -type f ! -path 'fixtures/store-v1/*' ! -name '*.parquet' -size -256k | sort)
seed parse_bytes "${all[@]}"
# read_in_pieces: the first byte picks the piece size; the transcripts of several commands.
mkdir -p "$work/read_in_pieces"
while IFS= read -r f; do
  { printf '\x00'; cat "$f"; } > "$work/read_in_pieces/$(sha1sum "$f" | cut -c1-16)"
done < <(grep -lE '^\[?[A-Za-z0-9_.-]+@[A-Za-z0-9_.-]+' "${all[@]}" | head -200)
# block_parsers: the first byte picks the parser, so each fixture is seeded once per parser.
mkdir -p "$work/block_parsers"
for f in "${all[@]}"; do
  for pick in 0 1 2 3 4 5 6 7; do
    { printf "\\x$(printf %02x $pick)"; cat "$f"; } > "$work/block_parsers/$(sha1sum "$f" | cut -c1-12)-$pick"
  done
done
mapfile -t perftest_json < <(grep -rlE '"?test_info"?[[:space:]]*:' fixtures --include='*.json' --include='*.txt' | sort)
seed perftest_json "${perftest_json[@]}"
mapfile -t iperf3_json < <(grep -rl '"start":' fixtures/iperf3 | sort)
seed iperf3_json "${iperf3_json[@]}"
mapfile -t counters_files < <(find fixtures -name '*.counters' | sort)
seed counters_file "${counters_files[@]}"

status=0
for t in "${targets[@]}"; do
  mkdir -p "$work/$t" "$work/artifacts-$t"
  echo "fuzz: $t for ${seconds}s from $(ls "$work/$t" | wc -l) seed(s)"
  if ! cargo +nightly fuzz run --target-dir "$target_dir" "$t" "$work/$t" -- \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
      -artifact_prefix="$work/artifacts-$t/" -print_final_stats=1 \
      > "$work/$t.log" 2>&1; then
    status=1
    # The panic's message first (the backtrace after it can push it out of the tail).
    grep -m1 -A3 "panicked at" "$work/$t.log" || true
    tail -40 "$work/$t.log"
    for a in "$work/artifacts-$t"/*; do
      [ -f "$a" ] || continue
      keep="fixtures/invalid/fuzz-$t-$(sha1sum "$a" | cut -c1-12)"
      cp "$a" "$keep"
      echo "fuzz: $t: kept the failing input as $keep"
      # A fresh clone's copy goes with the clone: the input is printed too, to be rebuilt
      # with `base64 -d`.
      if [ "$(stat -c %s "$a")" -le 65536 ]; then
        echo "fuzz: $t: the failing input, base64:"
        base64 -w 0 "$a"
        echo
      fi
    done
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$work/$t.log" | tr '\n' ' '
    echo
  fi
done
exit $status
