"""The search_documents MCP tool over the REST server's /mcp endpoint, with the MCP SDK's client:
it searches the key's tenant (the same Documents the REST routes use) and fails readably."""

from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from support.server_fixtures import TIMEOUT, live  # noqa: F401  (fixture)

CATS = "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day."


async def _call(live, key, name, arguments):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
    async with Client(streamable_http_client(live.url + "/mcp", http_client=http), read_timeout_seconds=TIMEOUT) as c:
        result = await c.call_tool(name, arguments)
    if result.is_error:
        return {"error": " ".join(getattr(block, "text", "") for block in result.content)}
    return result.structured_content


def test_search_documents_tool(live):
    key_a, key_b = live.key("mcp-docs-a"), live.key("mcp-docs-b")
    with live.client(key_a) as api:
        assert api.post("/collections", json={"name": "pets", "metadata": {"public": True}}).status_code == 201
        added = api.post("/documents/upsert", json={"name": "cats", "collection_name": "pets", "text": CATS,
                                                    "metadata": {"year": 2024}})
        assert added.status_code == 200, added.text

    async def scenario():
        return (
            await _call(live, key_a, "search_documents", {"query": "does a cat purr?", "top_k": "2"}),
            await _call(live, key_a, "search_documents", {"query": "cat", "collection_name": "pets",
                                                          "query_filter": {"key": "year", "value": 2023}}),
            await _call(live, key_a, "search_documents", {"query": "cat", "collection_name": "nope"}),
            await _call(live, key_a, "search_documents", {"query": "cat",
                                                          "query_filter": {"key": "year", "lookup": "has_key",
                                                                           "value": 1}}),
            await _call(live, key_b, "search_documents", {"query": "does a cat purr?"}),
            await _call(live, key_a, "search_documents", {"query": "sleeping cats", "keyword_search": True}),
        )

    found, filtered, unknown, invalid, other_tenant, hybrid = anyio.run(scenario)
    assert hybrid["keyword_matches"] == 1 and hybrid["results"][0]["keyword_score"] > 0
    assert found["count"] == 1 and found["results"][0]["document_name"] == "cats"
    assert found["results"][0]["collection_metadata"] == {"public": True} and found["results"][0]["page_number"] == 1
    # one rule for every limit an MCP tool takes (seed 001's): a string is not a count, the default (3) applies
    assert found["warnings"] == ["invalid top_k '2' (not a positive integer); using the default 3"]
    assert filtered["results"] == []
    assert "no collection named 'nope'" in unknown["error"]
    assert "has_key takes no value" in invalid["error"]
    assert other_tenant["results"] == [] and other_tenant["count"] == 0
