"""One rule for text, on both backends alike: a NUL character or a lone surrogate anywhere in what a
call would store or look up (content, ids, metadata keys and values, filters, names) is an
``InvalidInputError`` naming where, and nothing is stored: no memory, no history, no message."""

import pytest

from memlane import Documents, InvalidInputError, Memory
from memlane.core import filters as flt
from memlane.core.validation import MAX_JSON_DEPTH, storable

U = "\ud800"  # half of a UTF-16 pair: no UTF-8 form
N = "\x00"


def _deep(levels: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(levels):
        value = {"k": value}
    return value


# (id, call(memory, existing id), the field the error names)
CASES = [
    ("metadata value", lambda m, mid: m.add("hi", user_id="u", infer=False, metadata={"k": U}), "metadata.k"),
    ("metadata value NUL", lambda m, mid: m.add("hi", user_id="u", infer=False, metadata={"k": "a" + N}), "metadata.k"),
    ("metadata key", lambda m, mid: m.add("hi", user_id="u", infer=False, metadata={"k" + N: 1}), "metadata"),
    ("metadata list value", lambda m, mid: m.add("hi", user_id="u", metadata={"tags": ["ok", U]}), "metadata.tags[1]"),
    ("metadata too deep", lambda m, mid: m.add("hi", user_id="u", metadata=_deep(MAX_JSON_DEPTH + 1)), "metadata"),
    ("content", lambda m, mid: m.add("hi " + U, user_id="u", infer=False), "messages[0].content"),
    ("content NUL, inferred", lambda m, mid: m.add("I like tea" + N, user_id="u"), "messages[0].content"),
    ("second message", lambda m, mid: m.add([{"role": "user", "content": "fine"},
                                             {"role": "assistant", "content": N}], user_id="u"),
     "messages[1].content"),
    ("speaker name", lambda m, mid: m.add([{"role": "user", "content": "hi", "name": "Bo" + U}], user_id="u"),
     "messages[0].name"),
    ("user_id", lambda m, mid: m.add("hi", user_id="u" + N, infer=False), "user_id"),
    ("agent_id", lambda m, mid: m.add("hi", agent_id=U, infer=False), "agent_id"),
    ("update text", lambda m, mid: m.update(mid, text="new " + N), "text"),
    ("update metadata", lambda m, mid: m.update(mid, metadata={"k": U}), "metadata.k"),
    ("search query", lambda m, mid: m.search("tea" + U, user_id="u"), "query"),
    ("filter key", lambda m, mid: m.search("tea", user_id="u", filters={"k" + U: "x"}), "filters"),
    ("filter value", lambda m, mid: m.search("tea", user_id="u", filters={"k": N}), "filters"),
    ("filter in list", lambda m, mid: m.get_all(user_id="u", filters={"k": {"in": ["a", U]}}), "filters"),
    ("filter inside NOT", lambda m, mid: m.delete_all(user_id="u", filters={"NOT": [{"memory": {"icontains": N}}]}),
     "filters"),
    ("get id", lambda m, mid: m.get(mid + N), "memory_id"),
    ("delete id", lambda m, mid: m.delete(U), "memory_id"),
    ("history id", lambda m, mid: m.history(N), "memory_id"),
    ("context conversation", lambda m, mid: m.search_memory_with_context([{"role": "user", "content": "tea" + U}],
                                                                         user_id="u"), "conversation[0].content"),
    ("system prompt", lambda m, mid: m.should_search_memory("do you remember?", system_prompt=N), "system_prompt"),
]


def _state(memory: Memory) -> tuple:
    info = memory.store.info()
    messages = memory.store.messages(flt.MATCH_ALL, 10_000)
    return info.memories, info.history_events, [(m.id, m.content) for m in messages]


@pytest.mark.parametrize("call, field", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_refused_naming_the_field_and_nothing_stored(backend, hashing_embedder, call, field):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        mid = memory.add("I like green tea", user_id="u", metadata={"k": "v"}, infer=False)["results"][0]["id"]
        before = _state(memory)
        with pytest.raises(InvalidInputError) as info:
            call(memory, mid)
        assert info.value.field == field, str(info.value)
        assert "NUL" in str(info.value) or "surrogate" in str(info.value) or "deeper" in str(info.value)
        assert _state(memory) == before
        assert memory.get(mid)["metadata"] == {"k": "v"}


def test_a_surrogate_pair_is_text_and_is_kept(backend, hashing_embedder):
    """An emoji arrives from JSON as a valid pair; only a lone half is refused."""
    with Memory(backend(), embedder=hashing_embedder) as memory:
        added = memory.add("I love 🍵 and 茶", user_id="u", metadata={"mood": "😀"}, infer=False)["results"][0]
        assert memory.get(added["id"])["memory"] == "I love 🍵 and 茶"
        assert memory.get_all(user_id="u", filters={"mood": "😀"})["results"][0]["id"] == added["id"]


@pytest.mark.parametrize("call, field", [
    (lambda d: d.create_collection("c" + N), "name"),
    (lambda d: d.create_collection("c", metadata={"k": U}), "metadata.k"),
    (lambda d: d.upsert_document("doc", "base", text="hello " + N), "text"),
    (lambda d: d.upsert_document("doc" + U, "base", text="hello"), "name"),
    (lambda d: d.search("hello" + U, collection_name="base"), "query"),
    (lambda d: d.list_documents("base", query_filter={"key": "k", "value": N}), "query_filter"),
    (lambda d: d.get_collection(U), "collection_name"),
], ids=["collection name", "collection metadata", "page text", "document name", "query", "query_filter", "lookup"])
def test_documents_refuse_the_same_text(backend, hashing_embedder, call, field):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        docs = Documents.for_memory(memory)
        docs.create_collection("base")
        before = docs.list_collections()
        with pytest.raises(InvalidInputError) as info:
            call(docs)
        assert info.value.field == field, str(info.value)
        assert docs.list_collections() == before
        assert docs.list_documents("base") == []


@pytest.mark.parametrize("value, where", [
    ({"a": [1, {"b": "x" + N}]}, "m.a[1].b"),
    ({"ok": 1, "k" + U: 2}, "m"),
    ([["deep"]], None),
])
def test_storable_walks_keys_values_and_lists(value, where):
    if where is None:
        storable(value, "m")  # no bad text: nothing raised
        return
    with pytest.raises(InvalidInputError) as info:
        storable(value, "m")
    assert info.value.field == where


def test_any_depth_is_refused_without_recursion():
    value: list = []
    for _ in range(100_000):  # far past Python's recursion limit
        value = [value]
    with pytest.raises(InvalidInputError, match="nests deeper than 64 levels"):
        storable(value, "metadata")
