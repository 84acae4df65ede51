"""Several ``memlane serve`` processes on one PostgreSQL behave as one server (real processes, real HTTP,
the bundled PostgreSQL; docs/deployment.md):

- a write acknowledged by one is seen by the next search on the other;
- keys are the database's: a key made once works on both, and a revoked key is refused by both
  within a second;
- documents upserted through one are searchable through the other;
- an async add queued on one server is formed once, by whichever server's workers take it, and its
  event reads the same on both; when the server forming it is killed (``kill -9``), the other one
  forms it when the lease runs out;
- maintenance of a scope runs once: the second server answers 409 while the first one runs it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time

import httpx
import pytest

from support import slow_llm
from support.multivector_server import MultiVectorServer
from support.serve_process import MEMLANE, ServeProcess


@pytest.fixture(scope="module")
def cluster(pg, tmp_path_factory):
    llm_server, formation = slow_llm.start()
    encoder = MultiVectorServer(dims=16).start()
    config = {**pg.config(), "embedder": {"provider": "hashing"}, "llm": slow_llm.llm_config(llm_server),
              "documents": {"encoder": {"provider": "http", "url": encoder.endpoint, "dims": 16}},
              "background": {"poll_seconds": 0.05, "lease_seconds": 2.0}}
    servers = [ServeProcess(tmp_path_factory.mktemp(f"server{n}"), config=config, startup_timeout=180)
               for n in range(2)]
    try:
        for server in servers:
            server.__enter__()
        yield servers, formation, config
    finally:
        for server in servers:
            server.__exit__()
        encoder.stop()
        llm_server.stop()


def _client(server: ServeProcess, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=120)


def _settled(client: httpx.Client, event_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while (event := client.get(f"/events/{event_id}").json())["status"] in ("PENDING", "RUNNING"):
        assert time.monotonic() < deadline, event
        time.sleep(0.05)
    return event


def test_a_write_on_one_server_is_seen_by_the_next_search_on_the_other(cluster):
    (a, b), _, _ = cluster
    key = a.create_key("acme")  # made once, in the database: both servers accept it
    with _client(a, key) as one, _client(b, key) as other:
        for n in range(20):
            added = one.post("/memories", json={"messages": f"fact number {n} about rivers", "user_id": "alice",
                                                "infer": False}).json()["results"][0]["id"]
            found = other.post("/search", json={"query": f"fact number {n} about rivers", "user_id": "alice",
                                                "limit": 1}).json()["results"]
            assert [r["id"] for r in found] == [added]
            one, other = other, one  # and the other way round
        assert other.get(f"/memories/{added}").json()["memory"] == "fact number 19 about rivers"


def test_a_revoked_key_is_refused_by_every_server_within_a_second(cluster):
    (a, b), _, config = cluster
    key = b.create_key("acme")
    with _client(a, key) as one, _client(b, key) as other:
        assert one.get("/memories", params={"user_id": "x"}).status_code == 200
        assert other.get("/memories", params={"user_id": "x"}).status_code == 200
        key_id = next(k["id"] for k in json.loads(subprocess.run(
            [*MEMLANE, *a.options, "keys", "list", "--json"], env=a.env, capture_output=True, text=True,
            check=True).stdout) if key.startswith(k["prefix"]))
        subprocess.run([*MEMLANE, *a.options, "keys", "revoke", key_id], env=a.env, check=True, capture_output=True)
        time.sleep(1.05)
        assert one.get("/memories", params={"user_id": "x"}).status_code == 401
        assert other.get("/memories", params={"user_id": "x"}).status_code == 401


def test_documents_upserted_through_one_server_are_searchable_through_the_other(cluster):
    (a, b), _, _ = cluster
    key = a.create_key("docs")
    with _client(a, key) as one, _client(b, key) as other:
        assert other.post("/search/documents", json={"query": "pump"}).json()["results"] == []  # b loads its index
        assert one.post("/collections", json={"name": "manuals"}).status_code == 201
        one.post("/documents/upsert", json={"name": "pump", "collection_name": "manuals",
                                            "text": "prime the pump before use"}).raise_for_status()
        found = other.post("/search/documents", json={"query": "prime the pump before use", "top_k": 1}).json()
        assert [r["document_name"] for r in found["results"]] == ["pump"]


def test_maintenance_of_a_scope_runs_once_across_servers(cluster):
    (a, b), formation, _ = cluster
    key = a.create_key("maint", admin=True)
    formation.delay = 3.0  # a merge with an LLM: the first server holds the scope's lock meanwhile
    with _client(a, key) as one, _client(b, key) as other:
        one.post("/memories", json={"messages": [{"role": "user", "content": "I like green tea"},
                                                 {"role": "user", "content": "I like green tea."}],
                                    "user_id": "mia", "infer": False}).raise_for_status()
        first: dict = {}
        running = threading.Thread(target=lambda: first.update(
            answer=one.post("/memories/merge", json={"user_id": "mia", "threshold": 0.5})))
        running.start()
        time.sleep(1.0)
        second = other.post("/memories/merge", json={"user_id": "mia", "threshold": 0.5})
        running.join()
        formation.delay = 0.0
    assert first["answer"].status_code == 200 and second.status_code == 409
    assert "running already" in second.json()["detail"]


def test_an_async_add_is_formed_once_even_when_its_server_is_killed(cluster):
    """Last in the module: it kills one of the two servers."""
    (a, b), formation, config = cluster
    key = a.create_key("jobs")
    with _client(a, key) as one, _client(b, key) as other:
        events = [one.post("/memories", json={"messages": f"I live in city {n}", "user_id": f"user{n}",
                                              "async_mode": True}).json()["event_id"] for n in range(6)]
        ended = [_settled(other, e) for e in events]
        assert all(e["status"] == "SUCCEEDED" and e["attempts"] == 1 for e in ended)
        assert {one.get(f"/events/{e}").json()["status"] for e in events} == {"SUCCEEDED"}
        for n in range(6):
            assert [m["memory"] for m in other.get("/memories", params={"user_id": f"user{n}"}).json()["results"]] \
                == [f"I live in city {n}"]

        formation.delay = 60.0  # the server that takes the next job hangs in the LLM call: it is killed there
        event_id = one.post("/memories", json={"messages": "I live in Lisbon", "user_id": "zoe",
                                               "async_mode": True}).json()["event_id"]
        deadline = time.monotonic() + 60
        while (held := one.get(f"/events/{event_id}").json())["status"] == "PENDING":
            assert time.monotonic() < deadline
            time.sleep(0.02)
        pid = int(held["worker"].split(":")[1])
        victim, survivor = (a, other) if pid == a.process.pid else (b, one)
        assert pid == victim.process.pid
        os.kill(pid, signal.SIGKILL)
        victim.process.wait(timeout=30)
        formation.delay = 0.0
        event = _settled(survivor, event_id)
        assert event["status"] == "SUCCEEDED" and event["attempts"] == 2 and event["worker"] != held["worker"]
        assert [m["memory"] for m in survivor.get("/memories", params={"user_id": "zoe"}).json()["results"]] \
            == ["I live in Lisbon"]
