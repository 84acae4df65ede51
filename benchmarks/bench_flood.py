#!/usr/bin/env python
"""One tenant floods, another searches (issue 47): does the quiet tenant keep its latency?

1. setup   a temporary home; ``memlane serve`` (the default model) fills two tenants, ``flood`` and
           ``quiet``, with ``--memories`` memories each through ``POST /memories`` (infer false, batches).
2. blocks  per round, per mode (``--modes``: ``on`` = the default limits, ``off`` = ``--no-rate-limit``,
           or a JSON ``server.rate_limit`` block), a fresh ``memlane serve`` on the same home, then
           * alone: the quiet tenant searches (``POST /search``, a new query text each time, so it embeds)
             once every ``--quiet-interval`` s for ``--block`` s;
           * flood: the same while another process floods the flood tenant with ``--flood-threads``
             threads sending searches back to back (new query texts, or with ``--flood-op cached`` one
             query again and again: cheap requests, many more of them; a 429 is counted and, unless
             ``--flood-backoff``, the thread sends the next request at once, as a hostile client would).
           Modes alternate within each round, rounds repeat, so the machine's load falls on all alike.
3. report  per mode: the quiet tenant's p50/p95 alone and under flood (ms, measured by its client), the
           ratio of the p95s (target ≤ 1.5 with the default limits), the flood's answered requests/s and
           its 429s by limit.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_flood.py --out benchmarks/last_flood.json
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_flood.py --quick      # ~3 minutes
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from common import summary, write_report  # noqa: E402  (after the environment is set)
from bench_server import free_port, start_server, stop_server  # noqa: E402

NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Julia", "Kenji", "Lucia"]
THINGS = ["Thai curry", "sushi", "tacos", "bouldering", "the cello", "trail running", "chess", "woodworking",
          "birdwatching", "photography", "gardening", "Python", "Rust", "peanuts", "shellfish", "cats"]
CITIES = ["Lisbon", "Berlin", "Osaka", "Nairobi", "Toronto", "Lima", "Krakow", "Hanoi", "Dublin", "Austin"]
FACTS = ["{n} lives in {c} and loves {t}.", "{n} is allergic to {t}.", "{n} started learning {t} in {c}.",
         "{n} wants to try {t} on the next trip to {c}.", "{n} gave up {t} after moving to {c}."]
QUESTIONS = ["What does {n} like to eat in {c}?", "Is {n} allergic to {t}?", "Does {n} enjoy {t}?",
             "What should I cook for {n}, who likes {t}?", "Has {n} been to {c} for {t}?"]
USERS = [f"user{i}" for i in range(10)]


def log(msg: str) -> None:
    print(f"[bench-flood {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def text(templates: list[str], rng: random.Random) -> str:
    return rng.choice(templates).format(n=rng.choice(NAMES), c=rng.choice(CITIES), t=rng.choice(THINGS)) + \
        f" ({rng.randrange(10**9)})"


def serve(home: Path, port: int, mode: str, workdir: Path) -> subprocess.Popen:
    extra, config = [], None
    if mode == "off":
        extra = ["--no-rate-limit"]
    elif mode != "on":
        config = workdir / "config.json"
        config.write_text(json.dumps({"server": {"rate_limit": json.loads(mode)}}))
    return start_server(home, port, workers=1, extra=extra, config=config)


def populate(url: str, key: str, memories: int, seed: int) -> None:
    import httpx

    rng = random.Random(seed)
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=300) as client:
        for start in range(0, memories, 100):
            for user in USERS:
                messages = [{"role": "user", "content": text(FACTS, rng)}
                            for _ in range(min(100, memories - start) // len(USERS))]
                answer = client.post("/memories", json={"messages": messages, "user_id": user, "infer": False})
                if answer.status_code == 429:  # the default limits may apply to the set-up too
                    time.sleep(float(answer.headers["retry-after"]))
                    answer = client.post("/memories", json={"messages": messages, "user_id": user, "infer": False})
                answer.raise_for_status()


def quiet_block(url: str, key: str, seconds: float, interval: float, seed: int) -> list[float]:
    """The quiet tenant's search latencies (ms), one search every ``interval`` s."""
    import httpx

    rng = random.Random(seed)
    latencies, statuses = [], Counter()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
        end = time.monotonic() + seconds
        next_at = time.monotonic()
        while next_at < end:
            time.sleep(max(0.0, next_at - time.monotonic()))
            t0 = time.perf_counter()
            answer = client.post("/search", json={"query": text(QUESTIONS, rng), "user_id": rng.choice(USERS),
                                                  "limit": 10})
            latencies.append((time.perf_counter() - t0) * 1000)
            statuses[answer.status_code] += 1
            next_at += interval
    if set(statuses) != {200}:
        log(f"quiet tenant answers: {dict(statuses)}")
    return latencies


def flood_main(args: argparse.Namespace) -> int:
    """The flooding process: ``--flood-threads`` threads for ``--block`` s; prints its counts as JSON."""
    import httpx

    statuses: Counter = Counter()
    limits: Counter = Counter()
    lock = threading.Lock()
    end = time.monotonic() + args.block

    def run(n: int) -> None:
        rng = random.Random(args.seed * 1000 + n)
        with httpx.Client(base_url=args.url, headers={"Authorization": f"Bearer {args.key}"}, timeout=120) as client:
            while time.monotonic() < end:
                # a new query embeds; a cached one (always the same) is mostly HTTP, the key and the store
                query = text(QUESTIONS, rng) if args.flood_op == "search" else "What does Alice like to eat?"
                try:
                    answer = client.post("/search", json={"query": query, "user_id": rng.choice(USERS), "limit": 10})
                except httpx.HTTPError:
                    with lock:
                        statuses["error"] += 1
                    continue
                with lock:
                    statuses[answer.status_code] += 1
                    if answer.status_code == 429:
                        limits[answer.json().get("limit")] += 1
                if answer.status_code == 429 and args.flood_backoff:
                    time.sleep(min(float(answer.headers["retry-after"]), max(0.0, end - time.monotonic())))

    threads = [threading.Thread(target=run, args=(n,)) for n in range(args.flood_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(json.dumps({"statuses": {str(k): v for k, v in statuses.items()}, "429_by_limit": dict(limits)}))
    return 0


def flood_block(args: argparse.Namespace, url: str, key: str, seed: int) -> tuple[list[float], dict]:
    command = [sys.executable, __file__, "--flood", "--url", url, "--key", key, "--block", str(args.block + 2),
               "--flood-threads", str(args.flood_threads), "--seed", str(seed), "--flood-op", args.flood_op,
               *(["--flood-backoff"] if args.flood_backoff else [])]
    flood = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    time.sleep(2)  # the flood is under way before the quiet tenant's first search
    latencies = quiet_block(url, key=args.quiet_key, seconds=args.block, interval=args.quiet_interval, seed=seed)
    out, _ = flood.communicate(timeout=args.block + 300)
    return latencies, json.loads(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=3000, help="memories per tenant")
    parser.add_argument("--modes", default="on,off", help="comma-separated: on, off, or JSON rate_limit blocks "
                                                          "(separate them with ';' when they hold commas)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--block", type=float, default=40.0, help="seconds per block")
    parser.add_argument("--quiet-interval", type=float, default=1.0)
    parser.add_argument("--flood-threads", type=int, default=16)
    parser.add_argument("--flood-op", choices=("search", "cached"), default="search",
                        help="search: a new query each time (embeds); cached: one query again and again")
    parser.add_argument("--flood-backoff", action="store_true", help="flood threads wait Retry-After after a 429")
    parser.add_argument("--seed", type=int, default=47)
    parser.add_argument("--quick", action="store_true", help="1 round of 20 s blocks, 1,000 memories")
    parser.add_argument("--out")
    parser.add_argument("--flood", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood:
        return flood_main(args)
    if args.quick:
        args.rounds, args.block, args.memories = 1, 20.0, 1000
    modes = [m.strip() for m in (args.modes.split(";") if ";" in args.modes else args.modes.split(","))]

    from memlane.hosting.keys import KeyStore

    workdir = Path(tempfile.mkdtemp(prefix="bench-flood-"))
    home = workdir / "home"
    home.mkdir()
    keys = KeyStore(home / "keys.db")
    flood_key, args.quiet_key = keys.create("flood")[0], keys.create("quiet")[0]
    keys.close()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve(home, port, "off", workdir)
    try:
        t0 = time.perf_counter()
        for tenant_key in (flood_key, args.quiet_key):
            populate(url, tenant_key, args.memories, args.seed)
        log(f"set-up: {args.memories} memories in each tenant in {time.perf_counter() - t0:.0f} s")
    finally:
        stop_server(server)

    results: dict[str, dict] = {mode: {"alone": [], "flood": [], "flood_statuses": Counter(), "429_by_limit": Counter(),
                                       "flood_seconds": 0.0} for mode in modes}
    load = []
    for round_ in range(args.rounds):
        for mode in modes:
            server = serve(home, port, mode, workdir)
            try:
                seed = args.seed + round_ * 100 + modes.index(mode)
                quiet_block(url, args.quiet_key, seconds=3, interval=0.2, seed=seed + 50)  # warm up
                results[mode]["alone"] += quiet_block(url, args.quiet_key, args.block, args.quiet_interval, seed)
                latencies, flood = flood_block(args, url, flood_key, seed)
                results[mode]["flood"] += latencies
                results[mode]["flood_statuses"].update(flood["statuses"])
                results[mode]["429_by_limit"].update(flood["429_by_limit"])
                results[mode]["flood_seconds"] += args.block + 2
                load.append(os.getloadavg()[0])
                log(f"round {round_ + 1} {mode[:60]}: alone p95 {summary(results[mode]['alone'])['p95']:.1f} ms, "
                    f"flood p95 {summary(results[mode]['flood'])['p95']:.1f} ms, flood {flood}")
            finally:
                stop_server(server)

    report = {"args": {k: v for k, v in vars(args).items() if k not in ("key", "quiet_key", "url", "flood")},
              "load_average": [round(x, 1) for x in load], "modes": {}}
    for mode, r in results.items():
        alone, flooded = summary(r["alone"]), summary(r["flood"])
        answered = r["flood_statuses"].get("200", 0)
        report["modes"][mode] = {
            "quiet_alone_ms": alone, "quiet_under_flood_ms": flooded,
            "p95_ratio": round(flooded["p95"] / alone["p95"], 2), "p50_ratio": round(flooded["p50"] / alone["p50"], 2),
            "quiet_searches": [len(r["alone"]), len(r["flood"])],
            "flood_answered_per_s": round(answered / r["flood_seconds"], 1),
            "flood_statuses": dict(r["flood_statuses"]), "flood_429_by_limit": dict(r["429_by_limit"])}
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
