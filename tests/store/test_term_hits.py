"""SQLite's keyword hits (store/sqlite.py ``term_hits``): the (rowid, length, term, tf) rows BM25
ranks, counted in a row's analysed terms only (its scope tokens follow them), the same whether a
query has few terms (a pass per term) or many (one pass per row, as feedback queries have)."""

from __future__ import annotations

import pytest

from memlane.store.sqlite import MANY_TERMS, term_hits

ROWS = [
    # (rowid, nterms, the FTS5 text: analysed terms, then scope tokens)
    (1, 5, "wing lift wing drag flow sxuser1 saagent"),
    (2, 3, "lift lift flow sxuser1"),
    (3, 2, "heat flux wing"),  # "wing" here is past nterms: a scope token's place, not counted
]

CASES = [
    ("one term", ["wing"], [(1, 5, "wing", 2)]),
    ("terms in query order, tf counted per row", ["lift", "wing"],
     [(1, 5, "lift", 1), (1, 5, "wing", 2), (2, 3, "lift", 2)]),
    ("a term no row holds yields nothing", ["nozzle"], []),
    ("scope tokens are not terms", ["sxuser1"], []),
]
MANY = ["nozzle", "wing", "lift", "drag", "flow", "heat", "flux", "sxuser1"]
CASES.append(("more than MANY_TERMS terms: one pass per row, the same counts", MANY,
              [(1, 5, "wing", 2), (1, 5, "lift", 1), (1, 5, "drag", 1), (1, 5, "flow", 1),
               (2, 3, "lift", 2), (2, 3, "flow", 1), (3, 2, "heat", 1), (3, 2, "flux", 1)]))


@pytest.mark.parametrize("name, terms, expected", CASES, ids=[c[0] for c in CASES])
def test_term_hits(name, terms, expected):
    assert list(term_hits(ROWS, terms)) == expected


def test_both_ways_of_counting_agree():
    assert len(MANY) > MANY_TERMS
    by_term = [hit for term in MANY for hit in term_hits(ROWS, [term])]  # a pass per term, term by term
    assert sorted(term_hits(ROWS, MANY)) == sorted(by_term)
