#!/usr/bin/env python
"""The store's write and read paths in CPU time: insert, get, update, invalidate, delete.

One SQLite store (or, with ``--postgres URL``, one PostgreSQL tenant) of ``--size`` memories with
random unit vectors; then ``--ops`` calls of each single-row path through ``store.apply`` /
``store.get``. CPU time of this process (``time.process_time``) is the figure, so a busy machine
moves it less than wall time (PostgreSQL's own CPU is not in it: read its wall time beside).

For before/after comparisons run it against two source trees in turn, e.g.::

    PYTHONPATH=/path/to/old/src python benchmarks/bench_store_writes.py --out old.json
    PYTHONPATH=src python benchmarks/bench_store_writes.py --out new.json

Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import memlane
from memlane.core.models import MemoryRecord
from memlane.store import ChangeSet
from memlane.store.base import Delete, Invalidate, Update

DIMS = 384


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIMS)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def records(rng: np.random.Generator, n: int, users: int) -> list[MemoryRecord]:
    now = "2026-01-01T00:00:00+00:00"
    vectors = unit_vectors(rng, n)
    return [MemoryRecord(id=f"m{i}", text=f"memory {i} about topic {i % 97} and place {i % 13}", hash=f"h{i}",
                         created_at=now, updated_at=now, user_id=f"user-{i % users}", metadata={"n": i % 7},
                         source_message_ids=[f"msg{i}"], vector=vectors[i]) for i in range(n)]


def timed(calls) -> dict:
    cpu, wall = [], []
    for call in calls:
        c, w = time.process_time(), time.perf_counter()
        call()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return {"calls": len(cpu), "cpu_ms_mean": round(1000 * float(np.mean(cpu)), 4),
            "cpu_ms_p50": round(1000 * float(np.median(cpu)), 4), "wall_ms_p50": round(1000 * float(np.median(wall)), 4)}


def open_store(args: argparse.Namespace, directory: Path):
    if args.postgres:
        from memlane.store.postgres import PostgresDatabase, PostgresStore

        return PostgresStore(PostgresDatabase(args.postgres), f"bench-writes-{random.randrange(10**9)}",
                             owns_database=True)
    from memlane.store.sqlite import SQLiteStore

    return SQLiteStore(directory / "bench.db")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=20_000)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--ops", type=int, default=1000, help="calls of each single-row path")
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: a temporary SQLite file)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = records(rng, args.size, args.users)
    new_vectors = unit_vectors(rng, args.ops)
    picks = random.Random(args.seed).sample(range(args.size), 4 * args.ops)
    get_ids, update_ids, invalid_ids, delete_ids = (picks[k * args.ops:(k + 1) * args.ops] for k in range(4))
    at = "2026-02-01T00:00:00+00:00"
    with tempfile.TemporaryDirectory(prefix="memlane-bench-writes-") as tmp:
        store = open_store(args, Path(tmp))
        try:
            store.bind_embedder("bench/random", DIMS)
            batches = [rows[i:i + args.batch_size] for i in range(0, len(rows), args.batch_size)]
            insert = timed(lambda b=b: store.apply(ChangeSet(inserts=b)) for b in batches)
            insert["memories_per_cpu_s"] = round(args.size / (insert["cpu_ms_mean"] * insert["calls"] / 1000), 1)
            result = {
                "benchmark": "bench_store_writes", "memlane_src": str(Path(memlane.__file__).parent),
                "backend": "postgres" if args.postgres else "sqlite", "command": " ".join(sys.argv),
                "size": args.size, "insert": insert,
                "get": timed(lambda i=i: store.get(f"m{i}") for i in get_ids),
                "update_text_vector_metadata": timed(
                    lambda k=k, i=i: store.apply(ChangeSet(updates=[Update(
                        id=f"m{i}", updated_at=at, text=f"changed memory {i}", hash=f"c{i}", vector=new_vectors[k],
                        metadata={"n": -1}, source_message_ids=[f"u{i}"])])) for k, i in enumerate(update_ids)),
                "invalidate": timed(lambda i=i: store.apply(ChangeSet(invalidations=[Invalidate(id=f"m{i}",
                                                                                                reason="bench")]))
                                    for i in invalid_ids),
                "delete": timed(lambda i=i: store.apply(ChangeSet(deletes=[Delete(id=f"m{i}")])) for i in delete_ids),
            }
        finally:
            store.close()
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
