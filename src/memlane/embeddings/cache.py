"""What the facade embeds through: batch document embedding and an LRU cache for queries."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memlane.embeddings.base import Embedder, unit_rows
from memlane.embeddings.calibration import IDENTITY, Calibrations
from memlane.core.vectors import pool_tokens

#: query token vectors are kept unpooled up to this many word pieces
QUERY_TOKENS = 64


@dataclass(frozen=True)
class CacheInfo:
    hits: int
    misses: int
    size: int


class _LRU:
    """A thread-safe least-recently-used map (queries repeat: agents ask the same things)."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, key: str) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
            self.misses += 1
            return None

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def put(self, key: str, value: Any) -> None:
        if not self.size:
            return
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False  # shared by every caller that hits the cache
    return array


class Embeddings:
    def __init__(self, embedder: Embedder, cache_size: int = 1024):
        self.embedder = embedder
        self.name = embedder.name
        self.dims = int(embedder.dims)
        inner = getattr(embedder, "inner", embedder)  # a BatchingEmbedder holds the model's
        #: the model's map of its cosines onto memlane's common scale (embeddings/calibration.py)
        self.calibrations: Calibrations = getattr(inner, "calibrations", None) or IDENTITY
        self._queries = _LRU(cache_size)
        self._query_tokens = _LRU(cache_size)
        self._statements = _LRU(cache_size)

    @property
    def has_tokens(self) -> bool:
        return hasattr(self.embedder, "embed_with_tokens")

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32)
        return unit_rows(self.embedder.embed(list(texts), "document"), len(texts), self.dims, self.name)

    def documents_and_tokens(self, texts: Sequence[str], max_tokens: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Sentence vectors plus pooled unit token vectors (late interaction), one model pass."""
        sentences, tokens = self.embedder.embed_with_tokens(list(texts))
        matrix = unit_rows(sentences, len(texts), self.dims, self.name)
        return matrix, [pool_tokens(t, max_tokens) for t in tokens]

    def statements(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors of bare texts (formation compares what facts and memories say, without
        who said them); a text seen lately comes from an LRU cache, the rest in one batch."""
        found = [self._statements.get(t) for t in texts]
        missing = sorted({t for t, v in zip(texts, found) if v is None})
        if missing:
            fresh = dict(zip(missing, (_frozen(row.copy()) for row in self.documents(missing))))
            for text, vector in fresh.items():
                self._statements.put(text, vector)
            found = [fresh[t] if v is None else v for t, v in zip(texts, found)]
        return np.stack(found) if found else np.empty((0, self.dims), dtype=np.float32)

    def query(self, text: str) -> np.ndarray:
        """A read-only unit vector; repeated query texts come from the cache."""
        vector = self._queries.get(text)
        if vector is None:
            vector = _frozen(unit_rows(self.embedder.embed([text], "query"), 1, self.dims, self.name)[0])
            self._queries.put(text, vector)
        return vector

    def has_query(self, text: str) -> bool:
        """Whether ``query(text)`` would answer from the cache (no model call)."""
        return text in self._queries

    def query_tokens(self, text: str) -> np.ndarray:
        """The query's token vectors (late interaction); the same model pass also fills ``query``'s cache."""
        tokens = self._query_tokens.get(text)
        if tokens is None:
            sentences, raw = self.embedder.embed_with_tokens([text], "query")
            tokens = _frozen(pool_tokens(raw[0], QUERY_TOKENS))
            self._query_tokens.put(text, tokens)
            if self._queries.get(text) is None:
                self._queries.put(text, _frozen(unit_rows(sentences, 1, self.dims, self.name)[0]))
        return tokens

    def similarity(self, raw: Any, kind: str = "query") -> Any:
        """Cosine(s) of this model's vectors on the common scale: ``kind`` ``query`` for a search against
        stored texts, ``document`` for stored texts against each other."""
        return self.calibrations.similarity(raw, kind)

    def similarities(self, raws: Sequence[float], kind: str = "query") -> list[float]:
        """``similarity`` of each cosine of a list, in one operation."""
        return self.calibrations.similarities(raws, kind)

    def raw_threshold(self, common: float | None, kind: str = "query") -> float | None:
        """The raw cosine of this model that a threshold on the common scale stands for."""
        return self.calibrations.raw_threshold(common, kind)

    def cache_info(self) -> CacheInfo:
        return CacheInfo(self._queries.hits, self._queries.misses, len(self._queries._items))
