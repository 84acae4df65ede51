"""Seed 001's ``limit`` rule on the faces (MCP through the official client, REST, the mem0 platform route).

The seed: "``if not isinstance(limit, int) or limit <= 0: logger.warning(f"Invalid limit {limit}, using
default 5"); limit = 5``" and its test plan: "处理无效的limit参数（字符串、负数、None）". So ``"7"`` and
``2.0`` are not ints: 5, with a warning (pydantic must not turn them into 7 and 2 first). memlane reads
a boolean as not a count either, and caps a limit above ``limits.max_results`` (with a warning). The
SDK stays strict: ``Memory.search(limit="7")`` is an ``InvalidInputError`` naming ``limit``.
"""

from __future__ import annotations

import sqlite3

import anyio
import pytest
from mcp import Client

from memlane.embeddings.hashing import HashingEmbedder
from memlane.core.errors import InvalidInputError
from memlane.mcp_server.server import local_server
from support.server_fixtures import serving

NOTES = [f"note {i}: I like colour number {i}" for i in range(8)]

# (limit sent, limit used, warned)
LIMITS = [
    (3, 3, False),
    (1, 1, False),
    ("7", 5, True),        # a numeric string is not an int
    (2.0, 5, True),        # a whole float is not an int
    (0, 5, True),
    (-3, 5, True),
    (None, 5, True),
    ("abc", 5, True),
    ([3], 5, True),
    ({"n": 3}, 5, True),
    (True, 5, True),       # JSON true is not a count
    (10**9, 10_000, True),  # above limits.max_results: the maximum
]


async def _mcp(memory, arguments):
    async with Client(local_server(memory, default_user_id="alice")) as client:
        result = await client.call_tool("search_memories", arguments)
    assert not result.is_error, result.content
    return result.structured_content


@pytest.mark.parametrize("sent,used,warned", LIMITS)
def test_mcp_search_memories_applies_the_seed_rule(memory, sent, used, warned):
    memory.add(NOTES, user_id="alice", infer=False)
    found = anyio.run(_mcp, memory, {"query": "which colour do I like?", "limit": sent})
    assert found["metadata"]["limit"] == used
    assert len(found["results"]) == min(used, len(NOTES))
    assert any("limit" in w for w in found["metadata"]["warnings"]) is warned


def test_mcp_limit_schema_accepts_any_json_value(memory):
    async def schema():
        async with Client(local_server(memory)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools["search_memories"].input_schema["properties"]["limit"]

    limit = anyio.run(schema)
    assert "type" not in limit and "anyOf" not in limit  # nothing for a client or pydantic to coerce by


@pytest.mark.parametrize("sent", ["7", 2.0, 0, -3, True, [3]])
def test_the_sdk_stays_strict(memory, sent):
    with pytest.raises(InvalidInputError) as raised:
        memory.search("x", user_id="alice", limit=sent)
    assert raised.value.field == "limit"
    assert memory.search("x", user_id="alice", limit=None)["results"] == []  # None: the default (100)


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("seed001-home"), HashingEmbedder(), auth=False) as live:
        with live.client() as api:
            response = api.post("/memories", json={"messages": [{"role": "user", "content": n} for n in NOTES],
                                                   "user_id": "alice", "infer": False})
            assert response.status_code == 200, response.text
        yield live


@pytest.mark.parametrize("sent,used,warned", LIMITS)
@pytest.mark.parametrize("path,field", [("/search", "limit"), ("/search", "top_k"),
                                        ("/v3/memories/search/", "top_k"), ("/v3/memories/search/", "limit")])
def test_rest_search_applies_the_seed_rule(live, path, field, sent, used, warned):
    body = {"query": "which colour do I like?", "user_id": "alice", field: sent}
    if path.startswith("/v3"):
        body["threshold"] = None
    with live.client() as api:
        response = api.post(path, json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert len(answer["results"]) == min(used, len(NOTES))
    assert any(field in w for w in answer.get("warnings", [])) is warned


def test_rest_search_without_a_limit_uses_the_face_default(live):
    with live.client() as api:
        rest = api.post("/search", json={"query": "colour", "user_id": "alice"}).json()
        platform = api.post("/v3/memories/search/", json={"query": "colour", "filters": {"user_id": "alice"},
                                                          "threshold": None}).json()
        both = api.post("/search", json={"query": "colour", "user_id": "alice", "limit": 3, "top_k": 4})
    assert len(rest["results"]) == len(NOTES) and "warnings" not in rest  # default 100
    assert len(platform["results"]) == len(NOTES) and "warnings" not in platform  # default 10
    assert both.status_code == 422 and both.json()["field"] == "top_k"


def test_rest_answers_503_with_the_seed_error_answer_when_both_searches_fail(live):
    with live.client() as api:
        assert api.post("/memories", json={"messages": "I like tea", "user_id": "bob", "infer": False,
                                           }).status_code == 200
        con = sqlite3.connect(live.memory("default").store.path)
        con.execute("DROP TABLE memories")
        con.commit()
        con.close()
        response = api.post("/search", json={"query": "tea", "user_id": "bob", "rerank": True})
        plain = api.post("/search", json={"query": "tea", "user_id": "bob"})
    assert response.status_code == 503
    answer = response.json()
    assert answer["status"] == "error" and answer["memories"] == [] and answer["results"] == []
    assert answer["metadata"]["fallback_failed"] is True and answer["request_id"] == response.headers["x-request-id"]
    assert "Traceback" not in response.text
    assert plain.status_code == 500 and "Traceback" not in plain.text
