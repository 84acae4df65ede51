#!/usr/bin/env python
"""An async add found by meaning while the same user's earlier add is formed (issue 45).

Adds to one user are formed in order, so while a worker forms a user's add (an LLM call can take
seconds), the user's next add waits for its formation. Its text should not wait for it: it is found
by its words at once (the provisional memory) and by meaning milliseconds later (its embedding is a
job of its own). This measures that delay, in process (``Memory``, SQLite, the default model unless
``--embedder``), with a scripted OpenAI-compatible LLM on 127.0.0.1 that answers each call after
``--llm-delay`` seconds (tests/support/slow_llm.py; a formation is two calls).

Each of ``--rounds`` users gets an async add; once a worker forms it (its event ``RUNNING``), a second
async add; from that answer on, a vector-only search (``keyword_search=False``) for the second
sentence runs every 2 ms until its first result is that sentence: the *lag*. ``held`` counts the
rounds where the first add was still being formed at that moment. Prints one JSON object:

    .venv/bin/python benchmarks/bench_embed_lag.py --rounds 10 --llm-delay 2
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_async_add import new_sentence  # noqa: E402
from bench_server import machine_facts  # noqa: E402
from common import summary, write_report  # noqa: E402
from support import slow_llm  # noqa: E402


def wait_for(condition, timeout: float, every: float = 0.002) -> bool:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if condition():
            return True
        time.sleep(every)
    return False


def run(args: argparse.Namespace) -> dict:
    from memlane import Memory

    server, _ = slow_llm.start(args.llm_delay)
    home = Path(tempfile.mkdtemp(prefix="bench-embed-lag-"))
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(home / "memlane.db")}},
              "llm": slow_llm.llm_config(server), "background": {"workers": args.workers, "poll_seconds": 0.05},
              **({"embedder": {"provider": args.embedder}} if args.embedder else {})}
    rng = random.Random(45)
    lags: list[float] = []
    held = missed = 0
    try:
        with Memory(config) as memory:
            memory.add([new_sentence(rng, n) for n in range(50)], user_id="warm-up", infer=False)
            for r in range(-1, args.rounds):  # round -1 warms the model's first calls up, and is not counted
                user = f"user{r}"
                first = memory.add(new_sentence(rng, 1000 + 2 * r), user_id=user, async_mode=True)["event_id"]
                wait_for(lambda e=first: memory.event(e)["status"] == "RUNNING", 60)
                text = new_sentence(rng, 1001 + 2 * r)
                second = memory.add(text, user_id=user, async_mode=True)["event_id"]
                started = time.perf_counter()

                def found(text: str = text, user: str = user) -> bool:
                    top = memory.search(text, user_id=user, keyword_search=False, limit=1)["results"]
                    return bool(top) and top[0]["memory"] == text

                if not wait_for(found, args.timeout):
                    missed += r >= 0
                elif r >= 0:
                    lags.append(time.perf_counter() - started)
                    held += memory.event(first)["status"] == "RUNNING"
                for event_id in (first, second):
                    wait_for(lambda e=event_id: memory.event(e)["status"] in ("SUCCEEDED", "FAILED"), 120, 0.02)
    finally:
        server.stop()
    return {"benchmark": "async add found by meaning while the user's earlier add is formed",
            "machine": machine_facts(), "backend": "sqlite", "embedder": args.embedder or "default",
            "llm_delay_s": args.llm_delay, "workers": args.workers, "rounds": args.rounds,
            "lag_ms": summary([t * 1000 for t in lags]) if lags else None,
            "lag_max_ms": round(max(lags) * 1000, 1) if lags else None,
            "found_while_earlier_add_formed": held, "not_found_within_timeout": missed,
            "loadavg_at_end": [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--llm-delay", type=float, default=2.0, help="seconds the LLM takes per call")
    parser.add_argument("--workers", type=int, default=2, help="background.workers")
    parser.add_argument("--embedder", default=None, help="the embedder's provider (default: the configuration's)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the second add")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    write_report(run(args), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
