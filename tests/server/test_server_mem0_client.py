"""The official mem0 platform client (``mem0ai``) against memlane: every method of ``MemoryClient``
(construction, add, search, get, get_all, update, delete, delete_all, history, users, delete_users,
reset, batch_update, batch_delete, the profiles, the project refusals), plus how memlane's errors
reach the client's exceptions. The JavaScript client: test_mem0_js_client.py.

mem0 is imported only after ``MEM0_TELEMETRY=False`` (read at import time: no PostHog
client, no connection) and ``MEM0_DIR`` (its config file) point somewhere harmless.
"""

from __future__ import annotations

import asyncio
import os

import pytest

from support.server_fixtures import live  # noqa: F401  (fixture)




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
    both = client.search("food and work", filters={"AND": [{"user_id": "m0-alice"}, {"metadata": {"category": "food"}}]},
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
        client.update("whatever", text="x", expiration_date="2001-01-01")  # in the past
    with pytest.raises(errors.ValidationError, match="timestamp"):
        client.update("whatever", timestamp="2999-01-01")  # in the future: not said yet


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


# -- update's timestamp and expiry, batches, entities, profiles -------------------------------------------


def test_update_sets_when_the_memory_was_said_and_when_it_expires(client):
    [added] = client.add("I keep bees", user_id="m0-said", infer=False)["results"]
    updated = client.update(added["id"], text="I keep two hives of bees", timestamp=1_600_000_000)
    assert updated["memory"] == "I keep two hives of bees" and updated["created_at"].startswith("2020-09-13T12:26:40")
    only_time = client.update(added["id"], timestamp="2021-05-01T08:00:00Z")
    assert only_time["created_at"].startswith("2021-05-01T08:00:00") and only_time["memory"] == updated["memory"]
    expiring = client.update(added["id"], expiration_date="2999-01-01")
    assert expiring["valid_to"].startswith("2999-01-01") and expiring["created_at"] == only_time["created_at"]
    assert "valid_to" not in client.update(added["id"], expiration_date=None)  # null: never expires
    assert [e["event"] for e in client.history(added["id"])] == ["ADD", "UPDATE", "UPDATE"]


def test_batch_update_and_delete_are_all_or_nothing(mem0, client):
    ids = [r["id"] for r in (client.add(f"batch fact {i}", user_id="m0-batch", infer=False)["results"][0]
                             for i in range(3))]
    answer = client.batch_update([{"memory_id": ids[0], "text": "batch fact zero"},
                                  {"memory_id": ids[1], "metadata": {"kind": "b"}}])
    assert answer["message"] == "Successfully updated 2 memories"
    assert [m["memory"] for m in answer["results"]] == ["batch fact zero", "batch fact 1"]
    assert client.get(ids[1])["metadata"] == {"kind": "b"}
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):  # one unknown id: nothing changes
        client.batch_update([{"memory_id": ids[2], "text": "changed"}, {"memory_id": "no-such", "text": "x"}])
    assert client.get(ids[2])["memory"] == "batch fact 2"
    with pytest.raises(mem0.exceptions.ValidationError, match=r"memories\[1\]: memory .* is named twice"):
        client.batch_delete([{"memory_id": ids[0]}, {"memory_id": ids[0]}])
    with pytest.raises(mem0.exceptions.ValidationError, match="1000"):
        client.batch_delete([{"memory_id": f"m{i}"} for i in range(1001)])
    assert client.batch_delete([{"memory_id": i} for i in ids]) == {
        "message": "Successfully deleted 3 memories", "deleted": 3}
    assert client.get_all(filters={"user_id": "m0-batch"})["count"] == 0


def test_users_lists_entities_and_delete_users_erases_them(mem0, live):
    admin = mem0.MemoryClient(api_key=live.key("m0-entities", admin=True), host=live.url)
    admin.add("I like tea", user_id="m0-ann", infer=False)
    admin.add("I like coffee", user_id="m0-ann", infer=False)
    admin.add("agent rule", agent_id="m0-helper", run_id="m0-run-1", infer=False)
    listed = admin.users()
    assert listed["count"] == 3 and listed["next"] is None
    assert [(e["type"], e["name"], e["total_memories"]) for e in listed["results"]] == [
        ("user", "m0-ann", 2), ("agent", "m0-helper", 1), ("run", "m0-run-1", 1)]
    assert admin.delete_users(user_id="m0-ann") == {"message": "Entity deleted successfully."}
    assert [e["name"] for e in admin.users()["results"]] == ["m0-helper", "m0-run-1"]
    assert admin.get_all(filters={"user_id": "m0-ann"})["count"] == 0
    with live.client(admin.api_key) as http:  # gone: deleting it again says so (the clients' reset needs a 2xx)
        assert http.delete("/v2/entities/user/m0-ann/").json() == {
            "message": "Nothing to delete: no user 'm0-ann' has memories or messages here", "deleted": 0}
    with pytest.raises(mem0.exceptions.ValidationError, match="app_id"):
        admin.delete_users(app_id="some-app")
    assert admin.reset() == {"message": "Client reset successful. All users and memories deleted."}
    assert admin.users() == {"count": 0, "next": None, "previous": None, "results": []}


def test_listing_every_entity_needs_an_admin_key(mem0, client):
    with pytest.raises(mem0.exceptions.AuthenticationError, match="admin"):
        client.users()


def test_profile_is_the_users_facts_and_its_jobs_are_done_at_once(mem0, client, live, key):
    client.add("I am a pilot", user_id="m0-prof", infer=False)
    client.add("I live in Lisbon", user_id="m0-prof", infer=False)
    got = client.get_profile("m0-prof")
    assert got["status"] == "succeeded" and got["entity_id"] == "m0-prof" and got["entity_type"] == "user"
    assert set(got["profile"]["facts"]) == {"I am a pilot", "I live in Lisbon"} and got["updated_at"]
    with pytest.raises(mem0.exceptions.MemoryNotFoundError, match="nobody"):
        client.get_profile("nobody")
    job = client.generate_profile("m0-prof", idempotency_key="k1")
    assert job["status"] == "succeeded" and job == client.generate_profile("m0-prof", idempotency_key="k1")
    assert client.get_profile_job(job["status_url"])["job"]["succeeded"] == 1
    assert client.get_profile_job(job["job_id"])["job"]["status"] == "succeeded"
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        client.get_profile_job("not-a-job")
    settings = client.get_profile_settings()
    assert settings["enabled"] is True and settings["entities"]["user"]["schema"] is None
    assert client.update_profile_settings(enabled=True, schema=None) == settings
    with pytest.raises(mem0.exceptions.ValidationError, match="schema"):
        client.update_profile_settings(schema={"type": "object"})
    with pytest.raises(mem0.exceptions.AuthenticationError, match="admin"):
        client.sample_profiles(limit=2)
    summary = client.get_summary(filters={"user_id": "m0-prof"})
    assert summary["count"] == 2 and set(summary["facts"]) == set(got["profile"]["facts"])
    assert summary["summary"].count("\n- ") == 1 and summary["summary"].startswith("- ")
    admin = mem0.MemoryClient(api_key=live.key("mem0-tenant", admin=True), host=live.url)
    sampled = admin.sample_profiles(limit=2)
    assert sampled["sampled"] == len(sampled["entity_ids"]) <= 2 and sampled["status"] == "succeeded"


def test_v1_routes_of_older_clients(live, key):
    with live.client(key) as http:
        added = http.post("/v1/memories/", json={"messages": "I sail on weekends", "user_id": "m0-v1",
                                                 "infer": False}).json()["results"][0]
        found = http.post("/v1/memories/search/", json={"query": "sailing", "user_id": "m0-v1", "limit": 1})
        assert found.status_code == 200 and [h["id"] for h in found.json()["results"]] == [added["id"]]
        listed = http.get("/v1/memories/", params={"user_id": "m0-v1"})
        assert listed.status_code == 200 and [m["id"] for m in listed.json()["results"]] == [added["id"]]
        by_filter = http.get("/v1/memories/", params={"filters": "{'user_id': 'm0-v1'}", "page": 1, "page_size": 1})
        assert by_filter.json()["count"] == 1 and by_filter.json()["next"] is None
        refused = http.get("/v1/memories/", params={"user_id": "m0-v1", "app_id": "x"})
        assert refused.status_code == 422 and refused.json()["field"] == "app_id"
        assert http.get("/v1/memories/").status_code == 400  # no scope


def test_refusals_say_why(mem0, client):
    [added] = client.add("keep me", user_id="m0-refuse", infer=False)["results"]
    with pytest.raises(mem0.exceptions.ValidationError, match="delete_linked"):
        client.delete(added["id"], delete_linked=True)
    assert client.get(added["id"])["memory"] == "keep me"
    with pytest.raises(mem0.exceptions.ValidationError, match="memlane keys create"):
        client.project.create("another")
    with pytest.raises(mem0.exceptions.ValidationError, match="members"):
        client.project.get_members()
