"""``update(timestamp=)`` (when a memory was said: its ``created_at``) and mem0's batches,
``batch_update`` and ``batch_delete``: each written in one transaction or not at all, on both store
backends, and the same through ``AsyncMemory`` (the REST routes and both mem0 clients:
tests/server/test_server_mem0_client.py, test_mem0_js_client.py)."""

from __future__ import annotations

import asyncio

import pytest

from memlane import AsyncMemory, InvalidInputError, Memory, MemoryNotFoundError

MAY = "2023-05-08T13:56:00.000000+00:00"


@pytest.fixture
def m(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        yield memory


def added(m, *texts, user_id="u"):
    return [m.add(text, user_id=user_id, infer=False)["results"][0]["id"] for text in texts]


def test_update_timestamp_is_when_the_memory_was_said(m):
    [first, second] = added(m, "I keep bees", "I grow tomatoes")
    updated = m.update(first, timestamp=1683554160)
    assert updated["created_at"] == MAY and updated["memory"] == "I keep bees" and updated["updated_at"] > MAY
    assert [i["id"] for i in m.get_all(user_id="u", as_of="2023-06-01")["results"]] == [first]  # said then
    assert [e["event"] for e in m.history(first)] == ["ADD", "UPDATE"]
    with pytest.raises(InvalidInputError, match="timestamp .* is in the future") as raised:
        m.update(second, "I grow peppers", timestamp="2999-01-01")
    assert raised.value.field == "timestamp" and m.get(second)["memory"] == "I grow tomatoes"


def test_batch_update_writes_every_change_or_none(m):
    ids = added(m, "I like jazz", "I play chess", "I own a kayak")
    answer = m.batch_update([{"memory_id": ids[0], "text": "I like modal jazz"},
                             {"memory_id": ids[1], "metadata": {"game": "chess"}, "timestamp": MAY},
                             {"memory_id": ids[2], "data": "I own two kayaks"}])
    assert answer["message"] == "Successfully updated 3 memories"
    assert [(r["memory"], r["created_at"] == MAY) for r in answer["results"]] == [
        ("I like modal jazz", False), ("I play chess", True), ("I own two kayaks", False)]
    assert m.search("modal jazz", user_id="u", limit=1)["results"][0]["id"] == ids[0]  # re-embedded
    before = [m.get(i) for i in ids]
    with pytest.raises(MemoryNotFoundError):
        m.batch_update([{"memory_id": ids[0], "text": "changed"}, {"memory_id": "no-such-memory", "text": "x"}])
    assert [m.get(i) for i in ids] == before


def test_batch_delete_deletes_every_memory_or_none(m):
    ids = added(m, "one fact", "two facts", "three facts")
    with pytest.raises(MemoryNotFoundError):
        m.batch_delete([ids[0], "no-such-memory"])
    assert m.get(ids[0]) is not None
    assert m.batch_delete([ids[0], {"memory_id": ids[1]}]) == {"message": "Successfully deleted 2 memories",
                                                               "deleted": 2}
    assert [i["id"] for i in m.get_all(user_id="u")["results"]] == [ids[2]]
    assert [e["event"] for e in m.history(ids[0])] == ["ADD", "DELETE"]  # history kept, as delete keeps it


@pytest.mark.parametrize("call, items, field", [
    ("batch_update", [], "memories"),
    ("batch_update", {"memory_id": "a", "text": "x"}, "memories"),
    ("batch_update", [{"memory_id": f"m{i}", "text": "x"} for i in range(1001)], "memories"),
    ("batch_update", ["a"], "memories.0"),
    ("batch_update", [{"text": "x"}], "memories.0.memory_id"),
    ("batch_update", [{"memory_id": "a"}], "memories.0.text"),
    ("batch_update", [{"memory_id": "a", "text": "x"}, {"memory_id": "b", "txt": "y"}], "memories.1.txt"),
    ("batch_update", [{"memory_id": "a", "text": "x"}, {"memory_id": "a", "text": "y"}], "memories.1"),
    ("batch_update", [{"memory_id": "a", "text": "x", "data": "y"}], "memories.0.data"),
    ("batch_update", [{"memory_id": "a", "timestamp": "later"}], "memories.0.timestamp"),
    ("batch_update", [{"memory_id": "a", "metadata": {"user_id": "b"}}], "memories.0.metadata"),
    ("batch_delete", [], "memories"),
    ("batch_delete", "abc", "memories"),
    ("batch_delete", [{"id": "a"}], "memories.0.memory_id"),
    ("batch_delete", ["a", "a"], "memories.1"),
])
def test_a_bad_batch_names_the_item_at_fault_and_changes_nothing(m, call, items, field):
    [kept] = added(m, "I keep this")
    with pytest.raises(InvalidInputError) as raised:
        getattr(m, call)(items)
    assert raised.value.field == field
    assert m.get(kept)["memory"] == "I keep this"


def test_async_memory_batches_are_the_same_calls(tmp_path, hashing_embedder):
    async def run():
        async with AsyncMemory({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "a.db")}}},
                               embedder=hashing_embedder) as memory:
            [mid] = [(await memory.add("I swim", user_id="u", infer=False))["results"][0]["id"]]
            await memory.batch_update([{"memory_id": mid, "text": "I swim daily"}])
            text = (await memory.get(mid))["memory"]
            await memory.batch_delete([mid])
            return text, await memory.get(mid)

    assert asyncio.run(run()) == ("I swim daily", None)
