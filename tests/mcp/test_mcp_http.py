"""The MCP endpoint mounted in the REST server (``/mcp``, streamable HTTP), driven by the
MCP SDK's own client: the same API keys as REST, tenant isolation, the default user,
admin-only wildcard scopes, and sessions bound to the key that opened them."""

from __future__ import annotations

import json

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memlane.mcp_server.tools import TOOL_NAMES
from support.server_fixtures import TIMEOUT, live  # noqa: F401  (fixture)

JSON_RPC_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _client(live, key, mode="auto"):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"} if key else {}, timeout=TIMEOUT)
    return Client(streamable_http_client(live.url + "/mcp", http_client=http), mode=mode,
                  read_timeout_seconds=TIMEOUT)


async def _call(client, name, arguments):
    result = await client.call_tool(name, arguments)
    if result.is_error:
        return {"error": " ".join(getattr(block, "text", "") for block in result.content)}
    return result.structured_content


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tools_over_http_act_on_the_keys_tenant(live, mode):
    key_a, key_b = live.key(f"mcp-a-{mode}"), live.key(f"mcp-b-{mode}")

    async def run():
        async with _client(live, key_a, mode) as a:
            names = {t.name for t in (await a.list_tools()).tools}
            added = await _call(a, "add_memory", {"messages": "I keep bees on my roof", "infer": False})
            explicit = await _call(a, "add_memory", {"messages": "Carol likes jazz", "user_id": "carol",
                                                     "infer": False})
            found = await _call(a, "search_memories", {"query": "what hobby do I have?", "keyword_search": True})
        memory_id = added["results"][0]["id"]
        async with _client(live, key_b, mode) as b:
            stolen = await _call(b, "get_memory", {"memory_id": memory_id})
            hijack = await _call(b, "update_memory", {"memory_id": memory_id, "text": "hijacked"})
            erase = await _call(b, "delete_memory", {"memory_id": memory_id})
            history = await _call(b, "memory_history", {"memory_id": memory_id})
            theirs = await _call(b, "search_memories", {"query": "bees on the roof", "user_id": "default-user"})
            listed = await _call(b, "list_memories", {"user_id": "carol"})
        return names, added, explicit, found, stolen, hijack, erase, history, theirs, listed

    names, added, explicit, found, stolen, hijack, erase, history, theirs, listed = anyio.run(run)
    assert names == set(TOOL_NAMES)
    memory_id = added["results"][0]["id"]
    # the server's default user (ServerSettings.mcp_user_id) when the call names none
    assert live.memory(f"mcp-a-{mode}").get(memory_id)["user_id"] == "default-user"
    assert live.memory(f"mcp-a-{mode}").get(explicit["results"][0]["id"])["user_id"] == "carol"
    assert found["results"][0]["id"] == memory_id
    assert found["metadata"]["stages_run"] == ["semantic_search", "keyword_search"]
    for failure in (stolen, hijack, erase, history):
        assert "no memory" in failure["error"], failure
    assert theirs["results"] == [] and listed["results"] == []
    assert live.memory(f"mcp-a-{mode}").get(memory_id)["memory"] == "I keep bees on my roof"  # untouched
    assert live.memory(f"mcp-b-{mode}").get_all(user_id="default-user")["results"] == []


def test_mcp_needs_a_valid_key(live):
    with httpx.Client(base_url=live.url, timeout=TIMEOUT) as raw:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "test", "version": "0"}}}
        refused = raw.post("/mcp", json=initialize, headers=JSON_RPC_HEADERS)
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        bad = raw.post("/mcp", json=initialize, headers={**JSON_RPC_HEADERS, "Authorization": "Bearer ml_nope"})
        assert bad.status_code == 401

    async def run():
        async with _client(live, None) as client:
            await client.list_tools()

    with pytest.raises(BaseException):
        anyio.run(run)


def test_a_session_is_bound_to_the_key_that_opened_it(live):
    key_a, key_b = live.key("session-a"), live.key("session-b")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "test", "version": "0"}}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_memories", "arguments": {"filters": {"user_id": "*"}}}}
    with httpx.Client(base_url=live.url, timeout=TIMEOUT) as raw:
        opened = raw.post("/mcp", json=initialize, headers={**JSON_RPC_HEADERS, "Authorization": f"Bearer {key_a}"})
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        common = {**JSON_RPC_HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        raw.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                 headers={**common, "Authorization": f"Bearer {key_a}"})
        # another tenant's key cannot ride on tenant a's session
        hijacked = raw.post("/mcp", json=call, headers={**common, "Authorization": f"Bearer {key_b}"})
        assert hijacked.status_code == 404
        own = raw.post("/mcp", json=call, headers={**common, "Authorization": f"Bearer {key_a}"})
        assert own.status_code == 200 and "admin" in own.text  # wildcard scope: ordinary keys are refused


def test_admin_key_may_list_across_users_over_mcp(live):
    admin = live.key("mcp-admin", admin=True)
    live.memory("mcp-admin").add("one", user_id="u1", infer=False)
    live.memory("mcp-admin").add("two", user_id="u2", infer=False)

    async def run():
        async with _client(live, admin) as client:
            return await _call(client, "list_memories", {"filters": {"user_id": "*"}})

    listed = anyio.run(run)
    assert {m["user_id"] for m in listed["results"]} == {"u1", "u2"}


def test_dns_rebinding_is_refused_on_a_loopback_server(live):
    key = live.key("rebinding")
    with httpx.Client(base_url=live.url, timeout=TIMEOUT) as raw:
        answer = raw.post("/mcp", content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
                          headers={**JSON_RPC_HEADERS, "Authorization": f"Bearer {key}", "Host": "evil.example"})
        assert answer.status_code == 421
