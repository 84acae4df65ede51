#!/usr/bin/env python
"""What the dashboard's overview costs: ``store.scopes(column, limit)`` (``GET /scopes``) on an embedded
SQLite store of ``--size`` memories and as many messages spread over ``--users`` users (a tenth of
the memories also carry an agent and a run), beside opening one user's newest 100 memories
(``store.list``, the memories page) in the same run. Storage only: random unit vectors, no model.

Also, in the same run, the statement the planner picks without ``scan_memories`` (it reads every
memory row through the scope index to see ``valid_to``): the ratio of the two is what the covering
index scan saves.

Prints one JSON object (also written to ``--out``): per size, p50/p95/p99 of each call in ms and the
ratios.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from common import summary, unit_vectors, write_report  # noqa: E402
from memlane.core import scope, timeutil  # noqa: E402
from memlane.core.ids import new_id  # noqa: E402
from memlane.core.models import text_hash  # noqa: E402
from memlane.core.models import MemoryRecord, MessageRecord  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402
from memlane.store.base import Invalidate  # noqa: E402
from memlane.store.scope_counts import scope_counts_sql  # noqa: E402
from memlane.store.sqlite import SQLiteStore  # noqa: E402


def fill(store: SQLiteStore, size: int, users: list[str], rng: np.random.Generator, batch: int = 5000) -> None:
    now = timeutil.now_iso()
    for start in range(0, size, batch):
        count = min(batch, size - start)
        vectors = unit_vectors(rng, count)
        owners = rng.integers(0, len(users), size=count)
        records, messages = [], []
        for j in range(count):
            extra = {"agent_id": f"agent-{j % 20}", "run_id": f"run-{(start + j) % 500}"} if j % 10 == 0 else {}
            text = f"fact {start + j}"
            records.append(MemoryRecord(id=new_id(), text=text, hash=text_hash(text), created_at=now, updated_at=now,
                                        user_id=users[owners[j]], role="user", vector=vectors[j], **extra))
            messages.append(MessageRecord(id=new_id(), role="user", content=text, created_at=now,
                                          user_id=users[owners[j]], **extra))
        invalid = [Invalidate(id=r.id, reason="benchmark") for r in records[::7]]
        store.apply(ChangeSet(inserts=records, messages=messages))
        store.apply(ChangeSet(invalidations=invalid))


def timed(call, repeat: int) -> list[float]:
    call()  # warm the page cache
    out = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out


def run(size: int, user_count: int, repeat: int) -> dict:
    rng = np.random.default_rng(7)
    users = [f"user-{i:05d}" for i in range(user_count)]
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.db")
        store.bind_embedder("bench", 384)
        fill(store, size, users, rng)
        someone = scope.scoped_filter({"user_id": random.Random(1).choice(users)}, None)
        scopes = timed(lambda: store.scopes("user_id", 1000), repeat)
        row_lookup_sql = scope_counts_sql("user_id", memories="memories", messages="messages", now=SQLiteStore.NOW)
        row_lookup = timed(lambda: store._con.execute(row_lookup_sql, (1000,)).fetchall(), repeat)
        listing = timed(lambda: store.list(someone, 100), repeat)
        rows = store.scopes("user_id", 1000)
        store.close()
    assert len(rows) == min(user_count, 1000) and sum(r.memories for r in rows) <= size
    return {"memories": size, "messages": size, "users": user_count,
            "scopes_users_ms": summary(scopes), "scopes_by_row_lookup_ms": summary(row_lookup),
            "list_one_user_ms": summary(listing),
            "ratio_row_lookup_to_scopes_p50": round(summary(row_lookup)["p50"] / summary(scopes)["p50"], 1),
            "ratio_scopes_to_list_p50": round(summary(scopes)["p50"] / summary(listing)["p50"], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--out")
    args = parser.parse_args()
    result = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
              "runs": [run(int(size), args.users, args.repeat) for size in args.sizes.split(",")]}
    write_report(result, args.out)


if __name__ == "__main__":
    main()
