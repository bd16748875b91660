#!/usr/bin/env bash
# Adversarial-input benchmark: shapes that made the parsers stall or grow, built by stretching
# real outputs from fixtures/ (and 10 MB of random bytes). Prints, per shape, the time and peak
# memory of `linkperf import --dry-run` and whether it meets the bounds of issue #14: under 2 s
# and under 10x the input size in memory (plus the process's own ~15 MiB). Exit status 1 when a
# shape misses a bound; 2 is a bad run (linkperf exited with anything but 0 or 2).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/build.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work" <<'PY'
import json, os, random, sys
work = sys.argv[1]
def w(name, text, mode="w"):
    with open(os.path.join(work, name), mode) as f:
        f.write(text)
# A real perftest --out_json file (Soft-RoCE lab; perftest 4.5 writes it without quotes, as
# perftest 6.20+ writes strict JSON), with 100,000 extra keys in each section.
base, section = {}, None
for l in open("fixtures/perftest/rxe-lab/read_bw-2qp-out_json.json"):
    t = l.strip().rstrip(",")
    if t.endswith("{") and ":" in t:
        section = t.split(":")[0].strip(); base[section] = {}
    elif ":" in t and section:
        k, v = t.split(":", 1)
        base[section][k.strip()] = v.strip().strip('"')
many = dict(base); many["test_info"] = dict(base["test_info"])
many["test_info"].update({f"extra_key_{i}": f"value {i}" for i in range(100_000)})
w("json-100k-test-info-keys.json", json.dumps(many, indent=1))
many = dict(base); many["results"] = dict(base["results"])
many["results"].update({f"result_{i}": i * 1.5 for i in range(100_000)})
w("json-100k-result-keys.json", json.dumps(many, indent=1))
# The first device of a real ibv_devinfo listing, repeated as 100,000 devices.
dev = open("fixtures/devinfo/devinfo-ibv_devinfo-efa-unspecified.txt").read().splitlines()
start = next(i for i, l in enumerate(dev) if l.startswith("hca_id:"))
block = dev[start:start + 4]
w("devinfo-100k-devices.txt", "".join(
    "\n".join([f"hca_id:\tdev{i}"] + block[1:]) + "\n" for i in range(100_000)))
# A real perftest table: its banner and header, then its first row 1,000,000 times.
seed = open("fixtures/seeds/000_8f7f2e13e9bf4848.txt").read().splitlines()
h = next(i for i, l in enumerate(seed) if l.strip().startswith("#bytes"))
row = seed[h + 1]
w("table-1m-rows.txt", "\n".join(seed[:h + 1]) + "\n" + (row + "\n") * 1_000_000)
# The same row repeated on one 10 MB line.
w("single-line-10mb.txt", (row.strip() + " ") * (10_000_000 // (len(row) + 1)) + "\n")
# 10 MB of random bytes.
rnd = random.Random(1)
w("random-10mb.bin", bytes(rnd.getrandbits(8) for _ in range(10_000_000)), "wb")
PY
status=0
echo "linkperf adversarial inputs ($profile profile; bounds: < 2 s, < 10x size + 15 MiB)"
for f in "$work"/*; do
  python3 - "$bin" "$f" <<'PY' || status=$?
import os, resource, subprocess, sys, time
bin, path = sys.argv[1], sys.argv[2]
size = os.path.getsize(path)
t = time.perf_counter()
try:
    p = subprocess.run([bin, "--store", path + ".store", "import", "--dry-run", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
except subprocess.TimeoutExpired:
    print(f"{os.path.basename(path):<32} {size/1e6:6.1f} MB  over 60 s: OVER")
    sys.exit(1)
dt = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
ok = dt < 2.0 and rss < 10 * size + 15 * 2**20
summary = p.stdout.decode(errors="replace").splitlines()[:1]
print(f"{os.path.basename(path):<32} {size/1e6:6.1f} MB {dt:6.2f} s  peak RSS {rss/2**20:7.1f} MiB "
      f"({rss/size:5.1f}x)  exit {p.returncode}  {'ok' if ok else 'OVER'}  {summary[0] if summary else ''}")
if p.returncode not in (0, 2):
    sys.exit(2)
sys.exit(0 if ok else 1)
PY
done
exit $status
