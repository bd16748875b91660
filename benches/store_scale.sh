#!/usr/bin/env bash
# Store scale benchmark: does a verb's cost follow its selection, not the history?
#
# Builds stores of SIZES runs (default 10,000, 100,000 and 1,000,000) from copies of the real
# seed transcripts (examples/gen_store.rs: 300 runs per nightly build, labels platform, build,
# rc, node), in two shapes (MODES): `large` (imports of 100,000 runs) and `small` (imports of 100
# runs, then `store compact`). For each store it prints wall time and peak RSS of:
# importing one 30-run file, ls / compare / gate / export / report on one or two builds,
# history of one point, and, up to 100,000 runs, compare and gate over the whole store.
#
#   benches/store_scale.sh                    # all sizes, both shapes
#   SIZES="10000 100000" MODES=large benches/store_scale.sh
#   PROFILE=release benches/store_scale.sh    # default: dev (deps at opt-level 1, ours at 2)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/linkperf-target}"
sizes="${SIZES:-10000 100000 1000000}"
modes="${MODES:-large small}"
profile="${PROFILE:-dev}"
if [ "$profile" = release ]; then
  cargo build --quiet --locked --release --bin linkperf --example gen_store
  dir="$CARGO_TARGET_DIR/release"
else
  cargo build --quiet --locked --bin linkperf --example gen_store
  dir="$CARGO_TARGET_DIR/debug"
fi
bin="$dir/linkperf" gen="$dir/examples/gen_store"
work=$(mktemp -d "${WORK:-/var/tmp}/linkperf-store-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# A fresh 33-run file: seeds 000 and 003 with their prompts naming another host, so its runs
# are new to the store.
cat fixtures/seeds/000_8f7f2e13e9bf4848.txt fixtures/seeds/003_7da62a485175b0b8.txt |
  sed 's/@localhost/@bench-new/g' > "$work/new-30-runs.txt"

measure() { # LABEL CMD...: wall seconds and peak RSS of one command (exit 1 = gate verdict, fine)
  local label=$1; shift
  local rc=0
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "FAILED ($rc): $label"; cat "$work/err"; return 1
  fi
  read -r secs kib < <(tail -n 1 "$work/time")
  printf '  %-62s %7.2f s %7d MB\n' "$label" "$secs" "$((kib / 1024))"
}

echo "store scale benchmark ($profile profile, $(nproc) cores)"
for mode in $modes; do
  for n in $sizes; do
    store="$work/store-$mode-$n"
    per_batch=100000
    [ "$mode" = small ] && per_batch=100
    echo "== $n runs, $mode imports ($per_batch runs each)"
    measure "generate ($((n / per_batch > 0 ? (n + per_batch - 1) / per_batch : 1)) transactions)" "$gen" "$store" "$n" "$per_batch"
    if [ "$mode" = small ]; then
      measure "store compact" "$bin" --store "$store" store compact
    fi
    builds=$((n / 300)); b=$((builds / 2)); rc=$(((b + 1) / 2))
    "$bin" --store "$store" store info | sed 's/^/  | /'
    measure "import one 33-run file" "$bin" --store "$store" import "$work/new-30-runs.txt" --label build=new
    measure "ls --where build=$b" "$bin" --store "$store" ls --where "build=$b"
    measure "compare --by platform --where test=ib_write_bw,build=$b" \
      "$bin" --store "$store" compare --by platform --where "test=ib_write_bw,build=$b"
    measure "gate --baseline-where build=$((b - 1)) --current-where build=$b" \
      "$bin" --store "$store" gate --baseline-where "build=$((b - 1))" --current-where "build=$b"
    measure "export --where build=$b" "$bin" --store "$store" export --where "build=$b"
    measure "report --where rc=$rc --by build (two builds)" \
      "$bin" --store "$store" report --where "rc=$rc" --by build -o "$work/report"
    measure "history --where test=ib_write_bw,role=client,node=node07" \
      "$bin" --store "$store" history --where "test=ib_write_bw,role=client,node=node07"
    if [ "$n" -le 100000 ]; then
      measure "compare --by platform (all $n runs)" "$bin" --store "$store" compare --by platform
      measure "gate platform kunpeng920 -> s5000c-b850 (all $n runs)" "$bin" --store "$store" gate \
        --baseline-where platform=kunpeng920 --current-where platform=s5000c-b850
    fi
    echo "  on disk: $(du -sb "$store" | cut -f1) bytes"
    rm -rf "$store"
  done
done
