"""The JSON operators' semantics (shared by every backend), as a table."""

import pytest

from memlane.jsonmatch import contains, icontains, json_contains, json_equal, sql_function

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
