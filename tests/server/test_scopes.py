"""``Memory.scopes()``: each user, agent and run of a store with its counts, the same on SQLite and
PostgreSQL (``backend`` fixture), counted from what was really stored."""

from __future__ import annotations

import pytest

from memlane import Memory
from memlane.core.errors import InvalidInputError


@pytest.fixture
def memory(backend, embedder):
    with Memory(backend(), embedder=embedder) as m:
        yield m


def by_id(rows):
    return {row["id"]: (row["memories"], row["valid"], row["messages"]) for row in rows}


def test_scopes_count_memories_valid_ones_and_messages(memory):
    memory.add("I love cheese pizza.", user_id="alice")
    memory.add("I don't like cheese pizza anymore.", user_id="alice")  # invalidates the first, adds one
    memory.add([{"role": "user", "content": "Plays chess"}, {"role": "user", "content": "Drinks tea"}],
               user_id="bob", agent_id="coach", run_id="r1", infer=False)
    memory.add("what time is it?", user_id="carol")  # a question: the message is kept, no memory formed

    scopes = memory.scopes()
    assert by_id(scopes["users"]) == {"alice": (2, 1, 2), "bob": (2, 2, 2), "carol": (0, 0, 1)}
    assert by_id(scopes["agents"]) == {"coach": (2, 2, 2)}
    assert by_id(scopes["runs"]) == {"r1": (2, 2, 2)}
    assert [row["id"] for row in scopes["users"]] == ["alice", "bob", "carol"]  # by id


def test_scopes_follow_deletes_and_limit(memory):
    added = memory.add([{"role": "user", "content": f"fact {i}"} for i in range(3)], user_id="dan", infer=False)
    memory.add("Likes jazz", user_id="erin", infer=False)
    memory.delete(added["results"][0]["id"])
    assert by_id(memory.scopes()["users"]) == {"dan": (2, 2, 3), "erin": (1, 1, 1)}
    assert by_id(memory.scopes(limit=1)["users"]) == {"dan": (2, 2, 3)}
    assert memory.scopes() == {**memory.scopes(), "agents": [], "runs": []}


def test_empty_store_and_bad_limit(memory):
    assert memory.scopes() == {"users": [], "agents": [], "runs": []}
    with pytest.raises(InvalidInputError, match="limit"):
        memory.scopes(limit=0)


def test_async_memory_gives_the_same_scopes(memory):
    import asyncio

    from memlane import AsyncMemory

    memory.add("Likes jazz", user_id="erin", agent_id="dj", infer=False)
    assert asyncio.run(AsyncMemory(memory=memory).scopes()) == memory.scopes()


@pytest.mark.parametrize("column", ["user_id", "agent_id", "run_id"])
def test_sqlite_counts_from_indexes_without_reading_memory_rows(tmp_path, column):
    """Each memory row holds its vector: counting must read the covering index of the scope columns and
    valid_to, not the rows (7x at 100,000 memories, benchmarks/bench_scopes.py)."""
    from memlane.store.scope_counts import scope_counts_sql
    from memlane.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "plan.db")
    try:
        sql = scope_counts_sql(column, memories="memories", messages="messages", now=SQLiteStore.NOW,
                               scan_memories=True)
        plan = [row[-1] for row in store._con.execute("EXPLAIN QUERY PLAN " + sql, (10,)).fetchall()]
    finally:
        store.close()
    assert any(step.startswith("SCAN memories USING COVERING INDEX") for step in plan), plan
    assert not any("memories" in step and "COVERING" not in step and ("SEARCH" in step or "SCAN" in step)
                   for step in plan), plan
