"""MaxSim rerank on a store filled before ``retrieval.reranker`` was chosen vs one filled after.

``before``: memories inserted with the default configuration (no token vectors stored at insert), then
``retrieval.reranker: maxsim`` written; ``after``: the same memories inserted with maxsim chosen (their
token vectors stored at insert, from the same model pass). Both SQLite stores, real local model, the
same texts and queries. Every search is ``rerank=True`` with the query caches emptied first.

1. **first pass**: each query once on each store, the stores taking turns block by block: on ``before``
   the candidates' token vectors are computed and written back (``Searcher._attach_tokens``);
2. **later passes**: the same queries again (``--passes`` times), the stores taking turns: ``before``
   now reads the vectors its first pass kept.

Reported: p50/p95 of each store per phase and before ÷ after, one run.

    python benchmarks/bench_rerank_chosen_late.py [--size 2000] [--users 10] [--queries 60] [--block 10]
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
from memlane.core.config import ProviderSpec  # noqa: E402
from memlane.core.models import NewMemory  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from common import MEMORY_QUERIES as QUERIES, MEMORY_TEMPLATES as TEMPLATES  # noqa: E402
from common import pct, sentence, summary, write_report  # noqa: E402

STORES = ("before", "after")


def forget_queries(memory: Memory) -> None:
    for cache in (memory.embeddings._queries, memory.embeddings._query_tokens):
        cache._items.clear()


def timed(memory: Memory, query: str, user: str) -> float:
    forget_queries(memory)
    started = time.perf_counter()
    result = memory.search(query, user_id=user, limit=10, rerank=True)
    elapsed = (time.perf_counter() - started) * 1000
    assert result["metadata"]["stages"]["rerank"]["ran"], result["metadata"]
    return elapsed


def kept(memory: Memory) -> int:
    return memory.store._run(lambda con: con.execute("SELECT count(*) FROM memory_tokens").fetchone()[0])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--block", type=int, default=10)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = random.Random(11)
    rows = [NewMemory(text=sentence(rng, TEMPLATES), user_id=f"user{i % args.users}") for i in range(args.size)]
    work = [(sentence(rng, QUERIES), f"user{rng.randrange(args.users)}") for _ in range(args.queries)]
    embedder = LocalEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        stores: dict[str, Memory] = {}
        for name in STORES:
            config: dict = {"vector_store": {"provider": "sqlite", "config": {"path": f"{tmp}/{name}"}}}
            if name == "after":
                config["retrieval"] = {"reranker": {"provider": "maxsim"}}
            memory = Memory(config, embedder=embedder)
            for start in range(0, len(rows), 500):
                memory.insert(rows[start:start + 500])
            if name == "before":  # chosen now, on a store filled without it
                memory.config.retrieval = memory.config.retrieval.model_copy(
                    update={"reranker": ProviderSpec(provider="maxsim")})
            stores[name] = memory
        kept_at_start = {name: kept(m) for name, m in stores.items()}
        for query, user in work[:3]:  # warm the model and code paths on both (not measured)
            for m in stores.values():
                m.search(query + " ?", user_id=user, limit=10)
        phases: dict[str, dict[str, list[float]]] = {p: {s: [] for s in STORES} for p in ("first", "later")}
        for phase, passes in (("first", 1), ("later", args.passes)):
            for _ in range(passes):
                for b, at in enumerate(range(0, len(work), args.block)):
                    for name in STORES[b % 2:] + STORES[:b % 2]:
                        phases[phase][name].extend(timed(stores[name], q, u) for q, u in work[at:at + args.block])
        kept_at_end = {name: kept(m) for name, m in stores.items()}
        for m in stores.values():
            m.close()
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "size": args.size, "users": args.users, "queries": args.queries, "block": args.block,
        "token_vectors_kept": {"at_start": kept_at_start, "at_end": kept_at_end},
        "search_ms": {phase: {s: summary(v) for s, v in by.items()} for phase, by in phases.items()},
        "before_over_after": {phase: {"p50": round(pct(by["before"], 0.5) / pct(by["after"], 0.5), 2),
                                      "p95": round(pct(by["before"], 0.95) / pct(by["after"], 0.95), 2)}
                              for phase, by in phases.items()},
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
