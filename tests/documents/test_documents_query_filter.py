"""query_filter (seed 003, section 6) as a table: each valid filter selects the same documents on
SQLite and PostgreSQL; each invalid one is refused with a message naming the problem."""

from __future__ import annotations

import math

import pytest

from memlane import Documents, Memory
from memlane.documents import query_filter
from memlane.documents.encoders import LocalTokenEncoder
from memlane.core.errors import FilterError

COLLECTIONS = {"c1": {"team": "ml", "public": True}, "c2": {"team": "ops"}}
DOCUMENTS = {
    "d1": ("c1", {"author": "John Doe", "year": 2024, "tags": ["ml", "ai"], "reviewed": True}),
    "d2": ("c1", {"author": "John", "year": 2023, "tags": ["ml"], "editor": "Jane"}),
    "d3": ("c2", {"year": "2024", "tags": ["ml", "ai", "dl"], "reviewed": False, "nested": {"a": 1}}),
    "d4": ("c2", {}),
    "d5": ("c2", {"tags": ["ml"], "year": 2023}),
    "d6": ("c1", {"tags": ["ai"]}),
}

# Seed 003's SQL, literally: key_lookup is metadata->>'key' = 'value' (text: 2024 equals "2024"),
# contains is metadata @> {key: value}, contained_by is metadata <@ {key: value} (the WHOLE metadata
# must be contained), with jsonb's own rules (a nested array does not contain a bare scalar)
VALID = [
    ({"on": "document", "key": "author", "value": "John Doe", "lookup": "key_lookup"}, ["d1"]),
    ({"key": "author", "value": "John"}, ["d2"]),  # defaults: on document, lookup key_lookup
    ({"key": "year", "value": 2024}, ["d1", "d3"]),  # ->> compares text: 2024 and "2024" are both '2024'
    ({"key": "year", "value": "2024"}, ["d1", "d3"]),
    ({"key": "year", "value": "2023"}, ["d2", "d5"]),
    ({"key": "reviewed", "value": False}, ["d3"]),
    ({"key": "reviewed", "value": "true"}, ["d1"]),  # ->> gives 'true'
    ({"key": "tags", "value": ["ml"]}, ["d2", "d5"]),  # ->> gives the array's jsonb text '["ml"]'
    ({"key": "nested.a", "value": 1}, ["d3"]),
    ({"key": "author", "value": "John", "lookup": "contains"}, ["d2"]),  # whole value, not a substring
    ({"key": "tags", "value": "ml", "lookup": "contains"}, []),  # {"tags": [..]} @> {"tags": "ml"} is false
    ({"key": "tags", "value": ["ml"], "lookup": "contains"}, ["d1", "d2", "d3", "d5"]),
    ({"key": "tags", "value": ["ml", "ai"], "lookup": "contains"}, ["d1", "d3"]),
    ({"key": "tags", "value": ["ml", "ai"], "lookup": "contained_by"}, ["d4", "d6"]),  # d5 has a year too
    ({"key": "year", "value": 2023, "lookup": "contained_by"}, ["d4"]),
    ({"key": "reviewed", "lookup": "has_key"}, ["d1", "d3"]),
    ({"key": ["author", "year"], "lookup": "has_keys"}, ["d1", "d2"]),
    ({"key": ["author", "editor"], "lookup": "has_any_keys"}, ["d1", "d2"]),
    ({"key": ["editor", "nested"], "lookup": "has_any_keys"}, ["d2", "d3"]),
    ({"key": "missing", "lookup": "has_key"}, []),
    ({"on": "collection", "key": "team", "value": "ml"}, ["d1", "d2", "d6"]),
    ({"on": "collection", "key": "public", "lookup": "has_key"}, ["d1", "d2", "d6"]),
    ({"on": "collection", "key": "public", "value": "true"}, ["d1", "d2", "d6"]),
    ({"AND": [{"key": "tags", "value": ["ml"], "lookup": "contains"},
              {"on": "collection", "key": "team", "value": "ops"}]}, ["d3", "d5"]),
    ({"OR": [{"key": "editor", "lookup": "has_key"}, {"key": "nested", "lookup": "has_key"}]}, ["d2", "d3"]),
    ({"NOT": [{"key": "reviewed", "lookup": "has_key"}]}, ["d2", "d4", "d5", "d6"]),
    ({}, ["d1", "d2", "d3", "d4", "d5", "d6"]),
]

INVALID = [
    ({"key": "author", "lookup": "key_lookup"}, "query_filter.value: key_lookup needs a value"),
    ({"key": "author", "lookup": "contains"}, "contains needs a value"),
    ({"key": ["a", "b"], "value": 1, "lookup": "contained_by"}, "contained_by takes a single string key"),
    ({"key": "a", "value": 1, "lookup": "has_key"}, "has_key takes no value"),
    ({"key": ["a"], "value": 1, "lookup": "has_keys"}, "has_keys takes no value"),
    ({"key": "a", "lookup": "has_keys"}, "has_keys takes a non-empty list of string keys"),
    ({"key": [], "lookup": "has_any_keys"}, "has_any_keys takes a non-empty list"),
    ({"key": "a", "value": 1, "lookup": "startswith"}, "unknown lookup 'startswith'"),
    ({"key": "a", "value": 1, "on": "page"}, "on must be one of ['document', 'collection']"),
    ({"value": 1}, "key is required"),
    ({"key": "a", "value": 1, "colour": 2}, "unknown field(s) ['colour']"),
    ({"AND": []}, "AND takes a non-empty list"),
    ({"AND": [{"key": "a", "lookup": "has_key"}], "key": "b"}, "combine lookups with AND / OR / NOT"),
    ({"key": "a..b", "value": 1}, "empty key segment"),
    ({"key": "a", "value": math.nan}, "not a finite number"),
    ({"key": "a", "value": 1, "lookup": 3}, "lookup must be one of"),
]


@pytest.mark.parametrize("bad, message", INVALID, ids=[str(i) for i in range(len(INVALID))])
def test_invalid_filters_name_the_problem(bad, message):
    with pytest.raises(FilterError) as caught:
        query_filter.parse(bad)
    assert message in str(caught.value)
    assert caught.value.field == "query_filter" and str(caught.value).startswith("query_filter")


def test_a_filter_must_be_an_object():
    with pytest.raises(FilterError, match="expected an object"):
        query_filter.parse(["key", "a"])  # type: ignore[arg-type]


@pytest.fixture
def docs(backend, embedder):
    with Memory(backend(), embedder=embedder) as memory:
        with Documents(memory=memory, encoder=LocalTokenEncoder(embedder)) as d:
            for name, metadata in COLLECTIONS.items():
                d.create_collection(name, metadata)
            for name, (collection, metadata) in DOCUMENTS.items():
                d.upsert_document(name, collection, text=f"document {name}", metadata=metadata)
            yield d


def test_valid_filters_select_the_same_documents_on_every_backend(docs):
    wrong = []
    for where, expected in VALID:
        got = sorted(d["name"] for d in docs.list_documents(query_filter=where))
        if got != expected:
            wrong.append((where, expected, got))
        # search applies the same filter to the pages it may return
        hits = sorted(r["document_name"] for r in docs.search("document", top_k=10, query_filter=where)["results"])
        if hits != expected:
            wrong.append(("search", where, expected, hits))
    assert not wrong


def test_filter_returns_documents_or_collections(docs):
    on_documents = docs.filter({"key": "tags", "value": ["dl"], "lookup": "contains"})
    assert on_documents["on"] == "document" and [d["name"] for d in on_documents["results"]] == ["d3"]
    on_collections = docs.filter({"on": "collection", "key": "team", "lookup": "has_key"})
    assert on_collections["on"] == "collection"
    assert [c["name"] for c in on_collections["results"]] == ["c1", "c2"]
    assert [c["name"] for c in docs.list_collections({"on": "collection", "key": "public", "value": True})] == ["c1"]
    with pytest.raises(FilterError, match="does not apply"):
        docs.list_collections({"on": "document", "key": "year", "value": 2024})
    with pytest.raises(FilterError, match="give a lookup"):
        docs.filter({})
