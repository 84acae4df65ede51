"""AsyncMemory: the same methods and results as Memory, awaited, safe under concurrency."""

import asyncio
import inspect

import pytest

from memlane import AsyncMemory, Memory, MemoryNotFoundError, ScopeError

from conftest import sqlite_config

PUBLIC = ["add", "insert", "get", "get_all", "search", "update", "delete", "delete_all", "history", "reset", "info"]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_method_has_the_sync_signature_and_docs(name):
    method = getattr(AsyncMemory, name)
    assert inspect.iscoroutinefunction(method)
    assert inspect.signature(method) == inspect.signature(getattr(Memory, name))
    assert method.__doc__ == getattr(Memory, name).__doc__


def test_async_round_trip(db_path, embedder):
    async def scenario():
        async with AsyncMemory(sqlite_config(db_path), embedder=embedder) as m:
            added = await m.add("I like green tea", user_id="u", metadata={"c": "drink"}, infer=False)
            mid = added["results"][0]["id"]
            assert (await m.get(mid))["memory"] == "I like green tea"
            hits = await m.search("favourite drink", user_id="u")
            assert hits["results"][0]["id"] == mid
            assert (await m.update(mid, text="I like black tea"))["memory"] == "I like black tea"
            assert [e["event"] for e in await m.history(mid)] == ["ADD", "UPDATE"]
            assert len((await m.get_all(user_id="u", filters={"c": "drink"}))["results"]) == 1
            await m.delete(mid)
            with pytest.raises(MemoryNotFoundError):
                await m.delete(mid)
            with pytest.raises(ScopeError):
                await m.search("x")

    asyncio.run(scenario())


def test_many_concurrent_calls(db_path, embedder):
    async def scenario():
        m = AsyncMemory(sqlite_config(db_path), embedder=embedder)
        await asyncio.gather(*(m.add(f"fact number {i}", user_id=f"user{i % 4}", infer=False) for i in range(40)))
        searches = await asyncio.gather(*(m.search("fact", user_id=f"user{i % 4}", limit=100) for i in range(20)))
        assert all(len(s["results"]) == 10 for s in searches)
        await m.delete_all(user_id="user0")
        info = await m.info()
        assert info["memories"] == 30
        await m.close()

    asyncio.run(scenario())


def test_wraps_an_existing_memory(memory):
    async def scenario():
        m = AsyncMemory(memory=memory)
        await m.add("shared", user_id="u", infer=False)
        return memory.get_all(user_id="u")["results"]

    assert [r["memory"] for r in asyncio.run(scenario())] == ["shared"]
