#!/usr/bin/env python
"""Core engine benchmark: storage throughput and search latency of memlane's embedded store.

Per size (``--sizes``), on a fresh temporary SQLite store:

1. insert      bulk ``store.apply(ChangeSet(inserts=batch))`` of records with precomputed
               random unit vectors (storage only, no embedding)
2. scoped      ``store.search(qvec, scoped_filter({"user_id": u}), limit, None)`` with
               precomputed real query vectors (embedding excluded); limit 10, limit 100,
               limit 10 + metadata filter; plus the facade ``memory.search`` on cached
               queries (facade overhead without embedding)
3. embed+search ``memory.search(text, user_id=u, limit=10)`` on never-repeated texts
               (query cache always misses) beside the embedder alone on the same texts
4. admin       unscoped ``store.search(qvec, scoped_filter({}, {"user_id": "*"}), 10, None)``:
               first call (reads every vector), steady state, and the first call after a
               single insert / vector update / delete (catches up from the change log)

Once (own fresh store): ``memory.add(messages)`` with the local embedder vs
``LocalEmbedder.embed(texts, "document")`` on the same texts and batches; then the
embedder alone with torch's default thread count vs one thread.

Every timed block records how much of the machine other processes used meanwhile
(``other_processes_cpu_share``) and per-call CPU time beside wall time: read latencies
on a shared machine together with those.

Prints one JSON object (also written to ``--out``). Run with HF_HUB_OFFLINE=1.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import inspect
import json
import os
import platform
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from memlane.core import scope, timeutil  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402
from memlane.core.ids import new_id  # noqa: E402
from memlane.memory import Memory  # noqa: E402
from memlane.core.models import text_hash  # noqa: E402
from memlane.core.models import MemoryRecord  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402
from memlane.store.base import Delete, Update  # noqa: E402

DIMS = 384
CATEGORIES = ("food", "travel", "work", "health", "family")

TARGETS = {
    "insert_per_s_min": 20_000,
    "scoped_p95_ms_max_at_100k": 2.0,
    "embed_search_p95_ms_max": 30.0,
    "admin_p95_ms_max_at_100k": 50.0,
    "add_vs_embedder_max_slowdown": 0.10,
}

# -- realistic text generation -------------------------------------------------

NAMES = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivan", "Julia", "Kenji", "Lucia",
         "Mateo", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wei", "Yusuf"]
CITIES = ["Lisbon", "Berlin", "Osaka", "Nairobi", "Toronto", "Lima", "Krakow", "Hanoi", "Dublin", "Austin",
          "Porto", "Seoul", "Oslo", "Cairo", "Denver", "Valencia"]
FOODS = ["Thai curry", "sushi", "vegan burgers", "dark chocolate", "spicy ramen", "Greek salad", "tacos",
         "sourdough bread", "oat milk lattes", "grilled salmon", "mushroom risotto", "falafel"]
HOBBIES = ["bouldering", "playing the cello", "trail running", "chess", "woodworking", "birdwatching",
           "salsa dancing", "photography", "gardening", "open-water swimming", "painting", "board games"]
JOBS = ["data engineer", "nurse", "high-school teacher", "product manager", "architect", "chef",
        "physiotherapist", "lawyer", "game designer", "electrician", "pharmacist", "journalist"]
ALLERGIES = ["peanuts", "shellfish", "gluten", "cats", "pollen", "lactose", "penicillin", "dust mites"]
RELATIVES = ["sister", "brother", "mother", "father", "daughter", "son", "grandmother", "cousin"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TOOLS = ["Python", "Rust", "Figma", "Excel", "Kubernetes", "Notion", "Blender", "PostgreSQL"]

FACT_TEMPLATES = [
    "{name} is a {job} living in {city}.",
    "{name} loves {food} and orders it every {day}.",
    "{name} is allergic to {allergy}, so avoid suggesting anything with it.",
    "{name} started {hobby} last spring and practises on {day}s.",
    "{name}'s {relative} lives in {city} and visits twice a year.",
    "{name} moved to {city} after getting a job as a {job}.",
    "{name} prefers {food} over anything else when eating out in {city}.",
    "{name} uses {tool} every day at work as a {job}.",
    "On {day} evenings {name} usually goes {hobby_gerund} with a friend.",
    "{name} wants to learn {tool} to switch careers from {job}.",
    "{name} is planning a trip to {city} with their {relative} next month.",
    "{name} gave up {food} because of a {allergy} allergy.",
    "{name} asked me to remind them about their {relative}'s birthday on {day}.",
    "{name} finds {hobby} relaxing after long shifts as a {job}.",
]
QUERY_TEMPLATES = [
    "What food does {name} like?",
    "Where does {name} live now?",
    "Is {name} allergic to anything?",
    "What does {name} do for work?",
    "Which hobbies does {name} have?",
    "When does {name} usually go {hobby_gerund}?",
    "Does {name} have family in {city}?",
    "What should I cook for {name} on {day}?",
    "Which tools does {name} use as a {job}?",
    "Any travel plans for {name} involving {city}?",
    "Can {name} eat {food}?",
    "Who is {name}'s {relative}?",
    "What is {name} trying to learn?",
    "Recommend a weekend activity in {city} for {name}.",
]


def _fill(template: str, rng: random.Random) -> str:
    hobby = rng.choice(HOBBIES)
    return template.format(
        name=rng.choice(NAMES), city=rng.choice(CITIES), food=rng.choice(FOODS), hobby=hobby,
        hobby_gerund=hobby if hobby.endswith("ing") else "out", job=rng.choice(JOBS),
        allergy=rng.choice(ALLERGIES), relative=rng.choice(RELATIVES), day=rng.choice(WEEKDAYS),
        tool=rng.choice(TOOLS),
    )


def distinct_texts(templates: list[str], count: int, rng: random.Random) -> list[str]:
    """``count`` distinct sentences from templates × slot values; a clause is added when combinations run out."""
    seen: set[str] = set()
    out: list[str] = []
    attempts = 0
    while len(out) < count:
        text = _fill(rng.choice(templates), rng)
        attempts += 1
        if text in seen and attempts > 20 * count:
            text = f"{text[:-1]}, as mentioned in conversation {len(out)}{text[-1]}"
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


# -- measurement helpers -------------------------------------------------------


def stats_ms(samples_s: list[float], cpu_s: list[float] | None = None, noise: dict | None = None) -> dict:
    """Wall-clock percentiles (the figures); with ``cpu_s``, the same percentiles of the
    process CPU time of each call (much less sensitive to other processes on the machine)."""
    a = np.asarray(samples_s, dtype=np.float64) * 1000.0
    out = {
        "n": int(a.size),
        "p50_ms": round(float(np.percentile(a, 50)), 3),
        "p95_ms": round(float(np.percentile(a, 95)), 3),
        "p99_ms": round(float(np.percentile(a, 99)), 3),
        "mean_ms": round(float(a.mean()), 3),
        "min_ms": round(float(a.min()), 3),
        "max_ms": round(float(a.max()), 3),
    }
    if cpu_s is not None:
        c = np.asarray(cpu_s, dtype=np.float64) * 1000.0
        out["cpu_p50_ms"] = round(float(np.percentile(c, 50)), 3)
        out["cpu_p95_ms"] = round(float(np.percentile(c, 95)), 3)
        out["cpu_p99_ms"] = round(float(np.percentile(c, 99)), 3)
    if noise is not None:
        out.update(noise)
    return out


class Noise:
    """CPU used by *other* processes while a block ran, as a share of the whole machine
    (0 = we had the machine to ourselves, 0.5 = others kept one of two cores busy)."""

    @staticmethod
    def _sample() -> tuple[int, int, int]:
        try:
            fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
            total = sum(fields[:8])  # user nice system idle iowait irq softirq steal
            idle = fields[3] + fields[4]
            parts = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
            own = int(parts[11]) + int(parts[12])  # utime + stime of this process (all threads)
            return total, idle, own, fields[4]
        except (OSError, ValueError, IndexError):
            return 0, 0, 0, 0

    def __enter__(self) -> "Noise":
        self._start = self._sample()
        self.result: dict = {}
        return self

    def __exit__(self, *exc: object) -> None:
        total0, idle0, own0, iowait0 = self._start
        total1, idle1, own1, iowait1 = self._sample()
        total = total1 - total0
        if total > 0:
            others = max(0, (total - (idle1 - idle0)) - (own1 - own0))
            self.result["other_processes_cpu_share"] = round(others / total, 3)
            self.result["iowait_share"] = round((iowait1 - iowait0) / total, 3)
        else:
            self.result["other_processes_cpu_share"] = None
            self.result["iowait_share"] = None


def wait_for_idle(max_wait: float, threshold: float = 0.15) -> dict:
    """Wait (at most ``max_wait`` s) until other processes use < ``threshold`` of the machine for 2 s."""
    if max_wait <= 0:
        return {"waited_s": 0.0}
    t0 = time.perf_counter()
    share = None
    while True:
        with Noise() as n:
            time.sleep(2.0)
        share = n.result["other_processes_cpu_share"]
        if share is None or share < threshold or time.perf_counter() - t0 >= max_wait:
            break
    return {"waited_s": round(time.perf_counter() - t0, 1), "busy_share_when_started": share}


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def machine_facts() -> dict:
    facts: dict = {
        "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("MemTotal", "MemAvailable"):
                facts[f"{key.lower()}_gib"] = round(int(value.split()[0]) / 1024 / 1024, 2)
    except OSError:
        pass
    try:
        import torch

        facts["torch"] = torch.__version__
        facts["torch_threads"] = torch.get_num_threads()
    except ImportError:
        facts["torch"] = None
    try:
        import sentence_transformers

        facts["sentence_transformers"] = sentence_transformers.__version__
    except ImportError:
        pass
    try:
        root = Path(__file__).resolve().parent.parent
        facts["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                             text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=root, capture_output=True,
                               text=True, timeout=10).stdout.strip()
        facts["src_dirty"] = bool(dirty)
    except (OSError, subprocess.SubprocessError):
        pass
    import memlane

    src = Path(memlane.__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(src.rglob("*.py")):
        digest.update(str(path.relative_to(src)).encode() + b"\0" + path.read_bytes())
    facts["memlane_src"] = str(src)
    facts["memlane_src_sha256"] = digest.hexdigest()[:16]
    return facts


def bytes_written() -> int:
    """Bytes this process has passed to write() so far (/proc/self/io wchar), 0 if unknown."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("wchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def new_memory_id() -> str:
    """Ids as ``Memory.insert`` makes them (time-ordered UUIDv7, ``memlane.core.ids``). The id order drives
    the write cost of the ``id`` and ``history.memory_id`` indexes, so keep this in step with memlane."""
    return new_id()


def unit_vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    m = rng.standard_normal((n, DIMS), dtype=np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    return m


def open_memory(path: Path, embedder: LocalEmbedder) -> Memory:
    return Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(path)}}}, embedder=embedder)


# -- sections ------------------------------------------------------------------


def bench_insert(memory: Memory, size: int, users: list[str], batch_size: int, seed: int) -> dict:
    """Bulk insert of records with random unit vectors; timing covers store.apply only,
    record building (texts, uuids, hashes, vectors) is timed separately."""
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    apply_s = 0.0
    build_s = 0.0
    batches = 0
    texts_pool = distinct_texts(FACT_TEMPLATES, min(size, 20_000), prng)
    user_idx = rng.integers(0, len(users), size=size)
    cats = rng.integers(0, len(CATEGORIES), size=size)
    levels = rng.integers(0, 10, size=size)
    noise, shares, iowaits, rates = Noise(), [], [], []
    gc.collect()
    written0 = bytes_written()
    for start in range(0, size, batch_size):
        stop = min(size, start + batch_size)
        t0 = time.perf_counter()
        vecs = unit_vectors(rng, stop - start)
        now = timeutil.now_iso()
        batch = []
        for j, i in enumerate(range(start, stop)):
            text = texts_pool[i % len(texts_pool)]
            batch.append(MemoryRecord(
                id=new_memory_id(), text=text, hash=text_hash(text), created_at=now, updated_at=now,
                user_id=users[user_idx[i]], role="user",
                metadata={"category": CATEGORIES[cats[i]], "level": int(levels[i])}, vector=vecs[j],
            ))
        t1 = time.perf_counter()
        with noise:
            memory.store.apply(ChangeSet(inserts=batch))
        t2 = time.perf_counter()
        shares.append(noise.result["other_processes_cpu_share"])
        iowaits.append(noise.result["iowait_share"])
        rates.append((stop - start) / (t2 - t1))
        build_s += t1 - t0
        apply_s += t2 - t1
        batches += 1
    written = bytes_written() - written0
    db = memory.store.path
    file_bytes = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
    return {
        "memories": size,
        "batch_size": batch_size,
        "batches": batches,
        "apply_seconds": round(apply_s, 3),
        "memories_per_s": round(size / apply_s, 1),
        "record_build_seconds": round(build_s, 3),
        "memories_per_s_incl_record_build": round(size / (apply_s + build_s), 1),
        "db_bytes_after_insert": file_bytes,
        "bytes_written_per_memory": round(written / size) if written else None,
        "memories_per_s_first_batch": round(rates[0], 1),
        "memories_per_s_last_batch": round(rates[-1], 1),
        "memories_per_user_mean": round(size / len(users), 2),
        "other_processes_cpu_share": round(float(np.mean([x for x in shares if x is not None] or [0])), 3),
        "iowait_share": round(float(np.mean([x for x in iowaits if x is not None] or [0])), 3),
    }


def timed_loop(fn, n: int, warmup: int) -> dict:
    """Warm up, then time ``n`` calls: wall clock (perf_counter) and process CPU time."""
    for i in range(warmup):
        fn(i)
    gc.collect()
    wall, cpu = [], []
    with Noise() as noise:
        for i in range(warmup, warmup + n):
            c0 = time.process_time()
            t0 = time.perf_counter()
            fn(i)
            t1 = time.perf_counter()
            cpu.append(time.process_time() - c0)
            wall.append(t1 - t0)
    return stats_ms(wall, cpu, noise.result)


def bench_scoped(memory: Memory, users: list[str], qvecs: np.ndarray, qtexts: list[str], n: int, seed: int) -> dict:
    rng = random.Random(seed)
    store = memory.store
    plan = [(rng.choice(users), rng.randrange(len(qvecs)), rng.choice(CATEGORIES)) for _ in range(n + 200)]
    hits: dict[str, list[int]] = {}

    def variant(name: str, limit: int, with_category: bool):
        counts = hits.setdefault(name, [])

        def run(i: int) -> None:
            user, q, cat = plan[i]
            where = scope.scoped_filter({"user_id": user}, {"category": cat} if with_category else None)
            counts.append(len(store.search(qvecs[q], where, limit, None)))
        return run

    # Warm pass: one query per user, so the first variant does not pay for the pages the bulk insert
    # just wrote (measured: without it the first variant's p50 at 100k is ~0.65 ms instead of ~0.4 ms).
    for k, user in enumerate(users):
        store.search(qvecs[k % len(qvecs)], scope.scoped_filter({"user_id": user}, None), 10, None)
    out = {}
    for name, limit, with_cat in (("limit10", 10, False), ("limit100", 100, False), ("limit10_category", 10, True)):
        out[name] = timed_loop(variant(name, limit, with_cat), n, warmup=200)
        out[name]["mean_results"] = round(float(np.mean(hits[name][200:])), 2)

    # Facade without embedding: memory.search on texts whose vectors are already in the LRU cache.
    for text in qtexts:
        memory.embeddings.query(text)
    before = memory.embeddings.cache_info()

    def facade(i: int) -> None:
        user, q, _ = plan[i]
        memory.search(qtexts[q], user_id=user, limit=10)

    out["facade_limit10_cached_query"] = timed_loop(facade, n, warmup=200)
    after = memory.embeddings.cache_info()
    out["facade_limit10_cached_query"]["cache_misses_during_run"] = after.misses - before.misses
    return out


def bench_embed_search(memory: Memory, users: list[str], texts: list[str], warmup: int, seed: int) -> dict:
    """memory.search with texts never seen before (LRU misses every time), interleaved with the
    embedder alone on the same text (alternating which goes first), so both see the same noise."""
    rng = random.Random(seed)
    embedder = memory.embeddings.embedder
    for text in texts[:warmup]:  # warm-up: the model, tokenizer and store
        embedder.embed([text], "query")
        memory.search(text, user_id=rng.choice(users), limit=10)
    measured = texts[warmup:]
    info0 = memory.embeddings.cache_info()
    gc.collect()
    wall: dict[int, list[float]] = {0: [], 1: []}
    cpu: dict[int, list[float]] = {0: [], 1: []}
    with Noise() as noise:
        for i, text in enumerate(measured):
            user = rng.choice(users)
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                c0 = time.process_time()
                t0 = time.perf_counter()
                if which == 0:
                    memory.search(text, user_id=user, limit=10)
                else:
                    embedder.embed([text], "query")
                wall[which].append(time.perf_counter() - t0)
                cpu[which].append(time.process_time() - c0)
    info1 = memory.embeddings.cache_info()
    return {
        "memory_search_limit10": stats_ms(wall[0], cpu[0], noise.result),
        "embedder_only_query": stats_ms(wall[1], cpu[1], noise.result),
        "search_minus_embedder_p50_ms": round((np.median(wall[0]) - np.median(wall[1])) * 1000, 3),
        "query_cache_hits_during_run": info1.hits - info0.hits,
        "query_cache_misses_during_run": info1.misses - info0.misses,
    }


def bench_admin(memory: Memory, users: list[str], qvecs: np.ndarray, n: int, seed: int) -> dict:
    rng = random.Random(seed)
    store = memory.store
    where = scope.scoped_filter({}, {"user_id": "*"})
    where_cat = scope.scoped_filter({}, {"user_id": "*", "category": "health"})
    gc.collect()
    t0 = time.perf_counter()
    store.search(qvecs[0], where, 10, None)  # first call: builds the in-memory matrix
    first = time.perf_counter() - t0

    out: dict = {"first_call_incl_matrix_rebuild_ms": round(first * 1000, 1)}
    out["limit10"] = timed_loop(lambda i: store.search(qvecs[rng.randrange(len(qvecs))], where, 10, None),
                                n, warmup=20)
    out["limit10_category"] = timed_loop(
        lambda i: store.search(qvecs[rng.randrange(len(qvecs))], where_cat, 10, None), n, warmup=20)

    # After a committed write the next admin search brings the matrix up to date (before the
    # change log, it re-read every vector): time that first call after one insert, after one
    # vector update and after one delete, 3 times each.
    after: dict[str, list[float]] = {"insert": [], "update": [], "delete": []}
    late_ids = []
    for k in range(3):
        for kind in after:
            vec = unit_vectors(np.random.default_rng(seed + k), 1)[0]
            now = timeutil.now_iso()
            if kind == "insert":
                late_ids.append(new_memory_id())
                change = ChangeSet(inserts=[MemoryRecord(
                    id=late_ids[-1], text=f"late write {k}", hash=text_hash(f"late write {k}"), created_at=now,
                    updated_at=now, user_id=users[0], metadata={"category": "work", "level": 1}, vector=vec)])
            elif kind == "update":
                change = ChangeSet(updates=[Update(late_ids[-1], now, vector=vec)])
            else:
                change = ChangeSet(deletes=[Delete(late_ids[-1])])
            store.apply(change)
            gc.collect()
            t0 = time.perf_counter()
            store.search(qvecs[k], where, 10, None)
            after[kind].append(time.perf_counter() - t0)
    for kind, samples in after.items():
        out[f"first_call_after_one_{kind}_ms"] = [round(s * 1000, 2) for s in samples]
    out["matrix_full_reads"] = getattr(store._matrix, "rebuilds", None)
    out["matrix_bytes"] = int(store._matrix._matrix.nbytes) if store._matrix._matrix is not None else None
    return out


def bench_add(embedder: LocalEmbedder, workdir: Path, n_texts: int, batch: int, seed: int) -> dict:
    """memory.add (validation + embedding + store) vs the embedder alone, same texts and batches,
    interleaved batch by batch (alternating which goes first) so both see the same noise."""
    prng = random.Random(seed)
    texts = distinct_texts(FACT_TEMPLATES, n_texts + 64, prng)
    warm, texts = texts[:64], texts[64:]
    memory = open_memory(workdir / "add.db", embedder)
    # If add grows an LLM step (memory formation), measure the verbatim path: embedding + storage only.
    extra = {"infer": False} if "infer" in inspect.signature(memory.add).parameters else {}
    try:
        embedder.embed(warm, "document")
        memory.add([{"role": "user", "content": t} for t in warm], user_id="warmup", **extra)
        batches = [texts[i:i + batch] for i in range(0, len(texts), batch)]
        wall = {0: 0.0, 1: 0.0}
        cpu = {0: 0.0, 1: 0.0}
        ratios = []
        gc.collect()
        with Noise() as noise:
            for k, chunk in enumerate(batches):
                messages = [{"role": "user", "content": t} for t in chunk]
                pair = {}
                for which in ((0, 1) if k % 2 == 0 else (1, 0)):
                    c0 = time.process_time()
                    t0 = time.perf_counter()
                    if which == 0:
                        result = memory.add(messages, user_id=f"user{k}", **extra)
                        assert len(result["results"]) == len(chunk), result
                    else:
                        embedder.embed(chunk, "document")
                    pair[which] = time.perf_counter() - t0
                    wall[which] += pair[which]
                    cpu[which] += time.process_time() - c0
                ratios.append(pair[1] / pair[0])  # embedder time / add time = add rate / embedder rate
        add_rate, embed_rate = len(texts) / wall[0], len(texts) / wall[1]
        return {
            "texts": len(texts),
            "batch_size": batch,
            "batches": len(batches),
            "add_kwargs": extra,
            "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
            "embedder_batch_size": embedder.batch_size,
            "add_texts_per_s": round(add_rate, 1),
            "embedder_texts_per_s": round(embed_rate, 1),
            "add_over_embedder_ratio": round(add_rate / embed_rate, 3),
            "add_over_embedder_ratio_median_per_batch": round(float(np.median(ratios)), 3),
            "add_over_embedder_ratio_per_batch": [round(r, 3) for r in ratios],
            "add_cpu_texts_per_s": round(len(texts) / cpu[0], 1),
            "embedder_cpu_texts_per_s": round(len(texts) / cpu[1], 1),
            "add_over_embedder_ratio_cpu": round(cpu[1] / cpu[0], 3),
            **noise.result,
            "sample_text": texts[0],
        }
    finally:
        memory.close()


def bench_threads(embedder: LocalEmbedder, queries: list[str], docs: list[str], blocks: int) -> dict:
    """The embedder with torch's default thread count vs one thread, interleaved in blocks:
    single-query latency and document throughput (batches of 100)."""
    import torch

    default = torch.get_num_threads()
    settings = sorted({1, default})
    wall: dict[int, list[float]] = {t: [] for t in settings}
    rates: dict[int, list[float]] = {t: [] for t in settings}
    per_block = max(1, len(queries) // (blocks * len(settings)))
    q = iter(queries)
    d = iter(docs)
    try:
        with Noise() as noise:
            for blk in range(blocks):
                for threads in (settings if blk % 2 == 0 else settings[::-1]):
                    torch.set_num_threads(threads)
                    for _ in range(per_block):
                        text = next(q)
                        t0 = time.perf_counter()
                        embedder.embed([text], "query")
                        wall[threads].append(time.perf_counter() - t0)
                    chunk = [next(d) for _ in range(100)]
                    t0 = time.perf_counter()
                    embedder.embed(chunk, "document")
                    rates[threads].append(len(chunk) / (time.perf_counter() - t0))
    finally:
        torch.set_num_threads(default)
    return {
        f"threads_{t}": {"query": stats_ms(wall[t], None, noise.result),
                         "documents_per_s_median": round(float(np.median(rates[t])), 1)}
        for t in settings
    }


# -- driver --------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated store sizes")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=5000, help="records per store.apply in the insert test")
    parser.add_argument("--insert-repeats", type=int, default=3,
                        help="insert runs per size (fresh stores); the median run is reported")
    parser.add_argument("--scoped-queries", type=int, default=2000)
    parser.add_argument("--embed-queries", type=int, default=600)
    parser.add_argument("--admin-queries", type=int, default=300)
    parser.add_argument("--add-texts", type=int, default=2000)
    parser.add_argument("--add-batch", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--wait-idle", type=float, default=30.0,
                        help="before each timed section, wait up to this many seconds for other processes to "
                             "go quiet (< 15%% of the machine); 0 disables")
    parser.add_argument("--no-threads", action="store_true",
                        help="skip the embedder thread-count comparison (1 thread vs torch's default)")
    parser.add_argument("--tmpdir", default=None, help="where the temporary stores go (default: system temp)")
    parser.add_argument("--out", default=None, help="also write the JSON here")
    parser.add_argument("--quick", action="store_true", help="tiny smoke run (size 2000, few queries)")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.users = "2000", min(args.users, 100)
        args.scoped_queries, args.embed_queries, args.admin_queries = 200, 40, 50
        args.add_texts, args.add_batch, args.batch_size = 200, 100, 1000
        args.wait_idle = min(args.wait_idle, 5.0)
        args.insert_repeats = 1
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    users = [f"user-{i:05d}" for i in range(args.users)]

    started = time.perf_counter()
    result: dict = {
        "benchmark": "bench_core",
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "quick": args.quick,
        "machine": machine_facts(),
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "tmpdir")},
        "targets": TARGETS,
        "loadavg_start": loadavg(),
    }
    log(f"machine: {result['machine']}")

    t0 = time.perf_counter()
    embedder = LocalEmbedder()
    embedder.embed(["warm up the model"], "query")
    result["model_load_and_first_embed_s"] = round(time.perf_counter() - t0, 2)
    result["embedder"] = {"name": embedder.name, "dims": embedder.dims, "batch_size": embedder.batch_size}

    prng = random.Random(args.seed)
    query_texts = distinct_texts(QUERY_TEMPLATES, 200, prng)
    t0 = time.perf_counter()
    qvecs = np.asarray(embedder.embed(query_texts, "query"), dtype=np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    result["query_vectors"] = {"count": len(query_texts), "embed_seconds": round(time.perf_counter() - t0, 2)}
    # Texts for embed+search: distinct per size and never used elsewhere (the LRU cache must miss).
    n_embed = args.embed_queries + 30
    live_queries = distinct_texts(QUERY_TEMPLATES, n_embed * len(sizes) + 200, random.Random(args.seed + 1))
    seen_queries = set(query_texts)
    live_queries = [q for q in live_queries if q not in seen_queries]

    result["sizes"] = {}
    with tempfile.TemporaryDirectory(prefix="memlane-bench-", dir=args.tmpdir) as tmp:
        tmpdir = Path(tmp)
        for n_size, size in enumerate(sizes):
            log(f"size {size}: insert")
            section: dict = {"loadavg_start": loadavg()}
            memory = open_memory(tmpdir / f"bench-{size}.db", embedder)
            waits = section["idle_waits"] = {}
            try:
                waits["insert"] = wait_for_idle(args.wait_idle)
                # Extra runs on throw-away stores first (noise): the figure is the median run.
                runs = []
                for k in range(args.insert_repeats - 1):
                    scratch = open_memory(tmpdir / f"scratch-{size}-{k}.db", embedder)
                    try:
                        runs.append(bench_insert(scratch, size, users, args.batch_size, args.seed + size))
                    finally:
                        scratch.close()
                        for f in tmpdir.glob(f"scratch-{size}-{k}.db*"):
                            f.unlink()
                runs.append(bench_insert(memory, size, users, args.batch_size, args.seed + size))
                median = sorted(runs, key=lambda r: r["memories_per_s"])[len(runs) // 2]
                section["insert"] = {**median, "runs": len(runs),
                                     "memories_per_s_all_runs": [r["memories_per_s"] for r in runs],
                                     "other_processes_cpu_share_all_runs":
                                         [r["other_processes_cpu_share"] for r in runs]}
                log(f"size {size}: insert {section['insert']['memories_per_s']:.0f}/s; scoped search")
                waits["scoped"] = wait_for_idle(args.wait_idle)
                section["scoped_search_excl_embedding"] = bench_scoped(
                    memory, users, qvecs, query_texts, args.scoped_queries, args.seed + size)
                log(f"size {size}: embed+search")
                texts = live_queries[n_size * n_embed:(n_size + 1) * n_embed]
                waits["embed_search"] = wait_for_idle(args.wait_idle)
                section["scoped_search_incl_embedding"] = bench_embed_search(memory, users, texts, 30,
                                                                             args.seed + size)
                log(f"size {size}: admin search")
                waits["admin"] = wait_for_idle(args.wait_idle)
                section["admin_search_excl_embedding"] = bench_admin(memory, users, qvecs, args.admin_queries,
                                                                    args.seed + size)
                section["memories_in_store"] = memory.store.count()
            finally:
                memory.close()
            section["loadavg_end"] = loadavg()
            result["sizes"][str(size)] = section
        log("add vs embedder")
        add_wait = wait_for_idle(args.wait_idle)
        result["add_vs_embedder"] = bench_add(embedder, tmpdir, args.add_texts, args.add_batch, args.seed)
        result["add_vs_embedder"]["idle_wait"] = add_wait
        result["add_vs_embedder"]["loadavg_end"] = loadavg()
        if not args.no_threads:
            log("embedder threads")
            threads_wait = wait_for_idle(args.wait_idle)
            blocks = 4 if args.quick else 10
            extra_q = distinct_texts(QUERY_TEMPLATES, 2000, random.Random(args.seed + 7))
            extra_q = [q for q in extra_q if q not in seen_queries][: blocks * 2 * (10 if args.quick else 40)]
            docs = distinct_texts(FACT_TEMPLATES, blocks * 2 * 100, random.Random(args.seed + 8))
            result["embedder_threads"] = bench_threads(embedder, extra_q, docs, blocks)
            result["embedder_threads"]["idle_wait"] = threads_wait

    result["checks"] = checks(result, sizes)
    result["loadavg_end"] = loadavg()
    result["total_seconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
        log(f"wrote {args.out}")
    return 0


def checks(result: dict, sizes: list[int]) -> dict:
    """Targets vs figures; the latency targets are stated for 100k, checked at every size."""
    out: dict = {}
    for size in sizes:
        s = result["sizes"][str(size)]
        out[str(size)] = {
            "insert_per_s>=20000": s["insert"]["memories_per_s"] >= TARGETS["insert_per_s_min"],
            "scoped_limit10_p95<=2ms": s["scoped_search_excl_embedding"]["limit10"]["p95_ms"]
            <= TARGETS["scoped_p95_ms_max_at_100k"],
            "embed_search_p95<=30ms": s["scoped_search_incl_embedding"]["memory_search_limit10"]["p95_ms"]
            <= TARGETS["embed_search_p95_ms_max"],
            "admin_p95<=50ms": s["admin_search_excl_embedding"]["limit10"]["p95_ms"]
            <= TARGETS["admin_p95_ms_max_at_100k"],
        }
    add = result["add_vs_embedder"]
    out["add_within_10pct_of_embedder"] = (add["add_over_embedder_ratio_median_per_batch"]
                                           >= 1 - TARGETS["add_vs_embedder_max_slowdown"])
    return out


if __name__ == "__main__":
    sys.exit(main())
