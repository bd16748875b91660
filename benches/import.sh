#!/usr/bin/env bash
# Import benchmark: parse throughput (MB/s of transcript text), peak memory, and CPU time in user
# space and in the kernel (medians).
# Builds a corpus of copies of the seed transcripts (SIZE_MB, default 64) and of the iperf /
# qperf loopback recordings, then times
#   1. `linkperf import --dry-run -j 1` (parse only, one thread) over the perftest corpus, and
#      with one thread per core (-j 0): the scaling with cores,
#   2. one large file (the corpus concatenated) and one of BIG_MB (default 1000) MB, read in
#      pieces on every core: memory follows the largest command block, not the file,
#   3. the iperf / qperf corpus on one thread and on every core, and
#   4. a full import into a fresh Parquet store (all cores).
# REPEAT=N runs each case N times and prints the median; BASELINE=/path/to/linkperf runs each
# case with that binary too, in turns with this build (before/after on a machine whose speed
# drifts).
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${SIZE_MB:-64}"
source benches/build.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
seeds=(fixtures/seeds/000_8f7f2e13e9bf4848.txt fixtures/seeds/001_76f1dcbf5cbef6cc.txt
       fixtures/seeds/002_42248bd0d2963916.txt fixtures/seeds/003_7da62a485175b0b8.txt)
total=0 i=0
while [ "$total" -lt $((size_mb * 1000000)) ]; do
  for s in "${seeds[@]}"; do
    cp "$s" "$work/corpus/$(printf '%06d' $i)-$(basename "$s")"
    total=$((total + $(stat -c %s "$s"))); i=$((i + 1))
  done
done
cat "$work"/corpus/* > "$work/one-big-file.txt"
big_mb="${BIG_MB:-1000}"
big_total=0
while [ "$big_total" -lt $((big_mb * 1000000)) ]; do
  cat "$work/one-big-file.txt" >> "$work/huge-file.txt"
  big_total=$((big_total + total))
done
mkdir -p "$work/tcp"
mapfile -t tcp < <(ls fixtures/iperf2/*.txt fixtures/iperf3/*.txt fixtures/qperf/loopback/*.txt)
tcp_total=0 j=0
while [ "$tcp_total" -lt $((size_mb * 1000000 / 4)) ]; do
  for s in "${tcp[@]}"; do
    cp "$s" "$work/tcp/$(printf '%06d' $j)-$(basename "$s")"
    tcp_total=$((tcp_total + $(stat -c %s "$s"))); j=$((j + 1))
  done
done

# The corpora were just written: their pages go to disk now, not during the timed runs (on two
# cores the kernel's writeback took CPU from the runs on every core, never from one thread's).
sync
measure() { # label, bytes, command... (the command's first word is the linkperf binary)
  local label=$1 bytes=$2; shift 2
  python3 - "$label" "$bytes" "${BASELINE:-}" "${REPEAT:-1}" "$@" <<'PY'
import os, resource, shutil, statistics, subprocess, sys, time
label, nbytes, baseline, repeat, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:]
# With BASELINE, the other binary runs the same command, the two taking turns: this machine's
# speed drifts from minute to minute, and turns share the drift.
binaries = [(cmd[0], "")] + ([(baseline, " (baseline)")] if baseline else [])
times = {b: [] for b, _ in binaries}
# CPU time in user space and in the kernel (the kernel's is mostly opening and reading files;
# for a large file, also the sweep rule's rows spilled to a temporary file), per run.
user = {b: [] for b, _ in binaries}
kernel = {b: [] for b, _ in binaries}
rss = {b: 0.0 for b, _ in binaries}
# One untimed run of each first: the timed runs then find the same warm page cache and
# allocator state, whichever case ran before.
for b, _ in binaries:
    if "--store" in cmd:
        shutil.rmtree(cmd[cmd.index("--store") + 1], ignore_errors=True)
    subprocess.run([b] + cmd[1:], stdout=subprocess.DEVNULL, check=True)
for _ in range(repeat):
    for b, _ in binaries:
        if "--store" in cmd:  # every store import starts from an empty store
            shutil.rmtree(cmd[cmd.index("--store") + 1], ignore_errors=True)
        t = time.perf_counter()
        child = subprocess.Popen([b] + cmd[1:], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        times[b].append(time.perf_counter() - t)
        assert status == 0, f"{b} exited with status {status}"
        user[b].append(usage.ru_utime)
        kernel[b].append(usage.ru_stime)
        rss[b] = max(rss[b], usage.ru_maxrss / 1024)
for b, tag in binaries:
    dt = statistics.median(times[b])
    cpu = f"CPU user {statistics.median(user[b]):5.2f} s, kernel {statistics.median(kernel[b]):5.2f} s"
    print(f"{label + tag:<45} {nbytes/1e6:8.1f} MB in {dt:6.2f} s = {nbytes/1e6/dt:7.1f} MB/s   peak RSS {rss[b]:7.1f} MiB   {cpu}")
    if not tag:  # this build's median, for the scaling lines at the end
        with open(os.environ["MEDIANS"], "a") as f:
            f.write(f"{label}\t{dt}\n")
PY
}
# Scaling with cores: this build's median on one thread over its median on all of them.
scaling() { # label, one-thread case, all-cores case
  python3 - "$@" <<'PY'
import os, sys
medians = dict(l.rstrip("\n").split("\t") for l in open(os.environ["MEDIANS"]))
label, one, every = sys.argv[1:]
print(f"scaling, {label:<40} {float(medians[one]) / float(medians[every]):5.2f}x on {os.cpu_count()} cores")
PY
}
export MEDIANS="$work/medians.tsv"
cores=$(nproc)
echo "linkperf import benchmark ($i perftest files, $j iperf/qperf files, $cores cores, $profile profile)"
measure "parse corpus, 1 thread" "$total" "$bin" import --dry-run -j 1 "$work/corpus"
measure "parse corpus, $cores threads" "$total" "$bin" import --dry-run -j 0 "$work/corpus"
measure "parse one $size_mb MB file, 1 thread" "$total" "$bin" import --dry-run -j 1 "$work/one-big-file.txt"
measure "parse one $size_mb MB file, $cores threads" "$total" "$bin" import --dry-run "$work/one-big-file.txt"
measure "parse one $((big_total / 1000000)) MB file" "$big_total" "$bin" import --dry-run "$work/huge-file.txt"
rm -f "$work/huge-file.txt"
sync
measure "parse iperf/qperf corpus, 1 thread" "$tcp_total" "$bin" import --dry-run -j 1 "$work/tcp"
measure "parse iperf/qperf corpus, $cores threads" "$tcp_total" "$bin" import --dry-run -j 0 "$work/tcp"
measure "import corpus into a Parquet store" "$total" "$bin" --store "$work/store" import "$work/corpus"
scaling "many perftest files" "parse corpus, 1 thread" "parse corpus, $cores threads"
scaling "one $size_mb MB file" "parse one $size_mb MB file, 1 thread" "parse one $size_mb MB file, $cores threads"
scaling "iperf/qperf files" "parse iperf/qperf corpus, 1 thread" "parse iperf/qperf corpus, $cores threads"
