"""A filter's documented size limits (docs/filters.md, Limits): one just inside each runs on both
backends through every read and write that takes a filter; one just past it is a ``FilterError``
naming where, raised before any SQL is built, whatever its size."""

import pytest

from memlane import FilterError, Memory
from memlane.core import filters as flt

LEAF = {"level": {"in": [1, 2]}}


def nested(levels: int, kinds=("NOT", "OR", "AND")) -> dict:
    """``levels`` of AND / OR / NOT around ``LEAF``, cycling through ``kinds``."""
    node: dict = LEAF
    for i in range(levels):
        kind = kinds[i % len(kinds)]
        node = {kind: [node]} if kind == "NOT" else {kind: [{"tags": {"contains": "x"}}, node]}
    return node


def _wrapped(levels: int) -> list:
    value: list = [1]
    for _ in range(levels):
        value = [value]
    return value


DEEPEST = 14  # 2 JSON levels each, then the leaf's operator object and its list: 32 levels in all

INSIDE = [
    ("deepest NOT", nested(DEEPEST, ("NOT",))),
    ("deepest OR", nested(DEEPEST, ("OR",))),
    ("deepest mix", nested(DEEPEST)),
    ("500 conditions", {"OR": [{"level": i} for i in range(flt.MAX_CONDITIONS)]}),
    ("10,000 values", {"AND": [{"level": {"in": list(range(5_000))}}, {"rank": {"nin": list(range(5_000))}}]}),
]

PAST = [
    ("too deep", nested(DEEPEST + 1), "nests deeper than 32 levels"),
    ("deep value", {"level": {"eq": _wrapped(40)}}, "nests deeper"),
    ("450 deep", nested(450, ("AND",)), "nests deeper"),
    ("NOT 200 deep", nested(200, ("NOT",)), "nests deeper"),
    ("1,000 branches", {"OR": [{"level": i} for i in range(1_000)]}, "at most 500 conditions"),
    ("too many values", {"level": {"in": list(range(flt.MAX_VALUES + 1))}}, "10,000 values"),
    ("many key lookups", {"AND": [{"lookup": "has_keys", "key": [f"k{i}" for i in range(300)]},
                                  {"lookup": "has_any_keys", "key": [f"j{i}" for i in range(300)]}]},
     "at most 500 conditions"),
]


@pytest.fixture
def filled(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        memory.add("I like green tea", user_id="u", metadata={"level": 1, "tags": ["x"]}, infer=False)
        yield memory


@pytest.mark.parametrize("filters", [c[1] for c in INSIDE], ids=[c[0] for c in INSIDE])
def test_a_filter_inside_the_limits_runs_everywhere(filled, filters):
    found = filled.get_all(user_id="u", filters=filters)["results"]
    searched = filled.search("tea", user_id="u", filters=filters, keyword_search=True)
    assert searched.get("status") != "error" and not searched["metadata"].get("fallback_used", False), searched
    assert [r["id"] for r in searched["results"]] == [r["id"] for r in found]
    assert filled.delete_all(user_id="nobody", filters=filters)["message"]


@pytest.mark.parametrize("filters, message", [c[1:] for c in PAST], ids=[c[0] for c in PAST])
def test_a_filter_past_a_limit_is_refused_naming_where(filled, filters, message):
    for call in (lambda: filled.get_all(user_id="u", filters=filters),
                 lambda: filled.search("tea", user_id="u", filters=filters),
                 lambda: filled.delete_all(user_id="u", filters=filters)):
        with pytest.raises(FilterError) as info:
            call()
        assert message in str(info.value) and info.value.field == "filters" and info.value.path.startswith("filters")
    assert len(filled.get_all(user_id="u")["results"]) == 1


def test_depth_is_checked_before_the_parser_recurses():
    deep: dict = LEAF
    for _ in range(100_000):  # Python's recursion limit is far below this
        deep = {"NOT": [deep]}
    with pytest.raises(FilterError, match="nests deeper"):
        flt.parse(deep)
