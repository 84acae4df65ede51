"""Hybrid fusion of vector and keyword candidates.

``weighted``: min-max normalised cosine and the keyword score, mixed by ``keyword_weight``;
measured better than RRF on the LoCoMo dev set (benchmarks/RESULTS.md). A memory's keyword score
is already a share of the query (``store/bm25.py``), taken as it is up to 1; document pages bring
raw BM25, divided by the pool's best. ``rrf``: reciprocal rank fusion, rank-based and
parameter-light.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from memlane.core.models import MemoryRecord
from memlane.retrieval.candidates import Candidate, Pool, minmax


def fuse(pool: Pool, keyword: Sequence[tuple[MemoryRecord, float, float]], *, method: str = "weighted",
         keyword_weight: float = 0.5, rrf_k: int = 60) -> Pool:
    """The vector candidates (``pool``, in their order) with the keyword matches (record, keyword share, cosine;
    best first): a match already in the pool gets its share, another joins it; then every candidate scored by
    ``method`` and the pool sorted by that score (equal scores keep their order)."""
    vector_ids = list(pool.index()) if method == "rrf" else []
    pool.add([(record, cosine) for record, _, cosine in keyword])
    index = pool.index()
    for record, share, _ in keyword:
        pool.keyword[index[record.id]] = share
    if not len(pool):
        return pool
    if method == "rrf":
        fused = rrf(vector_ids, [record.id for record, _, _ in keyword], k=rrf_k)
        pool.score = np.array([fused[record.id] for record in pool.records], dtype=np.float64)
    else:
        pool.score = weighted(pool.cosine, np.fmax(pool.keyword, 0.0), keyword_weight, shares=True)  # NaN: 0
    pool.sort()
    return pool


def rrf(*rankings: Sequence[Hashable], k: int = 60) -> dict[Hashable, float]:
    """Reciprocal rank fusion of rankings (keys, best first): each key's sum, over the rankings that
    hold it, of 1 / (k + its rank from 1)."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def weighted(dense: Sequence[float], keyword: Sequence[float], keyword_weight: float, *,
             shares: bool = False) -> np.ndarray:
    """Weighted fusion of one pool's scores (memories: cosine and their keyword shares; document
    pages: MaxSim and BM25): ``(1 - w) * minmax(dense) + w * k``, where k is a share up to 1
    (``shares``) or else the BM25 over the pool's best; 0 for no keyword match."""
    bm = np.asarray(keyword, dtype=np.float64)
    if shares:
        bm = np.clip(bm, 0.0, 1.0)
    elif len(bm) and bm.max() > 0:
        bm = bm / bm.max()
    return (1 - keyword_weight) * minmax(np.asarray(dense, dtype=np.float64)) + keyword_weight * bm


def blend(candidates: list[Candidate], stage_scores: np.ndarray, weight: float) -> list[Candidate]:
    """Mix a stage's scores (e.g. a reranker's) into the current order, both min-max normalised."""
    before = minmax(np.array([c.score for c in candidates]))
    after = minmax(stage_scores)
    for c, b, a, raw in zip(candidates, before, after, stage_scores):
        c.rerank = float(raw)
        c.score = float((1 - weight) * b + weight * a)
    return sorted(candidates, key=lambda c: -c.score)
