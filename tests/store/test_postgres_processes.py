"""The PostgreSQL store across OS processes and a failing network (tests/support/pg_worker.py,
tests/support/tcp_proxy.py), on a real PostgreSQL:

- several processes update one memory at once: no write is lost (history is one unbroken chain);
- SIGKILL inside an insert or an update transaction leaves nothing of it, and no lock behind;
- a connection cut is retried once; a database that stays unreachable is a clear ``StoreError``,
  and the store recovers when it is back.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psycopg
import pytest

from memlane import Memory
from memlane.core.errors import StoreError

from support.tcp_proxy import TcpProxy

WORKER = Path(__file__).parents[1] / "support" / "pg_worker.py"
TIMEOUT = 120.0


class Child:
    def __init__(self, **command):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[2] / "src"),
                                                           os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen([sys.executable, str(WORKER), json.dumps(command)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)

    def expect(self, tag: str) -> str:
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"worker exited ({self.proc.wait()}) before {tag}: {self.proc.stderr.read()}")
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == tag:
                return rest
        raise AssertionError(f"no {tag} within {TIMEOUT} s")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        assert self.proc.wait(timeout=60) == -signal.SIGKILL


@pytest.fixture
def setup(pg, embedder, tmp_path):
    """A schema with one memory, real vectors for the children, and their start barrier."""
    schema = pg.fresh_schema()
    with Memory(pg.config(schema), embedder=embedder) as memory:
        memory_id = memory.add("the original text", user_id="u", infer=False)["results"][0]["id"]
        memory.add([f"bystander {i}" for i in range(3)], user_id="u", infer=False)
    vectors = tmp_path / "vectors.npy"
    np.save(vectors, np.asarray(embedder.embed([f"process write number {i}" for i in range(20)], "document")))
    go = tmp_path / "go"
    common = dict(dsn=pg.url, schema=schema, vectors=str(vectors), go=str(go), embedder=embedder.name,
                  memory_id=memory_id)
    return schema, memory_id, common, go


def _rows(pg, schema) -> tuple[list, list]:
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        memories = con.execute("SELECT id, text, hash, updated_at, vector::text, terms::text FROM memlane_memories"
                               " ORDER BY seq").fetchall()
        history = con.execute("SELECT memory_id, event, old_memory, new_memory FROM memlane_history ORDER BY id").fetchall()
    return memories, history


def test_processes_updating_one_memory_lose_no_write(pg, embedder, setup):
    schema, memory_id, common, go = setup
    processes, count = 4, 15
    children = [Child(mode="update", process=p, count=count, **common) for p in range(processes)]
    for child in children:
        child.expect("READY")
    go.touch()
    written = [json.loads(child.expect("RESULT")) for child in children]
    for child in children:
        assert child.proc.wait(timeout=60) == 0
    with Memory(pg.config(schema), embedder=embedder) as memory:
        events = [e for e in memory.store.history(memory_id) if e.event == "UPDATE"]
        final = memory.get(memory_id)["memory"]
    assert len(events) == processes * count
    # each update read the text the previous one left: a lost write would break the chain
    chain = ["the original text"] + [e.new_memory for e in events]
    assert [e.old_memory for e in events] == chain[:-1]
    assert final == chain[-1] and final in {text for texts in written for text in texts}
    assert sorted(e.new_memory for e in events) == sorted(t for texts in written for t in texts)
    for p, texts in enumerate(written):  # each process's writes land in its own order
        assert [e.new_memory for e in events if e.actor_id == f"p{p}"] == texts


@pytest.mark.parametrize("mode", ["kill_insert", "kill_update"])
def test_a_process_killed_inside_a_write_leaves_no_partial_state(pg, embedder, setup, mode):
    schema, memory_id, common, go = setup
    before = _rows(pg, schema)
    child = Child(mode=mode, count=500, **common)
    child.expect("READY")
    go.touch()
    touched = json.loads(child.expect("INSIDE"))  # the transaction is open, its statements done
    with psycopg.connect(pg.url, autocommit=True) as con:  # the server holds the uncommitted work
        con.execute(f'SET search_path TO "{schema}", public')
        assert con.execute("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'"
                           " AND datname = current_database()").fetchone()[0] >= 1
    child.kill()
    assert _rows(pg, schema) == before
    assert not {r[0] for r in before[0]} & (set(touched) - {memory_id})
    with psycopg.connect(pg.url, autocommit=True) as con, con.transaction():  # the row lock went with the process
        con.execute(f'SET LOCAL search_path TO "{schema}", public')
        con.execute("SET LOCAL lock_timeout = '5s'")  # LockNotAvailable if the dead process still held it
        assert con.execute("SELECT text FROM memlane_memories WHERE id = %s FOR UPDATE",
                           (memory_id,)).fetchone() == ("the original text",)
    with Memory(pg.config(schema), embedder=embedder) as memory:
        assert memory.update(memory_id, "written after the kill")["memory"] == "written after the kill"
        assert memory.store.count() == 4


def test_connection_loss_is_retried_once_then_reported_and_recovered(pg, embedder):
    proxy = TcpProxy(pg.url)
    try:
        config = pg.config(min_connections=1, max_connections=2, connect_timeout=2)
        config["vector_store"]["config"]["dsn"] = proxy.url
        with Memory(config, embedder=embedder) as memory:
            memory.add("before the outage", user_id="u", infer=False)
            proxy.down()  # a blip: every connection cut, the server back at once
            proxy.up()
            assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["before the outage"]
            proxy.down()  # and now an outage
            started = time.monotonic()
            with pytest.raises(StoreError, match=r"PostgreSQL at postgresql://postgres@127\.0\.0\.1:\d+/"):
                memory.add("during the outage", user_id="u", infer=False)
            assert time.monotonic() - started < 30  # reported, not hung
            with pytest.raises(StoreError, match="PostgreSQL"):
                memory.get_all(user_id="u")
            proxy.up()
            deadline = time.monotonic() + 30
            while True:  # the pool reconnects in the background
                try:
                    texts = [r["memory"] for r in memory.get_all(user_id="u")["results"]]
                    break
                except StoreError:
                    assert time.monotonic() < deadline, "the store did not recover after the database came back"
                    time.sleep(0.2)
            assert texts == ["before the outage"]  # nothing of the failed add was written
            memory.add("after the outage", user_id="u", infer=False)
            assert memory.store.count() == 2
    finally:
        proxy.close()
