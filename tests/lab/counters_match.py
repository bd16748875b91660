"""Checks that stored counter changes (`linkperf export --counters`, JSON Lines) add up to what
a test script read itself: `grep -r . DIR…` of rxe0's sysfs counters before and after
everything ran. Usage: counters_match.py BEFORE AFTER EXPORT RUNS, where RUNS is how many runs
must carry counters."""
import collections, json, sys

def read(path):
    out = {}
    for line in open(path):
        p, value = line.rstrip("\n").rsplit(":", 1)
        parts = p.split("/")  # /sys/class/infiniband/DEV/ports/N/GROUP/NAME
        out[(parts[7], f"{parts[4]}/{parts[6]}", parts[8])] = int(value)
    return out

before, after = read(sys.argv[1]), read(sys.argv[2])
rows = [json.loads(l) for l in open(sys.argv[3])]
want_runs = int(sys.argv[4])
script = {k: after[k] - before[k] for k in after if k in before and after[k] != before[k]}
stored = collections.Counter()
for r in rows:
    if r["group"] in ("counters", "hw_counters"):
        assert r["note"] is None, r
        stored[(r["group"], r["object"], r["name"])] += r["delta"]
assert script, "rxe0's counters did not change"
assert dict(stored) == script, f"stored {dict(stored)}\nscript {script}"
runs = {r["run_id"] for r in rows}
assert len(runs) == want_runs, f"{len(runs)} runs carry counters, expected {want_runs}"
sent = sum(v for (g, _, n), v in script.items() if n == "sent_pkts")
print(f"counters: {len(script)} rxe0 counters changed (sent_pkts +{sent}); "
      f"the {len(runs)} runs stored the same deltas")
