#!/usr/bin/env python
"""Exact scan of a scope or filtered HNSW: where the PostgreSQL store should switch (measured).

The store scores a scope exactly when it holds at most ``exact_search_limit`` rows (default
10,000) and otherwise asks the HNSW index with pgvector's iterative scans. This benchmark
fills one table with ``--size`` clustered vectors: scopes (users) of the sizes in ``--scopes``
plus filler users, every scope's rows spread over the whole heap as a server writes them.
For each scope size it times both paths on the same queries (alternating, embedding excluded,
``store.search`` with the limit forced to "always exact" or "always index") and the index
path's recall@10 against the exact one.

    python benchmarks/bench_pg_crossover.py --size 300000 --scopes 1000,3000,10000,30000,100000
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import datetime, timezone

import numpy as np

from bench_postgres import DIMS, NOW, centres_and_spread, clustered, set_shared_buffers, start_server, stats_ms
from common import write_report
from memlane.core import scope
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord
from memlane.store import ChangeSet
from memlane.store.postgres import PostgresDatabase, PostgresStore


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=300_000)
    parser.add_argument("--scopes", default="1000,3000,10000,30000,100000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--candidates", default="10,40",
                        help="ann_candidates of the index path (rows asked of the index before keeping the best 10)")
    parser.add_argument("--shared-buffers", default="2GB", help="of the bundled server (the table should fit)")
    parser.add_argument("--maintenance-work-mem", default="2GB")
    args = parser.parse_args()
    server, dsn = start_server(None)
    set_shared_buffers(server, dsn, args.shared_buffers)
    database = PostgresDatabase(dsn, schema_name="crossover", max_size=2)
    exact = PostgresStore(database, "bench", exact_search_limit=10**9)
    paths = {"exact": exact} | {f"index_{c}": PostgresStore(database, "bench", exact_search_limit=0,
                                                           ann_candidates=int(c))
                                for c in args.candidates.split(",")}
    exact.bind_embedder("synthetic", DIMS)
    rng = np.random.default_rng(7)
    centres, spread = centres_and_spread(rng, 2000)
    sizes = [int(v) for v in args.scopes.split(",")]
    if sum(sizes) > args.size:
        raise SystemExit("--scopes add up to more than --size")
    # each row's user: the scope users in proportion to their size, the rest filler users of ~100 rows
    owners = np.concatenate([np.full(n, i) for i, n in enumerate(sizes)] + [
        len(sizes) + np.arange(args.size - sum(sizes)) % max(1, (args.size - sum(sizes)) // 100)])
    rng.shuffle(owners)
    names = [f"scope{n}" if i < len(sizes) else f"filler{i}" for i, n in
             enumerate(sizes + [0] * (int(owners.max()) + 1 - len(sizes)))]
    database.prepare_bulk_load(DIMS)
    for start in range(0, args.size, 5000):
        vectors = clustered(rng, min(5000, args.size - start), centres, spread)
        exact.apply(ChangeSet(inserts=[
            MemoryRecord(id=new_id(), text=f"memory {start + i}", hash="h", created_at=NOW, updated_at=NOW,
                         user_id=names[owners[start + i]], vector=v) for i, v in enumerate(vectors)]))
    t0 = time.perf_counter()
    database.finish_bulk_load(DIMS, maintenance_work_mem=args.maintenance_work_mem)
    result: dict = {"date": datetime.now(timezone.utc).date().isoformat(), "size": args.size,
                    "shared_buffers": args.shared_buffers, "index_build_s": round(time.perf_counter() - t0, 1),
                    "ef_search": database.ef_search, "max_scan_tuples": database.max_scan_tuples,
                    "loadavg_start": os.getloadavg(), "scopes": []}
    with database.pool.connection() as con:
        con.execute("SELECT count(*) FROM memlane_memories WHERE vector IS NOT NULL")  # warm the heap
    queries = clustered(np.random.default_rng(11), args.queries, centres, spread)
    for n in sizes:
        where = scope.scoped_filter({"user_id": f"scope{n}"}, None)
        for q in queries[:10]:  # warm the index and the scope's pages
            for store in paths.values():
                store.search(q, where, 10, None)
        times: dict[str, list[float]] = {name: [] for name in paths}
        recalls: dict[str, list[float]] = {name: [] for name in paths if name != "exact"}
        order = list(paths.items())
        for i, q in enumerate(queries):
            found = {}
            for name, store in order[i % len(order):] + order[:i % len(order)]:  # rotate who goes first
                t0 = time.perf_counter()
                found[name] = [record.id for record, _ in store.search(q, where, 10, None)]
                times[name].append(time.perf_counter() - t0)
            for name in recalls:
                recalls[name].append(len(set(found[name]) & set(found["exact"])) / 10)
        with database.pool.connection() as con:  # the plan PostgreSQL picks for the index path's query
            plan = "\n".join(r[0] for r in con.execute(
                f"EXPLAIN SELECT id FROM memlane_memories m WHERE m.tenant = 'bench' AND m.dims = {DIMS}"
                f" AND m.user_id = %s ORDER BY (m.vector::vector({DIMS})) <=> %s::vector({DIMS}) LIMIT 10",
                (f"scope{n}", queries[0])))
        row = {"scope_rows": n, **{name: stats_ms(values) for name, values in times.items()},
               **{f"{name}_recall_at_10": round(float(np.mean(values)), 4) for name, values in recalls.items()},
               "index_path_plan_uses_hnsw": "hnsw" in plan}
        result["scopes"].append(row)
        print(json.dumps(row), flush=True)
    result["loadavg_end"] = os.getloadavg()
    for store in paths.values():
        store.close()
    database.close()
    server.cleanup()
    write_report(result, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
