"""The shared BM25 formula (store/bm25.py), against values worked out by hand.

Each expected score is written as the arithmetic done on paper: idf = ln((N - df + 0.5) / (df + 0.5))
(1e-6 when that is not positive), times tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avgdl)).
"""

from __future__ import annotations

import math

import pytest

from memlane.store import bm25

IDF_1_OF_10 = math.log(9.5 / 1.5)  # a term in 1 of 10 memories
IDF_2_OF_10 = math.log(8.5 / 2.5)

CASES = [
    # (name, hits (key, length, term, tf), N, avgdl, limit, expected [(key, score)])
    ("average length, tf 1: the score is the idf",
     [(1, 4, "tea", 1)], 10, 4.0, 10, [(1, IDF_1_OF_10)]),
    ("tf 2 saturates: 2 * 2.2 / (2 + 1.2)",
     [(1, 4, "tea", 2)], 10, 4.0, 10, [(1, IDF_1_OF_10 * 4.4 / 3.2)]),
    ("a short memory scores higher: length 2 of avgdl 4 -> 1 + 1.2 * 0.625",
     [(1, 2, "tea", 1)], 10, 4.0, 10, [(1, IDF_1_OF_10 * 2.2 / 1.75)]),
    ("a long memory scores lower: length 8 of avgdl 4 -> 1 + 1.2 * 1.75",
     [(1, 8, "tea", 1)], 10, 4.0, 10, [(1, IDF_1_OF_10 * 2.2 / 3.1)]),
    ("df counts the memories hit: 2 of 10, each at average length",
     [(1, 4, "tea", 1), (2, 4, "tea", 1)], 10, 4.0, 10, [(1, IDF_2_OF_10), (2, IDF_2_OF_10)]),
    ("terms add up; the rarer term weighs more",
     [(1, 4, "tea", 1), (1, 4, "green", 1), (2, 4, "green", 1)], 10, 4.0, 10,
     [(1, IDF_1_OF_10 + IDF_2_OF_10), (2, IDF_2_OF_10)]),
    ("a term in half the memories or more gets the idf floor",
     [(1, 4, "tea", 1), (2, 4, "tea", 1)], 4, 4.0, 10, [(1, 1e-6), (2, 1e-6)]),
    ("ties go to the lower key (insertion order), whatever order the hits came in",
     [(7, 4, "tea", 1), (3, 4, "tea", 1), (5, 4, "tea", 1)], 10, 4.0, 10,
     [(3, math.log(7.5 / 3.5)), (5, math.log(7.5 / 3.5)), (7, math.log(7.5 / 3.5))]),
    ("limit keeps the best",
     [(1, 8, "tea", 1), (2, 2, "tea", 1)], 10, 5.0, 1,
     [(2, IDF_2_OF_10 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / 5)))]),
    ("N below the memories hit is raised to them (1 of 1 -> the floor)",
     [(1, 4, "tea", 1)], 0, 4.0, 10, [(1, 1e-6)]),
    ("avgdl 0 (no statistics) counts as 1: length 1 is average",
     [(1, 1, "tea", 1)], 10, 0.0, 10, [(1, IDF_1_OF_10)]),
    ("no hits, no scores", [], 10, 4.0, 10, []),
]

WEIGHTED = [
    # (name, hits, weights, expected): N 10, avgdl 4, every memory of average length
    ("a weight scales its term's part",
     [(1, 4, "tea", 1)], {"tea": 0.25}, [(1, 0.25 * IDF_1_OF_10)]),
    ("weighted parts add up: 0.75 tea + 0.25 green",
     [(1, 4, "tea", 1), (1, 4, "green", 1), (2, 4, "green", 1)], {"tea": 0.75, "green": 0.25},
     [(1, 0.75 * IDF_1_OF_10 + 0.25 * IDF_2_OF_10), (2, 0.25 * IDF_2_OF_10)]),
    ("the weights can reorder: the rarer term weighed down below the common one",
     [(1, 4, "tea", 1), (2, 4, "green", 1), (3, 4, "green", 1)], {"tea": 0.1, "green": 0.9},
     [(2, 0.9 * IDF_2_OF_10), (3, 0.9 * IDF_2_OF_10), (1, 0.1 * IDF_1_OF_10)]),
    ("a term without a weight counts nothing, but df still counts its memories",
     [(1, 4, "tea", 1), (1, 4, "green", 1)], {"green": 1.0}, [(1, IDF_1_OF_10)]),
]


@pytest.mark.parametrize("name, hits, n, avgdl, limit, expected", CASES, ids=[c[0] for c in CASES])
def test_rank(name, hits, n, avgdl, limit, expected):
    ranked = bm25.rank(hits, n, avgdl, limit)
    assert [key for key, _ in ranked] == [key for key, _ in expected]
    for (_, score), (_, want) in zip(ranked, expected):
        assert score == pytest.approx(want, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name, hits, weights, expected", WEIGHTED, ids=[c[0] for c in WEIGHTED])
def test_rank_with_weighted_query_terms(name, hits, weights, expected):
    ranked = bm25.rank(hits, 10, 4.0, 10, weights)
    assert [key for key, _ in ranked] == [key for key, _ in expected]
    for (_, score), (_, want) in zip(ranked, expected):
        assert score == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_hits_may_be_a_one_shot_iterator():
    assert bm25.rank(iter([(1, 4, "tea", 1)]), 10, 4.0, 10) == [(1, pytest.approx(IDF_1_OF_10))]


IDF_0_OF_10 = math.log(10.5 / 0.5)  # a query term no memory holds

SHARE_CASES = [
    # (name, hits, N, avgdl, query terms, expected [(key, share)]): BM25 over the sum of the query terms' idf
    ("the one query term, once, at average length: the whole query",
     [(1, 4, "tea", 1)], 10, 4.0, ["tea"], [(1, 1.0)]),
    ("one of two terms matched: its idf over both",
     [(1, 4, "tea", 1)], 10, 4.0, ["tea", "green"], [(1, IDF_1_OF_10 / (IDF_1_OF_10 + IDF_0_OF_10))]),
    ("a common word of a long question is a small share",
     [(1, 4, "como", 1), (2, 4, "como", 1), (3, 4, "como", 1)], 10, 4.0, ["como", "llama", "mascota"],
     [(k, math.log(7.5 / 3.5) / (math.log(7.5 / 3.5) + 2 * IDF_0_OF_10)) for k in (1, 2, 3)]),
    ("a repeated query term counts once in the ideal",
     [(1, 4, "tea", 1)], 10, 4.0, ["tea", "tea"], [(1, 1.0)]),
    ("a short memory repeating the term scores above the ideal",
     [(1, 2, "tea", 2)], 10, 4.0, ["tea"], [(1, 4.4 / (2 + 1.2 * 0.625))]),
]


@pytest.mark.parametrize("name,hits,n,avgdl,terms,expected", SHARE_CASES, ids=[c[0] for c in SHARE_CASES])
def test_rank_as_a_share_of_the_query(name, hits, n, avgdl, terms, expected):
    got = bm25.rank(hits, n, avgdl, 10, terms=terms)
    assert [k for k, _ in got] == [k for k, _ in expected]
    for (_, score), (_, want) in zip(got, expected):
        assert score == pytest.approx(want, rel=1e-12)
