"""Seed 001: an advanced search (``keyword_search`` / ``rerank`` / ``filter_memories``) degrades, never crashes.

The seed's ``execute``: "Step 1: Base semantic search ... except Exception: raise" into
"``_fallback_to_standard_search(arguments, adapter, original_error=str(e))``", whose metadata is
``{"fallback_used": True, "original_error": ..., "advanced_retrieval": False}``; and when the standard
search fails too: ``{"memories": [], "status": "error", "message": "Both advanced and standard search
failed: ...", "metadata": {"fallback_used": True, "fallback_failed": True, "original_error": ...}}``.
A single stage that fails is skipped: "Keyword search failed, continuing without" (memlane reports it
in ``stages_failed``, not as a fallback).

The failures are real: a dropped table, closed connections, a dropped keyword column, on SQLite and
PostgreSQL; one test makes a single store call fail (a transient fault) to see the fallback answer.
"""

from __future__ import annotations

import sqlite3

import anyio
import pytest
from mcp import Client

from memlane import Memory
from memlane.core.errors import StoreError
from memlane.mcp_server.server import local_server

NOTES = ["I love Thai curry", "My bike is blue", "I play the cello on Sundays", "Bob prefers tea over coffee"]
FLAG_SETS = [{"keyword_search": True}, {"rerank": True}, {"filter_memories": True},
             {"keyword_search": True, "rerank": True, "filter_memories": True}]
#: per backend: SQL that drops the memories themselves, and SQL that breaks only the keyword index
BREAK = {
    "sqlite": {"memories": "DROP TABLE memories", "keyword": "DROP TABLE memories_fts"},
    "postgres": {"memories": "DROP TABLE memlane_memories CASCADE",
                 "keyword": "ALTER TABLE memlane_memories DROP COLUMN terms"},
}


def run_sql(config: dict, sql: str) -> None:
    """Run ``sql`` on the store's database from a connection of its own (as an operator would)."""
    store = config["vector_store"]
    if store["provider"] == "sqlite":
        con = sqlite3.connect(store["config"]["path"])
        con.execute(sql)
        con.commit()
        con.close()
        return
    import psycopg

    with psycopg.connect(store["config"]["dsn"], autocommit=True) as con:
        con.execute(f'SET search_path TO "{store["config"]["schema"]}", public')
        con.execute(sql)


def close_connections(memory: Memory) -> None:
    """Close the store's database connections under it (SQLite: this thread's; PostgreSQL: the pool)."""
    if memory.store.__class__.__name__.startswith("SQLite"):
        memory.store._con.close()
    else:
        memory.store.db.pool.close()


@pytest.fixture
def store(backend, hashing_embedder):
    config = backend()
    memory = Memory(config, embedder=hashing_embedder)
    memory.add(NOTES, user_id="alice", infer=False)
    yield memory, config, backend.name
    try:
        memory.close()
    except Exception:  # a test closed the connections under it
        pass


def assert_error_answer(found: dict) -> None:
    assert found["status"] == "error" and found["memories"] == [] and found["results"] == []
    assert found["message"].startswith("Both advanced and standard search failed: ")
    meta = found["metadata"]
    assert meta["fallback_used"] is True and meta["fallback_failed"] is True and meta["original_error"]
    assert meta["advanced_retrieval"] is False


@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "+".join(f))
def test_a_dropped_table_gives_the_error_answer_not_an_exception(store, flags):
    memory, config, backend = store
    run_sql(config, BREAK[backend]["memories"])
    found = memory.search("what food do I like?", user_id="alice", **flags)
    assert_error_answer(found)
    assert "memories" in found["metadata"]["original_error"]  # the missing table is named
    with pytest.raises((StoreError, sqlite3.Error)):  # a plain search is not advanced retrieval: its failure is an error
        memory.search("what food do I like?", user_id="alice")


def test_closed_connections_give_the_error_answer(store):
    memory, _, _ = store
    close_connections(memory)
    found = memory.search("what food do I like?", user_id="alice", rerank=True, keyword_search=True)
    assert_error_answer(found)


def test_a_transient_store_failure_falls_back_to_the_standard_search(store, monkeypatch):
    """The advanced search's vector step fails once (the driver's own error class); the standard
    search answers, with the seed's fallback metadata."""
    memory, _, backend = store
    plain = memory.search("what food do I like?", user_id="alice", limit=3)
    calls = []

    def flaky(real):
        def call(*args, **kwargs):
            calls.append(args)
            if len(calls) == 1:
                if backend == "sqlite":
                    raise sqlite3.OperationalError("database is locked")
                import psycopg

                raise psycopg.OperationalError("server closed the connection unexpectedly")
            return real(*args, **kwargs)
        return call

    # the vector step is the store's search, or its focused search (the candidates and a named speaker's in
    # one pass, PostgreSQL); the standard search is the plain one
    for name in ("search", "focused_search"):
        monkeypatch.setattr(memory.store, name, flaky(getattr(memory.store, name)))
    found = memory.search("what food do I like?", user_id="alice", limit=3, keyword_search=True, rerank=True)
    assert [r["id"] for r in found["results"]] == [r["id"] for r in plain["results"]]
    assert "status" not in found and len(calls) == 2
    meta = found["metadata"]
    assert meta["fallback_used"] is True and meta["advanced_retrieval"] is False
    assert "OperationalError" in meta["original_error"] and meta["stages_failed"] == {}
    assert meta["stages_requested"] == ["keyword_search", "rerank"] and "fallback_failed" not in meta
    assert "OperationalError" in meta["stages"]["vector"]["error"] and meta["stages"]["standard_search"]["ran"]
    assert meta["total_ms"] >= meta["stages"]["standard_search"]["ms"]


def test_a_failing_stage_is_skipped_and_reported_not_a_fallback(store):
    """The keyword index is gone (a real failure): keyword_search is skipped, the rest answers."""
    memory, config, backend = store
    plain = memory.search("what food do I like?", user_id="alice", limit=3)
    run_sql(config, BREAK[backend]["keyword"])
    found = memory.search("what food do I like?", user_id="alice", limit=3, keyword_search=True)
    assert [r["id"] for r in found["results"]] == [r["id"] for r in plain["results"]]  # the vector order stands
    meta = found["metadata"]
    assert set(meta["stages_failed"]) == {"keyword_search"}
    assert meta["fallback_used"] is False and meta["original_error"] is None and meta["advanced_retrieval"] is True


@pytest.mark.parametrize("flags,has_metadata", [
    ({}, False),                                   # a plain search: mem0's {"results"} only
    ({"keyword_search": False}, False),            # flags given as false: still plain
    ({"rerank": True}, True),
    ({"keyword_search": True, "filter_memories": True}, True),
])
def test_advanced_retrieval_says_whether_it_was_requested(memory, flags, has_metadata):
    memory.add(NOTES, user_id="alice", infer=False)
    found = memory.search("what food do I like?", user_id="alice", **flags)
    assert ("metadata" in found) is has_metadata
    if has_metadata:
        meta = found["metadata"]
        assert meta["advanced_retrieval"] is True and meta["fallback_used"] is False
        assert meta["stages_requested"] == [name for name, on in flags.items() if on]


async def _mcp_search(memory: Memory, arguments: dict):
    async with Client(local_server(memory, default_user_id="alice")) as client:
        return await client.call_tool("search_memories", arguments)


def test_mcp_search_answers_the_error_answer_when_both_searches_fail(store):
    """Through the official MCP client: the tool answers the seed's error answer, not a tool error."""
    memory, config, backend = store
    run_sql(config, BREAK[backend]["memories"])
    result = anyio.run(_mcp_search, memory, {"query": "what food do I like?", "rerank": True})
    assert not result.is_error
    found = result.structured_content
    assert found["status"] == "error" and found["memories"] == [] and found["count"] == 0
    assert found["message"].startswith("Both advanced and standard search failed")
    assert found["metadata"]["fallback_failed"] is True and found["metadata"]["fallback_used"] is True
    plain = anyio.run(_mcp_search, memory, {"query": "what food do I like?"})
    assert plain.is_error  # without advanced retrieval a store failure stays a tool error


def test_mcp_search_reports_a_skipped_stage(store):
    memory, config, backend = store
    run_sql(config, BREAK[backend]["keyword"])
    result = anyio.run(_mcp_search, memory, {"query": "what food do I like?", "keyword_search": True, "limit": 2})
    meta = result.structured_content["metadata"]
    assert len(result.structured_content["results"]) == 2
    assert set(meta["stages_failed"]) == {"keyword_search"} and meta["fallback_used"] is False
    assert meta["advanced_retrieval"] is True and meta["stages_run"] == ["semantic_search"]
