"""``MemlaneStore`` against LangGraph's store contract, with the real ``langgraph`` installed.

The behaviours are the ones LangGraph's own store tests expect of every store
(batch order, put / get / update / delete, namespace listing with prefix, suffix,
depth and pages, search by prefix, value filter and natural-language query,
``index`` fields, async variants), run on SQLite and PostgreSQL with the real
local model, plus what memlane adds: every item is a memory in its user's scope.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from memlane import AsyncMemory, Memory
from memlane.core import timeutil
from memlane.core.changes import Expiry
from memlane.core.errors import FilterError, InvalidInputError, MemoryNotFoundError
from memlane.integrations.langgraph_store import MemlaneStore, NamespaceLayout, item_id, value_text
from memlane.store.base import ChangeSet, Invalidate


@pytest.fixture
def memory(backend_memory):
    return backend_memory


@pytest.fixture
def store(memory):
    return MemlaneStore(memory)


def keys(items):
    return [item.key for item in items]


# -- batch -----------------------------------------------------------------------------------------


def test_batch_results_follow_the_order_of_operations(store):
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch([
        GetOp(namespace=("test", "foo"), key="key1"),
        PutOp(namespace=("test", "bar"), key="key2", value={"data": "value2b"}),
        SearchOp(namespace_prefix=("test",), filter={"data": "value1"}, limit=10, offset=0),
        ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
        GetOp(namespace=("test",), key="key3"),
        GetOp(namespace=("test", "bar"), key="key2"),
    ])
    assert isinstance(results[0], Item) and results[0].value == {"data": "value1"} and results[0].key == "key1"
    assert results[1] is None
    assert keys(results[2]) == ["key1"]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[4] is None
    assert results[5].value == {"data": "value2b"}  # a put earlier in the batch is seen by a later get


def test_batch_puts_and_a_put_of_none_deletes(store):
    store.put(("test",), "key3", {"data": "old"})
    results = store.batch([
        PutOp(namespace=("test",), key="key1", value={"data": "value1"}),
        PutOp(namespace=("test",), key="key2", value={"data": "value2"}),
        PutOp(namespace=("test",), key="key3", value=None),
    ])
    assert results == [None, None, None]
    assert store.get(("test",), "key1").value == {"data": "value1"}
    assert store.get(("test",), "key2").value == {"data": "value2"}
    assert store.get(("test",), "key3") is None


# -- put / get / delete ----------------------------------------------------------------------------


def test_put_get_update_delete(store):
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", {"title": "Test Document",
                                                                          "content": "Hello, World!"})
    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated.value == {"title": "Updated Document", "content": "Hello, Updated!"}
    assert updated.updated_at > item.updated_at and updated.created_at == item.created_at
    assert store.get(("test", "other_documents"), "doc1") is None  # the key belongs to its namespace
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    store.delete(namespace, "doc1")  # deleting a missing item is a no-op
    assert store.search(("test",)) == []


def test_an_item_is_a_memory_of_the_user_its_namespace_names(store, memory):
    store.put(("alice", "memories"), "food", {"text": "Alice is vegetarian", "source": "chat"})
    store.put(("alice", "memories"), "food", {"text": "Alice eats fish again", "source": "chat"})
    memory_id = item_id(("alice", "memories"), "food")
    found = memory.get(memory_id)
    assert found["user_id"] == "alice"
    assert found["metadata"]["langgraph"]["namespace"] == ["alice", "memories"]
    assert found["metadata"]["langgraph"]["value"] == {"text": "Alice eats fish again", "source": "chat"}
    assert [e["event"] for e in memory.history(memory_id)] == ["ADD", "UPDATE"]
    hits = memory.search("what does alice eat?", user_id="alice")["results"]
    assert [h["id"] for h in hits] == [memory_id]
    item = store.search(("alice",), query="what does alice eat?")[0]
    assert item.score == pytest.approx(hits[0]["score"])  # the score is memlane's, unchanged
    assert memory.get_all(user_id="bob")["results"] == []


@pytest.mark.parametrize("layout, namespace, scope", [
    ({}, ("alice", "memories"), {"user_id": "alice"}),
    ({"user_id": 1}, ("memories", "alice"), {"user_id": "alice"}),
    ({"user_id": 0, "agent_id": 1, "run_id": 2}, ("alice", "planner", "run-7", "notes"),
     {"user_id": "alice", "agent_id": "planner", "run_id": "run-7"}),
    ({"user_id": None, "agent_id": 0}, ("planner", "procedures"), {"agent_id": "planner"}),
])
def test_the_layout_maps_namespace_labels_to_the_scope(memory, layout, namespace, scope):
    store = MemlaneStore(memory, layout=layout)
    store.put(namespace, "k", {"text": "a note"})
    found = memory.get(item_id(namespace, "k"))
    assert {k: found.get(k) for k in ("user_id", "agent_id", "run_id") if found.get(k)} == scope
    assert keys(store.search(namespace[:1])) == ["k"]


@pytest.mark.parametrize("layout, namespace, error, message", [
    ({"user_id": 1}, ("memories",), InvalidInputError, "no label at position 1, which this store maps to user_id"),
    ({}, ("alice smith", "notes"), InvalidInputError, "the label 'alice smith' is the user_id"),
    ({}, ("a.b",), InvalidNamespaceError, "cannot contain periods"),
    ({}, (), InvalidNamespaceError, "cannot be empty"),
])
def test_a_namespace_the_layout_cannot_map_is_refused(memory, layout, namespace, error, message):
    store = MemlaneStore(memory, layout=layout)
    with pytest.raises(error, match=message):
        store.put(namespace, "k", {"text": "a note"})
    assert memory.get_all(filters={"user_id": "*"})["results"] == []


@pytest.mark.parametrize("layout, message", [
    ({"user_id": None}, "at least one of user_id, agent_id, run_id"),
    ({"user_id": 0, "agent_id": 0}, "different label positions"),
    ({"user_id": -1}, "greater than or equal to 0"),
    ({"users": 0}, "Extra inputs are not permitted"),
])
def test_a_bad_layout_is_refused(layout, message):
    with pytest.raises(ValueError, match=message):
        NamespaceLayout(**layout)


@pytest.mark.parametrize("ttl", [0, -1, float("inf"), "5", True])
def test_a_ttl_that_is_not_a_positive_number_is_refused(store, memory, ttl):
    with pytest.raises(InvalidInputError, match="ttl is a positive number of minutes"):
        store.batch([PutOp(("alice",), "k", {"text": "x"}, ttl=ttl)])
    assert memory.get_all(filters={"user_id": "*"}, include_invalid=True)["results"] == []


def test_bad_input_raises_clear_errors(store, memory):
    with pytest.raises(InvalidNamespaceError, match="periods"):
        store.batch([GetOp(("a.b",), "k")])  # ops given to batch directly are checked too
    with pytest.raises(FilterError, match=r"unknown operator '\$in'"):
        store.search(("alice",), filter={"tag": {"$in": ["a"]}})
    with pytest.raises(InvalidInputError, match="limit >= 1"):
        store.search(("alice",), limit=0)
    with pytest.raises(InvalidInputError, match="value of item 'k' must be JSON .*set is not JSON serializable"):
        store.put(("alice",), "k", {"tags": {"a", "b"}})
    with pytest.raises(InvalidInputError, match="value of item 'k' cannot be stored: metadata is .* bytes"):
        store.put(("alice",), "k", {"text": "short", "blob": "x" * 70_000}, index=["text"])
    with pytest.raises(InvalidInputError, match="value has 70,000 characters; the limit is 32,768"):
        store.put(("alice",), "k", {"text": "x" * 70_000}, index=False)  # its text is the value's text
    with pytest.raises(InvalidInputError, match="fields must be a non-empty list"):
        MemlaneStore(memory, fields=[])
    assert memory.get_all(filters={"user_id": "*"})["results"] == []


# -- list_namespaces -------------------------------------------------------------------------------

NAMESPACES = [("test", "documents", "public"), ("test", "documents", "private"), ("test", "images", "public"),
              ("test", "images", "private"), ("prod", "documents", "public"), ("prod", "documents", "private")]


def test_list_namespaces(store):
    for namespace in NAMESPACES:
        store.put(namespace, "dummy", {"content": "dummy"})
    store.put(NAMESPACES[0], "dummy2", {"content": "dummy"})  # two items, one namespace
    assert store.list_namespaces() == sorted(NAMESPACES)
    assert store.list_namespaces(prefix=("test",)) == sorted(NAMESPACES[:4])
    assert store.list_namespaces(suffix=("public",)) == sorted(ns for ns in NAMESPACES if ns[-1] == "public")
    assert store.list_namespaces(prefix=("test", "*", "private")) == [("test", "documents", "private"),
                                                                      ("test", "images", "private")]
    assert store.list_namespaces(max_depth=2) == [("prod", "documents"), ("test", "documents"), ("test", "images")]
    assert store.list_namespaces(limit=3) == sorted(NAMESPACES)[:3]
    assert store.list_namespaces(limit=3, offset=3) == sorted(NAMESPACES)[3:]
    assert store.batch([ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("documents", "*")),
                                                           MatchCondition("prefix", ("prod",))))])[0] == \
        [("prod", "documents", "private"), ("prod", "documents", "public")]
    for namespace in NAMESPACES:
        store.delete(namespace, "dummy")
    assert store.list_namespaces() == [NAMESPACES[0]]


def test_list_namespaces_reads_past_one_page(memory, embedder):
    """More items than one read returns (limits.max_results): every namespace is still listed."""
    small = Memory({"limits": {"max_results": 3}}, embedder=embedder, store=memory.store)
    store = MemlaneStore(small)
    for i in range(8):
        store.put(("alice", f"n{i}"), "k", {"text": f"note {i}"})
    assert store.list_namespaces() == [("alice", f"n{i}") for i in range(8)]


# -- search ----------------------------------------------------------------------------------------

DOCS = [(("test", "docs"), "doc1", {"title": "First Doc", "author": "Alice", "tags": ["important"]}),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"],
                                      "size": {"w": 10, "h": 20}})]


def test_search_by_prefix_filter_and_page(store):
    for namespace, key, value in DOCS:
        store.put(namespace, key, value)
    assert sorted(keys(store.search(("test",)))) == ["doc1", "doc2", "img1"]
    assert all(item.score is None for item in store.search(("test",)))
    docs = store.search(("test", "docs"))
    assert sorted(keys(docs)) == ["doc1", "doc2"] and {item.namespace for item in docs} == {("test", "docs")}
    assert sorted(keys(store.search(("test",), filter={"author": "Alice"}))) == ["doc1", "img1"]
    assert keys(store.search(("test",), filter={"tags": ["draft"]})) == ["doc2"]
    assert keys(store.search(("test",), filter={"size": {"w": 10}})) == ["img1"]  # nested objects match by key
    assert keys(store.search(("test",), filter={"author": {"$ne": "Alice"}})) == ["doc2"]
    assert keys(store.search(("*", "images"))) == ["img1"]
    assert keys(store.search(())) != [] and len(store.search(())) == 3  # the empty prefix is every item
    first, rest = store.search(("test",), limit=2), store.search(("test",), offset=2)
    assert len(first) == 2 and len(rest) == 1 and set(keys(first)) | set(keys(rest)) == {"doc1", "doc2", "img1"}


def test_comparison_filters_compare_numbers_as_numbers(store):
    for key, score in [("a", 2), ("b", 9), ("c", 10), ("d", 11), ("e", 9.5)]:
        store.put(("test", "scores"), key, {"score": score})
    for key, name in [("a", "apple"), ("b", "banana")]:
        store.put(("test", "names"), key, {"name": name})

    def scores(filter):
        return sorted(item.value["score"] for item in store.search(("test", "scores"), filter=filter))

    assert scores({"score": {"$gte": 10}}) == [10, 11]
    assert scores({"score": {"$gt": 9}}) == [9.5, 10, 11]
    assert scores({"score": {"$lt": 10}}) == [2, 9, 9.5]
    assert scores({"score": {"$lte": 9, "$gt": 2}}) == [9]
    assert scores({"score": {"$eq": 9.5}}) == [9.5]
    assert [i.value["name"] for i in store.search(("test", "names"), filter={"name": {"$gt": "apple"}})] == ["banana"]


COLOURS = [("doc1", {"text": "red apple", "color": "red", "score": 4.5}),
           ("doc2", {"text": "red car", "color": "red", "score": 3.0}),
           ("doc3", {"text": "green apple", "color": "green", "score": 4.0}),
           ("doc4", {"text": "blue car", "color": "blue", "score": 3.5})]


def test_natural_language_search_ranks_and_filters(store):
    for key, value in COLOURS:
        store.put(("test",), key, value)
    apples = store.search(("test",), query="apple", filter={"color": "red"})
    assert keys(apples) == ["doc1", "doc2"] and apples[0].score > apples[1].score
    assert keys(store.search(("test",), query="car", filter={"color": "red"})) == ["doc2", "doc1"]
    assert keys(store.search(("test",), query="a blue vehicle", filter={"score": {"$gt": 3.2}}))[0] == "doc4"
    assert keys(store.search(("test",), query="apple", filter={"score": {"$gte": 4.0}, "color": "green"})) == ["doc3"]
    page1, page2 = store.search(("test",), query="fruit", limit=2), store.search(("test",), query="fruit", limit=2,
                                                                                 offset=2)
    assert len(page1) == len(page2) == 2 and not set(keys(page1)) & set(keys(page2))
    assert set(keys(page1)) == {"doc1", "doc3"}  # the apples are the fruit
    assert len(store.search(("test",), query="", limit=10)) == 4  # an empty query is no query
    assert len(store.search(("test",), query="test " * 100)) == 4
    assert len(store.search(("test",), query="test!@#$%^&*()")) == 4


def test_an_update_re_embeds_and_index_false_is_not_found_by_query(store):
    store.put(("test",), "doc1", {"text": "zany zebra Xerxes"})
    store.put(("test",), "doc2", {"text": "something about dogs"})
    store.put(("test",), "doc3", {"text": "text about birds"})
    before = store.search(("test",), query="Zany Xerxes")
    assert keys(before)[0] == "doc1"
    store.put(("test",), "doc1", {"text": "new text about dogs"})
    after = {item.key: item.score for item in store.search(("test",), query="Zany Xerxes")}
    assert after["doc1"] < before[0].score
    store.put(("test",), "doc4", {"text": "new text about dogs"}, index=False)
    assert "doc4" not in keys(store.search(("test",), query="new text about dogs", limit=10))
    plain = store.search(("test",))
    assert "doc4" in keys(plain) and all(item.score is None for item in plain)


@pytest.mark.parametrize("value, text", [
    ({"score": 2, "text": "Lives in Bergen"}, "Lives in Bergen"),
    ({"content": "Hello, World!", "title": "Test Document"}, "Hello, World!"),
    ({"kind": "Memory", "content": {"content": "Sam hikes on Sundays"}}, "Sam hikes on Sundays"),  # LangMem's
    ({"memory": ["Likes tea", "Hates coffee"]}, "Likes tea\nHates coffee"),
    ({"text": "", "data": "the data"}, "the data"),
    ({"food_preference": "I like pizza", "stars": 5}, "food_preference: I like pizza"),
    ({"name": "Sam", "home": {"city": "Bergen"}, "tags": ["a", "b"]}, "name: Sam\nhome.city: Bergen\ntags: a\ntags: b"),
    ({"count": 3, "ok": True, "text": 7}, ""),
])
def test_the_text_of_an_item_is_its_own_words(value, text):
    assert value_text(value) == text


def test_without_fields_an_item_is_remembered_by_its_words(store, memory):
    store.put(("sam",), "home", {"score": 2, "text": "Lives in Bergen"})
    store.put(("sam",), "counts", {"visits": 3})  # no words: kept, found by filters, not by any search
    listed = {m["metadata"]["langgraph"]["key"]: m for m in memory.get_all(user_id="sam")["results"]}
    assert listed["home"]["memory"] == "Lives in Bergen"  # not the value as JSON
    assert listed["counts"]["memory"] == '{"visits": 3}' and listed["counts"]["metadata"]["searchable"] is False
    assert [h["memory"] for h in memory.search("where does sam live?", user_id="sam")["results"]] == ["Lives in Bergen"]
    assert keys(store.search(("sam",), filter={"visits": 3})) == ["counts"]


def test_index_false_items_are_found_by_no_search(store, memory):
    store.put(("sam",), "diet", {"text": "Sam is vegetarian"})
    store.put(("sam",), "raw", {"text": "Sam is vegetarian and eats no fish"}, index=False)
    raw = item_id(("sam",), "raw")
    assert memory.get(raw)["memory"] == "Sam is vegetarian and eats no fish"  # listed with its words
    for flags in ({}, {"keyword_search": True, "rerank": True}):
        found = memory.search("is sam vegetarian?", user_id="sam", **flags)["results"]
        assert [h["memory"] for h in found] == ["Sam is vegetarian"], flags
    context = memory.search_memory_with_context([{"role": "user", "content": "Remember, is Sam vegetarian?"}],
                                                user_id="sam")
    assert context["total_matches"] >= 1 and raw not in str(context)
    assert keys(store.search(("sam",), query="vegetarian", limit=10)) == ["diet"]
    assert set(keys(store.search(("sam",)))) == {"diet", "raw"}
    store.put(("sam",), "raw", {"text": "Sam is vegetarian and eats no fish"})  # put again, indexed
    assert raw in [h["id"] for h in memory.search("is sam vegetarian?", user_id="sam")["results"]]


def test_index_names_the_fields_that_are_searched(memory):
    store = MemlaneStore(memory, fields=["text"])
    store.put(("test",), "pets", {"text": "my cat sleeps all day", "note": "stock market report"})
    store.put(("test",), "money", {"text": "quarterly earnings and shares", "note": "kitten"})
    store.put(("test",), "override", {"text": "unrelated", "summary": "a poem about the sea"}, index=["summary"])
    store.put(("test",), "nothing", {"other": "a poem about the sea"})  # none of the fields: not searchable
    assert keys(store.search(("test",), query="a sleepy cat", limit=1)) == ["pets"]
    assert keys(store.search(("test",), query="stocks and shares", limit=1)) == ["money"]
    assert keys(store.search(("test",), query="ocean poetry", limit=1)) == ["override"]
    assert "nothing" not in keys(store.search(("test",), query="ocean poetry", limit=10))
    assert memory.get(item_id(("test",), "override"))["memory"] == "a poem about the sea"
    assert "nothing" in keys(store.search(("test",), filter={"other": "a poem about the sea"}))


def test_non_ascii_text(store):
    texts = {"1": "这是中文", "2": "これは日本語です", "3": "이건 한국어야", "4": "Это русский", "5": "यह रूसी है"}
    for key, text in texts.items():
        store.put(("user_123", "memories"), key, {"text": text})
    for key, text in texts.items():
        assert store.search(("user_123", "memories"), query=text)[0].key == key
    assert store.get(("user_123", "memories"), "1").value == {"text": "这是中文"}


def test_an_item_that_formation_invalidated_reads_as_deleted(store, memory):
    store.put(("alice",), "k", {"text": "x"})
    memory.store.apply(ChangeSet(invalidations=[Invalidate(id=item_id(("alice",), "k"), reason="contradicted")]))
    assert store.get(("alice",), "k") is None


def test_a_put_of_a_key_formation_invalidated_stores_the_new_value(store, memory):
    store.put(("alice",), "k", {"text": "old"})
    memory.store.apply(ChangeSet(invalidations=[Invalidate(id=item_id(("alice",), "k"), reason="contradicted")]))
    store.put(("alice",), "k", {"text": "new"})
    assert store.get(("alice",), "k").value == {"text": "new"}
    events = [e["event"] for e in memory.history(item_id(("alice",), "k"))]
    assert events == ["ADD", "DELETE", "DELETE", "ADD"]  # invalidated, deleted, stored anew: all kept


# -- ttl -------------------------------------------------------------------------------------------


def expiry(memory, namespace, key):
    """When the item's memory expires (None: never), as a datetime."""
    found = memory.get(item_id(namespace, key))
    return datetime.fromisoformat(found["valid_to"]) if found.get("valid_to") else None


def lapse(memory, namespace, key):
    """Make the item's ttl run out now, as time passing would."""
    memory.store.apply(ChangeSet(expiries=[Expiry(item_id(namespace, key), timeutil.now_iso())]))


def test_a_ttl_is_the_memory_expiry_and_a_lapsed_item_reads_as_deleted(store, memory):
    before = datetime.now(timezone.utc)
    store.put(("alice",), "k", {"text": "Alice is in Lisbon this week"}, ttl=30)
    found = memory.get(item_id(("alice",), "k"))
    assert found["invalid_reason"] == "expired"
    assert before + timedelta(minutes=30) <= expiry(memory, ("alice",), "k") <= datetime.now(timezone.utc) + timedelta(minutes=30)
    assert store.get(("alice",), "k").value == {"text": "Alice is in Lisbon this week"}
    lapse(memory, ("alice",), "k")
    assert store.get(("alice",), "k") is None
    assert store.search(("alice",)) == [] and store.search(("alice",), query="where is Alice?") == []
    kept = memory.get_all(user_id="alice", include_invalid=True)["results"]
    assert [m["metadata"]["langgraph"]["value"] for m in kept] == [{"text": "Alice is in Lisbon this week"}]  # kept


@pytest.mark.parametrize("read", ["get", "search", "query"])
def test_reading_an_item_pushes_its_expiry_back_unless_told_not_to(store, memory, read):
    store.put(("alice",), "k", {"text": "Alice is in Lisbon this week"}, ttl=1)
    store.put(("alice",), "forever", {"text": "Alice was born in Porto"})
    first = expiry(memory, ("alice",), "k")

    def reads(refresh):
        if read == "get":
            return [store.get(("alice",), "k", refresh_ttl=refresh)]
        return store.search(("alice",), query="Lisbon" if read == "query" else None, refresh_ttl=refresh)

    assert "k" in keys(reads(False))
    assert expiry(memory, ("alice",), "k") == first
    assert "k" in keys(reads(True))
    assert expiry(memory, ("alice",), "k") > first
    assert expiry(memory, ("alice",), "forever") is None  # an item without a ttl keeps none
    assert [e["event"] for e in memory.history(item_id(("alice",), "k"))] == ["ADD"]  # no history row per read


def test_the_store_ttl_config_gives_defaults(memory):
    store = MemlaneStore(memory, ttl={"default_ttl": 60, "refresh_on_read": False})
    store.put(("alice",), "k", {"text": "x"})
    first = expiry(memory, ("alice",), "k")
    assert first is not None and first > datetime.now(timezone.utc) + timedelta(minutes=59)
    store.get(("alice",), "k")
    assert expiry(memory, ("alice",), "k") == first
    store.put(("alice",), "k", {"text": "y"}, ttl=None)  # None: no expiry, whatever the default
    assert expiry(memory, ("alice",), "k") is None and store.get(("alice",), "k").value == {"text": "y"}


def test_a_put_after_the_ttl_ran_out_stores_the_item_again(store, memory):
    store.put(("alice",), "k", {"text": "old"}, ttl=5)
    lapse(memory, ("alice",), "k")
    store.put(("alice",), "k", {"text": "new"})
    assert store.get(("alice",), "k").value == {"text": "new"}
    assert expiry(memory, ("alice",), "k") is None
    assert [e["event"] for e in memory.history(item_id(("alice",), "k"))] == ["ADD", "UPDATE"]


def test_set_expiration_does_not_bring_back_an_invalidated_memory(store, memory):
    store.put(("alice",), "k", {"text": "x"})
    memory_id = item_id(("alice",), "k")
    memory.store.apply(ChangeSet(invalidations=[Invalidate(id=memory_id, reason="contradicted")]))
    with pytest.raises(MemoryNotFoundError):
        memory.set_expiration(memory_id, None)
    with pytest.raises(InvalidInputError, match="not in the future"):
        memory.set_expiration(memory_id, "2020-01-01")
    assert memory.get(memory_id)["invalid_reason"] == "contradicted"


# -- async -----------------------------------------------------------------------------------------


def test_async_variants(memory):
    store = MemlaneStore(AsyncMemory(memory=memory))

    async def scenario():
        await asyncio.gather(*(store.aput(("alice", "notes"), f"k{i}", {"text": f"note {i}"}) for i in range(5)))
        await store.aput(("alice", "food"), "pizza", {"text": "Alice loves pizza"})
        got = await store.aget(("alice", "notes"), "k3")
        found = await store.asearch(("alice",), query="favourite food", limit=1)
        listed = await store.alist_namespaces(prefix=("alice",))
        await store.adelete(("alice", "notes"), "k3")
        batch = await store.abatch([GetOp(("alice", "notes"), "k3"), GetOp(("alice", "notes"), "k4")])
        return got, found, listed, batch

    got, found, listed, batch = asyncio.run(scenario())
    assert got.value == {"text": "note 3"}
    assert keys(found) == ["pizza"] and 0 < found[0].score <= 1
    assert listed == [("alice", "food"), ("alice", "notes")]
    assert batch[0] is None and batch[1].value == {"text": "note 4"}
