"""Background formation (``add(async_mode=True)``; background/, store/sql_jobs.py) on both backends, with a
scripted LLM on 127.0.0.1 that forms slowly (tests/support/slow_llm.py):

- the answer comes at once; what was sent is searchable at once, and replaced by the formed memories in
  one step (never both shown); the event ends SUCCEEDED with the add's full result;
- adds to one user are formed in the order they arrived;
- a job a worker lost (its lease ran out, another worker took it) is applied once;
- a worker process killed while forming leaves its job to another, which forms it once;
- failures end FAILED with the reason, the messages kept.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memlane import AsyncMemory, Memory
from memlane.core.errors import EventNotFoundError, InvalidInputError
from memlane.core.jobs import JobLostError
from memlane.ingest.offline import OfflineEngine
from support import slow_llm

CHILD = Path(__file__).parents[1] / "support" / "async_child.py"


@pytest.fixture
def llm():
    server, formation = slow_llm.start()
    yield server, formation
    server.stop()
    assert not server.errors, server.errors


def _config(backend, server, **background) -> dict:
    return {**backend(), "llm": slow_llm.llm_config(server),
            "background": {"poll_seconds": 0.05, "retry_seconds": 0, **background}}


def _settle(memory: Memory, event_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = memory.event(event_id)
        if event["status"] in ("SUCCEEDED", "FAILED"):
            return event
        time.sleep(0.05)
    raise AssertionError(f"event {event_id} did not end within {timeout} s: {memory.event(event_id)}")


def test_an_async_add_answers_at_once_is_found_at_once_and_is_replaced_by_what_is_formed(backend, hashing_embedder,
                                                                                           llm):
    server, formation = llm
    formation.delay = 0.5
    with Memory(_config(backend, server), embedder=hashing_embedder) as memory:
        answer = memory.add("I live in Paris", user_id="alice", metadata={"source": "chat"}, async_mode=True)
        assert answer["status"] == "PENDING" and answer["results"][0]["status"] == "PENDING"
        assert answer["results"][0]["event_id"] == answer["event_id"]
        found = memory.search("Paris", user_id="alice")["results"]
        assert [(r["memory"], r["provisional"], r["event_id"], r["metadata"]) for r in found] == \
            [("I live in Paris", True, answer["event_id"], {"source": "chat"})]
        assert memory.event(answer["event_id"])["status"] in ("PENDING", "RUNNING")

        seen: list[list[bool]] = []
        stop = threading.Event()

        def watch() -> None:  # every read shows what was sent or what was formed, never both
            while not stop.is_set():
                seen.append([bool(r.get("provisional")) for r in memory.get_all(user_id="alice")["results"]])

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            event = _settle(memory, answer["event_id"])
        finally:
            stop.set()
            watcher.join()
        assert event["status"] == "SUCCEEDED" and event["attempts"] == 1 and event["latency"] >= 500
        assert [(r["event"], r["data"]["memory"]) for r in event["results"]] == [("ADD", "I live in Paris")]
        assert event["result"]["message_ids"] == answer["message_ids"] and event["payload"]["user_id"] == "alice"
        assert seen and all(flags in ([True], [False]) for flags in seen)
        assert [True] in seen or seen[0] == [False]
        formed = memory.get_all(user_id="alice")["results"]
        assert [(m["memory"], "provisional" in m, m["metadata"]) for m in formed] == \
            [("I live in Paris", False, {"source": "chat"})]
        assert [e["event"] for e in memory.history(formed[0]["id"])] == ["ADD"]
        assert memory.history(answer["provisional"][0]["id"]) == []  # a stand-in leaves no trace
        assert [m["content"] for m in memory.get_messages(user_id="alice")] == ["I live in Paris"]
        assert [e["id"] for e in memory.events()] == [answer["event_id"]]
        assert memory.events("FAILED") == []


def test_adds_to_one_user_are_formed_in_the_order_they_arrived(backend, hashing_embedder, llm):
    server, formation = llm
    formation.delay = 0.05
    with Memory(_config(backend, server, workers=4), embedder=hashing_embedder) as memory:
        events = [memory.add(f"I live in {city}", user_id="alice", async_mode=True)["event_id"]
                  for city in ("Paris", "Berlin", "Rome", "Oslo")]
        events += [memory.add(f"I work at {firm}", user_id=f"user{n}", async_mode=True)["event_id"]
                   for n, firm in enumerate(("Acme", "Initech", "Hooli"))]
        ended = [_settle(memory, e) for e in events]
        assert all(e["status"] == "SUCCEEDED" for e in ended)
        [current] = memory.get_all(user_id="alice")["results"]
        assert current["memory"] == "I live in Oslo"
        assert [(h["event"], h["new_memory"]) for h in memory.history(current["id"])] == [
            ("ADD", "I live in Paris"), ("UPDATE", "I live in Berlin"), ("UPDATE", "I live in Rome"),
            ("UPDATE", "I live in Oslo")]
        alices = ended[:4]
        assert all(a["started_at"] >= b["finished_at"] for a, b in zip(alices[1:], alices))
        assert all(memory.get_all(user_id=f"user{n}")["results"] for n in range(3))


def test_a_job_whose_worker_lost_it_is_applied_once(backend, hashing_embedder, llm):
    server, _ = llm
    with Memory(_config(backend, server, workers=0), embedder=hashing_embedder) as memory:
        event_id = memory.add("I live in Paris", user_id="alice", async_mode=True)["event_id"]
        first = memory.store.claim_job("worker-a", 0.05)
        time.sleep(0.2)  # worker-a's lease runs out; worker-b takes the job over
        second = memory.store.claim_job("worker-b", 30)
        assert (first.id, second.id, second.attempts) == (event_id, event_id, 2)
        with pytest.raises(JobLostError):
            memory.run_job(first, "worker-a")
        assert [m.get("provisional") for m in memory.get_all(user_id="alice")["results"]] == [True]
        memory.run_job(second, "worker-b")
        with pytest.raises(JobLostError):  # ended: nobody may end it again
            memory.run_job(second, "worker-b")
        assert [(m["memory"], m.get("provisional")) for m in memory.get_all(user_id="alice")["results"]] == \
            [("I live in Paris", None)]
        assert memory.event(event_id)["status"] == "SUCCEEDED" and memory.event(event_id)["attempts"] == 2


def test_a_worker_process_killed_while_forming_leaves_its_job_to_another(backend, hashing_embedder, llm, tmp_path):
    server, formation = llm
    formation.delay = 60.0  # the child's formation hangs in the LLM call until it is killed
    config = {**_config(backend, server, lease_seconds=1.0), "embedder": {"provider": "hashing"}}
    child = subprocess.Popen([sys.executable, str(CHILD), json.dumps({"config": config, "text": "I live in Paris"})],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                 [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])})
    try:
        event_id = json.loads(child.stdout.readline())["event_id"]
        with Memory(config, embedder=hashing_embedder, background=False) as observer:
            deadline = time.monotonic() + 60
            # RUNNING, and the LLM has the whole request (killed while sending it, the child would leave the
            # scripted server half a request to answer)
            while observer.event(event_id)["status"] != "RUNNING" or formation.calls == 0:
                assert time.monotonic() < deadline and child.poll() is None, child.stderr.read()
                time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    formation.delay = 0.0
    with Memory(config, embedder=hashing_embedder) as memory:
        memory.start_background()  # forms what a dead process left, once its lease has run out
        event = _settle(memory, event_id)
        assert event["status"] == "SUCCEEDED" and event["attempts"] == 2
        assert [(m["memory"], m.get("provisional")) for m in memory.get_all(user_id="alice")["results"]] == \
            [("I live in Paris", None)]
        assert len(memory.get_messages(user_id="alice")) == 1


class _Broken(OfflineEngine):
    def extract(self, messages, *, agent_facts, earlier=()):
        raise RuntimeError("the engine broke")


def test_failures_end_failed_with_the_reason_and_keep_the_messages(backend, hashing_embedder, llm):
    server, _ = llm
    server.script(slow_llm.CHAT, [slow_llm.Reply(json=slow_llm.chat_completion("not json"))] * 2)
    with Memory(_config(backend, server), embedder=hashing_embedder) as memory:
        event = _settle(memory, memory.add("I live in Paris", user_id="alice", async_mode=True)["event_id"])
        assert event["status"] == "FAILED" and "JSON" in event["error"] and event["result"]["status"] == "failed"
        assert memory.get_all(user_id="alice")["results"] == []
        assert [m["content"] for m in memory.get_messages(user_id="alice")] == ["I live in Paris"]
    config = {**backend(), "background": {"poll_seconds": 0.05, "retry_seconds": 0, "max_attempts": 2}}
    with Memory(config, embedder=hashing_embedder, engine=_Broken()) as memory:
        event = _settle(memory, memory.add("I live in Paris", user_id="bob", async_mode=True)["event_id"])
        assert (event["status"], event["attempts"], event["error"]) == ("FAILED", 2, "RuntimeError: the engine broke")
        assert memory.get_all(user_id="bob")["results"] == []  # the provisional memory went with the failure
        with pytest.raises(EventNotFoundError):
            memory.event("no-such-event")
        with pytest.raises(InvalidInputError, match="async_mode"):
            memory.add("x", user_id="bob", async_mode="yes")


def test_async_memory_and_verbatim_adds(backend, hashing_embedder, llm):
    import asyncio

    server, _ = llm

    async def run() -> None:
        async with AsyncMemory(memory=Memory(_config(backend, server), embedder=hashing_embedder)) as memory:
            verbatim = await memory.add([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
                                        user_id="alice", infer=False, async_mode=True)
            assert [p["memory"] for p in verbatim["provisional"]] == ["hi"]
            event = await asyncio.to_thread(_settle, memory.sync, verbatim["event_id"])
            assert [r["memory"] for r in event["results"]] == ["hi"] and event["result"]["skipped"]
            assert (await memory.event(verbatim["event_id"]))["status"] == "SUCCEEDED"

    asyncio.run(run())


def test_maintenance_of_a_scope_runs_once_at_a_time(backend, hashing_embedder):
    from memlane.core.errors import MaintenanceBusyError

    config = backend()
    with Memory(config, embedder=hashing_embedder) as one, Memory(config, embedder=hashing_embedder) as other:
        one.add([f"note {i}" for i in range(5)], user_id="alice", infer=False)
        with one.store.maintenance_lock("user_id=alice"):  # another server's cleanup of alice runs
            with pytest.raises(MaintenanceBusyError, match="running already"):
                other.cleanup_old_memories("alice", keep_latest=2)
            with pytest.raises(MaintenanceBusyError):
                other.merge_similar_memories("alice")
            assert len(other.cleanup_old_memories("alice", keep_latest=2, dry_run=True)["results"]) == 3
            assert other.cleanup_old_memories("bob", keep_latest=2)["results"] == []  # another scope
        assert len(other.cleanup_old_memories("alice", keep_latest=2)["results"]) == 3


def test_an_export_leaves_out_what_is_not_formed_yet(backend, hashing_embedder):
    import io

    from memlane import transfer
    from memlane.core.filters import MATCH_ALL

    config = {**backend(), "background": {"workers": 0}}  # nobody forms: the add stays queued
    with Memory(config, embedder=hashing_embedder) as memory:
        memory.add("a formed note", user_id="alice", infer=False)
        memory.add("a queued note", user_id="alice", async_mode=True)
        out = io.StringIO()
        assert transfer.export_jsonl(memory, out, MATCH_ALL) == 1
        assert [json.loads(line)["memory"] for line in out.getvalue().splitlines()] == ["a formed note"]


def test_an_async_add_keeps_when_it_was_said(backend, hashing_embedder, llm):
    """``timestamp`` and a message's ``created_at`` date the provisional memories and, formed later, the
    memories formed: the time of the conversation, not of the worker's turn."""
    server, _ = llm
    may, june = "2023-05-08T13:56:00.000000+00:00", "2023-06-01T09:00:00.000000+00:00"
    store = backend()
    queued = {**store, "background": {"workers": 0}}  # nobody forms yet
    with Memory(queued, embedder=hashing_embedder) as memory:
        verbatim = memory.add([{"role": "user", "content": "I keep bees on my roof"},
                               {"role": "user", "content": "I adopted a cat named Miso", "created_at": june}],
                              user_id="alice", infer=False, timestamp=may, async_mode=True)
        assert {memory.get(p["id"])["created_at"] for p in verbatim["provisional"]} == {may, june}
        formed = memory.add("I live in Paris", user_id="bob", timestamp=may, async_mode=True)
    with Memory(_config(lambda: store, server), embedder=hashing_embedder) as memory:
        memory.start_background()  # forms what the other process queued
        for event_id in (verbatim["event_id"], formed["event_id"]):
            assert _settle(memory, event_id)["status"] == "SUCCEEDED"
        assert {m["memory"]: m["created_at"] for m in memory.get_all(user_id="alice")["results"]} == \
            {"I keep bees on my roof": may, "I adopted a cat named Miso": june}
        bob = memory.get_all(user_id="bob")["results"]
        assert bob and not any(m.get("provisional") for m in bob) and {m["created_at"] for m in bob} == {may}
        assert {m["created_at"] for m in memory.get_messages(user_id="bob")} == {may}
