#!/usr/bin/env python
"""Crash safety, measured (issue 20). Not a timed test: it counts, it does not time.

1. kill -9   ``memlane serve`` (SQLite by default, ``--postgres`` for the bundled PostgreSQL) with a
             writer sending adds and updates over REST; the server is SIGKILLed (its whole process
             group) at a random moment ``--kills`` times and restarted. Afterwards: every
             acknowledged add is present with its last acknowledged text (or a later one whose
             request was cut by the kill), every memory's history chain is unbroken (ADD first,
             each UPDATE's old text is the previous new text, the last new text is the memory's
             text), and on SQLite ``PRAGMA integrity_check`` is ``ok`` for every database file.
2. two SDKs  two processes write through ``Memory`` to one SQLite file at once (adds and updates):
             lock errors and lost writes are counted (target: zero of both).

Prints one JSON object (also written to ``--out``); progress goes to stderr:

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/crash_safety.py --kills 10
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/crash_safety.py --kills 10 --postgres --sdk-writes 0
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench_server import free_port, log, machine_facts, start_server
from common import write_report

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

USERS = [f"user{i}" for i in range(8)]


# -- 1. kill -9 under a REST writer -----------------------------------------------------------


def start(home: Path, port: int, postgres: bool) -> subprocess.Popen:
    return start_server(home, port, workers=1, extra=["--no-auth", *(["--postgres"] if postgres else [])])


class Writer:
    """Adds and updates memories until stopped; remembers what the server acknowledged and what
    it was sent without an answer (a request cut by the kill may or may not have been applied)."""

    def __init__(self, url: str, seed: int):
        self.client = httpx.Client(base_url=url, timeout=30)
        self.rng = random.Random(seed)
        self.acked: dict[str, str] = {}  # memory id -> last acknowledged text
        self.unanswered: dict[str, set[str]] = {}  # memory id -> texts sent in updates that got no answer
        self.counts = {"adds_acked": 0, "updates_acked": 0, "unanswered": 0, "errors_4xx_5xx": 0}
        self.running = threading.Event()
        self.stop = threading.Event()
        self._n = 0

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.running.wait(0.1):
                continue
            self._n += 1
            text = f"Fact number {self._n}: I visited city {self.rng.randrange(10**6)}"
            if self.acked and self.rng.random() < 0.4:
                memory_id = self.rng.choice(list(self.acked))
                self._send("PUT", f"/memories/{memory_id}", {"text": text}, memory_id, text)
            else:
                self._send("POST", "/memories", {"messages": text, "user_id": self.rng.choice(USERS),
                                                 "infer": False}, None, text)

    def _send(self, method: str, path: str, body: dict, memory_id: str | None, text: str) -> None:
        try:
            response = self.client.request(method, path, json=body)
        except httpx.HTTPError:  # the server died under the request
            self.counts["unanswered"] += 1
            if memory_id is not None:
                self.unanswered.setdefault(memory_id, set()).add(text)
            time.sleep(0.05)
            return
        if response.status_code != 200:
            self.counts["errors_4xx_5xx"] += 1
            return
        if memory_id is None:
            memory_id = response.json()["results"][0]["id"]
            self.counts["adds_acked"] += 1
        else:
            self.counts["updates_acked"] += 1
        self.acked[memory_id] = text
        self.unanswered.pop(memory_id, None)  # an answer after them: those texts were superseded


def check_chain(events: list[dict], text: str) -> str | None:
    """Why the history chain is broken, or None."""
    if not events or events[0]["event"] != "ADD":
        return "no ADD first"
    for before, after in zip(events, events[1:]):
        if after["event"] != "UPDATE" or after["old_memory"] != before["new_memory"]:
            return f"event {after['id']} does not follow {before['id']}"
    if events[-1]["new_memory"] != text:
        return "the memory's text is not its history's last text"
    return None


def kill_nine(args, home: Path) -> dict:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    writers = [Writer(url, args.seed + n) for n in range(args.writers)]  # each updates only its own memories
    threads = [threading.Thread(target=writer.run, daemon=True) for writer in writers]
    for thread in threads:
        thread.start()
    rng = random.Random(args.seed)
    server = None

    def counts() -> dict:
        return {name: sum(w.counts[name] for w in writers) for name in writers[0].counts}

    try:
        for kill in range(args.kills):
            server = start(home, port, args.postgres)
            for writer in writers:
                writer.running.set()
            time.sleep(rng.uniform(args.min_run, args.max_run))
            os.killpg(server.pid, signal.SIGKILL)
            for writer in writers:
                writer.running.clear()
            server.wait()
            log(f"kill {kill + 1}/{args.kills}: {counts()}")
        server = start(home, port, args.postgres)
        for writer in writers:
            writer.stop.set()
        for thread in threads:
            thread.join()
        missing, stale, broken = [], [], []
        for writer in writers:
            for memory_id, text in writer.acked.items():
                got = httpx.get(f"{url}/memories/{memory_id}", timeout=60)
                if got.status_code != 200:
                    missing.append(memory_id)
                    continue
                stored = got.json()["memory"]
                if stored != text and stored not in writer.unanswered.get(memory_id, ()):
                    stale.append(memory_id)
                why = check_chain(httpx.get(f"{url}/memories/{memory_id}/history", timeout=60).json(), stored)
                if why:
                    broken.append(f"{memory_id}: {why}")
    finally:
        for writer in writers:
            writer.stop.set()
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)  # a clean stop (the bundled PostgreSQL stops with it)
            server.wait(timeout=120)
    integrity = {}
    if not args.postgres:
        for db in sorted(home.rglob("*.db")):
            with sqlite3.connect(db) as con:
                integrity[str(db.relative_to(home))] = con.execute("PRAGMA integrity_check").fetchone()[0]
    return {"backend": "postgres" if args.postgres else "sqlite", "kills": args.kills, "writers": args.writers,
            **counts(), "memories_checked": sum(len(w.acked) for w in writers),
            "missing_acknowledged": len(missing), "stale_acknowledged": len(stale),
            "broken_history_chains": len(broken), "examples": (missing + stale + broken)[:5],
            "integrity_check": integrity or None,
            "integrity_ok": all(v == "ok" for v in integrity.values()) if integrity else None}


# -- 2. two processes, one SQLite file, through the SDK ----------------------------------------


def sdk_worker(db: str, tag: str, writes: int) -> None:
    """Adds ``writes`` memories and updates every third one; prints what was acknowledged and every
    error, as one JSON line."""
    from memlane import Memory

    acked, errors = {}, []
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": db}}}) as memory:
        print("READY", flush=True)
        sys.stdin.readline()  # both start writing at once
        for n in range(writes):
            try:
                text = f"{tag} fact {n}: I keep {n} plants on the balcony"
                memory_id = memory.add(text, user_id=tag, infer=False)["results"][0]["id"]
                acked[memory_id] = text
                if n % 3 == 0:
                    text = f"{tag} fact {n}, updated: I keep {n + 1} plants on the balcony"
                    memory.update(memory_id, text=text)
                    acked[memory_id] = text
            except Exception as exc:  # counted, not hidden: the target is zero
                errors.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps({"acked": acked, "errors": errors}), flush=True)


def two_sdk_processes(args, home: Path) -> dict:
    from memlane import Memory

    db = str(home / "shared.db")
    Memory({"vector_store": {"provider": "sqlite", "config": {"path": db}}}).close()  # created once, up front
    procs = [subprocess.Popen([sys.executable, __file__, "--sdk-worker", db, tag, str(args.sdk_writes)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for tag in ("left", "right")]
    for proc in procs:
        assert proc.stdout.readline().strip() == "READY"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = [json.loads(proc.communicate(timeout=3600)[0].strip().splitlines()[-1]) for proc in procs]
    acked = {k: v for r in results for k, v in r["acked"].items()}
    errors = [e for r in results for e in r["errors"]]
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": db}}}) as memory:
        lost = [memory_id for memory_id, text in acked.items() if (memory.get(memory_id) or {}).get("memory") != text]
    with sqlite3.connect(db) as con:
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    return {"processes": 2, "writes_per_process": args.sdk_writes, "acknowledged_memories": len(acked),
            "errors": len(errors), "lock_errors": sum("lock" in e.lower() for e in errors),
            "error_examples": errors[:3], "lost_writes": len(lost), "integrity_check": integrity}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--postgres", action="store_true", help="the bundled PostgreSQL instead of SQLite")
    parser.add_argument("--writers", type=int, default=4, help="concurrent REST writers")
    parser.add_argument("--min-run", type=float, default=2.0, help="least seconds of writing before a kill")
    parser.add_argument("--max-run", type=float, default=8.0, help="most seconds of writing before a kill")
    parser.add_argument("--sdk-writes", type=int, default=300, help="adds per SDK process (0: skip part 2)")
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--sdk-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sdk_worker:
        db, tag, writes = args.sdk_worker
        sdk_worker(db, tag, int(writes))
        return 0
    report = {"machine": machine_facts()}
    with tempfile.TemporaryDirectory(prefix="memlane-crash-") as tmp:
        home = Path(tmp)
        if args.kills:
            report["kill_nine"] = kill_nine(args, home / "server")
        if args.sdk_writes and not args.postgres:
            report["two_sdk_processes"] = two_sdk_processes(args, home)
    report["machine"]["loadavg_at_end"] = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
