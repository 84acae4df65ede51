#!/usr/bin/env python
"""Where a memory's vector lives, and what a scoped exact search pays for it (PostgreSQL).

pgvector's types default to EXTERNAL storage: once a row passes ~2 kB the vector moves to the
TOAST table. A 384-dim vector is 1.5 kB, so a memory of a few sentences passes; a 768-dim one
is 3 kB, so every row does. memlane's schema sets the column to MAIN (postgres_schema,
migration "memory vectors stay in the row"). This benchmark fills two copies of one table,
one per storage, with the same rows (``--users`` users, rows spread over the heap as a
server writes them) and times the scoped exact query the store runs
(``ORDER BY vector <=> q LIMIT 10`` over one user's rows), cold (first touch of a user's rows
since the server started) and warm, the two tables alternating query by query.

    python benchmarks/bench_pg_storage.py --dims 768 --rows 100000 --users 100
"""

from __future__ import annotations

import argparse
import os
import time
from datetime import datetime, timezone

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from bench_postgres import start_server
from common import unit_vectors, write_report

STORAGES = ("external", "main")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dims", type=int, default=768)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--text-chars", type=int, default=120, help="length of each memory's text")
    parser.add_argument("--dsn")
    args = parser.parse_args()
    server, dsn = start_server(args.dsn)
    rng = np.random.default_rng(3)
    con = psycopg.connect(dsn, autocommit=True)
    con.execute("CREATE EXTENSION IF NOT EXISTS vector")
    register_vector(con)
    schema = f"bench_storage_{os.getpid()}"
    con.execute(f'CREATE SCHEMA "{schema}"')
    con.execute(f'SET search_path TO "{schema}", public')
    loads = {}
    for storage in STORAGES:
        con.execute(f"CREATE TABLE m_{storage} (seq bigint GENERATED ALWAYS AS IDENTITY, user_id text NOT NULL,"
                    f" text text NOT NULL, vector vector NOT NULL)")
        con.execute(f"ALTER TABLE m_{storage} ALTER COLUMN vector SET STORAGE {storage.upper()}")
    rng_text = np.random.default_rng(5)
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyz     "))
    for start in range(0, args.rows, 5000):
        n = min(5000, args.rows - start)
        vectors = unit_vectors(rng, n, args.dims)
        texts = ["".join(rng_text.choice(alphabet, args.text_chars)) for _ in range(n)]
        for storage in STORAGES:
            t0 = time.perf_counter()
            with con.cursor().copy(f"COPY m_{storage} (user_id, text, vector) FROM STDIN WITH (FORMAT BINARY)") as copy:
                copy.set_types(["text", "text", "vector"])
                for i in range(n):
                    copy.write_row((f"user{(start + i) % args.users}", texts[i], vectors[i]))
            loads[storage] = loads.get(storage, 0.0) + time.perf_counter() - t0
    sizes = {}
    for storage in STORAGES:
        con.execute(f"CREATE INDEX m_{storage}_user ON m_{storage} (user_id)")
        con.execute(f"ANALYZE m_{storage}")
        sizes[storage] = con.execute(
            f"SELECT pg_size_pretty(pg_relation_size('m_{storage}')),"
            f" pg_size_pretty(coalesce(pg_relation_size(reltoastrelid), 0)) FROM pg_class"
            f" WHERE oid = 'm_{storage}'::regclass").fetchone()
    queries = unit_vectors(rng, args.queries, args.dims)
    samples: dict[str, dict[str, list[float]]] = {s: {"cold": [], "warm": []} for s in STORAGES}
    for phase in ("cold", "warm"):
        for i, q in enumerate(queries):
            for storage in (STORAGES if i % 2 else STORAGES[::-1]):
                t0 = time.perf_counter()
                rows = con.execute(f"SELECT seq, text, 1 - (vector <=> %s) FROM m_{storage} WHERE user_id = %s"
                                   " ORDER BY vector <=> %s, seq LIMIT 10", (q, f"user{i % args.users}", q)).fetchall()
                samples[storage][phase].append(time.perf_counter() - t0)
                assert len(rows) == 10

    def stats(values: list[float]) -> dict:
        a = np.asarray(values) * 1000
        return {"p50_ms": round(float(np.percentile(a, 50)), 2), "p95_ms": round(float(np.percentile(a, 95)), 2)}

    result = {"date": datetime.now(timezone.utc).date().isoformat(), "dims": args.dims, "rows": args.rows,
              "rows_per_user": args.rows // args.users, "text_chars": args.text_chars,
              "server": con.execute("SHOW server_version").fetchone()[0],
              "shared_buffers": con.execute("SHOW shared_buffers").fetchone()[0], "loadavg": os.getloadavg(),
              **{storage: {"heap": sizes[storage][0], "toast": sizes[storage][1],
                           "copy_rows_per_s": round(args.rows / loads[storage]),
                           "scoped_exact_cold": stats(samples[storage]["cold"][:args.users]),
                           "scoped_exact_warm": stats(samples[storage]["warm"])} for storage in STORAGES}}
    result["warm_p95_external_over_main"] = round(
        result["external"]["scoped_exact_warm"]["p95_ms"] / result["main"]["scoped_exact_warm"]["p95_ms"], 2)
    con.execute(f'DROP SCHEMA "{schema}" CASCADE')
    con.close()
    if server is not None:
        server.cleanup()
    write_report(result, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
