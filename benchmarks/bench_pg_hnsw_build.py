#!/usr/bin/env python
"""What ``hnsw_ef_construction`` costs on writes (PostgreSQL store), as an A/B in one run.

For each value of ``--ef-construction``, a schema of its own gets the same ``--size`` clustered
vectors by bulk load (no index), then its HNSW index is built (timed). Then ``--inserts`` more
memories go into every schema through ``store.apply`` in 500-row batches, the schemas taking
turns batch by batch, so that machine load falls on all of them alike. Recall is measured by
``bench_postgres.py``; this script measures the price.

    python benchmarks/bench_pg_hnsw_build.py --size 100000 --ef-construction 64,128
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import datetime, timezone

import numpy as np

from bench_postgres import DIMS, centres_and_spread, clustered, records, start_server
from common import write_report
from memlane.store import ChangeSet
from memlane.store.postgres import PostgresDatabase, PostgresStore


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--inserts", type=int, default=3000)
    parser.add_argument("--ef-construction", default="64,128")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--maintenance-work-mem", default="2GB")
    parser.add_argument("--dsn")
    args = parser.parse_args()
    server, dsn = start_server(args.dsn)
    rng = np.random.default_rng(7)
    centres, spread = centres_and_spread(rng, 2000)
    base = clustered(rng, args.size, centres, spread)
    extra = clustered(rng, args.inserts, centres, spread)
    values = [int(v) for v in args.ef_construction.split(",")]
    stores, result = {}, {"date": datetime.now(timezone.utc).date().isoformat(), "size": args.size,
                          "inserts": args.inserts, "loadavg_start": os.getloadavg(), "by_ef_construction": {}}
    for ef in values:
        database = PostgresDatabase(dsn, schema_name=f"bench_build_{ef}_{os.getpid()}", max_size=2,
                                    hnsw_ef_construction=ef)
        store = PostgresStore(database, "bench", owns_database=True)
        store.bind_embedder("synthetic", DIMS)
        database.prepare_bulk_load(DIMS)
        for start in range(0, args.size, 5000):
            store.apply(ChangeSet(inserts=records(base[start:start + 5000], args.users, start)))
        t0 = time.perf_counter()
        database.finish_bulk_load(DIMS, maintenance_work_mem=args.maintenance_work_mem)
        result["by_ef_construction"][ef] = {"index_build_s": round(time.perf_counter() - t0, 1)}
        stores[ef] = store
        print(json.dumps({ef: result["by_ef_construction"][ef]}), flush=True)
    spent = dict.fromkeys(values, 0.0)
    for number, start in enumerate(range(0, args.inserts, 500)):
        for ef in (values if number % 2 else values[::-1]):
            batch = records(extra[start:start + 500], args.users, args.size + start)
            t0 = time.perf_counter()
            stores[ef].apply(ChangeSet(inserts=batch))
            spent[ef] += time.perf_counter() - t0
    for ef, store in stores.items():
        result["by_ef_construction"][ef]["with_index_per_s"] = round(args.inserts / spent[ef])
        with store.db.pool.connection() as con:
            con.execute(f'DROP SCHEMA "{store.db.schema}" CASCADE')
        store.close()
    result["loadavg_end"] = os.getloadavg()
    if server is not None:
        server.cleanup()
    write_report(result, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
