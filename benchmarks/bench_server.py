#!/usr/bin/env python
"""REST server load benchmark (issue 5): 32 concurrent clients against 100k stored memories.

1. setup     a temporary home with one tenant holding ``--memories`` memories spread over
             ``--users`` users, inserted straight into the tenant's store
             (``memory.store.apply(ChangeSet(inserts=...))``) with real embeddings of a pool of
             distinct sentences (each sentence's vector computed once, reused across the pool);
             one API key for the tenant.
2. server    ``memlane serve`` in its own process, as a user runs it, once per ``--workers`` count
             (default 1 and 2 uvicorn workers), after waiting (``--wait-idle``) for the shared
             machine to quieten.
3. load      a separate load-generator process (asyncio with a minimal keep-alive HTTP/1.1 client,
             ~0.1 ms of CPU per request, one connection per client, closed loop: each client sends
             its next request when the previous one answered):
             * ``search_cached``: ``POST /search`` {query, user_id, limit 10} for random users,
               queries drawn from a pool of ``--query-pool`` texts (after warm-up every query
               vector is in the tenant's LRU cache: HTTP + auth + store search) for
               ``--duration`` seconds. This is the run the issue's target applies to.
             * ``search_unique``: the same with never-repeated query texts, so every request
               also embeds its query with the local model (``--unique-duration`` s).
             * ``add``: ``POST /memories`` {one message, user_id, infer: false} (embeds and
               stores one memory per request) for ``--add-duration`` s.
   Per phase: requests/s, p50/p95/p99/max latency (ms, measured by the client), errors (any
   non-200 answer or failed request), and the CPU seconds used by the server process(es), by the
   load generator and by every other process on the machine (it is shared: their CPU is
   reported, not hidden). Targets: search p95 <= 60 ms, zero errors.

Prints one JSON object (also written to ``--out``); progress goes to stderr. Run offline:

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_server.py --out benchmarks/last_server.json
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_server.py --quick     # ~1 minute smoke run
    # two sides of a comparison over one store, populated by the first run and reused by the next
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_server.py --home bench-home --workers 1 --unique-duration 0 \
        --add-duration 0
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_server.py --home bench-home --workers 1 --unique-duration 0 \
        --add-duration 0 --search-flags '{"keyword_search": false}'
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from common import write_report  # noqa: E402  (after the environment is set)

TARGETS = {"search_p95_ms_max": 60.0, "errors_max": 0}

NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Julia", "Kenji", "Lucia",
         "Mateo", "Nadia", "Oscar", "Priya", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wei", "Yusuf", "Zoe"]
CITIES = ["Lisbon", "Berlin", "Osaka", "Nairobi", "Toronto", "Lima", "Krakow", "Hanoi", "Dublin", "Austin",
          "Porto", "Seoul", "Oslo", "Cairo", "Denver", "Valencia"]
THINGS = ["Thai curry", "sushi", "vegan burgers", "dark chocolate", "spicy ramen", "tacos", "sourdough bread",
          "bouldering", "the cello", "trail running", "chess", "woodworking", "birdwatching", "salsa dancing",
          "photography", "gardening", "board games", "Python", "Rust", "Kubernetes", "PostgreSQL", "peanuts",
          "shellfish", "gluten", "pollen", "cats"]
FACTS = ["{n} lives in {c} and loves {t}.", "{n} is allergic to {t}.", "{n} started learning {t} in {c}.",
         "{n}'s sister in {c} sends {t} every winter.", "{n} wants to try {t} on the next trip to {c}.",
         "{n} gave up {t} after moving to {c}.", "{n} talks about {t} with friends from {c} every week."]
QUESTIONS = ["What does {n} like to eat?", "Where does {n} live?", "Is {n} allergic to {t}?",
             "Does {n} enjoy {t}?", "What should I cook for {n} in {c}?", "Which hobbies does {n} have?",
             "Has {n} been to {c}?", "What is {n} learning right now?"]


def log(msg: str) -> None:
    print(f"[bench-server {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sentences(templates: list[str], count: int, rng: random.Random) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        text = rng.choice(templates).format(n=rng.choice(NAMES), c=rng.choice(CITIES), t=rng.choice(THINGS))
        if text in seen:
            text = f"{text[:-1]} (note {len(out)}){text[-1]}"
        seen.add(text)
        out.append(text)
    return out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# -- CPU accounting --------------------------------------------------------------------------


def _ticks_per_s() -> int:
    return os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pids: list[int]) -> float:
    """utime + stime of the given processes (all threads), seconds."""
    total = 0
    for pid in pids:
        try:
            parts = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(parts[11]) + int(parts[12])
        except (OSError, ValueError, IndexError):
            pass
    return total / _ticks_per_s()


def machine_busy_s() -> tuple[float, float]:
    """(busy CPU seconds of the whole machine, wall-clock CPU seconds available) from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    total = sum(fields[:8])
    idle = fields[3] + fields[4]
    return (total - idle) / _ticks_per_s(), total / _ticks_per_s()


def children_of(pid: int) -> list[int]:
    try:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
        return [int(x) for x in out.split()]
    except (OSError, ValueError):
        return []


# -- the load generator (runs in its own process) ---------------------------------------------


def percentiles(latencies_s: list[float]) -> dict:
    import numpy as np

    if not latencies_s:
        return {"n": 0}
    a = np.asarray(latencies_s) * 1000.0
    return {"n": int(a.size), "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2), "p99_ms": round(float(np.percentile(a, 99)), 2),
            "max_ms": round(float(a.max()), 2), "mean_ms": round(float(a.mean()), 2)}


class Connection:
    """A minimal HTTP/1.1 keep-alive client (one connection, one request at a time).

    Much lighter than a general client, so on a 2-core machine the load generator leaves
    the CPU to the server; it still parses every status line, header block and JSON body.
    """

    def __init__(self, host: str, port: int, key: str):
        self.host, self.port = host, port
        self.head = (f"Host: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
                     "Content-Type: application/json\r\n").encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def post(self, path: str, payload: dict) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = json.dumps(payload).encode()
        self.writer.write(b"POST " + path.encode() + b" HTTP/1.1\r\n" + self.head
                          + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("the server closed the connection")
        status = int(status_line.split(b" ", 2)[1])
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                close = True
        data = await self.reader.readexactly(length)
        if close:
            await self.close()
        return status, data


async def _load(cfg: dict) -> dict:
    rng = random.Random(cfg["seed"])
    users = [f"user{i:04d}" for i in range(cfg["users"])]
    pool = cfg.get("queries") or []
    counter = iter(range(10**9))
    latencies: list[float] = []
    errors: list[str] = []
    statuses: dict[str, int] = {}
    host, port = cfg["url"].removeprefix("http://").rsplit(":", 1)

    def body() -> tuple[str, dict]:
        user = rng.choice(users)
        if cfg["kind"] == "search_cached":
            return "/search", {"query": rng.choice(pool), "user_id": user, "limit": 10, **cfg["search_flags"]}
        if cfg["kind"] == "search_unique":
            n = next(counter)
            text = f"{rng.choice(pool)} ({cfg['seed']}-{n})"
            return "/search", {"query": text, "user_id": user, "limit": 10, **cfg["search_flags"]}
        n = next(counter)
        return "/memories", {"messages": [{"role": "user", "content": f"{rng.choice(pool)} [{cfg['seed']}-{n}]"}],
                             "user_id": user, "infer": False}

    async def client(deadline: float, record: bool, requests: list[tuple[str, dict]] | None = None) -> None:
        connection = Connection(host, int(port), cfg["key"])
        try:
            while (requests if requests is not None else time.perf_counter() < deadline):
                path, payload = requests.pop() if requests is not None else body()
                t0 = time.perf_counter()
                try:
                    code, data = await connection.post(path, payload)
                    ok = code == 200
                    if ok:
                        json.loads(data)
                    status = str(code)
                except Exception as exc:  # a failed request is an error, not a crash of the benchmark
                    await connection.close()
                    ok, status = False, type(exc).__name__
                elapsed = time.perf_counter() - t0
                if record:
                    statuses[status] = statuses.get(status, 0) + 1
                    if ok:
                        latencies.append(elapsed)
                    elif len(errors) < 5:
                        errors.append(status)
        finally:
            await connection.close()

    if cfg["kind"] == "search_cached":  # every query of the pool once, so the measured run is all cache hits
        shares = [[("/search", {"query": q, "user_id": users[0], "limit": 10, **cfg["search_flags"]})
                   for q in pool[i::cfg["clients"]]]
                  for i in range(cfg["clients"])]
        await asyncio.gather(*(client(0, False, share) for share in shares))
    if cfg["warmup"] > 0:
        end = time.perf_counter() + cfg["warmup"]
        await asyncio.gather(*(client(end, False) for _ in range(cfg["clients"])))
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    end = t0 + cfg["duration"]
    await asyncio.gather(*(client(end, True) for _ in range(cfg["clients"])))
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    failed = sum(n for s, n in statuses.items() if s != "200")
    return {"kind": cfg["kind"], "clients": cfg["clients"], "duration_s": round(wall, 2),
            "requests": len(latencies) + failed, "ok": len(latencies), "errors": failed,
            "error_samples": errors, "statuses": statuses,
            "throughput_rps": round(len(latencies) / wall, 1), "latency": percentiles(latencies),
            "loadgen_cpu_s": round((cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime), 2)}


def loadgen_main(config_path: str) -> int:
    cfg = json.loads(Path(config_path).read_text())
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    print(json.dumps(asyncio.run(_load(cfg))), flush=True)
    return 0


# -- the benchmark driver -------------------------------------------------------------------


def populate(home: Path, memories: int, users: int, pool_size: int, seed: int) -> dict:
    import numpy as np

    from memlane.core import timeutil
    from memlane.embeddings.local import LocalEmbedder
    from memlane.hosting.keys import KeyStore
    from memlane.memory import Memory
    from memlane.core.models import MemoryRecord, text_hash
    from memlane.store import ChangeSet
    from memlane.hosting.tenancy import Tenants

    rng = random.Random(seed)
    embedder = LocalEmbedder()
    texts = sentences(FACTS, pool_size, rng)
    t0 = time.perf_counter()
    vectors = np.asarray(embedder.embed(texts, "document"), dtype=np.float32)
    embed_s = time.perf_counter() - t0
    tenants = Tenants(home, embedder=embedder)
    memory: Memory = tenants.memory("bench")
    user_ids = [f"user{i:04d}" for i in range(users)]
    t0 = time.perf_counter()
    now = timeutil.now_iso()
    for start in range(0, memories, 5000):
        batch = []
        for i in range(start, min(memories, start + 5000)):
            j = rng.randrange(len(texts))
            batch.append(MemoryRecord(id=str(uuid.uuid4()), text=texts[j], hash=text_hash(texts[j]), created_at=now,
                                      updated_at=now, user_id=user_ids[i % users], role="user",
                                      metadata={"category": rng.choice(("food", "travel", "work", "health"))},
                                      vector=vectors[j]))
        memory.store.apply(ChangeSet(inserts=batch))
    insert_s = time.perf_counter() - t0
    count = memory.info()["memories"]
    tenants.close()
    keys = KeyStore(home / "keys.db")
    key, _ = keys.create("bench")
    keys.close()
    return {"memories": count, "users": users, "distinct_texts": len(texts), "embed_pool_s": round(embed_s, 1),
            "insert_s": round(insert_s, 1), "key": key}


def prepared(home: Path, args: argparse.Namespace) -> tuple[dict, str]:
    """The populated home's setup and an API key of its tenant: populated now, or reused when ``--home`` holds
    one populated with the same parameters (its ``bench_setup.json``)."""
    wanted = {"memories": args.memories, "users": args.users, "text_pool": args.text_pool, "seed": args.seed}
    marker = home / "bench_setup.json"
    if args.home is not None and marker.exists() and json.loads(marker.read_text())["params"] == wanted:
        from memlane.hosting.keys import KeyStore

        keys = KeyStore(home / "keys.db")
        key, _ = keys.create("bench")
        keys.close()
        setup = {**json.loads(marker.read_text())["setup"], "reused": str(home)}
        log(f"reusing the home populated in {home}")
        return setup, key
    home.mkdir(parents=True, exist_ok=True)
    log(f"populating {args.memories:,} memories over {args.users} users ...")
    setup = populate(home, args.memories, args.users, args.text_pool, args.seed)
    key = setup.pop("key")
    marker.write_text(json.dumps({"params": wanted, "setup": setup}))
    return setup, key


def stop_server(server: subprocess.Popen, timeout: float = 60) -> None:
    """Stop a server ``start_server`` started (its whole process group): SIGTERM, then SIGKILL after ``timeout``."""
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


def start_server(home: Path, port: int, workers: int, threads: int | None = None,
                 extra: list[str] = (), config: Path | None = None) -> subprocess.Popen:
    """``memlane serve`` in its own process group (``os.killpg`` reaches its workers), once it answers."""
    command = [sys.executable, "-m", "memlane.cli", "--home", str(home),
               *(["--config", str(config)] if config else []), "serve", "--port", str(port),
               "--workers", str(workers), "--log-level", "warning", *(["--threads", str(threads)] if threads else []),
               *extra]
    # the log goes to a file: a pipe nobody reads fills up, and a server logging faults then blocks on it for good
    home.mkdir(parents=True, exist_ok=True)
    log = home / "bench-server.log"
    with log.open("w") as sink:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink, text=True, start_new_session=True)
    return wait_until_answering(server, port, 180, lambda: log.read_text(errors="replace"))


def wait_until_answering(server: subprocess.Popen, port: int, seconds: float,
                         output: Callable[[], str]) -> subprocess.Popen:
    """``server`` once its ``/health`` answers 200; its last output (``output()``) if it exits first."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited: {output()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"the server did not come up in {seconds:g} s")


def run_phase(cfg: dict, server: subprocess.Popen, workdir: Path) -> dict:
    path = workdir / f"load-{cfg['kind']}.json"
    path.write_text(json.dumps(cfg))
    pids = [server.pid, *children_of(server.pid)]
    server_cpu0 = proc_cpu_s(pids)
    busy0, avail0 = machine_busy_s()
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    loadgen = subprocess.run([sys.executable, __file__, "--loadgen", str(path)], capture_output=True, text=True,
                             timeout=cfg["duration"] + cfg["warmup"] + 600)
    kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy1, avail1 = machine_busy_s()
    server_cpu = proc_cpu_s(pids) - server_cpu0
    if loadgen.returncode != 0:
        raise RuntimeError(f"load generator failed: {loadgen.stderr[-3000:]}")
    result = json.loads(loadgen.stdout.strip().splitlines()[-1])
    loadgen_cpu = (kids1.ru_utime - kids0.ru_utime) + (kids1.ru_stime - kids0.ru_stime)
    available, busy = avail1 - avail0, busy1 - busy0
    others = max(0.0, busy - server_cpu - loadgen_cpu)
    # over the whole phase: priming + warm-up + measured run
    result["cpu_whole_phase"] = {
        "machine_cpu_s_available": round(available, 1),
        "server_cpu_s": round(server_cpu, 1),
        "loadgen_cpu_s": round(loadgen_cpu, 1),
        "other_processes_cpu_s": round(others, 1),
        "other_processes_share": round(others / available, 3) if available else None,
    }
    return result


def wait_for_idle(max_wait: float, threshold: float = 0.15) -> dict:
    """Wait (at most ``max_wait`` s) until other processes use < ``threshold`` of the machine for 3 s."""
    start = time.monotonic()
    share = None
    while True:
        busy0, avail0 = machine_busy_s()
        time.sleep(3.0)
        busy1, avail1 = machine_busy_s()
        share = round((busy1 - busy0) / max(avail1 - avail0, 1e-9), 3)
        if share < threshold or time.monotonic() - start >= max_wait:
            return {"waited_s": round(time.monotonic() - start, 1), "busy_share_at_start": share}


def machine_facts() -> dict:
    facts = {"date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "cpu_count": os.cpu_count(),
             "platform": platform.platform(), "python": sys.version.split()[0]}
    try:
        facts["cpu_model"] = next(line.split(":", 1)[1].strip() for line in
                                  Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name"))
        mem = next(line for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal"))
        facts["mem_total_gib"] = round(int(mem.split()[1]) / 1024 / 1024, 1)
        facts["loadavg_at_start"] = [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, StopIteration, ValueError):
        pass
    import importlib.metadata as md

    for package in ("fastapi", "starlette", "uvicorn", "httpx", "torch"):
        try:
            facts[package] = md.version(package)
        except md.PackageNotFoundError:
            facts[package] = None
    try:
        facts["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                             cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    except OSError:
        pass
    return facts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loadgen", help=argparse.SUPPRESS)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of the cached-query search run")
    parser.add_argument("--unique-duration", type=float, default=20.0, help="seconds of the unique-query run")
    parser.add_argument("--add-duration", type=float, default=20.0, help="seconds of the add (infer=false) run")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--query-pool", type=int, default=500, help="distinct query texts of the cached run")
    parser.add_argument("--text-pool", type=int, default=5000, help="distinct memory texts (embedded for real)")
    parser.add_argument("--workers", type=lambda v: [int(x) for x in v.split(",")], default=[1, 2],
                        help="uvicorn worker counts to run, comma-separated (default 1,2)")
    parser.add_argument("--threads", type=int, default=None, help="memlane serve --threads (default: 40)")
    parser.add_argument("--runtimes", type=lambda v: v.split(","), default=["auto"],
                        help="the local model's runtimes to serve with, in turn (auto, onnx, torch)")
    parser.add_argument("--wait-idle", type=float, default=120.0,
                        help="wait up to this many seconds for other processes to quieten before each run")
    parser.add_argument("--rate-limit", action="store_true",
                        help="serve with the default rate and concurrency limits (off by default: 32 clients of one "
                             "key would measure the per-key bucket, 100 req/s, not the server)")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="smoke run: 10k memories, short phases")
    parser.add_argument("--search-flags", type=json.loads, default={},
                        help='JSON added to every search body, e.g. \'{"keyword_search": false}\' (default: none)')
    parser.add_argument("--home", type=Path,
                        help="keep the populated home in this directory and reuse it when it holds one of the same "
                             "--memories, --users, --text-pool and --seed (sides of a comparison then search one "
                             "store, built once)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.loadgen:
        return loadgen_main(args.loadgen)
    if args.quick:
        args.memories, args.duration, args.unique_duration, args.add_duration, args.warmup = 10_000, 10, 5, 5, 2
        args.text_pool, args.wait_idle = 1000, 0

    result: dict = {"benchmark": "bench_server", "machine": machine_facts(), "targets": TARGETS,
                    "params": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items() if k not in ("loadgen", "out")}}
    rng = random.Random(args.seed)
    queries = sentences(QUESTIONS, args.query_pool, rng)
    with tempfile.TemporaryDirectory(prefix="memlane-bench-server-") as tmp:
        home = args.home or Path(tmp)
        setup, key = prepared(home, args)
        result["setup"] = setup
        log(f"setup: {setup}")
        runs = {}
        for runtime, workers in [(r, w) for r in args.runtimes for w in args.workers]:
            idle = wait_for_idle(args.wait_idle) if args.wait_idle > 0 else None
            port = free_port()
            config = home / f"{runtime}.json"
            config.write_text(json.dumps({"embedder": {"provider": "local", "config": {"runtime": runtime}}}))
            server = start_server(home, port, workers, args.threads, config=config,
                                  extra=[] if args.rate_limit else ["--no-rate-limit"])
            log(f"server up on port {port} (pid {server.pid}, workers {workers}, runtime {runtime}); idle wait {idle}")
            phases: dict = {"idle_wait": idle} if idle else {}
            try:
                common = {"url": f"http://127.0.0.1:{port}", "key": key, "users": args.users,
                          "clients": args.clients, "warmup": args.warmup, "search_flags": args.search_flags}
                for kind, duration, pool in (("search_cached", args.duration, queries),
                                             ("search_unique", args.unique_duration, queries),
                                             ("add", args.add_duration, sentences(FACTS, 2000, rng))):
                    if duration <= 0:
                        continue
                    log(f"workers {workers}, phase {kind}: {args.clients} clients, {duration:.0f} s "
                        f"(+{args.warmup:.0f} s warm-up) ...")
                    phases[kind] = run_phase({**common, "kind": kind, "duration": duration, "queries": pool,
                                              "seed": args.seed + 10 * workers + len(phases)}, server, home)
                    log(f"  {kind}: {phases[kind]['throughput_rps']} req/s, errors {phases[kind]['errors']}, "
                        f"latency {phases[kind]['latency']}, cpu {phases[kind]['cpu_whole_phase']}")
            finally:
                stop_server(server, timeout=30)
            name = f"workers_{workers}" if len(args.runtimes) == 1 else f"{runtime}_workers_{workers}"
            runs[name if name not in runs else f"{name}_{sum(k.startswith(name) for k in runs) + 1}"] = phases
    result["runs"] = runs
    checks = {}
    for name, phases in runs.items():
        cached = phases.get("search_cached", {}).get("latency", {})
        errors = sum(p.get("errors", 0) for p in phases.values() if isinstance(p, dict))
        checks[name] = {"search_cached_p95_ms": cached.get("p95_ms"),
                        "search_cached_p95_ok": cached.get("p95_ms", 1e9) <= TARGETS["search_p95_ms_max"],
                        "errors_total": errors, "errors_ok": errors <= TARGETS["errors_max"]}
    result["checks"] = checks
    write_report(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
