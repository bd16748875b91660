"""Reads a linkperf store with the real DuckDB, using the SQL the README shows, and checks that
it gives exactly the rows and values `linkperf export` gives.

    python3 tests/duckdb/check_store.py STORE EXPORT.jsonl
"""
import json
import math
import sys

import duckdb

store, export_path = sys.argv[1], sys.argv[2]

# The README's query (section "Store layout"): points joined to their runs by run_seq.
SQL = f"""
SELECT r.run_id, r.source, p.line, r.tool, r.test, r.role, r.host, r.device, r.mtu,
       r.link_layer, r.connection_type, r.qps, p.msg_size_bytes, p.iterations,
       p.bw_peak_gbps, p.bw_avg_gbps, p.msg_rate_mpps, p.lat_min_us, p.lat_max_us,
       p.lat_typical_us, p.lat_avg_us, p.lat_stdev_us, p.lat_p99_us, p.lat_p999_us,
       p.raw_unit, p.raw_text, r.line AS run_line, r.status, r.command, r.labels,
       p.tps, p.transfer_bytes, p.retransmits, p.jitter_ms, p.lost, p.total, p.loss_pct,
       r.month, r.batch
FROM read_parquet('{store}/data/*/*/points-*.parquet', hive_partitioning = true) AS p
JOIN read_parquet('{store}/data/*/*/runs-*.parquet', hive_partitioning = true,
                  union_by_name = true) AS r
  USING (run_seq)
"""

con = duckdb.connect()
cur = con.execute(SQL)
names = [d[0] for d in cur.description]
compared_names = [n for n in names if n not in ("month", "batch")]


def canon(rec):
    """One row as comparable text (NaN equals NaN; ints and floats keep their types)."""
    return json.dumps([rec[k] for k in compared_names], sort_keys=True, default=str)


got = {}
months = set()
for row in cur.fetchall():
    rec = dict(zip(names, row))
    rec["labels"] = json.loads(rec["labels"])
    months.add(rec["month"])
    # One log line can hold several measurements (a qperf line, an iperf3 JSON summary), so
    # rows are compared as the multiset of each (run, line).
    got.setdefault((rec["run_id"], rec["line"]), []).append(canon(rec))

with open(export_path) as f:
    exported = [json.loads(line) for line in f if line.strip()]
assert exported, "empty export"
want = {}
for e in exported:
    want.setdefault((e["run_id"], e["line"]), []).append(canon(e))
n_got = sum(len(v) for v in got.values())
assert len(exported) == n_got, f"export has {len(exported)} rows, DuckDB {n_got}"
for key, rows in want.items():
    assert sorted(rows) == sorted(got.get(key, [])), (
        f"{key}: export {sorted(rows)}\nDuckDB {sorted(got.get(key, []))}"
    )
compared = len(exported) * len(compared_names)
assert all(len(m) == 7 and m[4] == "-" for m in months), months

# A label column pushes down in DuckDB too: one build by its label column.
builds = con.execute(
    f"""SELECT "label:build", count(*) FROM
        read_parquet('{store}/data/*/*/runs-*.parquet', union_by_name = true)
        GROUP BY 1 ORDER BY 1"""
).fetchall()
assert {b for b, _ in builds} == {"1", "2", "3", None}, builds
print(f"duckdb {duckdb.__version__}: {n_got} rows, {compared} values equal to linkperf export; "
      f"runs by build: {builds}")
