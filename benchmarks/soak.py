#!/usr/bin/env python
"""Soak (issue 20): ``--clients`` concurrent clients mixing search / add / get_all / update / delete
against ``memlane serve`` holding ``--memories`` memories, for ``--duration`` seconds.

Setup as in ``bench_server.py`` (memories inserted straight into the tenant's store with real
embeddings of a pool of distinct sentences). Each client is a closed loop (its next request when the
previous one answered) on its own keep-alive connection; it updates and deletes only memories it
added itself, so every request has one right answer and any non-200 is an error.

Reported: requests and errors per operation, p50/p95/p99 latency per operation (client-measured),
the server's RSS sampled every ``--sample`` s, and its growth after the warm-up (the first
``--warmup`` s), in all and its anonymous part (RssAnon: the process's own memory, what a leak
grows; the rest is SQLite's memory map of the store file): target zero errors and RSS flat within 10 %. The load average of the (shared)
machine is recorded beside the figures.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/soak.py --duration 600 --out benchmarks/last_soak.json
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/soak.py --memories 2000 --duration 30 --warmup 10   # smoke
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench_server import free_port, log, machine_facts, percentiles, populate, start_server
from common import write_report

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: share of each operation in the mix
MIX = {"search": 0.5, "add": 0.15, "get_all": 0.15, "update": 0.1, "delete": 0.1}
QUERIES = ["Where does {u} like to travel?", "What food does {u} enjoy?", "Which city did {u} move to?",
           "What does {u} do at work?", "Any health notes for {u}?", "What is {u} learning?"]


def rss_bytes(pid: int, field: str = "VmRSS") -> int:
    """Resident memory of a process and its children (uvicorn workers). ``field``: ``VmRSS`` (all),
    ``RssAnon`` (the process's own memory: what a leak grows) or ``RssFile`` (pages of mapped files:
    SQLite's memory map of the store, bounded by the file's size and shared with the OS page cache)."""
    total = 0
    for p in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def growth(samples: list[tuple[float, int]], warmup: float) -> dict[str, float | None]:
    after = [value for t, value in samples if t >= warmup]
    baseline = after[0] if after else samples[-1][1]
    return {"at_warmup_end": round(baseline / 2**20, 1), "max_after_warmup": round(max(after) / 2**20, 1) if after else None,
            "at_end": round(samples[-1][1] / 2**20, 1),
            "growth_after_warmup": round(max(after) / baseline - 1, 4) if after else None}


def _children(pid: int) -> list[int]:
    try:
        kids = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []
    return kids + [g for k in kids for g in _children(k)]


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


async def client(n: int, http: httpx.AsyncClient, users: list[str], end: float, measure_from: float,
                 latencies: dict, errors: dict, counts: dict) -> None:
    rng = random.Random(n)
    mine: list[str] = []  # memories this client added and has not deleted
    ops, weights = list(MIX), list(MIX.values())
    serial = 0
    while time.monotonic() < end:
        op = rng.choices(ops, weights)[0]
        if op in ("update", "delete") and not mine:
            op = "add"
        user = rng.choice(users)
        serial += 1
        if op == "search":
            request = ("POST", "/search", {"json": {"query": rng.choice(QUERIES).format(u=user), "user_id": user,
                                                    "limit": 10}})
        elif op == "add":
            request = ("POST", "/memories", {"json": {"messages": f"Client {n} note {serial}: I tried a new recipe "
                                                                 f"with {rng.choice(['lentils', 'tofu', 'rice'])}",
                                                      "user_id": f"soak{n}", "infer": False}})
        elif op == "get_all":
            request = ("GET", "/memories", {"params": {"user_id": user, "limit": 20}})
        elif op == "update":
            request = ("PUT", f"/memories/{rng.choice(mine)}", {"json": {"text": f"Client {n} edit {serial}"}})
        else:
            memory_id = mine.pop(rng.randrange(len(mine)))
            request = ("DELETE", f"/memories/{memory_id}", {})
        method, path, kwargs = request
        started = time.monotonic()
        try:
            response = await http.request(method, path, **kwargs)
            ok = response.status_code == 200
            detail = f"{op} {response.status_code}: {response.text[:200]}"
        except httpx.HTTPError as exc:
            ok, detail = False, f"{op} {type(exc).__name__}: {exc}"
        elapsed = time.monotonic() - started
        if ok and op == "add":
            mine.append(response.json()["results"][0]["id"])
        counts[op] = counts.get(op, 0) + 1
        if not ok:
            errors.setdefault(op, []).append(detail)
        elif started >= measure_from:
            latencies.setdefault(op, []).append(elapsed)


async def soak(url: str, key: str, server_pid: int, args) -> dict:
    users = [f"user{i:04d}" for i in range(args.users)]
    latencies: dict[str, list[float]] = {}
    errors: dict[str, list[str]] = {}
    counts: dict[str, int] = {}
    samples: list[tuple[float, int]] = []
    anon: list[tuple[float, int]] = []
    start = time.monotonic()
    end, measure_from = start + args.duration, start + args.warmup
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120,
                                 limits=limits) as http:
        async def sample() -> None:
            while time.monotonic() < end:
                samples.append((round(time.monotonic() - start, 1), rss_bytes(server_pid)))
                anon.append((samples[-1][0], rss_bytes(server_pid, "RssAnon")))
                log(f"t={samples[-1][0]:.0f}s rss={samples[-1][1] / 2**20:.0f} MiB anon={anon[-1][1] / 2**20:.0f} MiB requests={sum(counts.values())}"
                    f" errors={sum(len(e) for e in errors.values())} load={loadavg()}")
                await asyncio.sleep(args.sample)

        await asyncio.gather(sample(), *(client(n, http, users, end, measure_from, latencies, errors, counts)
                                         for n in range(args.clients)))
    samples.append((round(time.monotonic() - start, 1), rss_bytes(server_pid)))
    anon.append((samples[-1][0], rss_bytes(server_pid, "RssAnon")))
    return {
        "requests": counts, "errors": {op: len(e) for op, e in errors.items()},
        "errors_total": sum(len(e) for e in errors.values()),
        "error_examples": [e for errs in errors.values() for e in errs[:2]][:6],
        "latency": {op: percentiles(values) for op, values in sorted(latencies.items())},
        "latency_all": percentiles([v for values in latencies.values() for v in values]),
        "rss_mib": growth(samples, args.warmup),
        "rss_anon_mib": growth(anon, args.warmup),
        "rss_samples_mib": [(t, round(rss / 2**20, 1)) for t, rss in samples],
        "rss_anon_samples_mib": [(t, round(rss / 2**20, 1)) for t, rss in anon],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--pool", type=int, default=5000, help="distinct sentences embedded for the setup")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load, warm-up included")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before RSS and latency count")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between RSS samples")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    report = {"machine": machine_facts(), "config": {k: v for k, v in vars(args).items() if k != "out"},
              "mix": MIX}
    with tempfile.TemporaryDirectory(prefix="memlane-soak-") as tmp:
        home = Path(tmp)
        log(f"populating {args.memories} memories")
        setup = populate(home, args.memories, args.users, args.pool, args.seed)
        key = setup.pop("key")
        report["setup"] = setup
        port = free_port()
        server = start_server(home, port, workers=1)
        try:
            report["loadavg_at_start"] = loadavg()
            report["soak"] = asyncio.run(soak(f"http://127.0.0.1:{port}", key, server.pid, args))
            report["loadavg_at_end"] = loadavg()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=120)
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
