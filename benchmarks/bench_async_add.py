#!/usr/bin/env python
"""Async adds (issue 34): how fast ``POST /memories`` with ``async_mode`` answers while formation takes
seconds, and whether a search right after it finds what was sent.

A real ``memlane serve`` (the default configuration: the local embedding model, SQLite; ``--postgres``
for the bundled PostgreSQL) forms with a scripted OpenAI-compatible LLM on 127.0.0.1 that answers each
call after ``--llm-delay`` seconds (tests/support/slow_llm.py: a formation is two calls, extraction and
reconciliation). ``--clients`` clients each send async adds of new sentences, and after each one at once
a search for the sentence in the same user: *found* when the first result is the sentence (the
provisional memory, or what formation made of it). Then every event is waited for. Alternating blocks of
a few synchronous adds give the ratio of what an agent waits either way. Prints one JSON object:

    .venv/bin/python benchmarks/bench_async_add.py --adds 300 --clients 4 --llm-delay 3

``--sdk``: the answer alone, in process (``Memory.add``, SQLite, the default model): one scope filled with
``--turns`` turns, then ``--blocks`` alternating blocks of ``--per-block`` async adds and as many plain
``add(infer=False)`` calls to that scope (the order of the two flips every block), each followed by a search
for its sentence (*found*: the first result). Nobody forms meanwhile (``--sdk-workers 0``): what is
measured is what the caller waits. Prints p50/p95 of each side and ``async_p95_over_plain_p95``:

    .venv/bin/python benchmarks/bench_async_add.py --sdk --turns 1500 --blocks 10 --per-block 20
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_server import free_port, log, machine_facts, start_server  # noqa: E402
from common import sentence, summary, write_report  # noqa: E402
from support import slow_llm  # noqa: E402

TEMPLATES = ["My {p} moved to a flat in {l}", "My {p} started learning {s}", "I practise {s} with my {p} in {l}",
             "My {p} booked a trip to {l} to study {s}"]


def new_sentence(rng: random.Random, n: int) -> str:
    return f"{sentence(rng, TEMPLATES)} (note {n})"


def client_loop(url: str, adds: int, seed: int, out: dict, lock: threading.Lock) -> None:
    rng = random.Random(seed)
    with httpx.Client(base_url=url, timeout=120) as http:
        for n in range(adds):
            user = f"user{seed}-{n % 20}"
            text = new_sentence(rng, seed * 100_000 + n)
            started = time.perf_counter()
            answer = http.post("/memories", json={"messages": text, "user_id": user, "async_mode": True})
            took = time.perf_counter() - started
            hits = http.post("/search", json={"query": text, "user_id": user, "limit": 1})
            with lock:
                if answer.status_code != 200 or hits.status_code != 200:
                    out["errors"] += 1
                    continue
                out["add_s"].append(took)
                out["events"].append(answer.json()["event_id"])
                first = hits.json()["results"][:1]
                out["found"] += bool(first) and first[0]["memory"] == text


def sync_adds(url: str, count: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    took = []
    with httpx.Client(base_url=url, timeout=300) as http:
        for n in range(count):
            started = time.perf_counter()
            http.post("/memories", json={"messages": new_sentence(rng, n), "user_id": f"sync{seed}"}).raise_for_status()
            took.append(time.perf_counter() - started)
    return took


def settle(url: str, events: list[str], timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    ended: dict[str, dict] = {}
    with httpx.Client(base_url=url, timeout=60) as http:
        while len(ended) < len(events) and time.monotonic() < deadline:
            for event_id in events:
                if event_id not in ended:
                    event = http.get(f"/events/{event_id}").json()
                    if event["status"] in ("SUCCEEDED", "FAILED"):
                        ended[event_id] = event
            time.sleep(0.5)
    states = [e["status"] for e in ended.values()]
    return {"events": len(events), "succeeded": states.count("SUCCEEDED"), "failed": states.count("FAILED"),
            "unfinished": len(events) - len(ended),
            "formation_ms": summary([e["latency"] for e in ended.values() if e["latency"] is not None])}


def sdk_run(args: argparse.Namespace) -> dict:
    """``--sdk``: async adds and plain adds to one filled scope, in alternating blocks (module docstring)."""
    from memlane import Memory

    home = Path(tempfile.mkdtemp(prefix="bench-async-sdk-"))
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(home / "memlane.db")}},
              "background": {"workers": args.sdk_workers},
              **({"embedder": {"provider": args.embedder}} if args.embedder else {})}
    rng = random.Random(45)
    user = "bench"
    took: dict[str, list[float]] = {"async": [], "plain": []}
    found = {"async": 0, "plain": 0}
    with Memory(config, background=bool(args.sdk_workers)) as memory:
        for start in range(0, args.turns, 100):
            memory.add([new_sentence(rng, n) for n in range(start, min(args.turns, start + 100))], user_id=user,
                       infer=False)
        memory.search("warm up", user_id=user)
        n = args.turns
        for block in range(args.blocks):
            for side in (("async", "plain") if block % 2 == 0 else ("plain", "async")):
                for _ in range(args.per_block):
                    text = new_sentence(rng, n)
                    n += 1
                    started = time.perf_counter()
                    if side == "async":
                        memory.add(text, user_id=user, async_mode=True)
                    else:
                        memory.add(text, user_id=user, infer=False)
                    took[side].append(time.perf_counter() - started)
                    first = memory.search(text, user_id=user, limit=1)["results"][:1]
                    found[side] += bool(first) and first[0]["memory"] == text
        open_jobs = sum(len(memory.events(status, 10_000)) for status in ("PENDING", "RUNNING"))  # the adds
    async_ms, plain_ms = (summary([t * 1000 for t in took[side]]) for side in ("async", "plain"))
    return {"benchmark": "async add (SDK)", "machine": machine_facts(), "backend": "sqlite",
            "embedder": args.embedder or "default", "turns": args.turns, "blocks": args.blocks,
            "per_block": args.per_block, "workers": args.sdk_workers,
            "async_add_ms": async_ms, "plain_add_ms": plain_ms,
            "async_p95_over_plain_p95": round(async_ms["p95"] / plain_ms["p95"], 3),
            "async_p50_over_plain_p50": round(async_ms["p50"] / plain_ms["p50"], 3),
            "found_right_after": found, "searched": {side: len(took[side]) for side in took},
            "jobs_left_queued": open_jobs,
            "loadavg_at_end": [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--adds", type=int, default=300, help="async adds in all (spread over the clients)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--llm-delay", type=float, default=3.0, help="seconds the LLM takes per call")
    parser.add_argument("--sync-adds", type=int, default=6, help="synchronous adds, in blocks between async ones")
    parser.add_argument("--blocks", type=int, default=2, help="alternating async / sync blocks")
    parser.add_argument("--workers", type=int, default=8, help="background.workers of the server")
    parser.add_argument("--postgres", action="store_true", help="the bundled PostgreSQL instead of SQLite")
    parser.add_argument("--embedder", default=None,
                        help="the embedder's provider (default: the configuration's default model; local: all-MiniLM-L6-v2)")
    parser.add_argument("--sdk", action="store_true", help="the answer alone, in process (module docstring)")
    parser.add_argument("--turns", type=int, default=1500, help="--sdk: turns in the scope before measuring")
    parser.add_argument("--per-block", type=int, default=20, help="--sdk: adds of each side per block")
    parser.add_argument("--sdk-workers", type=int, default=0, help="--sdk: background workers of the Memory")
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.sdk:
        write_report(sdk_run(args), args.out)
        return 0

    facts = machine_facts()
    llm_server, formation = slow_llm.start(delay=args.llm_delay)
    home = Path(tempfile.mkdtemp(prefix="bench-async-"))
    config = home / "config.json"
    config.write_text(json.dumps({"llm": slow_llm.llm_config(llm_server), "background": {"workers": args.workers},
                                  **({"embedder": {"provider": args.embedder}} if args.embedder else {})}))
    port = free_port()
    server = start_server(home, port, workers=1, extra=["--no-auth", *(["--postgres"] if args.postgres else [])],
                          config=config)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=60) as http:  # warm the model and the routes
            http.post("/search", json={"query": "warm up", "user_id": "warm"})
        results = {"errors": 0, "found": 0, "add_s": [], "events": []}
        lock = threading.Lock()
        sync_s: list[float] = []
        per_block = args.adds // args.blocks
        for block in range(args.blocks):
            log(f"block {block + 1}: {per_block} async adds from {args.clients} clients")
            threads = [threading.Thread(target=client_loop, args=(url, per_block // args.clients, block * 100 + c,
                                                                  results, lock)) for c in range(args.clients)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            log(f"block {block + 1}: {args.sync_adds // args.blocks} synchronous adds")
            sync_s += sync_adds(url, args.sync_adds // args.blocks, block)
        log(f"waiting for {len(results['events'])} events")
        settled = settle(url, results["events"], timeout=60 + 4 * args.llm_delay * len(results["events"]))
        async_ms = summary([s * 1000 for s in results["add_s"]])
        sync_ms = summary([s * 1000 for s in sync_s])
        report = {
            "benchmark": "async add", "machine": facts, "backend": "postgres" if args.postgres else "sqlite",
            "embedder": args.embedder or "default",
            "llm_delay_s": args.llm_delay, "clients": args.clients, "workers": args.workers,
            "async_add_ms": async_ms, "sync_add_ms": sync_ms,
            "sync_over_async_p50": round(sync_ms["p50"] / async_ms["p50"], 1) if async_ms["p50"] else None,
            "found_right_after": results["found"], "searched": len(results["add_s"]),
            "errors": results["errors"], **settled, "llm_calls": formation.calls,
            "loadavg_at_end": [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]],
        }
    finally:
        server.terminate()
        server.wait(timeout=60)
        llm_server.stop()
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
