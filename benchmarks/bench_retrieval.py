"""Retrieval latency benchmark (issue 4): vector vs hybrid vs hybrid + MaxSim rerank at scale.

Fills a store with ``--size`` memories over ``--users`` users. Texts are varied
templated sentences (they feed the keyword index); vectors and token vectors
are random unit vectors, which cost exactly what real ones cost to store and
score (recall is measured separately, on LoCoMo, with the real model). Queries
are embedded by the default model (``--embedder`` names another registered one);
the per-stage timings come from the search's own ``metadata``. The modes run in
alternating blocks of ``--block`` queries (a noisy machine slows every mode alike),
each query embedded once before its block and its embedding timed alone.

With ``--context`` every memory keeps the one before it as its context (a conversation stored
verbatim, each message answering the last): keyword entries twice as long, as in such a store.

    python benchmarks/bench_retrieval.py [--size 100000] [--users 1000] [--queries 500] [--block 50]
                                         [--embedder NAME] [--context] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane import Memory  # noqa: E402
from memlane.core.models import MemoryRecord  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402
from memlane.core.timeutil import now_iso  # noqa: E402
from common import MEMORY_QUERIES as QUERIES, MEMORY_TEMPLATES as TEMPLATES  # noqa: E402
from common import pct, sentence, summary, unit_vectors, write_report  # noqa: E402



def fill(memory: Memory, size: int, users: int, rng: random.Random, context: bool = False) -> float:
    nprng = np.random.default_rng(7)
    started = time.perf_counter()
    now = now_iso()
    previous = None
    for start in range(0, size, 5000):
        count = min(5000, size - start)
        vectors = unit_vectors(nprng, count)
        records = []
        for i in range(count):
            tokens = unit_vectors(nprng, rng.randint(8, 24))
            text = sentence(rng, TEMPLATES)
            records.append(MemoryRecord(id=str(uuid.uuid4()), text=text, hash="", created_at=now, updated_at=now,
                                        user_id=f"user{(start + i) % users}", vector=vectors[i], token_vectors=tokens,
                                        context=previous if context else None))
            previous = text
        memory.store.apply(ChangeSet(inserts=records))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--embedder", help="a registered embedder provider (default: the default model)")
    parser.add_argument("--context", action="store_true", help="each memory keeps the one before as its context")
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        config = {"vector_store": {"provider": "sqlite", "config": {"path": tmp}},
                  "retrieval": {"store_token_vectors": True}}
        if args.embedder:
            config["embedder"] = {"provider": args.embedder}
        memory = Memory(config)
        fill_s = fill(memory, args.size, args.users, rng, args.context)
        queries = [sentence(rng, QUERIES) + f" ({n})" for n in range(args.queries)]  # distinct: no cache hits
        for q in queries[:20]:  # warm up the model, the caches and the reranker
            memory.search(q, user_id="user1", limit=10, keyword_search=True, rerank=True)
        modes = {"vector": {"keyword_search": False, "rerank": False}, "hybrid": {"keyword_search": True, "rerank": False},
                 "full": {"keyword_search": True, "rerank": True}}
        timings: dict[str, dict[str, list[float]]] = {m: {"total_ms": [], "excl_embedding_ms": []} for m in modes}
        stage_ms: dict[str, list[float]] = {"vector": [], "keyword": [], "rerank": []}
        embed_ms: list[float] = []
        users = [f"user{rng.randrange(args.users)}" for _ in queries]
        for start in range(0, len(queries), args.block):
            block = range(start, min(start + args.block, len(queries)))
            for n in block:  # each query's embedding alone (then cached for its searches)
                t0 = time.perf_counter()
                memory.embeddings.query(queries[n])
                embed_ms.append((time.perf_counter() - t0) * 1000)
            order = list(modes.items())
            if (start // args.block) % 2:
                order.reverse()
            for mode, flags in order:
                for n in block:
                    t1 = time.perf_counter()
                    result = memory.search(queries[n], user_id=users[n], limit=10, **flags)
                    elapsed = (time.perf_counter() - t1) * 1000
                    timings[mode]["excl_embedding_ms"].append(elapsed)
                    timings[mode]["total_ms"].append(elapsed + embed_ms[n])
                    if mode == "full":
                        for stage, entry in result.get("metadata", {}).get("stages", {}).items():
                            stage_ms[stage].append(entry["ms"])
        memory_name = memory.embeddings.name
        memory.close()
    vector_p95 = pct(timings["vector"]["excl_embedding_ms"], 0.95)
    hybrid_p95 = pct(timings["hybrid"]["excl_embedding_ms"], 0.95)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "embedder": memory_name, "context": args.context, "size": args.size, "users": args.users, "queries": args.queries, "fill_s": round(fill_s, 1),
        "query_embedding_ms": summary(embed_ms),
        "search": {mode: {k: summary(v) for k, v in t.items()} for mode, t in timings.items()},
        "full_mode_stage_ms": {k: summary(v) for k, v in stage_ms.items() if v},
        "hybrid_over_vector_p95_excl_embedding": round(hybrid_p95 / vector_p95, 2),
        "hybrid_over_vector_p95_incl_embedding": round(pct(timings["hybrid"]["total_ms"], 0.95)
                                                       / pct(timings["vector"]["total_ms"], 0.95), 2),
        "rerank_added_p95_ms": round(pct(timings["full"]["excl_embedding_ms"], 0.95) - hybrid_p95, 2),
    }
    report["full_over_vector_p95_incl_embedding"] = round(pct(timings["full"]["total_ms"], 0.95)
                                                           / pct(timings["vector"]["total_ms"], 0.95), 2)
    write_report(report, args.out)


if __name__ == "__main__":
    main()
