"""Graph memory benchmark (issue 8): the latency graph search adds over vector search alone.

Fills one SQLite store with ``--size`` memories over ``--users`` users and, per user,
``--entities`` entities and ``--relations`` valid relations (plus a quarter as many
invalidated ones, as contradictions leave them). Memory texts, entity names and
relationships are templated; vectors are random unit vectors (they cost what real ones
cost to store and score). Queries are embedded by the real local model, once, before
timing. Two ``Memory`` objects share the store, one with ``enable_graph``; each query is
searched by both, in alternating order, so drift of the shared machine hits both alike.

Reported: p50/p95/p99 of vector-only search, of search with the graph lookup running
concurrently, of the graph lookup alone, and the p95 ratios, excluding the query
embedding (which both pay: it is cached here) and including it (what a caller waits for);
and how many lookups ran in the pool vs in the calling thread (when no pool thread had
started it by the time the vector search was done).

    python benchmarks/bench_graph.py [--size 100000] [--users 1000] [--entities 30] [--relations 40]
                                     [--queries 500] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane import Memory  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from memlane.core.graph_models import Entity, GraphChanges, Relation  # noqa: E402
from memlane.graph.resolve import normalize  # noqa: E402
from memlane.core.models import MemoryRecord  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402
from memlane.core.timeutil import now_iso  # noqa: E402
from common import PLACES, SUBJECTS, pct, sentence, summary, unit_vectors, write_report  # noqa: E402

PEOPLE = ["Sarah", "Tom", "Mia", "Omar", "Lena", "Raj", "Ana", "Yuki", "Ben", "Zoe", "Ivan", "Nia"]
ORGS = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark Labs", "Wayne Corp", "Soylent"]
RELATIONSHIPS = ["likes", "loves", "hates", "lives_in", "works_at", "friend_of", "has", "visited"]
TEMPLATES = ["I spent the weekend {s} with {p} near {l}", "{p} thinks {s} is the best way to relax",
             "We booked a trip to {l} to try {s} in spring", "I have been practising {s} since moving to {l}"]
QUERIES = ["What does {p} like to do?", "Where do I live now?", "Do I like {s}?", "Where does {p} work?",
           "When did we go to {l}?", "Who is my friend in {l}?"]


def fill(memory: Memory, args: argparse.Namespace, rng: random.Random) -> float:
    nprng = np.random.default_rng(7)
    started = time.perf_counter()
    now = now_iso()
    for start in range(0, args.size, 5000):
        count = min(5000, args.size - start)
        vectors = unit_vectors(nprng, count)
        records = [MemoryRecord(id=str(uuid.uuid4()), text=sentence(rng, TEMPLATES, PEOPLE), hash="", created_at=now,
                                updated_at=now, user_id=f"user{(start + i) % args.users}", vector=vectors[i])
                   for i in range(count)]
        memory.store.apply(ChangeSet(inserts=records))
    names = SUBJECTS + PLACES + PEOPLE + ORGS
    for first in range(0, args.users, 50):
        changes = GraphChanges()
        for u in range(first, min(first + 50, args.users)):
            user = f"user{u}"
            chosen = [user] + rng.sample(names, args.entities - 1)
            entity_vectors = unit_vectors(nprng, len(chosen))
            entities = [Entity(id=str(uuid.uuid4()), name=n, key=normalize(n), user_id=user, created_at=now,
                               updated_at=now, vector=v) for n, v in zip(chosen, entity_vectors)]
            total = args.relations + args.relations // 4
            relation_vectors = unit_vectors(nprng, total)
            for i in range(total):
                source = entities[0] if rng.random() < 0.6 else rng.choice(entities)
                destination = rng.choice([e for e in entities if e is not source])
                invalid = i >= args.relations
                changes.relations.append(Relation(
                    id=str(uuid.uuid4()), source_id=source.id, source=source.name,
                    relationship=rng.choice(RELATIONSHIPS), destination_id=destination.id,
                    destination=destination.name, user_id=user, created_at=now, updated_at=now, valid_from=now,
                    valid_to=now if invalid else None, invalid_reason="contradicted" if invalid else None,
                    vector=relation_vectors[i]))
            changes.entities.extend(entities)
        memory.store.apply(ChangeSet(graph=changes))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--entities", type=int, default=30)
    parser.add_argument("--relations", type=int, default=40)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = random.Random(11)
    embedder = LocalEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        base = {"vector_store": {"provider": "sqlite", "config": {"path": tmp}}}
        vector_only = Memory(base, embedder=embedder)
        fill_s = fill(vector_only, args, rng)
        graph = Memory({**base, "enable_graph": True}, embedder=embedder, store=vector_only.store)
        where_run = {"pool": 0, "inline": 0}  # where each search's graph lookup ran
        lookup = graph._graph_search

        def counted(*arguments):
            where_run["inline" if threading.current_thread() is threading.main_thread() else "pool"] += 1
            return lookup(*arguments)

        graph._graph_search = counted
        queries = [sentence(rng, QUERIES, PEOPLE) + f" ({n})" for n in range(args.queries)]  # distinct: no cache hits
        embed_ms = []
        for q in queries:  # embedded once, outside the timings (both Memory objects share the model)
            t0 = time.perf_counter()
            vector = vector_only.embeddings.query(q)
            embed_ms.append((time.perf_counter() - t0) * 1000)
            graph.embeddings.query(q)
        for q in queries[:20]:  # warm up connections, the thread pool and the caches
            vector_only.search(q, user_id="user1", limit=10)
            graph.search(q, user_id="user1", limit=10)
        where_run.update(pool=0, inline=0)
        timings: dict[str, list[float]] = {"vector": [], "vector_and_graph": [], "graph_lookup_alone": []}
        relations_found = []
        for n, q in enumerate(queries):
            user = f"user{rng.randrange(args.users)}"
            order = [("vector", vector_only), ("vector_and_graph", graph)]
            for name, memory in order if n % 2 == 0 else order[::-1]:
                t1 = time.perf_counter()
                memory.search(q, user_id=user, limit=10)
                timings[name].append((time.perf_counter() - t1) * 1000)
            vector = graph.embeddings.query(q)
            t2 = time.perf_counter()
            relations = graph.graph.search(q, vector, {"user_id": user})
            timings["graph_lookup_alone"].append((time.perf_counter() - t2) * 1000)
            relations_found.append(len(relations))
        vector_only.close()
    p95 = {name: pct(values, 0.95) for name, values in timings.items()}
    embed_p50 = pct(embed_ms, 0.5)
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "size": args.size, "users": args.users, "entities_per_user": args.entities,
        "valid_relations_per_user": args.relations, "queries": args.queries, "fill_s": round(fill_s, 1),
        "query_embedding_ms": summary(embed_ms),
        "relations_per_search": {"mean": round(sum(relations_found) / len(relations_found), 1),
                                 "none_found": sum(1 for n in relations_found if n == 0)},
        "search_ms_excl_embedding": {name: summary(values) for name, values in timings.items()},
        "graph_over_vector_p95_excl_embedding": round(p95["vector_and_graph"] / p95["vector"], 3),
        "graph_added_p95_ms": round(p95["vector_and_graph"] - p95["vector"], 3),
        "graph_over_vector_p95_incl_median_embedding": round((p95["vector_and_graph"] + embed_p50)
                                                             / (p95["vector"] + embed_p50), 3),
        "sequential_estimate_p95_ms": round(p95["vector"] + p95["graph_lookup_alone"], 3),
        "lookups_run_in_pool_vs_inline": where_run,
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
