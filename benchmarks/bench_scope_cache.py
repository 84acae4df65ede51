#!/usr/bin/env python
"""What the SQLite store keeps of a searched scope (``store/sqlite_scope_cache.py``) saves the default search,
with writes around it: CPU per default search, in process, ``--users`` two-speaker conversations of
``--turns`` turns each stored through ``add(infer=False)`` (the default model, or ``--embedder``).

Sides, run in alternating blocks of ``--block`` searches on random users of the first half (the query vectors
cached first;
only the searches are timed, in the calling thread's CPU: ``time.thread_time``):

* ``vector``: the vector search (``keyword_search=False``), for scale;
* ``off``: the default search on a store that keeps nothing (``scope_cache_rows: 0``, a second ``Memory``
  on the same file);
* ``kept``: the default search, nothing written between searches;
* ``kept, other users write``: an add to a user of the second half, never searched, before each search (untimed);
* ``kept, same user writes``: an add to the searched user before each search (untimed): nothing kept is
  ever used, what is made for nothing costs;
* ``off, ...``: the same writes before the searches of the store that keeps nothing (an add runs the model,
  whose weights leave the caches of the processor cold for the search after it: compare like with like).

    python benchmarks/bench_scope_cache.py [--users 20] [--turns 300] [--blocks 6] [--block 50] [--out FILE]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from bench_server import machine_facts  # noqa: E402
from common import summary, write_report  # noqa: E402

WORDS = ("camping lake tent kids painting sunrise support group adoption research run trip rain class August "
         "mother beach guitar recipe garden dog museum concert bike school book pottery hike friend").split()
QUESTIONS = ["Where did {p} go camping?", "What did {p} paint?", "When did {p} join the support group?",
             "What does {p} like about the beach?", "Which book did {p} read?", "Why did {p} go to the museum?"]
PEOPLE = ("Caroline", "Melanie")


def turn(rng: random.Random, i: int) -> dict:
    return {"role": "user", "name": PEOPLE[i % 2], "content": " ".join(rng.choice(WORDS) for _ in range(12))}


def run(args: argparse.Namespace) -> dict:
    from memlane import Memory

    home = Path(tempfile.mkdtemp(prefix="bench-scope-cache-"))
    store = {"provider": "sqlite", "config": {"path": str(home / "memlane.db")}}
    embedder = {"embedder": {"provider": args.embedder}} if args.embedder else {}
    rng = random.Random(7)
    users = [f"user{u:03d}" for u in range(args.users)]
    with Memory({"vector_store": store, **embedder}) as memory:
        for user in users:
            for start in range(0, args.turns, 50):
                memory.add([turn(rng, i) for i in range(start, min(start + 50, args.turns))], user_id=user, infer=False)
    kept = Memory({"vector_store": store, **embedder})
    off = Memory({"vector_store": {**store, "config": {**store["config"], "scope_cache_rows": 0}}, **embedder})
    questions = [q.format(p=p) for q in QUESTIONS for p in PEOPLE]
    for memory in (kept, off):
        for q in questions:
            memory.search(q, user_id=users[0], limit=10)  # the query vectors cached

    searched, others = users[:len(users) // 2], users[len(users) // 2:]

    def search(memory: Memory, flags: dict, write: str | None) -> float:
        user = rng.choice(searched)
        if write is not None:
            other = user if write == "same" else rng.choice(others)
            memory.add([turn(rng, 0)], user_id=other, infer=False)
        started = time.thread_time()  # this thread's: an add's background work (its events) runs beside
        memory.search(rng.choice(questions), user_id=user, limit=10, **flags)
        return (time.thread_time() - started) * 1000

    sides = {"vector": (kept, {"keyword_search": False}, None), "off": (off, {}, None), "kept": (kept, {}, None),
             "off, other users write": (off, {}, "other"), "kept, other users write": (kept, {}, "other"),
             "off, same user writes": (off, {}, "same"), "kept, same user writes": (kept, {}, "same")}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for block in range(args.blocks):
        for name in (list(sides) if block % 2 == 0 else list(reversed(sides))):
            memory, flags, write = sides[name]
            times[name] += [search(memory, flags, write) for _ in range(args.block)]
    kept.close()
    off.close()
    result = {name: summary(values) for name, values in times.items()}
    return {"benchmark": "bench_scope_cache", "machine": machine_facts(), "users": args.users, "turns": args.turns,
            "embedder": args.embedder or "default", "cpu_ms_per_search": result,
            "kept_over_off_p50": {writes: round(result[f"kept{writes}"]["p50"] / result[f"off{writes}"]["p50"], 3)
                                  for writes in ("", ", other users write", ", same user writes")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--block", type=int, default=50)
    parser.add_argument("--embedder", help="an embedder provider instead of the default (e.g. hashing)")
    parser.add_argument("--out")
    args = parser.parse_args()
    write_report(run(args), args.out)


if __name__ == "__main__":
    main()
