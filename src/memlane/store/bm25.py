"""BM25 keyword scores: the one formula both stores rank keyword hits with.

A store gathers, for the memories its keyword search matched, one ``(key, length, term, tf)``
row per (memory, query term) the memory holds, plus the statistics of the rows the search's
filter admits (``n`` memories, ``avgdl`` their mean length); this module turns them into
scores. The rule, the same on every backend (issue 6: a behaviour that differs between
backends is a bug):

- statistics are scope-local: N, avgdl and df(term) count only the memories the search's
  filter admits, so one user's (or tenant's) memories never move another's scores;
- a memory's length is the number of its analysed text terms (``keywords.analyze``), not
  counting the scope tokens indexed with them; tf is a term's occurrences in that list;
- k1 = 1.2, b = 0.75 and an idf floor of 1e-6 for terms in more than half the memories,
  as SQLite FTS5's ``bm25()`` has them;
- ties go to the lower key (the store's insertion order: SQLite rowid, PostgreSQL seq).

Memory searches read a score as a **share** of the query (``rank(terms=...)``): the BM25 divided
by what a memory of average length holding each query term once would score, the sum of the
terms' idf (a term no memory holds counts with the idf of a term held by none). A memory matching
only a common word of a long question ("como", "一家") gets a small share; one holding the
question's rare words, a share near 1 (or above, when it repeats them in a short text). Fusion can
then weigh what a keyword match is worth, instead of stretching the pool's best match to 1.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping

K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6  # FTS5's: a term in more than half the rows still counts, a little


def idf(n: int, df: int) -> float:
    """Inverse document frequency of a term held by ``df`` of ``n`` memories."""
    value = math.log((n - df + 0.5) / (df + 0.5))
    return value if value > 0 else IDF_FLOOR


def sql_idf(n: str, df: str) -> str:
    """``idf`` as a SQL expression over the float8 SQL expressions ``n`` and ``df`` (a store computing
    its scores where the data is: ``store/postgres.py``), from the same constants."""
    value = f"ln(({n} - {df} + 0.5) / ({df} + 0.5))"
    return f"(CASE WHEN {value} > 0 THEN {value} ELSE {IDF_FLOOR!r} END)"


def sql_term(idf: str, tf: str, length: str, avgdl: str) -> str:
    """One (memory, term) part of ``rank``'s score as a SQL expression: the term's ``idf``, its count ``tf``
    in a memory of ``length`` terms, ``avgdl`` the scope's mean length (float8 SQL expressions)."""
    return (f"({idf} * {K1 + 1!r} * {tf} / ({tf} + {K1!r} * ({1 - B!r} + {B!r} * {length} / {avgdl})))")


def rank(hits: Iterable[tuple[Hashable, int, str, int]], n: int, avgdl: float, limit: int,
         weights: Mapping[str, float] | None = None, terms: Iterable[str] | None = None) -> list[tuple[Hashable, float]]:
    """The best ``limit`` (key, score) pairs, score descending, then key ascending.

    ``hits`` holds one row per (memory, matched term): (key, length, term, tf). ``n`` and
    ``avgdl`` describe the memories the search admits; ``n`` is raised to the number of
    memories hit, should a caller's count lag behind them. ``weights``: a weighted query (each
    term's BM25 part multiplied by its weight, as a feedback query has them:
    ``retrieval/feedback.py``); without them every term counts once. ``terms``: the query's terms;
    given, each score is the share of the query's ideal score (module docstring)."""
    hits = hits if isinstance(hits, list) else list(hits)
    lengths = {key: length for key, length, _, _ in hits}
    df = Counter([term for _, _, term, _ in hits])
    n = max(n, len(lengths))
    avgdl = avgdl or 1.0
    # per term and per memory once, not per hit: a common term can hit thousands of memories
    factors = {term: idf(n, count) * (K1 + 1) * (1.0 if weights is None else weights.get(term, 0.0))
               for term, count in df.items()}
    norms = {key: K1 * ((1 - B) + B * length / avgdl) for key, length in lengths.items()}
    scores = dict.fromkeys(lengths, 0.0)
    for key, _, term, tf in hits:
        scores[key] += factors[term] * tf / (tf + norms[key])
    order = sorted(scores)  # key ascending, then (a stable sort) score descending: the ties' rule, keyed in C
    order.sort(key=scores.__getitem__, reverse=True)
    best = [(key, scores[key]) for key in order[:limit]]
    if terms is None:
        return best
    whole = ideal(terms, df, n, weights)
    return [(key, score / whole) for key, score in best] if whole > 0 else best


def ideal(terms: Iterable[str], df: Mapping[str, int], n: int, weights: Mapping[str, float] | None = None) -> float:
    """The score of a memory of average length holding each of ``terms`` once: the sum of their idf
    (times their weights), ``df`` the memories holding each (0 for those not given)."""
    return sum(idf(n, df.get(term, 0)) * (1.0 if weights is None else weights.get(term, 0.0)) for term in set(terms))
