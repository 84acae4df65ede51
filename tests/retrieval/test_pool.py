"""The pool the search stages rank (``retrieval/candidates.py``): records with cosine, keyword share and score
arrays kept in step through additions and sorts, and ``Candidate``s made of the first rows only."""

import math

import pytest

from memlane.core.models import MemoryRecord
from memlane.retrieval.candidates import Pool


def _record(name: str) -> MemoryRecord:
    return MemoryRecord(id=name, text=name, hash="", created_at="", updated_at="")


def _pool(*hits: tuple[str, float]) -> Pool:
    return Pool.of([(_record(name), cosine) for name, cosine in hits])


def _rows(pool: Pool) -> list[tuple]:
    return [(r.id, c, None if math.isnan(k) else k, s)
            for r, c, k, s in zip(pool.records, pool.cosine.tolist(), pool.keyword.tolist(), pool.score.tolist())]


@pytest.mark.parametrize("scores, order", [
    ([0.9, 0.5, 0.1], ["a", "b", "c"]),  # sorted already
    ([0.1, 0.5, 0.9], ["c", "b", "a"]),
    ([0.5, 0.9, 0.5], ["b", "a", "c"]),  # equal scores keep their order
    ([0.5, 0.5, 0.5], ["a", "b", "c"]),
    ([-0.2, 0.0, -0.1], ["b", "c", "a"]),
])
def test_a_sort_orders_by_score_and_keeps_ties_in_order(scores, order):
    pool = _pool(("a", 0.3), ("b", 0.2), ("c", 0.1))
    pool.score = pool.score * 0 + scores
    pool.sort()
    assert [r.id for r in pool.records] == order
    assert pool.score.tolist() == sorted(scores, reverse=True)
    assert pool.cosine.tolist() == [{"a": 0.3, "b": 0.2, "c": 0.1}[name] for name in order]  # rows move whole
    assert list(pool.index()) == order


def test_additions_join_once_scored_by_their_cosine():
    pool = _pool(("a", 0.9), ("b", 0.5))
    assert pool.add([(_record("b"), 0.5), (_record("c"), 0.7)]) == 1
    assert _rows(pool) == [("a", 0.9, None, 0.9), ("b", 0.5, None, 0.5), ("c", 0.7, None, 0.7)]
    assert pool.add([(_record("d"), 0.2), (_record("d"), 0.1)]) == 1  # a hit twice joins once, with its first cosine
    pool.keyword[pool.index()["d"]] = 0.75
    assert _rows(pool)[-1] == ("d", 0.2, 0.75, 0.2) and pool.index()["d"] == 3


def test_best_makes_candidates_of_the_first_rows_only():
    pool = _pool(("a", 0.9), ("b", 0.5), ("c", 0.1))
    pool.add([(_record("d"), 0.05)])
    pool.keyword[3] = 0.5
    best = pool.best(2)
    assert [(c.record.id, c.cosine, c.keyword, c.score) for c in best] == [("a", 0.9, None, 0.9), ("b", 0.5, None, 0.5)]
    assert [c.keyword for c in pool.best()] == [None, None, None, 0.5] and pool.best(10)[-1].record.id == "d"
    assert Pool.of([]).best() == [] and len(Pool.of([])) == 0
