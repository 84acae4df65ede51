"""``memlane mcp`` over stdio, driven by the MCP SDK's own client (a real subprocess).

The server process loads the local model itself, serves the eight tools on the
store under its ``--home``, and keeps running after tool errors. What it wrote
is then read back through the SDK, as the CLI or an application would see it.
"""

from __future__ import annotations

import os
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import sqlite_config
from memlane import Memory
from memlane.mcp_server.tools import TOOL_NAMES

CALL_TIMEOUT = 180.0  # the child loads the model on its first call; the machine is noisy


def _params(home) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k not in ("MEMLANE_HOME",)}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "memlane.cli", "--home", str(home), "mcp", "--user-id", "alice"],
                                 env=env)


async def _call(client, name, arguments):
    result = await client.call_tool(name, arguments, read_timeout_seconds=CALL_TIMEOUT)
    if result.is_error:
        return {"error": " ".join(getattr(block, "text", "") for block in result.content)}
    return result.structured_content


def test_stdio_server_tools_end_to_end(tmp_path, e5_embedder):
    home = tmp_path / "home"
    stderr_path = tmp_path / "server-stderr.txt"

    async def session():
        with open(stderr_path, "w") as errlog:
            async with Client(stdio_client(_params(home), errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
                listed = (await client.list_tools()).tools
                out = {"tools": {t.name: t for t in listed}}
                out["add"] = await _call(client, "add_memory", {"messages": "I love Thai curry", "infer": False})
                out["add_conversation"] = await _call(client, "add_memory", {
                    "messages": [{"role": "user", "content": "I live in Porto."},
                                 {"role": "assistant", "content": "Nice city!"}]})
                out["search"] = await _call(client, "search_memories", {"query": "what food do I like?",
                                                                        "limit": "2", "rerank": True})
                memory_id = out["add"]["results"][0]["id"]
                out["get"] = await _call(client, "get_memory", {"memory_id": memory_id})
                out["update"] = await _call(client, "update_memory", {"memory_id": memory_id,
                                                                      "text": "I love green curry"})
                out["history"] = await _call(client, "memory_history", {"memory_id": memory_id})
                out["list"] = await _call(client, "list_memories", {})
                out["missing"] = await _call(client, "get_memory", {"memory_id": "nope"})
                out["bad_type"] = await _call(client, "add_memory", {"messages": "x", "memory_type": "dream"})
                out["bad_filter"] = await _call(client, "search_memories", {"query": "x",
                                                                            "filters": {"k": {"bogus": 1}}})
                out["no_query"] = await _call(client, "search_memories", {"query": "  "})
                out["still_alive"] = await _call(client, "search_memories", {"query": "curry", "limit": 1})
                out["delete"] = await _call(client, "delete_memory", {"memory_id": memory_id})
                out["other_user"] = await _call(client, "add_memory", {"messages": "bob's note", "user_id": "bob",
                                                                       "infer": False})
                out["delete_all"] = await _call(client, "delete_all_memories", {})
                return out

    try:
        out = anyio.run(session)
    except BaseException:
        print(stderr_path.read_text() if stderr_path.exists() else "(no stderr)", file=sys.stderr)
        raise

    tools = out["tools"]
    assert set(tools) == set(TOOL_NAMES)
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30
        assert tool.input_schema["type"] == "object"
    search_schema = tools["search_memories"].input_schema
    assert set(search_schema["properties"]) >= {"query", "user_id", "agent_id", "run_id", "filters", "limit",
                                                "threshold", "keyword_search", "rerank", "filter_memories"}
    assert search_schema["required"] == ["query"]
    assert all(p.get("description") for p in search_schema["properties"].values())
    assert tools["delete_all_memories"].annotations.destructive_hint is True
    assert tools["search_memories"].annotations.read_only_hint is True

    assert out["add"]["results"][0]["event"] == "ADD"
    assert out["add_conversation"]["status"] == "ok" and out["add_conversation"]["results"]
    hits = out["search"]
    assert hits["results"][0]["memory"] == "I love Thai curry" and hits["count"] <= 2
    # hybrid by default; no reranker chosen (retrieval.reranker): the rerank asked for is skipped, with a warning
    assert hits["metadata"]["stages_run"] == ["semantic_search", "keyword_search"]
    assert any(w.startswith("rerank skipped: ") for w in hits["metadata"]["warnings"])
    assert hits["metadata"]["stages_requested"] == ["rerank"] and hits["metadata"]["fallback_used"] is False
    assert any("limit" in w for w in hits["metadata"]["warnings"])
    assert out["get"]["user_id"] == "alice"  # the server's default user
    assert out["update"]["memory"] == "I love green curry"
    assert [e["event"] for e in out["history"]["history"]] == ["ADD", "UPDATE"]
    assert {m["user_id"] for m in out["list"]["results"]} == {"alice"}
    for failure, words in (("missing", "no memory with id 'nope'"), ("bad_type", "memory_type"),
                           ("bad_filter", "filters"), ("no_query", "non-empty")):
        assert words in out[failure]["error"], out[failure]
    assert out["still_alive"]["results"]
    assert out["delete"] == {"message": "Memory deleted successfully!"}
    assert out["delete_all"]["deleted"] == len(out["add_conversation"]["results"])

    # another face sees what the MCP server wrote: bob's note, in the home's default store
    with Memory(sqlite_config(home / "memlane.db"), embedder=e5_embedder) as memory:  # the server's default model
        assert [m["memory"] for m in memory.get_all(user_id="bob")["results"]] == ["bob's note"]
        assert memory.get_all(user_id="alice")["results"] == []


@pytest.mark.parametrize("args", [["mcp", "--user-id", "has space"]])
def test_stdio_server_rejects_a_bad_default_user_per_call(tmp_path, args):
    """A malformed default user does not kill the server: calls fail with a readable message."""
    home = tmp_path / "home"
    params = _params(home)
    params.args = ["-m", "memlane.cli", "--home", str(home), *args]

    async def session():
        with open(tmp_path / "stderr.txt", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=CALL_TIMEOUT) as client:
                first = await _call(client, "list_memories", {})
                second = await _call(client, "list_memories", {"user_id": "carol"})
                return first, second

    first, second = anyio.run(session)
    assert "whitespace" in first["error"]
    assert second == {"results": [], "count": 0}
