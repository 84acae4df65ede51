"""Each add happens exactly once, on both backends: ``kill -9`` at each point of an add (inside and
after each of its two transactions, and during formation) loses no message, and the store completes
the add when it next opens or by the next add in its scope; a retry with the same idempotency key
answers the first call's result and stores nothing twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memlane import InvalidInputError, Memory
from memlane.core import filters as flt

WORKER = Path(__file__).resolve().parents[1] / "support" / "add_crash_worker.py"
POINTS = ["journal", "journaled", "forming", "completing", "completed"]
ADDS = {
    "verbatim": {"messages": [{"role": "user", "content": "My bike is blue"},
                              {"role": "user", "content": "I cycle to work"}], "user_id": "ana", "infer": False},
    "formed": {"messages": "I live in Lisbon and I like green tea.", "user_id": "ana"},
}


def hashing(config: dict) -> dict:
    return {**config, "embedder": {"provider": "hashing"}}


class Child:
    def __init__(self, config: dict, point: str, key: str, add: dict):
        command = {"config": config, "point": point, "key": key, "add": add}
        self.proc = subprocess.Popen([sys.executable, str(WORKER), json.dumps(command)], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def wait_for(self, word: str) -> str:
        for line in self.proc.stdout:
            if line.startswith(word):
                return line
        raise AssertionError(f"the worker ended without {word}: {self.proc.stderr.read()}")

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        assert self.proc.returncode == -signal.SIGKILL


def state(memory: Memory) -> tuple[list[str], list[tuple[str, str]], int]:
    messages = [m.content for m in memory.store.messages(flt.MATCH_ALL, 1000)]
    memories = sorted((r["memory"], r["id"]) for r in memory.get_all(user_id="ana", limit=1000)["results"])
    return messages, memories, len(memory.store.pending_adds())


@pytest.mark.parametrize("kind", ADDS)
@pytest.mark.parametrize("point", POINTS)
def test_kill_at_each_point_then_open_and_retry(backend, point, kind):
    config = hashing(backend())
    add = ADDS[kind]
    sent = [m["content"] for m in add["messages"]] if isinstance(add["messages"], list) else [add["messages"]]
    with Memory(hashing(backend())) as reference:  # the same add, uninterrupted, on another store: what it forms
        expected = sorted(r["memory"] for r in reference.add(**add)["results"])
    child = Child(config, point, "key-1", add)
    child.wait_for(f"AT {point}")
    child.kill()

    with Memory(config) as memory:  # opening completes what the crash left pending
        messages, memories, pending = state(memory)
        assert pending == 0
        if point == "journal":  # killed before the first commit: nothing was kept
            assert messages == [] and memories == []
        else:
            assert messages == sent and sorted(t for t, _ in memories) == expected
        retried = memory.add(**add, idempotency_key="key-1")
        after = state(memory)
        assert after[0] == sent and sorted(t for t, _ in after[1]) == expected  # nothing twice
        assert sorted(r["id"] for r in retried["results"]) == sorted(i for _, i in after[1])
        assert memory.add(**add, idempotency_key="key-1") == retried  # and again: the same answer
        assert state(memory) == after


def test_the_next_add_in_the_scope_completes_what_a_crash_left(backend):
    config = hashing(backend())
    with Memory(config) as memory:  # opened before the crash: its own recovery ran already
        child = Child(config, "journaled", "key-2", ADDS["verbatim"])
        child.wait_for("AT journaled")
        child.kill()
        assert len(memory.store.pending_adds()) == 1
        memory.add("I read on the train", user_id="other", infer=False)  # another scope: left alone
        assert len(memory.store.pending_adds()) == 1
        memory.add("I read on the train", user_id="ana", infer=False)
        assert memory.store.pending_adds() == []
        texts = sorted(r["memory"] for r in memory.get_all(user_id="ana")["results"])
        assert texts == ["I cycle to work", "I read on the train", "My bike is blue"]


def test_a_key_with_another_request_is_refused(memory):
    first = memory.add("I like tea", user_id="u", infer=False, idempotency_key="k")
    with pytest.raises(InvalidInputError) as info:
        memory.add("I like coffee", user_id="u", infer=False, idempotency_key="k")
    assert info.value.field == "idempotency_key"
    with pytest.raises(InvalidInputError):
        memory.add("I like tea", user_id="v", infer=False, idempotency_key="k")
    assert memory.add("I like tea", user_id="u", infer=False, idempotency_key="k") == first
    assert len(memory.get_all(user_id="u")["results"]) == 1


@pytest.mark.parametrize("key", ["", " ", "a" * 257, 5, "k\x00"])
def test_a_bad_key_is_refused(memory, key):
    with pytest.raises(InvalidInputError) as info:
        memory.add("I like tea", user_id="u", infer=False, idempotency_key=key)
    assert info.value.field == "idempotency_key"
    assert memory.get_all(user_id="u")["results"] == []


def test_a_failed_formation_is_an_outcome_too(memory, monkeypatch):
    """A formation that fails ends the add with its reason (messages kept), once; a retry answers it."""
    from memlane.ingest.types import FormationFailed

    def fail(*args, **kwargs):
        raise FormationFailed("the model is down")

    monkeypatch.setattr(memory.engine, "extract", fail)
    first = memory.add("I like tea", user_id="u", idempotency_key="f")
    assert first["status"] == "failed" and memory.store.pending_adds() == []
    assert memory.add("I like tea", user_id="u", idempotency_key="f") == first
    assert len(memory.get_messages(user_id="u")) == 1


def test_a_retry_while_the_first_call_still_forms_is_told_to_retry_then_answered(memory, monkeypatch):
    """A call with the key of an add another live call is still forming waits, then gives up with
    ``AddInProgress`` (REST: 409, Retry-After) naming the key; once the first call ends, a retry answers it."""
    import threading

    from memlane.core.errors import AddInProgress
    from memlane.ingest import adds

    forming, release = threading.Event(), threading.Event()
    extract = memory.engine.extract

    def slow(*args, **kwargs):
        forming.set()
        release.wait(30)
        return extract(*args, **kwargs)

    monkeypatch.setattr(memory.engine, "extract", slow)
    monkeypatch.setattr(adds, "WAIT_SECONDS", 0.2)
    first: dict = {}
    call = threading.Thread(target=lambda: first.update(memory.add("I like tea", user_id="u", idempotency_key="k")))
    call.start()
    try:
        assert forming.wait(30)
        with pytest.raises(AddInProgress) as info:
            memory.add("I like tea", user_id="u", idempotency_key="k")
        assert info.value.key == "k"
        assert str(info.value) == "an add with idempotency key 'k' is still being processed; retry in a moment"
    finally:
        release.set()
        call.join(30)
    assert first["results"] and memory.add("I like tea", user_id="u", idempotency_key="k") == first
    assert len(memory.get_messages(user_id="u")) == 1


def test_rest_and_mcp_take_the_key(tmp_path, hashing_embedder):
    """``Idempotency-Key`` on the REST adds (memlane's and mem0's routes) and ``idempotency_key`` on the
    MCP tool: a repeat answers the first result; another request under the key is a 422 / tool error."""
    import httpx

    from memlane.mcp_server import tools
    from support.server_fixtures import serving

    with serving(tmp_path, hashing_embedder, auth=False, mcp=False, warm_up=False) as live:
        with httpx.Client(base_url=live.url, timeout=60) as client:
            body = {"messages": "I like tea", "user_id": "u", "infer": False}
            first = client.post("/memories", json=body, headers={"Idempotency-Key": "r1"}).json()
            again = client.post("/memories", json=body, headers={"Idempotency-Key": "r1"}).json()
            assert again == first
            other = client.post("/memories", json={**body, "messages": "I like coffee"},
                                headers={"Idempotency-Key": "r1"})
            assert other.status_code == 422 and other.json()["field"] == "idempotency_key"
            mem0 = [client.post("/v3/memories/add/", json=body, headers={"Idempotency-Key": "r2"}).json()
                    for _ in range(2)]
            assert [m["results"] for m in mem0] == [mem0[0]["results"]] * 2
            listed = client.get("/memories", params={"user_id": "u"}).json()["results"]
            assert len(listed) == 2  # one per key
        memory = live.memory("default")
        caller = tools.Caller(memory=memory, default_user_id="u")
        one = tools.add_memory(caller, "I like jasmine tea", infer=False, idempotency_key="m1")
        assert tools.add_memory(caller, "I like jasmine tea", infer=False, idempotency_key="m1") == one
        with pytest.raises(tools.ToolFailure, match="idempotency_key"):
            tools.add_memory(caller, "I like oolong", infer=False, idempotency_key="m1")
        assert len(memory.get_all(user_id="u")["results"]) == 3


def test_async_memory_takes_the_key(db_path, hashing_embedder):
    import asyncio

    from memlane import AsyncMemory

    async def run():
        async with AsyncMemory({"vector_store": {"provider": "sqlite", "config": {"path": str(db_path)}}},
                               embedder=hashing_embedder) as m:
            first = await m.add("I like tea", user_id="u", infer=False, idempotency_key="a")
            assert await m.add("I like tea", user_id="u", infer=False, idempotency_key="a") == first
            return len((await m.get_all(user_id="u"))["results"])

    assert asyncio.run(run()) == 1


@pytest.mark.parametrize("kind", ADDS)
def test_an_add_completed_after_a_crash_keeps_its_said_time(backend, kind):
    """``add(timestamp=)`` dates what an add forms; completed after a crash, from its kept messages, it
    still does."""
    config = hashing(backend())
    add = {**ADDS[kind], "timestamp": "2024-03-01T10:00:00Z"}
    child = Child(config, "forming", "key-3", add)
    child.wait_for("AT forming")
    child.kill()
    with Memory(config) as memory:
        items = memory.get_all(user_id="ana")["results"]
        assert items and all(r["created_at"].startswith("2024-03-01T10:00:00") for r in items)
        assert all(m["created_at"].startswith("2024-03-01T10:00:00") for m in memory.get_messages(user_id="ana"))
        retried = memory.add(**add, idempotency_key="key-3")
        assert sorted(r["id"] for r in retried["results"]) == sorted(r["id"] for r in items)


def test_an_add_whose_formation_raised_forms_nothing_later_and_its_retry_adds_it_once(memory, monkeypatch):
    """A formation that raises to its caller (the embedding provider down) keeps the messages and forms
    nothing, then or later: neither the next add in the scope nor reopening completes it behind the
    caller's back; the retry with its key adds it once, as one without a key does."""
    from memlane.core.errors import EmbeddingError

    documents = memory.embeddings.documents

    def down(texts):
        raise EmbeddingError("the embedding provider is down")

    monkeypatch.setattr(memory.embeddings, "documents", down)
    with pytest.raises(EmbeddingError):
        memory.add("My bike is blue", user_id="u", infer=False, idempotency_key="e")
    with pytest.raises(EmbeddingError):
        memory.add("I cycle to work", user_id="u", infer=False)
    assert memory.store.pending_adds() == [] and len(memory.get_messages(user_id="u")) == 2
    monkeypatch.setattr(memory.embeddings, "documents", documents)
    memory.add("I read on the train", user_id="u", infer=False)
    assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["I read on the train"]
    retried = memory.add("My bike is blue", user_id="u", infer=False, idempotency_key="e")
    assert memory.add("My bike is blue", user_id="u", infer=False, idempotency_key="e") == retried
    assert sorted(r["memory"] for r in memory.get_all(user_id="u")["results"]) == ["I read on the train",
                                                                                   "My bike is blue"]


def test_an_async_add_with_a_key_answers_its_event_again(backend, hashing_embedder):
    """``async_mode`` with an ``idempotency_key``: the repeat answers the first call's event (one job,
    one message, formed once); the key with a synchronous add is another request."""
    import time

    config = {**backend(), "background": {"poll_seconds": 0.05, "retry_seconds": 0}}
    with Memory(config, embedder=hashing_embedder) as memory:
        first = memory.add("My bike is blue", user_id="u", infer=False, async_mode=True, idempotency_key="q")
        assert first["status"] == "PENDING"
        assert memory.add("My bike is blue", user_id="u", infer=False, async_mode=True, idempotency_key="q") == first
        with pytest.raises(InvalidInputError) as info:
            memory.add("My bike is blue", user_id="u", infer=False, idempotency_key="q")
        assert info.value.field == "idempotency_key"
        deadline = time.monotonic() + 60
        while memory.event(first["event_id"])["status"] not in ("SUCCEEDED", "FAILED"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert memory.event(first["event_id"])["status"] == "SUCCEEDED"
        assert memory.add("My bike is blue", user_id="u", infer=False, async_mode=True, idempotency_key="q") == first
        assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["My bike is blue"]
        assert len(memory.get_messages(user_id="u")) == 1
