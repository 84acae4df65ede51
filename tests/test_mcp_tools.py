"""The MCP tools' behaviour, without a transport (``memlane.mcp_server.tools`` over a real Memory).

Seed 001 lists the failure modes of a search tool with optional retrieval stages;
each has a test here: memories that are strings, invalid ``limit`` values
(strings, negatives, None), result formats (``memories`` vs ``results``, mixed),
empty / None queries, and the fallback when a stage is missing or fails.
"""

from __future__ import annotations

import pytest

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
    ("4", 4, True),           # a numeric string is understood (and noted)
    (" 2 ", 2, True),
    (6.0, 6, False),
    ("abc", 5, True),         # strings that are not numbers: default
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


def test_string_memories_from_a_stage_become_dicts(caller):
    stages = {"rerank": lambda query, memories: [m["memory"] for m in reversed(memories)]}
    found = tools.search_memories(Caller(caller.memory, default_user_id="alice", stages=stages), "curry",
                                  limit=3, rerank=True)
    assert all(isinstance(m, dict) and isinstance(m["memory"], str) for m in found["results"])
    assert found["metadata"]["stages_run"] == ["semantic_search", "rerank"]
    assert found["metadata"]["fallback_used"] is False and found["metadata"]["advanced_retrieval"] is True


# -- queries ---------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", None, 42, ["a"]])
def test_empty_or_missing_query_is_a_readable_failure(caller, query):
    with pytest.raises(ToolFailure, match="query must be a non-empty string"):
        tools.search_memories(caller, query)


# -- optional stages: unavailable, failing, working ---------------------------------


def test_unavailable_stages_are_reported_and_standard_search_is_used(caller):
    plain = tools.search_memories(caller, "what instrument do I play?", limit=2)
    flagged = tools.search_memories(caller, "what instrument do I play?", limit=2, keyword_search=True,
                                    rerank=True, filter_memories=True)
    assert [m["id"] for m in flagged["results"]] == [m["id"] for m in plain["results"]]
    meta = flagged["metadata"]
    assert meta["stages_requested"] == ["keyword_search", "rerank", "filter_memories"]
    assert meta["stages_unavailable"] == meta["stages_requested"]
    assert meta["stages_run"] == ["semantic_search"] and meta["fallback_used"] is True
    assert meta["advanced_retrieval"] is False
    assert set(meta["timings_ms"]) >= {"semantic_search", "total"}
    assert all(v >= 0 for v in meta["timings_ms"].values())
    assert sum("not available" in w for w in meta["warnings"]) == 3
    assert plain["metadata"]["fallback_used"] is False and plain["metadata"]["stages_requested"] == []


def test_a_failing_stage_degrades_to_the_standard_result(caller):
    def broken(query, memories):
        raise TypeError("'str' object has no attribute 'get'")

    stages = {"rerank": broken, "filter_memories": lambda q, m: m[:1]}
    found = tools.search_memories(Caller(caller.memory, default_user_id="alice", stages=stages),
                                  "what instrument do I play?", limit=3, rerank=True, filter_memories=True)
    meta = found["metadata"]
    assert meta["stages_failed"] == {"rerank": "TypeError: 'str' object has no attribute 'get'"}
    assert "rerank" in meta["original_error"] and meta["fallback_used"] is True
    assert meta["stages_run"] == ["semantic_search", "filter_memories"]  # the next stage still ran
    assert len(found["results"]) == 1


def test_a_stage_gets_more_candidates_and_the_final_limit_is_applied(caller):
    seen = {}

    def record(query, memories):
        seen["n"] = len(memories)
        return {"memories": memories}  # the v1 shape is fine too

    found = tools.search_memories(Caller(caller.memory, default_user_id="alice", stages={"rerank": record}),
                                  "anything", limit=1, rerank=True)
    assert seen["n"] == 3 and len(found["results"]) == 1


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
