"""RM3 query expansion (retrieval/feedback.py), against weights worked out by hand:
P(t | query) is a term's share of the query's terms, P(t | feedback) the mean over the feedback
lists of its share of each list, renormalised over the strongest ``terms``; the two mixed by
``query_weight``."""

from __future__ import annotations

import pytest

from memlane.retrieval.feedback import expand

CASES = [
    # (name, query terms, feedback term lists, terms, query_weight, expected weights)
    ("no query term: nothing to expand", [], [["wing", "lift"]], 10, 0.5, {}),
    ("no feedback: the query's own terms by frequency", ["wing", "wing", "lift"], [], 10, 0.5,
     {"wing": 2 / 3, "lift": 1 / 3}),
    ("empty feedback lists count as none", ["wing"], [[], []], 10, 0.5, {"wing": 1.0}),
    ("one feedback list: its shares, mixed half and half",
     ["wing"], [["lift", "lift", "drag", "wing"]], 10, 0.5,
     {"wing": 0.5 + 0.5 * 0.25, "lift": 0.5 * 0.5, "drag": 0.5 * 0.25}),
    ("the mean over lists: a term in both outweighs one in a single list",
     ["wing"], [["lift", "drag"], ["lift", "flow"]], 10, 0.6,
     {"wing": 0.6, "lift": 0.4 * 0.5, "drag": 0.4 * 0.25, "flow": 0.4 * 0.25}),
    ("only the strongest terms are kept, renormalised",
     ["wing"], [["lift", "lift", "lift", "drag"]], 1, 0.5, {"wing": 0.5, "lift": 0.5}),
    ("query_weight 1: the query alone", ["wing"], [["lift"]], 10, 1.0, {"wing": 1.0}),
    ("query_weight 0: the feedback alone", ["wing"], [["lift"]], 10, 0.0, {"lift": 1.0}),
]


@pytest.mark.parametrize("name, query, feedback, terms, query_weight, expected", CASES, ids=[c[0] for c in CASES])
def test_expand(name, query, feedback, terms, query_weight, expected):
    weights = expand(query, feedback, terms=terms, query_weight=query_weight)
    assert weights == pytest.approx(expected)
    if weights:
        assert sum(weights.values()) == pytest.approx(1.0)

