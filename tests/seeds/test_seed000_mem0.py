"""Seed 000 (mem0's ``POST /search``) and mem0 habits: code written for mem0's library runs unchanged.

The seed: ``Memory.search(query, *, user_id, agent_id, run_id, limit=100, filters, threshold)``, scope
ids in the arguments or in ``filters`` ("合并会话标识符和自定义过滤器"), and with graph memory
``{"results": ..., "relations": [{"source": "用户", "relationship": "喜欢", "destination": "意大利面",
"weight": 0.9}]}``. mem0's library also says ``update(memory_id, data)``, ``search(query, top_k=...,
filters=...)`` and ``get_all(filters=..., top_k=...)``; memlane takes those names with mem0's meanings
next to its own (``text``, ``limit``), and giving both names of one argument is an error.
"""

from __future__ import annotations

import anyio
import pytest

from memlane import AsyncMemory, Memory
from memlane.embeddings.hashing import HashingEmbedder
from memlane.core.errors import InvalidInputError
from support.server_fixtures import serving

NOTES = ["I love Thai curry", "My bike is blue", "I play the cello on Sundays", "I live in Porto"]
SEED_RELATION_FIELDS = {"source", "relationship", "destination", "weight"}


@pytest.fixture
def store(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        memory.add(NOTES, user_id="alice", infer=False)
        memory.add("Bob prefers tea", user_id="bob", infer=False)
        yield memory


def ids(found):
    return [r["id"] for r in found["results"]]


def test_search_with_top_k_and_scope_in_filters(store):
    mem0 = store.search("what do I like?", top_k=2, filters={"user_id": "alice"})
    own = store.search("what do I like?", limit=2, user_id="alice")
    assert ids(mem0) == ids(own) and len(ids(mem0)) == 2
    assert {r["user_id"] for r in mem0["results"]} == {"alice"}
    assert len(store.search("what do I like?", filters={"user_id": "alice"})["results"]) == 4  # default 100


def test_get_all_with_filters_and_top_k(store):
    mem0 = store.get_all(filters={"user_id": "alice"}, top_k=3)
    own = store.get_all(user_id="alice", limit=3)
    assert ids(mem0) == ids(own) and len(ids(mem0)) == 3
    assert len(store.get_all(filters={"user_id": "alice"})["results"]) == 4


def test_update_with_data(store):
    memory_id = store.get_all(user_id="alice", top_k=1)["results"][0]["id"]
    assert store.update(memory_id, data="I love green curry")["memory"] == "I love green curry"
    assert store.update(memory_id, "I love red curry")["memory"] == "I love red curry"  # mem0's positional data
    history = store.history(memory_id)
    assert [e["event"] for e in history] == ["ADD", "UPDATE", "UPDATE"]
    assert history[1]["old_memory"] != history[1]["new_memory"] == "I love green curry"


@pytest.mark.parametrize("call,field", [
    (lambda m, mid: m.search("x", user_id="alice", limit=2, top_k=2), "top_k"),
    (lambda m, mid: m.get_all(user_id="alice", limit=2, top_k=3), "top_k"),
    (lambda m, mid: m.update(mid, text="a", data="b"), "data"),
    (lambda m, mid: m.search("x", user_id="alice", top_k=0), "top_k"),
    (lambda m, mid: m.get_all(user_id="alice", top_k="3"), "top_k"),
])
def test_both_names_or_a_bad_value_is_a_clear_error(store, call, field):
    memory_id = store.get_all(user_id="alice")["results"][0]["id"]
    with pytest.raises(InvalidInputError) as raised:
        call(store, memory_id)
    assert raised.value.field == field
    assert store.get(memory_id)["memory"] in NOTES  # nothing changed


def test_async_memory_takes_mem0_names(store):
    amem = AsyncMemory(memory=store)

    async def run():
        found = await amem.search("what do I like?", top_k=1, filters={"user_id": "alice"})
        listed = await amem.get_all(filters={"user_id": "alice"}, top_k=2)
        updated = await amem.update(listed["results"][0]["id"], data="I love yellow curry")
        with pytest.raises(InvalidInputError):
            await amem.search("x", user_id="alice", limit=1, top_k=1)
        return found, listed, updated

    found, listed, updated = anyio.run(run)
    assert len(found["results"]) == 1 and len(listed["results"]) == 2
    assert updated["memory"] == "I love yellow curry"


def test_relations_carry_the_seed_field_names(backend, embedder):
    """Graph memory on: search relations are the seed's {source, relationship, destination, weight}
    (memlane adds id and score); get_all lists the triples under the same names."""
    with Memory({**backend(), "enable_graph": True}, embedder=embedder) as memory:
        memory.add("I live in Lisbon. I like fado.", user_id="sam")
        found = memory.search("where does sam live?", user_id="sam")
        listed = memory.get_all(user_id="sam")
    assert found["relations"] and all(SEED_RELATION_FIELDS <= set(r) for r in found["relations"])
    assert all(r["weight"] == r["score"] and 0 <= r["weight"] <= 1 for r in found["relations"])
    assert ("sam", "lives_in", "Lisbon") in {(r["source"], r["relationship"], r["destination"])
                                             for r in found["relations"]}
    assert {(r["source"], r["relationship"], r["destination"]) for r in listed["relations"]} == \
        {("sam", "lives_in", "Lisbon"), ("sam", "likes", "fado")}
    assert not any("target" in r for r in found["relations"] + listed["relations"])


# -- the REST faces ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("seed000-home"), HashingEmbedder(), auth=False) as live:
        live.memory("default").add(NOTES, user_id="alice", infer=False)
        yield live


def test_rest_takes_mem0_names(live):
    with live.client() as api:
        listed = api.get("/memories", params={"user_id": "alice", "top_k": 2})
        both = api.get("/memories", params={"user_id": "alice", "top_k": 2, "limit": 3})
        searched = api.post("/search", json={"query": "what do I like?", "filters": {"user_id": "alice"}, "top_k": 3})
        memory_id = listed.json()["results"][0]["id"]
        updated = api.put(f"/memories/{memory_id}", json={"data": "I love green curry"})
        platform_updated = api.put(f"/v1/memories/{memory_id}/", json={"data": "I love red curry"})
        platform_listed = api.post("/v3/memories/", json={"filters": {"user_id": "alice"}, "top_k": 1})
    assert listed.status_code == 200 and len(listed.json()["results"]) == 2
    assert both.status_code == 422 and both.json()["field"] == "top_k"
    assert len(searched.json()["results"]) == 3
    assert updated.json()["memory"] == "I love green curry"
    assert platform_updated.status_code == 200 and platform_updated.json()["memory"] == "I love red curry"
    assert platform_listed.status_code == 200 and len(platform_listed.json()["results"]) == 1
