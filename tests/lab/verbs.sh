#!/usr/bin/env bash
# The native verbs runner (`linkperf devices`, `linkperf bench`) against a real RDMA device:
# builds linkperf and tests/verbs_lab.rs with the `verbs` feature, boots the Soft-RoCE lab
# (../shared/lab/) and runs the device tests there, then drives the CLI in the lab — a bench
# session stored with labels, and `devices` on a guest without RDMA — and checks the store on
# the host. Lab numbers say nothing about performance; this checks completions, data, rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
lab=../shared/lab/lab.sh
if [ ! -f "$lab" ]; then
  echo "lab-verbs: $lab not found" >&2
  exit 2
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/linkperf-target}"
cargo build --quiet --locked --features verbs
testbin=$(cargo test --quiet --locked --features verbs --test verbs_lab --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "verbs_lab":
        print(m["executable"])')
bin="$CARGO_TARGET_DIR/debug/linkperf"
work=$(mktemp -d /var/tmp/linkperf-verbs.XXXXXX)
trap 'rm -rf "$work"' EXIT
bash "$lab" deps > "$work/deps.log" 2>&1 || { tail -20 "$work/deps.log"; exit 2; }
bash "$lab" build > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 2; }
. tests/lab/boot.sh
run_lab() { # log-name command
  local log="$work/$1.log"
  LAB_SHARES="$work $CARGO_TARGET_DIR $PWD" LAB_CWD="$PWD" LAB_TIMEOUT=900 lab_run "$log" "$2" ||
    { tail -40 "$log"; echo "lab-verbs: the lab run failed ($log)" >&2; return 1; }
}

# 1. The device tests (tests/verbs_lab.rs), one at a time: they count the device's objects.
run_lab tests "$testbin --ignored --test-threads=1"
grep -q "test result: ok. 6 passed" "$work/tests.log" || { tail -40 "$work/tests.log"; exit 1; }
tr -d '\r' < "$work/tests.log" | grep -E "^test .* ok$" | sed 's/^/lab-verbs: /'

# 2. The CLI as a person runs it: server and client, stored with a label; error exits.
counters="/sys/class/infiniband/rxe0/ports/1/counters /sys/class/infiniband/rxe0/ports/1/hw_counters"
run_lab cli "grep -r . $counters > $work/counters-before.txt
$bin bench --listen --accept-timeout 60 2> $work/server.err & sleep 0.5
$bin --store $work/store bench --server 10.0.2.15 --tests write_bw,read_lat -s 2,65536 -n 50 --label platform=soft-roce > $work/client.out 2> $work/client.err; echo client=\$?
wait \$!; echo server=\$?
grep -r . $counters > $work/counters-after.txt
$bin bench --server 10.0.2.15 --port 1 --timeout 1 --no-store 2> $work/nopeer.err; echo nopeer=\$?
$bin bench --server 10.0.2.15 -s 16M --no-store 2> $work/toobig.err; echo toobig=\$?"
tr -d '\r' < "$work/cli.log" > "$work/cli.txt"
for want in client=0 server=0 nopeer=2 toobig=2; do
  grep -qx "$want" "$work/cli.txt" || { cat "$work/cli.log" "$work"/*.err; echo "lab-verbs: expected $want" >&2; exit 1; }
done
grep -q "no answer within 1 s" "$work/nopeer.err" || { cat "$work/nopeer.err"; exit 1; }
grep -q -- "--size 16777216: larger than rxe0 port 1 allows" "$work/toobig.err" || { cat "$work/toobig.err"; exit 1; }
"$bin" --store "$work/store" export --where "tool=linkperf-verbs,platform=soft-roce" > "$work/rows.jsonl"
"$bin" --store "$work/store" export --samples --format csv --where test=ib_read_lat > "$work/samples.csv"
python3 - "$work/rows.jsonl" "$work/samples.csv" <<'PY'
import csv, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
samples = list(csv.DictReader(open(sys.argv[2])))
assert len(samples) == 100, f"expected 2 sizes x 50 read_lat samples, got {len(samples)}"
for size in ("2", "65536"):
    values = sorted(float(s["latency_us"]) for s in samples if s["msg_size_bytes"] == size)
    row = next(r for r in rows if r["test"] == "ib_read_lat" and str(r["msg_size_bytes"]) == size)
    # The stored minimum and maximum are the samples' own, as printed (2 decimals).
    # The table prints 2 decimals of a 3-decimal sample: half a hundredth, plus float slack.
    assert abs(values[0] - row["lat_min_us"]) <= 0.0051 and abs(values[-1] - row["lat_max_us"]) <= 0.0051, (values[:3], row)
assert len(rows) == 4, f"expected 4 rows, got {len(rows)}"
assert {r["test"] for r in rows} == {"ib_write_bw", "ib_read_lat"}, rows
for r in rows:
    # Every stored number points at its line in the bench log, which says the same.
    line = open(r["source"]).read().split("\n")[r["line"] - 1]
    assert line == r["raw_text"], (line, r["raw_text"])
    assert r["device"] == "rxe0" and r["resolved"]["link_speed_gbps"]["value"] == "2.5", r
    assert r["extra"]["verified"], r
print("lab-verbs: 4 stored rows match their log lines")
PY
# rxe0's counters changed across the session, and what the two runs stored adds up to what
# this script read before the server started and after both sides ended.
"$bin" --store "$work/store" export --counters --where "tool=linkperf-verbs,platform=soft-roce" > "$work/counters.jsonl"
python3 tests/lab/counters_match.py "$work/counters-before.txt" "$work/counters-after.txt" "$work/counters.jsonl" 2 | sed 's/^/lab-verbs: /'

# 3. `linkperf run` with the native runner beside perftest (suites/soft-roce-verbs.toml): the
#    client's whole log, device facts included, is kept and imported; compare lines the tools up.
cp suites/soft-roce-verbs.toml "$work/"
run_lab suite "$bin --store $work/suite-store run $work/soft-roce-verbs.toml --runs-dir $work/runs --no-report"
grep -q "3 of 3 runs passed" "$work/suite.log" || { tail -30 "$work/suite.log"; echo "lab-verbs: the suite failed" >&2; exit 1; }
"$bin" --store "$work/suite-store" export --where tool=linkperf-verbs > "$work/suite-rows.jsonl"
"$bin" --store "$work/suite-store" compare --by tool --baseline perftest --format json \
  --where test=ib_write_bw,role=client > "$work/compare.json"
python3 - "$work/suite-rows.jsonl" "$work/compare.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
tests = sorted({r["test"] for r in rows})
assert tests == ["ib_atomic_lat", "ib_read_bw", "ib_send_bw", "ib_send_lat", "ib_write_bw", "ib_write_lat"], tests
assert all(r["resolved"]["link_speed_gbps"]["from"] == "device_facts" for r in rows), rows[0]["resolved"]
assert all(r["extra"]["verified"] for r in rows if r["row_kind"] is None)
cmp = json.load(open(sys.argv[2]))
row = next(r for r in cmp["rows"] if r["key"]["msg_size_bytes"] == 65536)
cells = {c["group"]: c for c in row["cells"]}
assert cells["perftest"]["stats"] and cells["linkperf-verbs"]["stats"], row
assert cells["linkperf-verbs"]["ratio"] is not None, row
print(f"lab-verbs: linkperf run stored {len(rows)} native rows with device facts; compare --by tool pairs them with perftest")
PY

# 4. A guest without any RDMA device.
LAB_RDMA=none run_lab nodev "$bin devices 2> $work/nodev.err; echo nodev=\$?"
tr -d '\r' < "$work/nodev.log" | grep -qx "nodev=2" && grep -q "no RDMA devices found" "$work/nodev.err" ||
  { cat "$work/nodev.log" "$work/nodev.err"; echo "lab-verbs: devices without RDMA" >&2; exit 1; }
echo "lab-verbs: ok"
