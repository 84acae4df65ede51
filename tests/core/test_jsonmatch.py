"""The JSON operators' semantics (shared by every backend), as a table."""

import json

import pytest

from memlane.core.jsonmatch import contains, icontains, json_contains, json_equal, json_text, key_text, sql_function

EQUAL = [
    (1, 1.0, True), (True, 1, False), (False, 0, False), (None, None, True), ("a", "a", True),
    ([1, 2], [1, 2], True), ([1, 2], [2, 1], False), ({"a": 1}, {"a": 1.0}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False), ("1", 1, False), ([], {}, False),
]

CONTAINS = [  # jsonb @>
    ({"a": 1, "b": 2}, {"a": 1}, True), ({"a": 1}, {"a": 1, "b": 2}, False),
    ([1, 2, 3], [3, 1], True), ([1, 2, 3], 2, True), ([1, 2], [1, 4], False),
    ([{"a": 1, "b": 2}], [{"a": 1}], True), ([{"a": 1, "b": 2}], {"a": 1}, False),
    ([[1, 2]], [[1]], True), ("John Doe", "John", False), ("John", "John", True),
    ({"t": ["ml", "ai"]}, {"t": ["ai"]}, True), ([1], [], True), (1, [1], False),
    # PostgreSQL's rule: an array contains a bare scalar only at the top level of the comparison
    ({"t": ["ml"]}, {"t": "ml"}, False), ([1, 2, [1, 3]], [1, 3], False), ([1, 2, [1, 3]], [[1, 3]], True),
    ({"foo": {"bar": "baz"}}, {"bar": "baz"}, False), ({"foo": {"bar": "baz"}}, {"foo": {}}, True),
    ("bar", ["bar"], False), ({}, {}, True), ({"a": 1}, {}, True),
]

TEXT = [  # PostgreSQL's ->>: (value, its text)
    ("John", "John"), (2024, "2024"), ("2024", "2024"), (1.5, "1.5"), (1.0, "1.0"), (1e-07, "0.0000001"),
    (True, "true"), (False, "false"), (None, None), (["ml", "ai"], '["ml", "ai"]'),
    ({"b": 1, "aa": [True, None]}, '{"b": 1, "aa": [true, null]}'),  # jsonb orders keys shortest first
    ({"名": "张三"}, '{"名": "张三"}'), ("line\nbreak", "line\nbreak"),
]


@pytest.mark.parametrize("a, b, expected", EQUAL)
def test_json_equal(a, b, expected):
    assert json_equal(a, b) is expected and json_equal(b, a) is expected


@pytest.mark.parametrize("a, b, expected", CONTAINS)
def test_json_contains(a, b, expected):
    assert json_contains(a, b) is expected


@pytest.mark.parametrize("a, b, expected", [
    ("John Doe", "John", True), ("John Doe", "john", False), (["x", "y"], "y", True), ({"a": 1}, {"a": 1}, True),
    (5, 5, True), (None, "x", False),
])
def test_contains_is_substring_for_strings(a, b, expected):
    assert contains(a, b) is expected


@pytest.mark.parametrize("a, b, expected", [
    ("Straße", "STRASSE", True), ("ÜBER", "über", True), (["Urgent"], "urgent", True), (["Urgently"], "urgent", False),
    (3, "3", False), ("x", 3, False),
])
def test_icontains_folds_case(a, b, expected):
    assert icontains(a, b) is expected


def test_sql_function_treats_missing_as_no_match():
    assert sql_function(None, "contains", '"x"') == 0
    assert sql_function('["x"]', "contains", '"x"') == 1
    assert sql_function('["x"]', "json_contained_by", '["x", "y"]') == 1


@pytest.mark.parametrize("value, text", TEXT)
def test_json_text_is_what_postgres_arrow_arrow_gives(value, text):
    assert json_text(value) == text


@pytest.mark.parametrize("a, b, expected", [
    (2024, "2024", True), ("2024", 2024, True), (2024, 2024, True), (True, "true", True), (1, 1.0, False),
    (None, "null", False), (["ml"], ["ml"], True), ("x", "y", False),
])
def test_key_text_compares_as_text(a, b, expected):
    assert key_text(a, b) is expected


# The SQLite side of the filter language calls these functions; PostgreSQL compiles to its own jsonb
# operators. Ask a real PostgreSQL what @>, <@ and ->> say on the same values: they must agree.
AGAINST_POSTGRES = [c[:2] for c in CONTAINS] + [
    ({"tags": ["ml"], "year": 2023}, {"tags": ["ml", "ai"]}), ({"tags": ["ml", "ai"], "year": 2024}, {"tags": "ml"}),
    ({"year": 2024}, {"year": "2024"}), ({"a": {"b": [1, {"c": 2}]}}, {"a": {"b": [{"c": 2}]}}), ({}, {"a": 1}),
    ({"x": 1.0}, {"x": 1}), ({"x": True}, {"x": 1}), ({"x": None}, {"x": None}), ([], [[]]),
]


def test_containment_agrees_with_postgres_jsonb(pg):
    import psycopg
    from psycopg.types.json import Jsonb

    with psycopg.connect(pg.url) as con:
        for a, b in AGAINST_POSTGRES:
            contains_pg, contained_pg = con.execute("SELECT %s::jsonb @> %s::jsonb, %s::jsonb <@ %s::jsonb",
                                                    (Jsonb(a), Jsonb(b), Jsonb(a), Jsonb(b))).fetchone()
            assert json_contains(a, b) is contains_pg, (a, b)
            assert json_contains(b, a) is contained_pg, (a, b)
            assert sql_function(json.dumps(a), "json_contains", json.dumps(b)) == int(contains_pg)


def test_arrow_text_agrees_with_postgres(pg):
    import psycopg
    from psycopg.types.json import Jsonb

    with psycopg.connect(pg.url) as con:
        for value, _ in TEXT:
            pg_text = con.execute("SELECT %s::jsonb ->> 'k'", (Jsonb({"k": value}),)).fetchone()[0]
            assert json_text(value) == pg_text, value
