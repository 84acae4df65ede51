"""Graph memory over the faces: REST (memlane routes and the mem0 platform paths) and MCP
(the official SDK client over streamable HTTP) show ``relations`` wherever they show results,
and two tenants with the same user ids never see each other's relations."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from support.server_fixtures import TIMEOUT, Live, start


@pytest.fixture(scope="module")
def graph_live(tmp_path_factory, embedder):
    home = tmp_path_factory.mktemp("graph-server")
    server, app = start(home, embedder, config={"enable_graph": True}, mcp_user_id="default-user")
    with server:
        yield Live(url=server.url, home=home, app=app, server=server)


def triples(items):
    return {(r["source"], r["relationship"], r["destination"]) for r in items}


def test_rest_and_platform_paths_show_relations_per_tenant(graph_live):
    a = graph_live.client(graph_live.key("graph-a"))
    b = graph_live.client(graph_live.key("graph-b"))
    added = a.post("/memories", json={"messages": "I live in Lisbon. I like fado.", "user_id": "sam"})
    assert added.status_code == 200, added.text
    assert triples(added.json()["relations"]["added"]) == {("sam", "lives_in", "Lisbon"), ("sam", "likes", "fado")}
    assert b.post("/memories", json={"messages": "I live in Tokyo", "user_id": "sam"}).status_code == 200

    found = a.post("/search", json={"query": "where does sam live", "user_id": "sam"}).json()
    assert found["relations"][0]["destination"] == "Lisbon"
    assert set(found["relations"][0]) == {"id", "source", "relationship", "destination", "weight", "score"}
    listed = a.get("/memories", params={"user_id": "sam"}).json()
    assert triples(listed["relations"]) == {("sam", "lives_in", "Lisbon"), ("sam", "likes", "fado")}
    # tenant b, same user id: only its own relation, on every path
    assert triples(b.post("/search", json={"query": "where does sam live", "user_id": "sam"}).json()["relations"]) \
        == {("sam", "lives_in", "Tokyo")}
    assert triples(b.get("/memories", params={"user_id": "sam"}).json()["relations"]) == {("sam", "lives_in", "Tokyo")}

    platform = a.post("/v2/memories/search/", json={"query": "what does sam like", "filters": {"user_id": "sam"}}).json()
    assert ("sam", "likes", "fado") in triples(platform["relations"])
    page = a.post("/v2/memories/", json={"filters": {"user_id": "sam"}}, params={"page": 1, "page_size": 1}).json()
    assert triples(page["relations"]) == {("sam", "lives_in", "Lisbon"), ("sam", "likes", "fado")}
    assert b.post("/v2/memories/", json={"filters": {"user_id": "sam"}}).json()["relations"][0]["destination"] == "Tokyo"

    deleted = a.delete("/memories", params={"user_id": "sam"})
    assert deleted.status_code == 200 and deleted.json()["deleted_relations"] == 2
    assert a.get("/memories", params={"user_id": "sam"}).json()["relations"] == []
    assert len(b.get("/memories", params={"user_id": "sam"}).json()["relations"]) == 1


def test_mcp_tools_show_relations(graph_live):
    key_a, key_b = graph_live.key("graph-mcp-a"), graph_live.key("graph-mcp-b")

    def client(key):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
        return Client(streamable_http_client(graph_live.url + "/mcp", http_client=http), read_timeout_seconds=TIMEOUT)

    async def call(c, name, arguments):
        result = await c.call_tool(name, arguments)
        assert not result.is_error, result.content
        return result.structured_content

    async def run():
        async with client(key_a) as a:
            added = await call(a, "add_memory", {"messages": "我住在上海。我喜欢火锅"})
            found = await call(a, "search_memories", {"query": "我住在哪里"})
            listed = await call(a, "list_memories", {})
        async with client(key_b) as b:
            theirs = await call(b, "search_memories", {"query": "我住在哪里"})
            their_list = await call(b, "list_memories", {})
        return added, found, listed, theirs, their_list

    added, found, listed, theirs, their_list = anyio.run(run)
    assert triples(added["relations"]["added"]) == {("default-user", "lives_in", "上海"),
                                                     ("default-user", "likes", "火锅")}
    assert found["relations"][0]["destination"] == "上海" and found["count"] == len(found["results"])
    assert triples(listed["relations"]) == triples(added["relations"]["added"])
    assert theirs["relations"] == [] and their_list["relations"] == []
