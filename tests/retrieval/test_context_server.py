"""Agent context over the wire: ``POST /context/should-search`` and ``POST /context/search`` on a
real uvicorn, and the ``should_search_memory`` / ``search_memory_with_context`` MCP tools through
the MCP SDK's client on ``/mcp``. Tenants never see each other's memories, also through an
agent-scoped search with no user."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from support.server_fixtures import TIMEOUT, live  # noqa: F401  (fixture)

CATEGORIES = ("agent_profile_matches", "agent_event_matches", "user_profile_matches", "user_event_matches")


def _add(client, text, **scope):
    answer = client.post("/memories", json={"messages": text, "infer": False, **scope})
    assert answer.status_code == 200, answer.text


def _contents(result):
    return {m["content"] for c in CATEGORIES for m in result[c]}


@pytest.fixture(scope="module")
def tenants(live):
    """Two tenants with the same agent and user ids and different memories."""
    keys = {name: live.key(f"ctx-{name}") for name in ("a", "b")}
    for name, key in keys.items():
        with live.client(key) as client:
            _add(client, f"Tenant {name}: the tutor helped with Python decorators", agent_id="tutor",
                 memory_type="event")
            _add(client, f"Tenant {name}: learns Python decorators for work", user_id="ana", agent_id="tutor",
                 memory_type="fact")
    return keys


def test_should_search_over_rest(live, tenants):
    with live.client(tenants["a"]) as client:
        yes = client.post("/context/should-search", json={"conversation": "你还记得我女儿的名字吗？"})
        no = client.post("/context/should-search", json={
            "conversation": [{"role": "user", "content": "What is the capital of France?"}]})
        explained = client.post("/context/should-search", json={
            "conversation": [{"role": "user", "content": "Remember my garden?"}], "system_prompt": "Be brief",
            "explain": True})
    assert yes.status_code == 200 and yes.json() == {"should_search": True}
    assert no.json() == {"should_search": False}
    body = explained.json()
    assert body["should_search"] is True and body["threshold"] == 3.0
    signals = {s["signal"]: s for s in body["signals"]}
    assert signals["memory_keywords"]["hits"] == ["remember"] and signals["pronouns"]["hits"] == ["my"]


def test_context_search_over_rest_stays_in_the_tenant(live, tenants):
    conversation = [{"role": "user", "content": "Can we go over Python decorators again?"}]
    with live.client(tenants["a"]) as client:
        found = client.post("/context/search", json={"conversation": conversation, "agent_id": "tutor"})
        both = client.post("/context/search", json={"conversation": conversation, "agent_id": "tutor",
                                                     "user_id": "ana", "max_results": 1,
                                                     "system_prompt": "You are a tutor"})
    assert found.status_code == 200, found.text
    body = found.json()
    assert set(body) == {"search_terms", *CATEGORIES, "total_matches"} and "python" in body["search_terms"]
    assert _contents(body) == {"Tenant a: the tutor helped with Python decorators",
                               "Tenant a: learns Python decorators for work"}   # nothing of tenant b
    assert body["agent_event_matches"][0]["matched_terms"] == ["python", "decorators"]
    assert both.json()["total_matches"] == 2
    with live.client(tenants["b"]) as client:
        other = client.post("/context/search", json={"conversation": conversation, "agent_id": "tutor"}).json()
    assert all(text.startswith("Tenant b") for text in _contents(other)) and other["total_matches"] == 2


@pytest.mark.parametrize("path,body,status,field", [
    ("/context/search", {"conversation": [{"role": "robot", "content": "hi"}], "user_id": "ana"}, 422,
     "conversation"),
    ("/context/search", {"conversation": "hi"}, 403, None),   # every memory of the tenant: admin keys only
    ("/context/search", {"conversation": "hi", "user_id": "ana", "max_results": 0}, 422, "max_results"),
    ("/context/search", {"conversation": "hi", "user_id": "ana", "limit": 3}, 422, "limit"),
    ("/context/should-search", {"conversation": "hi", "explain": "yes"}, 422, "explain"),
    ("/context/should-search", {"conversation": "x" * 300_000}, 413, None),     # over the body limit
])
def test_bad_requests_name_the_field(live, tenants, path, body, status, field):
    with live.client(tenants["a"]) as client:
        answer = client.post(path, json=body)
    assert answer.status_code == status, answer.text
    if field is not None:
        assert answer.json()["field"].startswith(field), answer.json()


def test_context_needs_a_key(live):
    with live.client() as anonymous:
        assert anonymous.post("/context/should-search", json={"conversation": "hi"}).status_code == 401
        assert anonymous.post("/context/search", json={"conversation": "hi", "user_id": "a"}).status_code == 401


def _mcp(live, key):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
    return Client(streamable_http_client(live.url + "/mcp", http_client=http), read_timeout_seconds=TIMEOUT)


async def _call(client, name, arguments):
    result = await client.call_tool(name, arguments)
    if result.is_error:
        return {"error": " ".join(getattr(block, "text", "") for block in result.content)}
    return result.structured_content


def test_mcp_tools_over_http(live, tenants):
    conversation = [{"role": "user", "content": "Do you remember the Python decorators we covered?"}]

    async def run():
        async with _mcp(live, tenants["a"]) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            decided = await _call(client, "should_search_memory", {"conversation": conversation})
            explained = await _call(client, "should_search_memory", {"conversation": conversation, "explain": True})
            found = await _call(client, "search_memory_with_context",
                                {"conversation": conversation, "agent_id": "tutor", "max_results": "2"})
            empty = await _call(client, "search_memory_with_context", {"conversation": []})
            bad_role = await _call(client, "should_search_memory",
                                   {"conversation": [{"role": "robot", "content": "hi"}]})
            # with a scope the gate weighs what it holds: the tutor's memories, and nothing for a stranger
            tutor = await _call(client, "should_search_memory",
                                {"conversation": conversation, "agent_id": "tutor", "explain": True})
            stranger = await _call(client, "should_search_memory", {"conversation": conversation,
                                                                    "user_id": "stranger"})
        return names, decided, explained, found, empty, bad_role, tutor, stranger

    names, decided, explained, found, empty, bad_role, tutor, stranger = anyio.run(run)
    assert tutor["should_search"] is True
    assert "decorators" in next(s for s in tutor["signals"] if s["signal"] == "memory_terms")["hits"]
    assert stranger == {"should_search": False}
    assert {"should_search_memory", "search_memory_with_context"} <= names
    assert decided == {"should_search": True}
    assert explained["score"] >= explained["threshold"] and explained["signals"]
    assert _contents(found) == {"Tenant a: the tutor helped with Python decorators",
                                "Tenant a: learns Python decorators for work"}
    assert any("max_results" in w for w in found["warnings"])       # "2" was a string
    assert empty["total_matches"] == 0 and empty["search_terms"] == []  # seed 004: empty is not an error
    assert "role" in bad_role["error"]


def test_mcp_default_user_when_no_scope_is_named(live, tenants):
    with live.client(tenants["a"]) as client:
        _add(client, "Tenant a default user keeps bees", user_id="default-user")

    async def run():
        async with _mcp(live, tenants["a"]) as client:
            return await _call(client, "search_memory_with_context", {"conversation": "my bees"})

    found = anyio.run(run)
    assert _contents(found) == {"Tenant a default user keeps bees"}
