"""The MCP tools' behaviour, without a transport (``memlane.mcp_server.tools`` over a real Memory).

Seed 001 lists the failure modes of a search tool with optional retrieval stages;
each has a test here: memories that are strings, invalid ``limit`` values
(strings, negatives, None), result formats (``memories`` vs ``results``, mixed),
empty / None queries, and the fallback when a stage fails.
"""

from __future__ import annotations

import pytest

from memlane.core.config import ProviderSpec
from memlane.mcp_server import tools
from memlane.mcp_server.tools import Caller, ToolFailure


@pytest.fixture
def caller(memory):
    memory.add(["I love Thai curry", "My bike is blue", "I play the cello on Sundays"], user_id="alice", infer=False)
    memory.add("Bob prefers tea over coffee", user_id="bob", infer=False)
    return Caller(memory=memory, default_user_id="alice")


# -- limit ---------------------------------------------------------------------


@pytest.mark.parametrize("value,expected,warned", [
    (3, 3, False),
    ("4", 5, True),           # seed 001: not an int -> the default, with a warning (a numeric string too)
    (" 2 ", 5, True),
    (6.0, 5, True),           # a float is not an int, even a whole one
    ("abc", 5, True),
    ("", 5, True),
    (-1, 5, True),            # negatives and zero: default
    (0, 5, True),
    (None, 5, True),          # None: default
    (True, 5, True),          # booleans are not counts
    (2.5, 5, True),
    (float("nan"), 5, True),
    ([3], 5, True),
    (10**9, 10_000, True),    # above the maximum: the maximum
])
def test_coerce_limit(value, expected, warned):
    warnings: list[str] = []
    assert tools.coerce_limit(value, 5, 10_000, warnings) == expected
    assert bool(warnings) == warned


@pytest.mark.parametrize("limit", ["ten", -3, None, "0"])
def test_search_with_an_invalid_limit_falls_back_to_the_default(caller, limit):
    found = tools.search_memories(caller, "what do I like?", limit=limit)
    assert found["metadata"]["limit"] == tools.DEFAULT_SEARCH_LIMIT
    assert len(found["results"]) == 3  # alice has 3 memories, fewer than the default
    assert any("limit" in w for w in found["metadata"]["warnings"])


def test_search_limit_is_applied(caller):
    found = tools.search_memories(caller, "what do I like?", limit=1)
    assert len(found["results"]) == 1 and found["count"] == 1 and found["metadata"]["warnings"] == []


# -- result shapes -------------------------------------------------------------


@pytest.mark.parametrize("result,texts,warnings", [
    ({"results": [{"id": "1", "memory": "a"}]}, ["a"], 0),                      # v2 / memlane
    ({"memories": [{"id": "1", "memory": "a"}], "status": "success"}, ["a"], 0),  # v1
    ({"results": ["plain text", {"memory": "dict"}]}, ["plain text", "dict"], 0),  # mixed items
    ({"memories": [{"content": "c"}, {"text": "t"}, {"data": {"memory": "d"}}]}, ["c", "t", "d"], 0),
    ([{"memory": "bare list"}, "and a string"], ["bare list", "and a string"], 0),
    ({"results": [{"memory": "ok"}, 42, None, {"id": "no text"}]}, ["ok"], 3),  # unusable items skipped
    ({"results": "not a list"}, [], 1),
    ({"results": {"memory": "a dict"}}, [], 1),
    ({"total": 3}, [], 1),
    ("a string result", [], 1),
    (None, [], 1),
])
def test_extract_memories_accepts_every_shape(result, texts, warnings):
    notes: list[str] = []
    assert [m["memory"] for m in tools.extract_memories(result, notes)] == texts
    assert len(notes) == warnings


# -- queries ---------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", None, 42, ["a"]])
def test_empty_or_missing_query_is_a_readable_failure(caller, query):
    with pytest.raises(ToolFailure, match="query must be a non-empty string"):
        tools.search_memories(caller, query)


# -- optional stages: run by the engine, reported, failing on their own ------------


def choose_maxsim(caller, monkeypatch):
    """The maxsim reranker written in the configuration: unwritten, a rerank asked for is skipped."""
    monkeypatch.setattr(caller.memory.config.retrieval, "reranker", ProviderSpec(provider="maxsim"))


def test_requested_stages_run_in_the_engine_and_are_reported(caller, monkeypatch):
    choose_maxsim(caller, monkeypatch)
    plain = tools.search_memories(caller, "what instrument do I play?", limit=2, keyword_search=False)
    staged = tools.search_memories(caller, "what instrument do I play?", limit=2, keyword_search=True,
                                   rerank=True, filter_memories=True)
    assert staged["results"][0]["memory"] == plain["results"][0]["memory"] == "I play the cello on Sundays"
    assert set(staged["results"][0]["scores"]) >= {"vector", "keyword", "rerank"}
    meta = staged["metadata"]
    assert meta["stages_requested"] == ["keyword_search", "rerank", "filter_memories"]
    assert meta["stages_run"] == ["semantic_search", "keyword_search", "rerank", "filter_memories"]
    assert meta["stages_failed"] == {} and meta["fallback_used"] is False and meta["advanced_retrieval"] is True
    assert set(meta["timings_ms"]) == {"semantic_search", "keyword_search", "rerank", "filter_memories", "total"}
    assert all(v >= 0 for v in meta["timings_ms"].values())
    assert plain["metadata"]["stages_requested"] == [] and plain["metadata"]["stages_run"] == ["semantic_search"]
    assert plain["metadata"]["fallback_used"] is False and "scores" not in plain["results"][0]


def test_a_search_without_flags_is_hybrid_and_says_so(caller):
    found = tools.search_memories(caller, "what instrument do I play?", limit=2)
    meta = found["metadata"]
    assert meta["stages_requested"] == [] and meta["advanced_retrieval"] is False
    assert meta["stages_run"] == ["semantic_search", "keyword_search"] and meta["stages_failed"] == {}
    assert set(meta["timings_ms"]) == {"semantic_search", "keyword_search", "total"}
    assert found["results"][0]["memory"] == "I play the cello on Sundays" and "scores" not in found["results"][0]


def test_a_failing_stage_degrades_and_the_next_stage_still_runs(caller, monkeypatch):
    choose_maxsim(caller, monkeypatch)
    plain = tools.search_memories(caller, "what instrument do I play?", limit=3)

    def broken(*args, **kwargs):
        raise TypeError("'str' object has no attribute 'get'")

    monkeypatch.setattr(type(caller.memory.searcher.reranker()), "scores", broken)
    found = tools.search_memories(caller, "what instrument do I play?", limit=3, rerank=True, filter_memories=True)
    meta = found["metadata"]
    assert meta["stages_failed"] == {"rerank": "TypeError: 'str' object has no attribute 'get'"}
    assert "original_error" not in meta and meta["fallback_used"] is False and meta["advanced_retrieval"] is True
    assert meta["stages_run"] == ["semantic_search", "keyword_search", "filter_memories"]  # hybrid by default
    assert any("rerank failed" in w for w in meta["warnings"])
    assert found["results"][0]["id"] == plain["results"][0]["id"]  # the best result it had


def test_a_rerank_without_a_reranker_chosen_is_skipped_with_a_warning(caller):
    hybrid = tools.search_memories(caller, "what instrument do I play?", limit=3, keyword_search=True)
    found = tools.search_memories(caller, "what instrument do I play?", limit=3, keyword_search=True, rerank=True)
    meta = found["metadata"]
    assert meta["stages_requested"] == ["keyword_search", "rerank"] and meta["stages_failed"] == {}
    assert meta["stages_run"] == ["semantic_search", "keyword_search"] and meta["advanced_retrieval"] is True
    assert [w for w in meta["warnings"] if w.startswith("rerank skipped: ") and "retrieval.reranker" in w]
    assert [r["id"] for r in found["results"]] == [r["id"] for r in hybrid["results"]]  # the search's own order
    assert all("rerank" not in r["scores"] for r in found["results"])


def test_an_unavailable_reranker_is_a_failed_stage_not_a_failed_search(caller, monkeypatch):
    monkeypatch.setattr(caller.memory.config.retrieval, "reranker",
                        ProviderSpec(provider="cross_encoder", config={"model": "/nonexistent/cross-encoder"}))
    monkeypatch.setattr(caller.memory.searcher, "_reranker", None)
    found = tools.search_memories(caller, "what instrument do I play?", limit=2, rerank=True)
    assert found["results"][0]["memory"] == "I play the cello on Sundays"
    assert "rerank" in found["metadata"]["stages_failed"] and found["metadata"]["fallback_used"] is False


# -- scope, defaults, errors ---------------------------------------------------------------


def test_default_user_applies_only_when_no_scope_is_named(caller):
    assert {m["user_id"] for m in tools.list_memories(caller)["results"]} == {"alice"}
    assert {m["user_id"] for m in tools.list_memories(caller, user_id="bob")["results"]} == {"bob"}
    assert {m["user_id"] for m in tools.list_memories(caller, filters={"user_id": "bob"})["results"]} == {"bob"}
    added = tools.add_memory(caller, "I moved to Porto", infer=False)
    assert tools.get_memory(caller, added["results"][0]["id"])["user_id"] == "alice"


def test_without_a_default_user_a_scope_is_required(memory):
    with pytest.raises(ToolFailure, match="user_id.*--user-id"):
        tools.search_memories(Caller(memory), "anything")


def test_wildcard_scope_needs_admin(caller):
    restricted = Caller(caller.memory, admin=False, default_user_id="alice")
    with pytest.raises(ToolFailure, match="admin"):
        tools.list_memories(restricted, filters={"user_id": "*"})
    with pytest.raises(ToolFailure, match="admin"):
        tools.delete_all_memories(restricted, filters={"user_id": "*"})
    assert {m["user_id"] for m in tools.list_memories(caller, filters={"user_id": "*"})["results"]} == {"alice", "bob"}


def test_an_or_of_scopes_is_the_scope_not_the_default_user(caller):
    restricted = Caller(caller.memory, admin=False, default_user_id="alice")
    either = {"OR": [{"user_id": "bob"}, {"run_id": "no-such-run"}]}
    assert [m["memory"] for m in tools.list_memories(restricted, filters=either)["results"]] == [
        "Bob prefers tea over coffee"]
    found = tools.search_memories(restricted, "tea", filters={"AND": [either, {"user_id": "*"}]})
    assert [m["user_id"] for m in found["results"]] == ["bob"]  # a wildcard beside named scopes narrows


def test_update_history_delete_and_their_failures(caller):
    memory_id = tools.list_memories(caller)["results"][0]["id"]
    assert tools.update_memory(caller, memory_id, text="My bike is red")["memory"] == "My bike is red"
    history = tools.memory_history(caller, memory_id)
    assert [e["event"] for e in history["history"]] == ["ADD", "UPDATE"]
    assert tools.delete_memory(caller, memory_id) == {"message": "Memory deleted successfully!"}
    for call in (lambda: tools.get_memory(caller, memory_id), lambda: tools.delete_memory(caller, memory_id),
                 lambda: tools.update_memory(caller, memory_id, text="x"),
                 lambda: tools.memory_history(caller, "never-existed")):
        with pytest.raises(ToolFailure, match="memory"):
            call()
    with pytest.raises(ToolFailure, match="invalid filters"):
        tools.search_memories(caller, "x", filters={"k": {"bogus": 1}})
    with pytest.raises(ToolFailure, match="invalid metadata"):
        tools.add_memory(caller, "x", metadata={"user_id": "mallory"})
    assert tools.delete_all_memories(caller)["deleted"] == 2  # the default user's remaining memories


@pytest.mark.parametrize("call", [
    lambda c: tools.add_memory(c, "I like tea\ud800", user_id="alice"),
    lambda c: tools.add_memory(c, "I like tea", user_id="alice", metadata={"k": ["\ud800"]}),
    lambda c: tools.search_memories(c, "tea", user_id="alice", filters={"k\ud800": 1}),
], ids=["content", "metadata", "filter key"])
def test_a_lone_surrogate_is_a_tool_failure_and_stores_nothing(caller, call):
    before = caller.memory.get_all(user_id="alice")["results"]
    with pytest.raises(ToolFailure, match="surrogate"):
        call(caller)
    assert caller.memory.get_all(user_id="alice")["results"] == before


# -- each tool declared once -------------------------------------------------------


def test_the_server_lists_each_tool_as_its_function_in_tools_declares_it():
    """``server.py`` registers ``tools.py``'s (and ``document_tools.py``'s) functions as they stand: the schema has each parameter after
    ``caller`` in order (``caller`` and the SDK's ``ctx`` are not arguments), described, required when it has
    no default; the description is the function's docstring."""
    import asyncio
    import inspect

    from memlane.mcp_server.server import TOOLS, build_server

    listed = {t.name: t for t in asyncio.run(build_server(lambda ctx: None).list_tools())}
    assert list(listed) == [tool.__name__ for tool, _ in TOOLS]
    assert set(listed) == set(tools.TOOL_NAMES)
    for name, tool in listed.items():
        declared = {tool.__name__: tool for tool, _ in TOOLS}[name]
        parameters = list(inspect.signature(declared).parameters.values())[1:]
        properties = tool.input_schema["properties"]
        assert list(properties) == [p.name for p in parameters]
        assert tool.input_schema.get("required", []) == [p.name for p in parameters if p.default is p.empty]
        assert all(p.get("description") for p in properties.values()), name
        assert tool.description == inspect.cleandoc(declared.__doc__)
        assert tool.output_schema is not None  # -> dict[str, Any]: structured content, as before
