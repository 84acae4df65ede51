"""What each filter matches, as a table, checked on a real store through every read path:
get_all, scoped search, and the unscoped ({"user_id": "*"}) search (SQLite: the in-memory
matrix; PostgreSQL: the exact scan and the HNSW index), on every store backend."""

import pytest

from memlane import Memory
from memlane.core.models import NewMemory

from conftest import sqlite_config

RECORDS = {
    "a": dict(role="user", actor_id="alice", metadata={
        "category": "food", "level": 3, "tags": ["spicy", "thai"], "prefs": {"food": "pizza", "drink": "tea"},
        "active": True, "price": 9.5, "note": "Loves Thai curry"}),
    "b": dict(role="user", metadata={
        "category": "travel", "level": 5, "tags": ["train"], "prefs": {"food": "sushi"}, "active": False,
        "note": "ÜBER trip"}),
    "c": dict(role="assistant", metadata={"category": "food", "level": 1, "tags": [], "reviewed": None, "price": 3}),
    "d": dict(role="user", agent_id="bot", metadata={}),
    "e": dict(role="user", metadata={
        "category": "work", "level": "high", "tags": ["Urgent", "thai"],
        "prefs": {"food": "pizza", "drink": "coffee", "extra": {"x": 1}}}),
    "f": dict(role="user", user_id="u2", metadata={"category": "food", "level": 4}),
}

# (filter, names it matches among a..f)
CASES = [
    ({"category": "food"}, "acf"),
    ({"category": {"eq": "food"}}, "acf"),
    ({"category": {"ne": "food"}}, "bde"),  # a missing key is "not equal"
    ({"level": {"gte": 3}}, "abf"),  # "high" is a string: never compared with a number
    ({"level": {"gt": "a"}}, "e"),
    ({"level": {"lt": 3}}, "c"),
    ({"level": {"lte": 3}}, "ac"),
    ({"level": {"in": [1, 5]}}, "bc"),
    ({"level": {"in": [1, "high"]}}, "ce"),
    ({"level": {"nin": [1, 5]}}, "adef"),
    ({"level": {"in": []}}, ""),
    ({"level": {"nin": []}}, "abcdef"),
    ({"level": 3.0}, "a"),
    ({"active": True}, "a"),
    ({"active": False}, "b"),
    ({"active": 1}, ""),  # true is not 1
    ({"active": {"in": [True]}}, "a"),
    ({"active": {"nin": [True, False]}}, "cdef"),
    ({"reviewed": None}, "abcdef"),  # null or missing
    ({"reviewed": {"ne": None}}, ""),
    ({"reviewed": "*"}, "c"),  # present, even when null
    ({"category": "*"}, "abcef"),
    ({"category": {"in": ["food", None]}}, "acdf"),
    ({"tags": {"contains": "thai"}}, "ae"),
    ({"tags": {"contains": ["thai", "spicy"]}}, "a"),
    ({"note": {"contains": "Thai"}}, "a"),
    ({"note": {"contains": "thai"}}, ""),  # contains is case-sensitive
    ({"note": {"icontains": "thai"}}, "a"),
    ({"note": {"icontains": "über"}}, "b"),  # Unicode case folding
    ({"tags": {"icontains": "urgent"}}, "e"),
    ({"tags": []}, "c"),
    ({"tags": {"ne": []}}, "abdef"),
    ({"prefs.food": "pizza"}, "ae"),
    ({"metadata.prefs.food": "pizza"}, "ae"),
    ({"prefs.extra.x": 1}, "e"),
    ({"prefs": {"eq": {"food": "sushi"}}}, "b"),
    ({"prefs": {"contains": {"food": "pizza"}}}, "ae"),
    ({"price": {"gt": 5}}, "a"),
    ({"OR": [{"category": "travel"}, {"level": 1}]}, "bc"),
    ({"NOT": [{"category": "food"}]}, "bde"),
    ({"NOT": [{"category": "food"}, {"level": 3}]}, "bcdef"),
    ({"AND": [{"category": "food"}, {"NOT": [{"level": {"gt": 2}}]}]}, "c"),
    ({"NOT": [{"NOT": [{"category": "travel"}]}]}, "b"),
    ({"role": "assistant"}, "c"),
    ({"role": {"ne": "assistant"}}, "abdef"),
    ({"role": {"in": ["assistant", "tool"]}}, "c"),
    ({"actor_id": "alice"}, "a"),
    ({"actor_id": {"ne": "alice"}}, "bcdef"),  # a missing actor is "not equal"
    ({"actor_id": "*"}, "a"),
    ({"agent_id": "bot"}, "d"),
    ({"memory": {"contains": "memory b"}}, "b"),
    ({"memory": {"icontains": "MEMORY C"}}, "c"),
    ({"created_at": {"lte": "2999-01-01"}}, "abcdef"),
    ({"created_at": {"lt": "2000-01-01"}}, ""),
    ({"lookup": "has_key", "key": "reviewed"}, "c"),
    ({"lookup": "has_keys", "key": ["tags", "prefs"]}, "abe"),
    ({"lookup": "has_any_keys", "key": ["reviewed", "active"]}, "abc"),
    ({"lookup": "key_lookup", "key": "category", "value": "work"}, "e"),
    # seed 003's lookups, literally: ->> text equality, metadata @> {key: value}, metadata <@ {key: value}
    ({"lookup": "key_lookup", "key": "level", "value": "3"}, "a"),  # ->> text: 3 is '3'
    ({"lookup": "key_lookup", "key": "level", "value": 3}, "a"),
    ({"lookup": "key_lookup", "key": "active", "value": "true"}, "a"),
    ({"lookup": "key_lookup", "key": "price", "value": "9.5"}, "a"),
    ({"lookup": "key_lookup", "key": "tags", "value": ["spicy", "thai"]}, "a"),
    ({"lookup": "contains", "key": "tags", "value": "thai"}, ""),  # a nested array does not contain a scalar
    ({"lookup": "contains", "key": "tags", "value": ["thai"]}, "ae"),
    ({"lookup": "contains", "key": "note", "value": "Thai"}, ""),  # JSON containment: whole strings
    ({"lookup": "contains", "key": "note", "value": "Loves Thai curry"}, "a"),
    ({"lookup": "contains", "key": "prefs", "value": {"extra": {"x": 1}}}, "e"),
    # contained_by: the whole metadata must be in {key: value}; only d's empty metadata is
    ({"lookup": "contained_by", "key": "tags", "value": ["spicy", "thai", "train"]}, "d"),
    ({"lookup": "contained_by", "key": "prefs", "value": {"food": "sushi", "drink": "tea"}}, "d"),
    ({"lookup": "contained_by", "key": "category", "value": "food"}, "d"),  # f has a level too
]


@pytest.fixture(scope="module", params=["sqlite", "postgres", "postgres-hnsw"])
def populated(request, tmp_path_factory, embedder):
    if request.param == "sqlite":
        config = sqlite_config(tmp_path_factory.mktemp("filters") / "m.db")
    else:  # postgres-hnsw: every unscoped search asks the HNSW index (iterative scan) instead of scanning
        limit = {"exact_search_limit": 0} if request.param == "postgres-hnsw" else {}
        config = request.getfixturevalue("pg").config(**limit)
    memory = Memory(config, embedder=embedder)
    drafts = []
    for name, fields in RECORDS.items():
        fields = dict(fields)
        drafts.append(NewMemory(text=f"memory {name}", user_id=fields.pop("user_id", "u1"), **fields))
    memory.insert(drafts)
    yield memory
    memory.close()


def names(results):
    return "".join(sorted(item["memory"].removeprefix("memory ") for item in results["results"]))


@pytest.mark.parametrize("filters, expected", CASES, ids=[repr(f)[:60] for f, _ in CASES])
def test_filter_semantics(populated, filters, expected):
    in_u1 = expected.replace("f", "")
    assert names(populated.get_all(user_id="u1", filters=filters)) == in_u1
    assert names(populated.search("memory", user_id="u1", filters=filters)) == in_u1
    everyone = {"AND": [{"user_id": "*"}, filters]}
    assert names(populated.search("memory", filters=everyone)) == expected
    assert names(populated.get_all(filters=everyone)) == expected
