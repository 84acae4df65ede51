"""Async adds over the faces: REST (memlane's route family and mem0 platform's; the official mem0
client in test_server_mem0_client.py), MCP; each event is its tenant's; a cleanup already running for a scope answers 409."""

from __future__ import annotations

import time

import pytest

from memlane.mcp_server import tools
from support import slow_llm
from support.server_fixtures import serving


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    from memlane.embeddings.hashing import HashingEmbedder

    server, formation = slow_llm.start(delay=0.3)
    home = tmp_path_factory.mktemp("async-home")
    config = {"llm": slow_llm.llm_config(server), "background": {"poll_seconds": 0.05}}
    with serving(home, HashingEmbedder(), config=config) as running:
        yield running
    server.stop()


def _settled(client, path: str) -> dict:
    deadline = time.monotonic() + 60
    while True:
        event = client.get(path).json()
        if event["status"] in ("SUCCEEDED", "FAILED") or time.monotonic() > deadline:
            return event
        time.sleep(0.05)


def test_both_route_families_queue_and_resolve_events(live):
    client = live.client(live.key("acme"))
    answer = client.post("/memories", json={"messages": "I live in Paris", "user_id": "alice",
                                            "async_mode": True}).json()
    assert answer["status"] == "PENDING" and answer["provisional"][0]["memory"] == "I live in Paris"
    found = client.post("/search", json={"query": "Paris", "user_id": "alice"}).json()["results"]
    assert [(r["memory"], r.get("provisional")) for r in found] == [("I live in Paris", True)]
    event = _settled(client, f"/events/{answer['event_id']}")
    assert event["status"] == "SUCCEEDED" and event["results"][0]["data"]["memory"] == "I live in Paris"
    assert client.get(f"/v1/event/{answer['event_id']}/").json() == event
    assert client.get("/events", params={"status": "SUCCEEDED"}).json()["count"] == 1

    platform = client.post("/v3/memories/add/", json={"messages": [{"role": "user", "content": "I work at Acme"}],
                                                      "filters": {"user_id": "alice"}, "async_mode": True}).json()
    assert platform["status"] == "PENDING" and platform["message"].startswith("queued")
    assert _settled(client, f"/v1/event/{platform['event_id']}/")["status"] == "SUCCEEDED"
    sync = client.post("/v3/memories/add/", json={"messages": "I like tea", "user_id": "alice"}).json()
    assert sync["status"] == "SUCCEEDED" and sync["results"]  # without async_mode the platform route forms at once

    missing = client.get("/v1/event/no-such-event/")
    assert missing.status_code == 404 and missing.json()["field"] == "event_id"
    other = live.client(live.key("globex"))  # another tenant's events are not there
    assert other.get(f"/events/{answer['event_id']}").status_code == 404
    bad = client.post("/memories", json={"messages": "x", "user_id": "alice", "async_mode": "yes"})
    assert bad.status_code == 422


def test_mcp_tools_queue_and_read_events(live):
    caller = tools.Caller(memory=live.memory("hooli"), admin=False, default_user_id="carol")
    answer = tools.add_memory(caller, "I live in Rome", async_mode=True)
    assert answer["status"] == "PENDING" and answer["message"].startswith("queued (event")
    deadline = time.monotonic() + 60
    while tools.get_event(caller, answer["event_id"])["status"] not in ("SUCCEEDED", "FAILED"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert tools.get_event(caller, answer["event_id"])["status"] == "SUCCEEDED"
    with pytest.raises(tools.ToolFailure, match="no event"):
        tools.get_event(caller, "nope")


def test_a_cleanup_of_a_scope_already_being_cleaned_answers_409(live):
    client = live.client(live.key("umbrella", admin=True))
    client.post("/memories", json={"messages": [{"role": "user", "content": c} for c in ("one", "two", "three")],
                                   "user_id": "dan", "infer": False})
    with live.memory("umbrella").store.maintenance_lock("user_id=dan"):
        busy = client.post("/memories/cleanup", json={"user_id": "dan", "keep_latest": 1})
        assert busy.status_code == 409 and "running already" in busy.json()["detail"]
    assert len(client.post("/memories/cleanup", json={"user_id": "dan", "keep_latest": 1}).json()["results"]) == 2
