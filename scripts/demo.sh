#!/usr/bin/env bash
# The main job on bundled data: import the seed transcripts as two platforms into a fresh
# store, list the runs and export the measurement points.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/linkperf-target}"
store="${LINKPERF_STORE:-$(mktemp -d)/store}"
out="${DEMO_OUT:-$(dirname "$store")}"
lp() { cargo run --quiet --locked -- --store "$store" "$@"; }

lp import fixtures/seeds/000_8f7f2e13e9bf4848.txt fixtures/seeds/001_76f1dcbf5cbef6cc.txt \
  --label platform=kunpeng920 --label nic=hns
lp import fixtures/seeds/003_7da62a485175b0b8.txt --label platform=s5000c-b850 --label nic=b850
lp import fixtures/seeds/002_42248bd0d2963916.txt --label platform=xeon-cx3
lp ls
lp export --format csv -o "$out/points.csv"
lp export --format parquet -o "$out/points.parquet"
lp export --format jsonl --where platform=kunpeng920,test=ib_write_bw,mtu=4096,role=client
echo "store: $store; exports: $out/points.csv $out/points.parquet"
