"""The official mem0 platform client (``mem0ai``) against memlane: construction, add,
search, get, get_all, update, delete, delete_all and history, plus how memlane's
errors reach the client's exceptions.

mem0 is imported only after ``MEM0_TELEMETRY=False`` (read at import time: no PostHog
client, no connection) and ``MEM0_DIR`` (its config file) point somewhere harmless.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from support.server_fixtures import live  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def mem0(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEM0_TELEMETRY", "False")
        patch.setenv("MEM0_DIR", str(tmp_path_factory.mktemp("mem0-dir")))
        import mem0
        import mem0.exceptions
        from mem0.memory import telemetry

        assert telemetry.MEM0_TELEMETRY is False, "mem0 was imported before telemetry was switched off"
        yield mem0


@pytest.fixture(scope="module")
def key(live):
    return live.key("mem0-tenant")


@pytest.fixture
def client(mem0, live, key):
    return mem0.MemoryClient(api_key=key, host=live.url)


def test_construction_pings_and_reads_the_project(mem0, client):
    assert client.project.config.org_id == "memlane"
    assert client.project.config.project_id == "mem0-tenant"


def test_construction_with_a_bad_key_fails_like_the_platform(mem0, live):
    with pytest.raises(ValueError, match="Invalid API key"):
        mem0.MemoryClient(api_key="ml_definitely-not-a-key", host=live.url)


def test_async_mode_answers_pending_and_its_event_resolves(mem0, client, live, key):
    import time

    answer = client.add("I live in Oslo and I like skiing", user_id="m0-async", async_mode=True)
    assert answer["status"] == "PENDING" and answer["results"][0]["event_id"] == answer["event_id"]
    # what was sent is found at once: verbatim (provisional) until it is formed, then what was formed
    assert client.search("Oslo", filters={"user_id": "m0-async"})["results"]
    with live.client(key) as http:
        deadline = time.monotonic() + 120
        while (event := http.get(f"/v1/event/{answer['event_id']}/").json())["status"] in ("PENDING", "RUNNING"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    assert event["status"] == "SUCCEEDED" and event["results"]
    assert {m["memory"] for m in client.get_all(filters={"user_id": "m0-async"})["results"]} == \
        {r["data"]["memory"] for r in event["results"]}


def test_add_search_get_update_history_delete(mem0, client):
    added = client.add("I love Thai curry", user_id="m0-alice", infer=False, metadata={"category": "food"})
    assert added["status"] == "SUCCEEDED" and added["event_id"]
    [first] = added["results"]
    assert first["event"] == "ADD" and first["data"] == {"memory": "I love Thai curry"}
    # entity ids inside filters, a list of messages, inference by the offline engine
    formed = client.add([{"role": "user", "content": "I live in Porto and I work as a nurse."}],
                        filters={"user_id": "m0-alice"})
    assert formed["status"] == "SUCCEEDED" and formed["results"]
    assert all(r["event"] == "ADD" for r in formed["results"])

    hits = client.search("what food do I like?", filters={"user_id": "m0-alice"}, top_k=1)
    assert [h["id"] for h in hits["results"]] == [first["id"]] and hits["results"][0]["score"] > 0.1
    both = client.search("food and work", filters={"AND": [{"user_id": "m0-alice"}, {"category": "food"}]},
                         threshold=0.0)
    assert [h["id"] for h in both["results"]] == [first["id"]]
    staged = client.search("Thai curry", filters={"user_id": "m0-alice"}, top_k=2, keyword_search=True,
                           rerank=True)  # the client forwards the platform's retrieval flags
    assert staged["results"][0]["id"] == first["id"] and staged["metadata"]["stages"]["keyword"]["ran"] is True

    got = client.get(first["id"])
    assert got["memory"] == "I love Thai curry" and got["metadata"] == {"category": "food"}

    listed = client.get_all(filters={"user_id": "m0-alice"})
    assert listed["count"] == 1 + len(formed["results"]) and listed["next"] is None and listed["previous"] is None
    assert first["id"] in {m["id"] for m in listed["results"]}

    updated = client.update(first["id"], text="I love Thai and Lao curry", metadata={"category": "cuisine"})
    assert updated["memory"] == "I love Thai and Lao curry" and updated["metadata"] == {"category": "cuisine"}

    history = client.history(first["id"])
    assert isinstance(history, list) and [e["event"] for e in history] == ["ADD", "UPDATE"]
    assert history[1]["old_memory"] == "I love Thai curry"

    assert client.delete(first["id"]) == {"message": "Memory deleted successfully!"}
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        client.get(first["id"])

    deleted = client.delete_all(filters={"user_id": "m0-alice"})  # sent as a Python repr in the query string
    assert deleted["deleted"] == len(formed["results"])
    assert client.get_all(filters={"user_id": "m0-alice"})["count"] == 0


def test_get_all_pages(client):
    for i in range(5):
        client.add(f"page fact {i}", user_id="m0-pages", infer=False)
    first = client.get_all(filters={"user_id": "m0-pages"}, page=1, page_size=2)
    assert first["count"] == 5 and len(first["results"]) == 2 and first["previous"] is None
    assert "page=2" in first["next"]
    last = client.get_all(filters={"user_id": "m0-pages"}, page=3, page_size=2)
    assert len(last["results"]) == 1 and last["next"] is None and "page=2" in last["previous"]
    seen = [m["id"] for p in (1, 2, 3) for m in client.get_all(filters={"user_id": "m0-pages"}, page=p,
                                                               page_size=2)["results"]]
    assert len(set(seen)) == 5


def test_delete_all_by_entity_kwarg_and_agent_scope(client):
    client.add("agent fact", agent_id="m0-agent", infer=False)
    client.add("user fact", user_id="m0-bob", infer=False)
    assert client.delete_all(agent_id="m0-agent")["deleted"] == 1
    assert client.get_all(filters={"user_id": "m0-bob"})["count"] == 1
    assert client.delete_all(user_id="m0-bob")["deleted"] == 1


def test_errors_map_to_the_clients_exceptions(mem0, client):
    errors = mem0.exceptions
    with pytest.raises(errors.MemoryNotFoundError):
        client.history("no-such-memory")
    with pytest.raises(errors.ValidationError):
        client.delete_all()  # no scope: 400, not "delete everything"
    with pytest.raises(errors.ValidationError):
        client.get_all(filters={})
    with pytest.raises(errors.ValidationError, match="app_id"):
        client.add("x", app_id="some-app")
    with pytest.raises(errors.ValidationError, match="filters"):
        client.search("x", filters={"user_id": "a", "bogus": {"nope": 1}})
    with pytest.raises(errors.AuthenticationError, match="admin"):
        client.search("x", filters={"user_id": "*"})  # wildcard scope: admin keys only
    with pytest.raises(errors.ValidationError, match="expiration_date"):
        client.update("whatever", text="x", expiration_date="2030-01-01")


def test_async_client(mem0, live, key):
    async def run():
        async with mem0.AsyncMemoryClient(api_key=key, host=live.url) as client:
            added = await client.add("async clients work too", user_id="m0-async", infer=False)
            hits = await client.search("do async clients work?", filters={"user_id": "m0-async"})
            return added, hits

    added, hits = asyncio.run(run())
    assert hits["results"][0]["id"] == added["results"][0]["id"]


def test_mem0_keeps_its_files_in_the_temporary_directory(mem0):
    from mem0.memory import setup

    assert setup.mem0_dir == os.environ["MEM0_DIR"] != os.path.expanduser("~/.mem0")
