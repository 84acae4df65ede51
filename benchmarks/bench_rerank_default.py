"""Rerank on a store made with default settings (issue 17 item 1, issue 45 item 2).

Without ``retrieval.reranker`` written, ``rerank=True`` is skipped with a warning (MaxSim over the local
models' token vectors measured no recall gain on LoCoMo); written (``maxsim``), it runs. This fills a
default SQLite store with ``--size`` memories (real texts, embedded by the real local model) over
``--users`` users, then:

1. **first forced searches**: each query once with the maxsim reranker chosen on this store filled
   without it (no token vectors at insert): the candidates' token vectors are computed and written back
   (what every rerank paid before, and what choosing maxsim on an existing store costs once);
2. **later searches**: the same queries in blocks of ``--block``, the modes taking turns block by block
   (the order rotating): ``default`` (no flags), ``rerank`` (``rerank=True`` on the default
   configuration: skipped) and ``forced`` (``rerank=True`` with ``retrieval.reranker`` maxsim, reading
   the kept token vectors). The query caches are emptied before every search, so every mode pays the
   query's model pass.

The figures are each mode's p50/p95 over the later searches ÷ the default search's, in one run.

    python benchmarks/bench_rerank_default.py [--size 10000] [--users 10] [--queries 100] [--block 10] [--out FILE]
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

MODES = ("default", "rerank", "forced")


def forget_queries(memory: Memory) -> None:
    """Empty the query caches: the next search embeds its query as a new one would be."""
    for cache in (memory.embeddings._queries, memory.embeddings._query_tokens):
        cache._items.clear()


def timed(memory: Memory, query: str, user: str, mode: str) -> float:
    settings = memory.config.retrieval
    if mode == "forced":  # the reranker written in the configuration, as a user forcing maxsim writes it
        memory.config.retrieval = settings.model_copy(update={"reranker": ProviderSpec(provider="maxsim")})
    forget_queries(memory)
    try:
        started = time.perf_counter()
        result = memory.search(query, user_id=user, limit=10, **({} if mode == "default" else {"rerank": True}))
        elapsed = (time.perf_counter() - started) * 1000
    finally:
        memory.config.retrieval = settings
    if mode != "default":
        assert result["metadata"]["stages"]["rerank"]["ran"] is (mode == "forced"), result["metadata"]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--block", type=int, default=10)
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
            timed(memory, query + " ?", user, "default")
        first = [timed(memory, query, user, "forced") for query, user in work]
        kept = memory.store._run(lambda con: con.execute("SELECT count(*) FROM memory_tokens").fetchone()[0])
        later: dict[str, list[float]] = {mode: [] for mode in MODES}
        for b, at in enumerate(range(0, len(work), args.block)):
            for mode in MODES[b % 3:] + MODES[:b % 3]:
                later[mode].extend(timed(memory, query, user, mode) for query, user in work[at:at + args.block])
        memory.close()
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "size": args.size, "users": args.users, "queries": args.queries, "block": args.block,
        "fill_s": round(fill_s, 1), "memories_with_kept_token_vectors": kept,
        "first_forced_search_ms": summary(first),
        "later_search_ms": {mode: summary(values) for mode, values in later.items()},
        "over_default_later": {mode: {"p50": round(pct(later[mode], 0.5) / pct(later["default"], 0.5), 2),
                                      "p95": round(pct(later[mode], 0.95) / pct(later["default"], 0.95), 2)}
                               for mode in MODES[1:]},
        "first_forced_over_later_default_p95": round(pct(first, 0.95) / pct(later["default"], 0.95), 2),
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
