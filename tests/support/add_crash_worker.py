"""A child process for tests/facade/test_add_exactly_once.py: one ``Memory.add`` with an idempotency key,
stopped by the parent's SIGKILL at one point of the add.

Usage: ``python add_crash_worker.py '<json command>'`` with ``config`` (the store, the hashing
embedder), ``point``, ``key`` and ``add`` (the add's keyword arguments). At the point the worker
prints ``AT <point>`` and sleeps, so the parent's ``kill -9`` lands there:

- ``journal``: inside the first transaction (messages and journal written, not committed);
- ``journaled``: after it committed, before formation;
- ``forming``: inside formation (the first embedding call);
- ``completing``: inside the second transaction (memories and outcome written, not committed);
- ``completed``: after it committed, before ``add`` returns.

With ``point`` ``none`` it adds and prints ``RESULT <json outcome>``.
"""

from __future__ import annotations

import json
import sys
import time

from memlane import Memory

HANG_SECONDS = 120


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(map(str, parts)) + "\n")
    sys.stdout.flush()


def stop(point: str) -> None:
    say("AT", point)
    time.sleep(HANG_SECONDS)
    raise SystemExit(f"not killed at {point}")


def main() -> None:
    command = json.loads(sys.argv[1])
    point = command["point"]
    memory = Memory(command["config"])
    store = memory.store
    writes = {"n": 0}
    run, apply = store._run, store.apply

    def run_and_stop(work, *, write=False):
        if not write:
            return run(work)
        writes["n"] += 1
        n = writes["n"]

        def inside(con):
            result = work(con)
            if (point, n) in (("journal", 1), ("completing", 2)):
                stop(point)
            return result

        return run(inside, write=True)

    def apply_and_stop(changes):
        apply(changes)
        if (point, writes["n"]) in (("journaled", 1), ("completed", 2)):
            stop(point)

    store._run = run_and_stop
    store.apply = apply_and_stop
    if point == "forming":
        documents = memory.embeddings.documents

        def embed_and_stop(texts):
            stop(point)
            return documents(texts)

        memory.embeddings.documents = embed_and_stop
    say("READY")
    outcome = memory.add(**command["add"], idempotency_key=command["key"])
    say("RESULT", json.dumps(outcome))


if __name__ == "__main__":
    main()
