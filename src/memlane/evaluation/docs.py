"""``memlane eval docs``: document retrieval quality on Cranfield.

Every abstract is one page. Each query with at least one judged-relevant document in the loaded
set is run three ways over the same pages:

- ``single_vector``: one normalised sentence vector per text from the local model, cosine;
- ``maxsim_exact``: the multi-vector encoder's token vectors, exact MaxSim over every page;
- ``maxsim_fast``: the same vectors through ``PageIndex``'s fast path (MUVERA candidates, exact
  MaxSim over them);
- ``hybrid_exact`` / ``hybrid_fast``: ``Documents.search(keyword_search=True)`` over the same pages
  in a temporary SQLite store (the product's path: BM25 over the page text, fused with MaxSim,
  exact or fast path), each abstract one page, the vectors above reused (not encoded again); an
  empty abstract cannot be stored, so it is not among them (``hybrid_pages``).

nDCG@10 uses gain 5 - rel for rel 1-4 (1 = complete answer) and 0 otherwise; recall@100 counts
rel 1-4 as relevant (Cranfield's relevance codes). Pages are stored in float16 as in production.
"""

from __future__ import annotations

import json
import math
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlane.documents.late_interaction import PageIndex

NDCG_K = 10
RECALL_K = 100
METHODS = ("single_vector", "maxsim_exact", "maxsim_fast", "hybrid_exact", "hybrid_fast")

Progress = Callable[[str, int, int], None]


def load_jsonl(path: str | Path) -> list[dict[str, Any]]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def gains(query: dict[str, Any], doc_ids: set[int] | None = None) -> dict[int, int]:
    """Graded gains of the judged documents (5 - rel for rel 1..4), limited to ``doc_ids``."""
    return {int(r["doc_id"]): 5 - int(r["rel"]) for r in query.get("relevant", [])
            if 1 <= int(r["rel"]) <= 4 and (doc_ids is None or int(r["doc_id"]) in doc_ids)}


def ndcg(ranked: Sequence[int], gain: dict[int, int], k: int = NDCG_K) -> float:
    dcg = sum(gain.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:k]))
    ideal = sorted(gain.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall(ranked: Sequence[int], relevant: set[int], k: int = RECALL_K) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


def _percentiles(ms: list[float]) -> dict[str, float]:
    if not ms:
        return {}
    ordered = sorted(ms)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2)}


def _batched(encode: Callable[[list[str]], list[Any]], texts: list[str], label: str,
             progress: Progress | None, batch: int = 64) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(texts), batch):
        out.extend(encode(texts[start: start + batch]))
        if progress:
            progress(label, len(out), len(texts))
    return out


class _Known:
    """An encoder that answers the texts it was given the vectors of (computed by the real encoder
    once) without encoding them again, and encodes any other text."""

    accepts_images = False

    def __init__(self, encoder: Any, vectors: dict[str, np.ndarray]):
        self.encoder, self.name, self.dims, self.vectors = encoder, encoder.name, encoder.dims, vectors

    def _encode(self, texts: Sequence[str], side: str) -> list[np.ndarray]:
        unknown = [t for t in texts if t not in self.vectors]
        if unknown:
            self.vectors.update(zip(unknown, getattr(self.encoder, side)(unknown)))
        return [self.vectors[t] for t in texts]

    def encode_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._encode(texts, "encode_queries")

    def encode_pages(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._encode(texts, "encode_pages")

    def encode_images(self, images: Sequence[bytes]) -> list[np.ndarray]:
        return self.encoder.encode_images(images)


class HybridHarness:
    """The documents as a collection of a temporary SQLite store (one page each, named by doc_id),
    searched by ``Documents.search(keyword_search=True)``. Use as a context manager."""

    def __init__(self, docs: list[dict[str, Any]], encoder: Any, embedder: Any, page_vectors: list[np.ndarray],
                 query_vectors: dict[str, np.ndarray], index_options: dict[str, Any] | None = None):
        from memlane.documents import Documents
        from memlane.memory import Memory

        self._dir = tempfile.TemporaryDirectory()
        known = {d["text"]: v for d, v in zip(docs, page_vectors)}
        known.update(query_vectors)
        self.memory = Memory({"vector_store": {"provider": "sqlite", "config": {"path": self._dir.name}},
                              "documents": {"page_chars": 100_000, "max_top_k": RECALL_K}}, embedder=embedder)
        self.documents = Documents(memory=self.memory, encoder=_Known(encoder, known))
        if index_options:  # the fast path's parameters of the MaxSim runs, for the encodings stored and the index
            index = self.documents.index
            index._new_index = lambda: PageIndex(encoder.dims, **index_options)  # type: ignore[method-assign]
            index._encoding = index._new_index()
        self.documents.create_collection("cranfield")
        self.pages = 0
        for d in docs:
            if d["text"].strip():  # a document has text to store (Cranfield has two empty abstracts)
                self.documents.upsert_document(str(d["doc_id"]), "cranfield", text=d["text"])
                self.pages += 1

    def search(self, text: str, k: int, *, exact: bool, keyword_search: bool = True) -> list[int]:
        found = self.documents.search(text, collection_name="cranfield", top_k=k, exact=exact,
                                      keyword_search=keyword_search)
        return [int(r["document_name"]) for r in found["results"]]

    def __enter__(self) -> "HybridHarness":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.documents.close()
        self.memory.close()
        self._dir.cleanup()


def run(docs: list[dict[str, Any]], queries: list[dict[str, Any]], *, encoder: Any, embedder: Any,
        index_options: dict[str, Any] | None = None, progress: Progress | None = None,
        keyword_weight: float | None = None) -> dict[str, Any]:
    """Score the methods; ``encoder`` is a ``MultiVectorEncoder``, ``embedder`` an ``Embedder``
    (the single-vector baseline: use the encoder's own model for a fair comparison).
    ``keyword_weight``: fuse the hybrid's rankings by weight, with this share of BM25 (default: as
    ``documents.fusion`` says)."""
    doc_ids = [int(d["doc_id"]) for d in docs]
    id_set = set(doc_ids)
    judged = [(q, gains(q, id_set)) for q in queries]
    judged = [(q, g) for q, g in judged if g]
    texts = [d["text"] for d in docs]
    query_texts = [q["text"] for q, _ in judged]

    started = time.perf_counter()
    page_vectors = _batched(encoder.encode_pages, texts, "token vectors", progress)
    query_vectors = encoder.encode_queries(query_texts)
    token_seconds = time.perf_counter() - started
    started = time.perf_counter()
    sentence_pages = np.asarray(_batched(lambda t: list(embedder.embed(t, "document")), texts,
                                         "sentence vectors", progress), dtype=np.float32)
    sentence_queries = np.asarray(embedder.embed(query_texts, "query"), dtype=np.float32)
    sentence_seconds = time.perf_counter() - started

    index = PageIndex(encoder.dims, **(index_options or {}))
    keys = [str(i) for i in doc_ids]
    index.add(keys, page_vectors)

    harness = HybridHarness(docs, encoder, embedder, page_vectors, dict(zip(query_texts, query_vectors)),
                            index_options)
    if keyword_weight is not None:  # weighted fusion with this share of BM25
        harness.documents.settings.fusion, harness.documents.settings.keyword_weight = "weighted", keyword_weight
    with harness:
        scores = _score(judged, harness, index, order=np.array(doc_ids), sentence_pages=sentence_pages,
                        sentence_queries=sentence_queries, query_vectors=query_vectors, progress=progress)
    return {
        "docs": len(docs),
        "fusion": _fusion(harness.documents.settings),
        "hybrid_pages": harness.pages,
        "queries": len(judged),
        "encoder": encoder.name,
        "embedder": embedder.name,
        "token_vectors": index.n_vectors,
        "fast_path_candidates": {f"k={NDCG_K}": min(len(index), index.candidates(NDCG_K)),
                                 f"k={RECALL_K}": min(len(index), index.candidates(RECALL_K))},
        "encode_seconds": {"tokens": round(token_seconds, 1), "sentences": round(sentence_seconds, 1)},
        "methods": {m: _summary(scores[m]) for m in METHODS},
    }


def _score(judged: list[tuple[dict[str, Any], dict[int, int]]], harness: HybridHarness, index: PageIndex, *,
           order: np.ndarray, sentence_pages: np.ndarray, sentence_queries: np.ndarray,
           query_vectors: list[np.ndarray], progress: Progress | None) -> dict[str, dict[str, list[float]]]:
    """Each method's nDCG@10, recall@100 and top-10 search time, per query."""
    scores: dict[str, dict[str, list[float]]] = {m: {"ndcg": [], "recall": [], "ms": []} for m in METHODS}
    for n, (query, gain) in enumerate(judged):
        relevant = set(gain)
        t0 = time.perf_counter()
        sims = sentence_pages @ sentence_queries[n]
        ranked = order[np.argsort(-sims, kind="stable")[:RECALL_K]].tolist()
        scores["single_vector"]["ms"].append((time.perf_counter() - t0) * 1000)
        scores["single_vector"]["ndcg"].append(ndcg(ranked, gain))
        scores["single_vector"]["recall"].append(recall(ranked, relevant))
        for method, exact in (("maxsim_exact", True), ("maxsim_fast", False)):
            t0 = time.perf_counter()
            top10 = [int(i) for i, _ in index.search(query_vectors[n], NDCG_K, exact=exact)]
            scores[method]["ms"].append((time.perf_counter() - t0) * 1000)  # a top-10 search
            top100 = [int(i) for i, _ in index.search(query_vectors[n], RECALL_K, exact=exact)]
            scores[method]["ndcg"].append(ndcg(top10, gain))
            scores[method]["recall"].append(recall(top100, relevant))
        for method, exact in (("hybrid_exact", True), ("hybrid_fast", False)):
            t0 = time.perf_counter()
            top10 = harness.search(query["text"], NDCG_K, exact=exact)
            scores[method]["ms"].append((time.perf_counter() - t0) * 1000)  # with BM25 and the page rows
            scores[method]["ndcg"].append(ndcg(top10, gain))
            scores[method]["recall"].append(recall(harness.search(query["text"], RECALL_K, exact=exact), relevant))
        if progress:
            progress("queries", n + 1, len(judged))
    return scores


def _summary(values: dict[str, list[float]]) -> dict[str, Any]:
    return {f"nDCG@{NDCG_K}": round(statistics.fmean(values["ndcg"]), 4) if values["ndcg"] else None,
            f"R@{RECALL_K}": round(statistics.fmean(values["recall"]), 4) if values["recall"] else None,
            "query_ms": _percentiles(values["ms"])}  # top-10 search, query already encoded


def _fusion(settings: Any) -> dict[str, Any]:
    """The hybrid's fusion as configured (``documents.fusion``)."""
    if settings.fusion == "rrf":
        return {"method": "rrf", "rrf_k": settings.rrf_k}
    return {"method": "weighted", "keyword_weight": settings.keyword_weight}
