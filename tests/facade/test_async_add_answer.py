"""An async add answers without running the embedding model (issue 45): the call keeps the messages, the
job and a provisional memory per message in one write; the provisional memory is found by its words at
once (a hybrid search, in its own scope only), never by a vector-only search until a worker has embedded
it, and by meaning once it has: a job of its own (``EMBED``, run by the workers' quick lane) that waits
neither for the add's formation nor for the formation of the same user's earlier adds, and is not an
event users see. On both backends, with a scripted LLM on 127.0.0.1 (tests/support/slow_llm.py) held
at a gate."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from memlane import Memory
from memlane.core.jobs import EMBED, QUICK, JobLostError
from memlane.embeddings.hashing import HashingEmbedder
from conftest import sqlite_config
from support import slow_llm
from support.openai_server import OpenAIServer

TEXT = "I keep bees on my roof"


class CountingEmbedder:
    """The hashing embedder, recording every call: (purpose, texts)."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.name, self.dims = self.inner.name, self.inner.dims
        self.calls: list[tuple[str, list[str]]] = []

    def embed(self, texts: Sequence[str], purpose: str) -> np.ndarray:
        self.calls.append((purpose, list(texts)))
        return self.inner.embed(texts, purpose)


@pytest.fixture
def gated_llm():
    """The formation LLM, answering only once ``gate`` is set."""
    gate = threading.Event()
    formation = slow_llm.FormationLLM()

    def gated(request):
        gate.wait(60)
        return formation(request)

    server = OpenAIServer().route(slow_llm.CHAT, gated).start()
    yield server, gate
    gate.set()
    server.stop()
    assert not server.errors, server.errors


def _memories(found: dict) -> list[tuple[str, bool]]:
    return [(r["memory"], bool(r.get("provisional"))) for r in found["results"]]


def _wait_for(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def test_the_answer_runs_no_model_and_the_text_is_found_by_its_words_in_its_scope_only(backend):
    embedder = CountingEmbedder()
    config = {**backend(), "background": {"workers": 0}}  # nobody forms or embeds: the add stays queued
    with Memory(config, embedder=embedder) as memory:
        memory.add("I grow tomatoes in the garden", user_id="alice", infer=False)
        memory.add("Bees need flowers", user_id="bob", infer=False)
        embedder.calls.clear()
        answer = memory.add(TEXT, user_id="alice", async_mode=True)
        assert embedder.calls == []  # the answer embedded nothing
        assert answer["status"] == "PENDING" and [p["memory"] for p in answer["provisional"]] == [TEXT]
        assert memory.event(answer["event_id"])["status"] == "PENDING"

        found = memory.search("bees on the roof", user_id="alice")  # hybrid: vector and keywords
        assert _memories(found)[0] == (TEXT, True)
        assert found["results"][0]["event_id"] == answer["event_id"] and 0 < found["results"][0]["score"] <= 1
        assert (TEXT, True) not in _memories(memory.search("bees on the roof", user_id="bob"))
        # a vector-only search (and the matrix of a search across users) has no vector of it to score
        assert _memories(memory.search("bees on the roof", user_id="alice", keyword_search=False)) == [
            ("I grow tomatoes in the garden", False)]
        assert (TEXT, True) not in _memories(memory.search("bees on the roof", filters={"user_id": "*"},
                                                           keyword_search=False))
        # a search across users by keywords finds it, once
        assert _memories(memory.search("bees roof", filters={"user_id": "*"})).count((TEXT, True)) == 1
        assert [m["memory"] for m in memory.get_all(user_id="alice")["results"]] == [
            TEXT, "I grow tomatoes in the garden"]


def test_a_worker_embeds_the_text_before_formation_then_formation_replaces_it(backend, gated_llm):
    server, gate = gated_llm
    embedder = CountingEmbedder()
    config = {**backend(), "llm": slow_llm.llm_config(server),
              "background": {"poll_seconds": 0.05, "retry_seconds": 0}}
    with Memory(config, embedder=embedder, background=False) as memory:  # its workers start when told
        memory.add("I grow tomatoes in the garden", user_id="alice", infer=False)
        embedder.calls.clear()
        answer = memory.add(TEXT, user_id="alice", async_mode=True)

        def by_meaning() -> list[tuple[str, bool]]:
            return _memories(memory.search(TEXT, user_id="alice", keyword_search=False, limit=1))

        assert by_meaning() == [("I grow tomatoes in the garden", False)]  # no vector of it yet
        memory.background = True
        memory.start_background()  # a worker embeds it, then waits at the gate for formation's LLM
        assert _wait_for(lambda: by_meaning() == [(TEXT, True)], "the provisional memory found by meaning")
        assert embedder.calls.count(("document", [TEXT])) == 1  # embedded once, as a stored memory is
        assert memory.event(answer["event_id"])["status"] == "RUNNING"  # formation waits for the LLM
        assert _memories(memory.search(TEXT, filters={"user_id": "*"}, keyword_search=False, limit=1)) == [
            (TEXT, True)]

        gate.set()
        assert _wait_for(lambda: memory.event(answer["event_id"])["status"] in ("SUCCEEDED", "FAILED"),
                         "the end of formation")
        assert memory.event(answer["event_id"])["status"] == "SUCCEEDED"
        assert by_meaning() == [(TEXT, False)]
        assert _memories(memory.search(TEXT, user_id="alice")).count((TEXT, False)) == 1
        assert (TEXT, True) not in _memories(memory.search(TEXT, user_id="alice"))


def test_the_matrix_of_searches_across_users_takes_the_vector_when_it_comes(tmp_path):
    """SQLite's unscoped searches score an in-memory matrix kept current from a change log: the provisional
    memory joins it without a vector (never a result), and its vector, when a worker writes it, is taken
    from the log without reading every vector again."""
    from memlane.background import formation

    config = {**sqlite_config(tmp_path / "memlane.db"), "background": {"workers": 0}}
    with Memory(config, embedder=CountingEmbedder()) as memory:
        memory.add([f"note {n} about the weather" for n in range(20)], user_id="alice", infer=False)

        def across_users(text: str) -> list[tuple[str, bool]]:
            return _memories(memory.search(text, filters={"user_id": "*"}, keyword_search=False, limit=1))

        assert across_users("note 3 about the weather") == [("note 3 about the weather", False)]
        answer = memory.add(TEXT, user_id="bob", async_mode=True)
        assert across_users(TEXT) != [(TEXT, True)]
        rebuilds = memory.store._matrix.rebuilds
        assert formation.embed_provisional(memory, answer["event_id"]) == 1  # a worker's first step
        assert across_users(TEXT) == [(TEXT, True)]
        assert memory.store._matrix.rebuilds == rebuilds


@pytest.mark.parametrize("workers", [1, 2])
def test_a_later_add_is_found_by_meaning_while_the_users_earlier_add_is_formed(backend, gated_llm, workers):
    """Adds to one user are formed in order, so the second waits for the first's LLM; its text does not:
    a vector-only search finds it while the first formation is held, whatever the number of workers."""
    server, gate = gated_llm
    config = {**backend(), "llm": slow_llm.llm_config(server),
              "background": {"workers": workers, "poll_seconds": 0.05, "retry_seconds": 0}}
    later = "My sister lives in Lisbon"
    with Memory(config, embedder=CountingEmbedder()) as memory:
        memory.add("I grow tomatoes in the garden", user_id="alice", infer=False)
        first = memory.add(TEXT, user_id="alice", async_mode=True)["event_id"]
        _wait_for(lambda: memory.event(first)["status"] == "RUNNING", "the first formation")
        second = memory.add(later, user_id="alice", async_mode=True)["event_id"]

        def by_meaning(**scope) -> list[tuple[str, bool]]:
            return _memories(memory.search(later, keyword_search=False, limit=1, **scope))

        assert _wait_for(lambda: by_meaning(user_id="alice") == [(later, True)], "the later add found by meaning")
        assert by_meaning(filters={"user_id": "*"}) == [(later, True)]  # SQLite's matrix took its vector
        assert (memory.event(first)["status"], memory.event(second)["status"]) == ("RUNNING", "PENDING")
        # what users see of the queue: the adds, not their embedding
        assert [e["id"] for e in memory.events()] == [second, first]
        assert [e["event_type"] for e in memory.events()] == ["ADD", "ADD"]

        gate.set()
        for event_id in (first, second):
            assert _wait_for(lambda e=event_id: memory.event(e)["status"] in ("SUCCEEDED", "FAILED"), "formation")
        assert [(e["id"], e["status"]) for e in memory.events()] == [(second, "SUCCEEDED"), (first, "SUCCEEDED")]
        assert [e["id"] for e in memory.events("SUCCEEDED", limit=1)] == [second]
        assert by_meaning(user_id="alice") == [(later, False)]  # formed: the stand-in is gone
        assert {job.status for job in memory.store.jobs(kind=EMBED)} == {"SUCCEEDED"}


def test_an_embedding_whose_worker_died_is_done_by_another_once_its_lease_runs_out(backend, gated_llm):
    server, gate = gated_llm
    store = backend()
    with Memory({**store, "background": {"workers": 0}}, embedder=CountingEmbedder()) as queued:
        answer = queued.add(TEXT, user_id="alice", async_mode=True)
        held = queued.store.claim_job("dead-worker", 0.05, kinds=QUICK)  # a worker takes it, then dies
        assert (held.kind, held.request, held.attempts) == (EMBED, {"event_id": answer["event_id"]}, 1)
        assert queued.store.claim_job("another-worker", 30, kinds=QUICK) is None  # held: nobody else takes it
        time.sleep(0.2)  # the dead worker's lease runs out

    config = {**store, "llm": slow_llm.llm_config(server), "background": {"poll_seconds": 0.05, "retry_seconds": 0}}
    with Memory(config, embedder=CountingEmbedder()) as memory:
        memory.start_background()  # embeds what the dead worker left, while formation waits at the gate

        def by_meaning() -> list[tuple[str, bool]]:
            return _memories(memory.search(TEXT, user_id="alice", keyword_search=False, limit=1))

        assert _wait_for(lambda: by_meaning() == [(TEXT, True)], "the provisional memory found by meaning")
        assert memory.event(answer["event_id"])["status"] == "RUNNING"
        [embedding] = memory.store.jobs(kind=EMBED)
        assert (embedding.id, embedding.status, embedding.attempts) == (held.id, "SUCCEEDED", 2)
        with pytest.raises(JobLostError):  # the dead worker's late end changes nothing
            memory.run_job(held, "dead-worker")
        gate.set()
        assert _wait_for(lambda: memory.event(answer["event_id"])["status"] == "SUCCEEDED", "formation")
        assert by_meaning() == [(TEXT, False)]


def test_an_add_formed_before_its_embedding_leaves_the_embedding_nothing_to_do(backend, hashing_embedder):
    from memlane.ingest.offline import OfflineEngine

    config = {**backend(), "background": {"workers": 0}}
    with Memory(config, embedder=hashing_embedder, engine=OfflineEngine()) as memory:
        answer = memory.add(TEXT, user_id="alice", infer=False, async_mode=True)
        formation = memory.store.claim_job("worker-a", 30)  # the ADD first: a free worker forms it at once
        embedding = memory.store.claim_job("worker-b", 30)
        assert (formation.kind, formation.id, embedding.kind) == ("ADD", answer["event_id"], EMBED)
        memory.run_job(formation, "worker-a")
        memory.run_job(embedding, "worker-b")
        assert [j.status for j in memory.store.jobs(kind=EMBED)] == ["SUCCEEDED"]
        assert _memories(memory.search(TEXT, user_id="alice", keyword_search=False)) == [(TEXT, False)]


def _as_a_version_before_embedding_jobs_left_it(memory: Memory, backend_name: str) -> None:
    """The add's job alone (no ``EMBED`` job), the schema one version back: what an older memlane queued."""
    from memlane.store import postgres_schema, sqlite_schema

    if backend_name == "sqlite":
        con = memory.store._con
        con.execute("BEGIN IMMEDIATE")
        con.execute("DELETE FROM jobs WHERE kind = 'EMBED'")
        con.execute(f"PRAGMA user_version = {sqlite_schema.VERSION - 1}")
        con.execute("COMMIT")
        return
    with memory.store.db.pool.connection() as con, con.transaction():
        con.execute("DELETE FROM memlane_jobs WHERE kind = 'EMBED'")
        con.execute("DELETE FROM memlane_schema_version WHERE version >= %s", (postgres_schema.VERSION,))


def test_an_add_queued_by_a_version_before_embedding_jobs_gets_one_when_the_store_is_upgraded(backend, gated_llm):
    server, gate = gated_llm
    store = backend()
    with Memory({**store, "background": {"workers": 0}}, embedder=CountingEmbedder()) as old:
        answer = old.add(TEXT, user_id="alice", async_mode=True)
        with Memory({**store, "background": {"workers": 0, "provisional": False}}, embedder=CountingEmbedder()) as bare:
            bare.add("I sing in a choir", user_id="bob", async_mode=True)  # kept without a provisional memory
        _as_a_version_before_embedding_jobs_left_it(old, backend.name)
        assert old.store.jobs(kind=EMBED) == []

    config = {**store, "llm": slow_llm.llm_config(server), "background": {"poll_seconds": 0.05}}
    with Memory(config, embedder=CountingEmbedder()) as memory:  # opening it upgrades the store
        queued = {job.request["event_id"] for job in memory.store.jobs(kind=EMBED)}
        assert queued == {answer["event_id"]}  # bob's add holds no provisional memory: nothing to embed
        memory.start_background()

        def by_meaning() -> list[tuple[str, bool]]:
            return _memories(memory.search(TEXT, user_id="alice", keyword_search=False, limit=1))

        assert _wait_for(lambda: by_meaning() == [(TEXT, True)], "the provisional memory found by meaning")
        assert memory.event(answer["event_id"])["status"] == "RUNNING"  # formation still waits at the gate
        gate.set()
        assert _wait_for(lambda: memory.event(answer["event_id"])["status"] == "SUCCEEDED", "formation")
    with Memory(config, embedder=CountingEmbedder()) as again:  # upgraded once: no second embedding job
        assert len(again.store.jobs(kind=EMBED)) == 1
