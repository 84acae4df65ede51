"""The filter parser: what it builds, and the errors it gives for what it cannot read."""

from datetime import datetime, timezone

import pytest

from memlane.core.errors import FilterError
from memlane.core import scope
from memlane.core.filters import MATCH_ALL, NOW, And, Compare, Field, Not, Or, clock_columns, parse

meta = lambda *path: Field(path=path)  # noqa: E731
col = lambda name: Field(column=name)  # noqa: E731

PARSES = [
    (None, MATCH_ALL),
    ({}, MATCH_ALL),
    ({"category": "food"}, Compare(meta("category"), "eq", "food")),
    ({"metadata.category": "food"}, Compare(meta("category"), "eq", "food")),
    ({"prefs.food": "pizza"}, Compare(meta("prefs", "food"), "eq", "pizza")),
    ({"user_id": "alice"}, Compare(col("user_id"), "eq", "alice")),
    ({"user_id": 42}, Compare(col("user_id"), "eq", "42")),
    ({"category": "*"}, Compare(meta("category"), "exists")),
    ({"level": {"gte": 3, "lt": 9}}, And((Compare(meta("level"), "gte", 3), Compare(meta("level"), "lt", 9)))),
    ({"a": 1, "b": 2}, And((Compare(meta("a"), "eq", 1), Compare(meta("b"), "eq", 2)))),
    ({"OR": [{"a": 1}, {"b": 2}]}, Or((Compare(meta("a"), "eq", 1), Compare(meta("b"), "eq", 2)))),
    ({"$or": [{"a": 1}, {"b": 2}]}, Or((Compare(meta("a"), "eq", 1), Compare(meta("b"), "eq", 2)))),
    ({"NOT": [{"a": 1}, {"b": 2}]}, Not(And((Compare(meta("a"), "eq", 1), Compare(meta("b"), "eq", 2))))),
    ({"AND": [{"a": 1}, {"AND": [{"b": 2}]}]}, And((Compare(meta("a"), "eq", 1), Compare(meta("b"), "eq", 2)))),
    ({"tags": {"in": ["x", "y"]}}, Compare(meta("tags"), "in", ("x", "y"))),
    ({"created_at": {"gte": "2024-05-01"}},
     Compare(col("created_at"), "gte", "2024-05-01T00:00:00.000000+00:00")),
    ({"created_at": {"lt": datetime(2024, 5, 1, 12, tzinfo=timezone.utc)}},
     Compare(col("created_at"), "lt", "2024-05-01T12:00:00.000000+00:00")),
    ({"updated_at": {"gt": "2024-05-01T10:00:00-02:00"}},
     Compare(col("updated_at"), "gt", "2024-05-01T12:00:00.000000+00:00")),
    ({"lookup": "has_key", "key": "reviewed"}, Compare(meta("reviewed"), "exists")),
    ({"lookup": "has_keys", "key": ["a", "b"]}, And((Compare(meta("a"), "exists"), Compare(meta("b"), "exists")))),
    ({"lookup": "has_any_keys", "key": ["a", "b"]}, Or((Compare(meta("a"), "exists"), Compare(meta("b"), "exists")))),
    ({"lookup": "contains", "key": "tags", "value": ["ml"], "on": "metadata"},
     Compare(meta(), "json_contains", {"tags": ["ml"]})),  # metadata @> {key: value}
    ({"lookup": "contained_by", "key": "tags", "value": ["ml", "ai"]},
     Compare(meta(), "json_contained_by", {"tags": ["ml", "ai"]})),  # metadata <@ {key: value}
    ({"lookup": "contains", "key": "a.b", "value": 1}, Compare(meta(), "json_contains", {"a": {"b": 1}})),
    ({"lookup": "key_lookup", "key": "year", "value": 2024}, Compare(meta("year"), "key_text", 2024)),
    # mem0's forms: NOT of one object, and an object of metadata keys (each key a metadata path)
    ({"NOT": {"a": 1}}, Not(Compare(meta("a"), "eq", 1))),
    ({"metadata": {"source": "email", "prefs.food": {"ne": "x"}}},
     And((Compare(meta("source"), "eq", "email"), Compare(meta("prefs", "food"), "ne", "x")))),
    ({"metadata": {"user_id": "*"}}, Compare(meta("user_id"), "exists")),
    ({"metadata.metadata": 1}, Compare(meta("metadata"), "eq", 1)),
    # a metadata key that happens to be called "lookup" stays reachable through an operator
    ({"lookup": {"eq": "x"}}, Compare(meta("lookup"), "eq", "x")),
]


@pytest.mark.parametrize("filters, expected", PARSES, ids=[repr(f)[:50] for f, _ in PARSES])
def test_parses(filters, expected):
    assert parse(filters) == expected


REJECTS = [
    (["a"], "filters", "expected an object"),
    ({"level": {"gtee": 3}}, "filters.level", "unknown operator 'gtee'"),
    ({"prefs": {"food": "pizza"}}, "filters.prefs", "dotted path ('prefs.food')"),
    ({"level": {}}, "filters.level", "empty operator object"),
    ({"AND": {"a": 1}}, "filters.AND", "non-empty list"),
    ({"NOT": {}}, "filters.NOT", "non-empty list"),
    ({"metadata": "email"}, "filters.metadata", "metadata takes an object of metadata keys"),
    ({"metadata": {}}, "filters.metadata", "got an empty object"),
    ({"metadata": {"level": {"gtee": 1}}}, "filters.metadata.level", "unknown operator 'gtee'"),
    ({"OR": []}, "filters.OR", "non-empty list"),
    ({"OR": [{"a": 1}, "b"]}, "filters.OR[1]", "expected an object"),
    ({"or": [{"a": 1}]}, "filters.or", "upper case: 'OR'"),
    ({"level": {"gt": True}}, "filters.level.gt", "compares numbers or strings"),
    ({"level": {"gt": None}}, "filters.level.gt", "compares numbers or strings"),
    ({"level": {"gt": [1]}}, "filters.level.gt", "compares numbers or strings"),
    ({"tags": {"in": "x"}}, "filters.tags.in", "takes a list"),
    ({"tags": {"in": [["x"]]}}, "filters.tags.in", "scalar values"),
    ({"note": {"icontains": 3}}, "filters.note.icontains", "takes a string"),
    ({"note": {"contains": None}}, "filters.note.contains", "needs a value"),
    ({"x": float("nan")}, "filters.x", "not a finite number"),
    ({"x": {1, 2}}, "filters.x", "is not a JSON value"),
    ({"a..b": 1}, "filters.a..b", "empty key segment"),
    ({".a": 1}, "filters..a", "empty key segment"),
    ({'a"b': 1}, 'filters.a"b', "double quote"),
    ({"user_id.x": 1}, "filters.user_id.x", "no nested keys"),
    ({"user_id": ["a"]}, "filters.user_id", "user_id is text"),
    ({"user_id": {"gt": 5.5}}, "filters.user_id.gt", "user_id is text"),
    ({"created_at": {"gte": "yesterday"}}, "filters.created_at.gte", "ISO-8601"),
    ({"created_at": {"gte": 5}}, "filters.created_at.gte", "ISO-8601"),
    ({1: "a"}, "filters", "non-empty strings"),
    ({"lookup": "has_kyes", "key": ["a"]}, "filters", "unknown lookup 'has_kyes'"),
    ({"lookup": "has_key", "key": ["a"]}, "filters.key", "single string key"),
    ({"lookup": "has_key", "key": "a", "value": 1}, "filters.value", "takes no value"),
    ({"lookup": "has_keys", "key": "a"}, "filters.key", "non-empty list of string keys"),
    ({"lookup": "has_any_keys", "key": []}, "filters.key", "non-empty list of string keys"),
    ({"lookup": "key_lookup", "key": "a"}, "filters.value", "needs a value"),
    ({"lookup": "contains", "key": ["a"], "value": 1}, "filters.key", "single string key"),
    ({"lookup": "key_lookup", "key": "a", "value": 1, "on": "document"}, "filters.on", "on must be one of"),
    ({"lookup": "has_key", "key": "a", "user_id": "x"}, "filters", "takes only on, key, value and lookup"),
]


@pytest.mark.parametrize("filters, path, message", REJECTS, ids=[repr(f)[:50] for f, _, _ in REJECTS])
def test_rejects_with_a_message_naming_the_part(filters, path, message):
    with pytest.raises(FilterError) as info:
        parse(filters)
    assert info.value.path == path
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)  # mem0 callers catch ValueError


def test_document_targets_for_collections():
    node = parse({"on": "collection", "key": "year", "value": 2024, "lookup": "key_lookup"},
                 columns=(), targets=("document", "collection"))
    assert node == Compare(Field(path=("year",), target="collection"), "key_text", 2024)


def _on(column: str, value) -> Compare:
    return Compare(Field(column=column), "gt", value)


@pytest.mark.parametrize("node, columns", [
    (MATCH_ALL, set()),
    (_on("created_at", "2024-01-01"), set()),
    (scope.ACTIVE, {"valid_to"}),  # what every read of active memories compares
    (And((Compare(Field(column="user_id"), "eq", "u"), scope.ACTIVE)), {"valid_to"}),
    (Not(_on("created_at", NOW)), {"created_at"}),
    (Or((_on("valid_to", NOW), And((_on("created_at", NOW),)))), {"valid_to", "created_at"}),
    (scope.validity(False, "2024-05-01T00:00:00+00:00"), set()),  # as of a moment: no clock
])
def test_clock_columns_are_those_compared_with_now(node, columns):
    assert clock_columns(node) == columns
