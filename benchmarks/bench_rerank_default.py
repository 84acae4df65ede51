"""Rerank on a store made with default settings (issue 17 item 1): full mode ÷ vector mode.

A default store keeps no token vectors at insert; a rerank computes those of its candidates and
writes them back. This fills a default SQLite store with ``--size`` memories (real texts, embedded
by the real local model) over ``--users`` users, then:

1. **first searches**: each query once in full mode (keyword search + MaxSim rerank): the
   candidates' token vectors are computed and written back (the cost every rerank paid before);
2. **later searches**: the same queries, each once in vector mode and once in full mode,
   interleaved; the query caches are emptied before every search, so both modes pay the query's
   model pass (vector: its sentence vector; full: its token vectors, which give the vector too).

The figure is full p95 ÷ vector p95 over the later searches, both including the query's
embedding, measured in one run.

    python benchmarks/bench_rerank_default.py [--size 10000] [--users 10] [--queries 100] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane import Memory  # noqa: E402
from memlane.core.models import NewMemory  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from common import MEMORY_QUERIES as QUERIES, MEMORY_TEMPLATES as TEMPLATES  # noqa: E402
from common import pct, sentence, summary, write_report  # noqa: E402

FULL = {"keyword_search": True, "rerank": True}


def forget_queries(memory: Memory) -> None:
    """Empty the query caches: the next search embeds its query as a new one would be."""
    for cache in (memory.embeddings._queries, memory.embeddings._query_tokens):
        cache._items.clear()


def timed(memory: Memory, query: str, user: str, **flags: bool) -> float:
    forget_queries(memory)
    started = time.perf_counter()
    result = memory.search(query, user_id=user, limit=10, **flags)
    elapsed = (time.perf_counter() - started) * 1000
    if flags.get("rerank"):
        assert result["metadata"]["stages"]["rerank"]["ran"], result["metadata"]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory({"vector_store": {"provider": "sqlite", "config": {"path": tmp}}}, embedder=LocalEmbedder())
        assert not memory.config.retrieval.tokens_at_insert  # the default store
        started = time.perf_counter()
        for start in range(0, args.size, 500):
            memory.insert([NewMemory(text=sentence(rng, TEMPLATES), user_id=f"user{(start + i) % args.users}")
                           for i in range(min(500, args.size - start))])
        fill_s = time.perf_counter() - started
        work = [(sentence(rng, QUERIES), f"user{rng.randrange(args.users)}") for _ in range(args.queries)]
        for query, user in work[:5]:  # warm the model and the code paths (not measured)
            timed(memory, query + " ?", user)
        first = [timed(memory, query, user, **FULL) for query, user in work]
        kept = memory.store._run(lambda con: con.execute("SELECT count(*) FROM memory_tokens").fetchone()[0])
        later: dict[str, list[float]] = {"vector": [], "full": []}
        for n, (query, user) in enumerate(work):
            order = ("vector", "full") if n % 2 == 0 else ("full", "vector")
            for mode in order:
                later[mode].append(timed(memory, query, user, **(FULL if mode == "full" else {})))
        memory.close()
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "size": args.size, "users": args.users, "queries": args.queries, "fill_s": round(fill_s, 1),
        "memories_with_kept_token_vectors": kept,
        "first_full_search_ms": summary(first),
        "later_search_ms": {mode: summary(values) for mode, values in later.items()},
        "full_over_vector_p95_later": round(pct(later["full"], 0.95) / pct(later["vector"], 0.95), 2),
        "first_full_over_later_vector_p95": round(pct(first, 0.95) / pct(later["vector"], 0.95), 2),
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
