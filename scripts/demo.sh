#!/usr/bin/env bash
# The main job on bundled data: import the seed transcripts as two platforms into a fresh
# store, list the runs and export the measurement points.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/linkperf-target}"
store="${LINKPERF_STORE:-$(mktemp -d)/store}"
out="${DEMO_OUT:-$(dirname "$store")}"
lp() { cargo run --quiet --locked -- --store "$store" "$@"; }

lp import fixtures/seeds/000_8f7f2e13e9bf4848.txt --label platform=kunpeng920 --label nic=hns
# Seed 001: another Kunpeng 920 whose 25G NIC negotiated 10G (a 10G optical module).
lp import fixtures/seeds/001_76f1dcbf5cbef6cc.txt --label platform=kunpeng920-25g --label link_speed_gbps=25
lp import fixtures/seeds/003_7da62a485175b0b8.txt --label platform=s5000c-b850 --label nic=b850
lp import fixtures/seeds/002_42248bd0d2963916.txt --label platform=xeon-cx3
lp ls
lp export --format csv -o "$out/points.csv"
lp export --format parquet -o "$out/points.parquet"
lp export --format jsonl --where platform=kunpeng920,test=ib_write_bw,mtu=4096,role=client
# Platform A against platform B, and what MTU 4096 bought on Kunpeng 920.
lp compare --by platform --baseline kunpeng920 --where test=ib_write_lat,mtu=4096
lp compare --by mtu --where platform=kunpeng920,test=ib_send_bw,role=client
lp compare --where platform=kunpeng920-25g,test=ib_send_bw
# The gate: MTU 1024 runs against the MTU 4096 baseline must fail (exit 1) with the MTU change.
set +e
lp gate --baseline-where platform=kunpeng920,mtu=4096 --current-where platform=kunpeng920,mtu=1024 \
  --where tool=perftest --markdown "$out/gate.md" --junit "$out/gate.xml" > "$out/gate.txt"
rc=$?
set -e
tail -n 1 "$out/gate.txt"
if [ "$rc" -ne 1 ]; then
  echo "demo: expected the gate to find the MTU regression (exit 1), got $rc" >&2
  exit 2
fi
# The example report committed under reports/: Kunpeng 920 (seed 000, MTU 1024 and 4096)
# against Phytium S5000C + B850 (seed 003), with the MTU gate's regressions.
report_store="$(dirname "$store")/report-store"
lpr() { cargo run --quiet --locked -- --store "$report_store" "$@"; }
lpr import fixtures/seeds/000_8f7f2e13e9bf4848.txt --label platform=kunpeng920 > /dev/null
lpr import fixtures/seeds/003_7da62a485175b0b8.txt --label platform=s5000c-b850 > /dev/null
set +e
lpr gate --baseline-where platform=kunpeng920,mtu=4096 --current-where platform=kunpeng920,mtu=1024 \
  --where tool=perftest --json "$out/report-gate.json" > /dev/null
set -e
lpr report -o reports/kunpeng920-vs-s5000c-b850 --baseline kunpeng920 \
  --title "Kunpeng 920 (hns) vs Phytium S5000C + B850: RDMA and TCP" --gate "$out/report-gate.json"
echo "store: $store; outputs in $out: points.csv points.parquet gate.md gate.xml gate.txt"
