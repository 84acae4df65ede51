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
"""

from __future__ import annotations

import heapq
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


def rank(hits: Iterable[tuple[Hashable, int, str, int]], n: int, avgdl: float,
         limit: int, weights: Mapping[str, float] | None = None) -> list[tuple[Hashable, float]]:
    """The best ``limit`` (key, score) pairs, score descending, then key ascending.

    ``hits`` holds one row per (memory, matched term): (key, length, term, tf). ``n`` and
    ``avgdl`` describe the memories the search admits; ``n`` is raised to the number of
    memories hit, should a caller's count lag behind them. ``weights``: a weighted query (each
    term's BM25 part multiplied by its weight, as a feedback query has them:
    ``retrieval/feedback.py``); without them every term counts once."""
    hits = hits if isinstance(hits, list) else list(hits)
    lengths = {key: length for key, length, _, _ in hits}
    df = Counter([term for _, _, term, _ in hits])
    n = max(n, len(lengths))
    avgdl = avgdl or 1.0
    # per term and per memory once, not per hit: a common term can hit thousands of memories
    factors = {term: idf(n, count) * (K1 + 1) * (1.0 if weights is None else weights.get(term, 0.0))
               for term, count in df.items()}
    norms = {key: K1 * (1 - B + B * length / avgdl) for key, length in lengths.items()}
    scores = dict.fromkeys(lengths, 0.0)
    for key, _, term, tf in hits:
        scores[key] += factors[term] * tf / (tf + norms[key])
    return heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1], item[0]))
