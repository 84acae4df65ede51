"""Concurrency and crash safety of the embedded store, with real OS processes.

- Several processes (each a real ``Memory`` with the real local model) write and
  read one file at once: no "database is locked", exact counts, history agrees.
- A process opening a new store waits while another process holds the file's
  write lock, instead of failing.
- One ``Memory`` shared by many threads.
- SIGKILL inside the write transaction of add / update / delete / delete_all
  leaves the file exactly as it was before the call, intact and writable.
- SIGKILL at random moments of a loop writing batches: every batch is whole or absent.

The child processes run tests/support/worker.py. They load the model before a
start barrier; all the workers the selected tests need are started when the
module starts, so their model loading overlaps (about 7 s of CPU each).
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest

from memlane import Memory, MemoryNotFoundError

from conftest import sqlite_config
from support.worker import VERBATIM

WORKER = Path(__file__).parents[1] / "support" / "worker.py"
READY_TIMEOUT = 300.0   # s; several workers load torch at once on a slow, shared machine
RESULT_TIMEOUT = 300.0
RANDOM_ROUNDS = 3

#: Worker processes each test takes from the pool (per parametrized case).
WORKERS_NEEDED = {
    "test_processes_read_and_write_one_file_at_once": 3,
    "test_sigkill_inside_a_write_leaves_no_trace": 1,
    "test_sigkill_at_random_moments_leaves_whole_batches": RANDOM_ROUNDS,
}


# -- worker processes ---------------------------------------------------------


class Worker:
    """One tests/support/worker.py process; its stdout lines are read by a thread."""

    def __init__(self, name: str, directory: Path, home: Path):
        self.name = name
        self.stderr_path = directory / f"{name}.stderr"
        env = dict(
            os.environ, MEMLANE_HOME=str(home), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
            OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1",
        )
        with open(self.stderr_path, "w") as stderr:
            self.proc = subprocess.Popen([sys.executable, str(WORKER)], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=stderr, text=True, env=env)
        self.seen: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            if line.endswith("\n"):  # not a line cut short by a kill
                self._lines.put(line[:-1])
        self._lines.put(None)

    def describe(self) -> str:
        stderr = self.stderr_path.read_text(errors="replace")[-4000:]
        return (f"{self.name} (pid {self.proc.pid}, exit code {self.proc.poll()})\n"
                f"stdout (last lines): {self.seen[-10:]}\nstderr:\n{stderr}")

    def expect(self, tag: str, timeout: float) -> str:
        """Wait for the next line starting with ``tag``; return the rest of it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {tag} line within {timeout:g} s from {self.describe()}") from None
            if line is None:
                self._lines.put(None)
                self.proc.wait(timeout=60)
                raise AssertionError(f"exited before printing {tag}: {self.describe()}")
            self.seen.append(line)
            word, _, rest = line.partition(" ")
            if word == tag:
                return rest

    def send(self, mode: str, db: Path, **args) -> None:
        self.proc.stdin.write(json.dumps({"mode": mode, "db": str(db), **args}) + "\n")
        self.proc.stdin.flush()

    def result(self, timeout: float = RESULT_TIMEOUT) -> dict:
        result = json.loads(self.expect("RESULT", timeout))
        assert self.proc.wait(timeout=60) == 0, self.describe()
        return result

    def kill(self) -> None:
        """SIGKILL, then collect everything it printed before dying."""
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=60) == -signal.SIGKILL, self.describe()
        while (line := self._lines.get(timeout=60)) is not None:
            self.seen.append(line)
        self._lines.put(None)

    def tagged(self, tag: str) -> list[str]:
        return [line.partition(" ")[2] for line in self.seen if line.partition(" ")[0] == tag]


class WorkerPool:
    def __init__(self, directory: Path, count: int):
        self.directory = directory
        self.home = directory / "memlane-home"
        self.home.mkdir()
        self.started: list[Worker] = []
        self.idle = [self._start() for _ in range(count)]

    def _start(self) -> Worker:
        worker = Worker(f"worker-{len(self.started)}", self.directory, self.home)
        self.started.append(worker)
        return worker

    def take(self, count: int) -> list[Worker]:
        """``count`` workers with their model loaded (started now if the pool ran out)."""
        workers = [self.idle.pop(0) if self.idle else self._start() for _ in range(count)]
        for worker in workers:
            worker.expect("READY", READY_TIMEOUT)
        return workers

    def close(self) -> None:
        for worker in self.started:
            if worker.proc.poll() is None:
                worker.proc.kill()
            worker.proc.wait(timeout=60)
            worker.proc.stdin.close()


@pytest.fixture(scope="module", autouse=True)
def workers(request, tmp_path_factory):
    """Start every worker the selected tests of this module need, at once."""
    selected = [item for item in request.session.items if getattr(item, "module", None) is request.module]
    pool = WorkerPool(tmp_path_factory.mktemp("workers"),
                      sum(WORKERS_NEEDED.get(item.originalname, 0) for item in selected))
    yield pool
    pool.close()


# -- checks on the file, straight from SQLite ---------------------------------


def read_rows(db: Path) -> tuple[dict[str, tuple], list[tuple]]:
    """Every memory (id -> all columns) and every history row."""
    with closing(sqlite3.connect(db)) as con:
        memories = {row[0]: row for row in con.execute(
            "SELECT id, text, hash, user_id, agent_id, run_id, actor_id, role, metadata, created_at, updated_at,"
            " vector FROM memories")}
        history = con.execute(
            "SELECT id, memory_id, event, old_memory, new_memory, created_at FROM history ORDER BY id").fetchall()
    return memories, history


def integrity(db: Path) -> list[str]:
    with closing(sqlite3.connect(db)) as con:
        return [row[0] for row in con.execute("PRAGMA integrity_check")]


def assert_history_agrees(db: Path) -> None:
    """Each memory has exactly one ADD (first) and no DELETE; each history-only id ends with DELETE."""
    memories, history = read_rows(db)
    events: dict[str, list[str]] = {}
    for _, memory_id, event, *_ in history:
        events.setdefault(memory_id, []).append(event)
    for memory_id in memories:
        assert events.get(memory_id, [None])[0] == "ADD", (memory_id, events.get(memory_id))
        assert events[memory_id].count("ADD") == 1 and "DELETE" not in events[memory_id], events[memory_id]
    for memory_id, seq in events.items():
        if memory_id not in memories:
            assert seq[0] == "ADD" and seq[-1] == "DELETE" and seq.count("DELETE") == 1, (memory_id, seq)
            assert set(seq[1:-1]) <= {"UPDATE"}, (memory_id, seq)


def assert_writable_now(db: Path, embedder) -> None:
    """A new Memory writes at once: no stale lock (a short busy timeout turns one into an error)."""
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(db), "busy_timeout": 10}}}
    with Memory(config, embedder=embedder) as m:
        before = m.info()["memories"]
        added = m.add("written after the others", user_id="after", **VERBATIM)["results"][0]
        assert m.get(added["id"])["memory"] == "written after the others"
        assert [e["event"] for e in m.history(added["id"])] == ["ADD"]
        assert m.info()["memories"] == before + 1


# -- opening a new file ------------------------------------------------------


HOLD_WRITE_LOCK = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN IMMEDIATE")
print("LOCKED", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("COMMIT")
"""


def test_opening_a_new_store_waits_for_another_process_holding_the_lock(tmp_path, embedder):
    """Processes opening a new file at once: while one of them switches the file to
    WAL it holds the write lock, and the others must wait for it (busy timeout)
    rather than fail with "database is locked". A process holding that lock for a
    moment makes the window wide enough to hit every time."""
    db = tmp_path / "new.db"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_WRITE_LOCK, str(db), "1.5"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "LOCKED"
        with Memory(sqlite_config(db), embedder=embedder) as m:
            mid = m.add("stored once the other process let go", user_id="u", **VERBATIM)["results"][0]["id"]
            assert m.get(mid)["memory"] == "stored once the other process let go"
        assert holder.wait(timeout=60) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(timeout=60)
        holder.stdout.close()
    assert integrity(db) == ["ok"]


# -- many threads, one Memory -------------------------------------------------


def test_threads_share_one_memory(memory):
    threads, rounds = 8, 10
    users = ["ann", "ben", "cat", "dan"]
    start = threading.Barrier(threads)

    def work(t: int) -> tuple[dict[str, str], list[str], int]:
        rng = random.Random(t)
        user = users[t % len(users)]
        mine: dict[str, str] = {}
        deleted: list[str] = []
        updates = 0
        start.wait(timeout=120)
        for r in range(rounds):
            texts = [f"thread {t} round {r} item {j}: I like {rng.choice(['tea', 'jazz', 'chess'])}"
                     for j in range(rng.randint(1, 3))]
            added = memory.add(texts, user_id=user, metadata={"thread": t, "round": r}, **VERBATIM)["results"]
            assert [a["memory"] for a in added] == texts
            mine.update((a["id"], a["memory"]) for a in added)
            hits = memory.search(f"thread {t} round {r}", user_id=user, filters={"thread": t}, limit=5)["results"]
            assert hits and all(h["metadata"]["thread"] == t for h in hits)
            assert all(h["user_id"] in users for h in memory.search("I like", filters={"user_id": "*"}, limit=10)["results"])
            if r % 3 == 1:
                mid = rng.choice(sorted(mine))
                mine[mid] = f"thread {t} rewrote this in round {r}"
                assert memory.update(mid, text=mine[mid])["memory"] == mine[mid]
                updates += 1
            if r % 4 == 2:
                mid = rng.choice(sorted(mine))
                memory.delete(mid)
                del mine[mid]
                deleted.append(mid)
                with pytest.raises(MemoryNotFoundError):
                    memory.delete(mid)
            scratch = f"scratch-{t}"
            memory.add(["short-lived one", "short-lived two"], run_id=scratch, **VERBATIM)
            assert memory.delete_all(run_id=scratch)["deleted"] == 2
            # only this thread writes memories tagged with its number: it must see exactly its own
            listed = memory.get_all(user_id=user, filters={"thread": t}, limit=1000)["results"]
            assert {item["id"]: item["memory"] for item in listed} == mine
        # Embedding takes turns (one model), which spaces the writes above out; these
        # writes embed nothing, so the threads contend for the write lock in earnest.
        start.wait(timeout=120)
        for n in range(25):
            mid = rng.choice(sorted(mine))
            assert memory.update(mid, metadata={"thread": t, "round": n})["metadata"] == {"thread": t, "round": n}
            updates += 1
        return mine, deleted, updates

    with ThreadPoolExecutor(max_workers=threads) as pool:
        outcomes = list(pool.map(work, range(threads)))

    live = {mid: text for mine, _, _ in outcomes for mid, text in mine.items()}
    deleted = [mid for _, gone, _ in outcomes for mid in gone]
    assert memory.info()["memories"] == len(live)
    for user in users:
        listed = memory.get_all(user_id=user, limit=1000)["results"]
        assert {item["id"]: item["memory"] for item in listed} == {
            mid: text for mid, text in live.items() if memory.get(mid)["user_id"] == user}
    for mid in deleted:
        assert memory.get(mid) is None and memory.history(mid)[-1]["event"] == "DELETE"
    for mid, text in live.items():
        assert memory.history(mid)[-1]["new_memory"] == text
    db = memory.store.path
    _, history = read_rows(db)
    counts = Counter(row[2] for row in history)
    scratch_adds = threads * rounds * 2
    assert counts["ADD"] == len(live) + len(deleted) + scratch_adds
    assert counts["DELETE"] == len(deleted) + scratch_adds
    assert counts["UPDATE"] == sum(u for _, _, u in outcomes)
    assert_history_agrees(db)


# -- several processes, one file ----------------------------------------------


def test_processes_read_and_write_one_file_at_once(tmp_path, workers, embedder):
    """Two writers (add, update, delete, delete_all) and a reader (get_all, scoped and
    all-user search) on one new file, released together; the reader also checks that
    no batch is ever half visible."""
    db = tmp_path / "shared.db"  # does not exist yet: the workers create it together
    stop = tmp_path / "stop-reading"
    first, second, reader = workers.take(3)  # all three have loaded the model: release them together
    first.send("writer", db, user="alice", rounds=40, seed=1)
    second.send("writer", db, user="bob", rounds=40, seed=2)
    reader.send("reader", db, users=["alice", "bob"], stop_file=str(stop))
    written = {"alice": first.result(), "bob": second.result()}
    stop.touch()
    read = reader.result()
    assert read["passes"] >= 3 and read["searches"] > 0

    with Memory(sqlite_config(db), embedder=embedder) as m:
        for user, w in written.items():
            listed = m.get_all(user_id=user, limit=10_000)["results"]
            assert {item["id"] for item in listed} == set(w["texts"])
            assert sorted(i for ids in w["batches"].values() for i in ids) == sorted(w["texts"])
            for memory_id, text in w["texts"].items():
                assert m.get(memory_id)["memory"] == text
                events = m.history(memory_id)
                assert [e["event"] for e in events] == ["ADD"] + ["UPDATE"] * w["updates"].get(memory_id, 0)
                assert events[-1]["new_memory"] == text
            for memory_id in w["deleted"]:
                assert m.get(memory_id) is None
                events = [e["event"] for e in m.history(memory_id)]
                assert events == ["ADD"] + ["UPDATE"] * w["updates"].get(memory_id, 0) + ["DELETE"]
        total = sum(len(w["texts"]) for w in written.values())
        deleted = sum(len(w["deleted"]) for w in written.values())
        assert m.info()["memories"] == total
        assert total > 0 and deleted > 0 and sum(sum(w["updates"].values()) for w in written.values()) > 0

    memories, history = read_rows(db)
    assert len(memories) == total
    counts = Counter(row[2] for row in history)
    assert counts["ADD"] == total + deleted
    assert counts["DELETE"] == deleted
    assert_history_agrees(db)
    assert integrity(db) == ["ok"]


# -- killed inside a write ----------------------------------------------------


@pytest.mark.parametrize("mode", ["kill_insert", "kill_update", "kill_delete", "kill_delete_all"])
def test_sigkill_inside_a_write_leaves_no_trace(mode, tmp_path, workers, embedder):
    db = tmp_path / "killed.db"
    wal = Path(f"{db}-wal")
    [worker] = workers.take(1)
    worker.send(mode, db, committed=30, doomed=200)
    committed = json.loads(worker.expect("COMMITTED", RESULT_TIMEOUT))
    before = read_rows(db)  # what the committed calls left
    wal_committed = wal.stat().st_size
    touched = json.loads(worker.expect("INSIDE", RESULT_TIMEOUT))  # the worker now sleeps inside the transaction
    wal_inside = wal.stat().st_size
    worker.kill()

    memories, history = before
    assert len(memories) == (35 if mode == "kill_delete_all" else 30)
    assert set(committed) == set(memories)
    if mode == "kill_insert":
        assert len(touched) == 200 and not set(touched) & set(memories)
        # the uncommitted rows had reached the WAL file: recovery must ignore them
        assert wal_inside > wal_committed
    elif mode == "kill_delete_all":
        assert len(touched) == 30 and set(touched) < set(memories)
    else:
        assert touched == committed[:1]

    after = read_rows(db)
    assert after == before  # every column of every memory, every history row: as before the call
    assert not {row[1] for row in after[1]} & (set(touched) - set(memories))
    assert integrity(db) == ["ok"]
    assert_history_agrees(db)
    assert_writable_now(db, embedder)


def test_sigkill_at_random_moments_leaves_whole_batches(tmp_path, workers, embedder):
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    db = tmp_path / "batches.db"
    size = 40
    rounds = workers.take(RANDOM_ROUNDS)
    delays = []
    for number, worker in enumerate(rounds):
        worker.send("batches", db, size=size, run=f"r{number}")
        if number:  # killed while writing batches
            worker.expect("BATCH", RESULT_TIMEOUT)
            delays.append(rng.uniform(0.0, 1.5))
        else:  # killed anywhere from opening the new file on
            delays.append(rng.uniform(0.0, 1.0))
        time.sleep(delays[-1])
        worker.kill()
    context = f"seed {seed}, delays {delays}"

    memories, history = read_rows(db)
    listed = Counter(json.loads(row[8])["batch"] for row in memories.values())
    assert all(n == size for n in listed.values()), (listed, context)
    added = Counter(row[4].split(" #")[0] for row in history if row[2] == "ADD")
    removed = Counter(row[3].split(" #")[0] for row in history if row[2] == "DELETE")
    assert all(n == size for n in added.values()), (added, context)
    assert all(n == size for n in removed.values()), (removed, context)
    assert set(listed) == set(added) - set(removed), context
    for worker in rounds:
        reported, gone = worker.tagged("BATCH"), worker.tagged("DELETED")
        assert set(reported) <= set(added), (reported, context)  # acknowledged batches were kept
        assert not set(gone) & set(listed), (gone, context)
    assert sum(len(w.tagged("BATCH")) for w in rounds) >= RANDOM_ROUNDS - 1
    assert integrity(db) == ["ok"], context
    assert_history_agrees(db)
    assert_writable_now(db, embedder)


def test_every_thread_reads_through_one_shared_memory_map_with_a_small_page_cache(memory):
    """A server's 40 threads each open a connection: each keeps a 4 MiB page cache, not 32 MiB
    (issue 20's soak: copies of the same pages grew the server's memory 44 % after warm-up), and reads
    the file through a memory map the OS shares between them."""
    def settings() -> tuple[int, int]:
        con = memory.store._con
        return con.execute("PRAGMA cache_size").fetchone()[0], con.execute("PRAGMA mmap_size").fetchone()[0]

    with ThreadPoolExecutor(4) as pool:
        seen = set(pool.map(lambda _: settings(), range(8)))
    assert len(memory.store._connections) >= 2
    assert seen == {(-4096, 1 << 30)}
