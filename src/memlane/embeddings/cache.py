"""What the facade embeds through: batch document embedding and an LRU cache for queries."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from memlane.embeddings.base import Embedder, unit_rows


class Embeddings:
    def __init__(self, embedder: Embedder, cache_size: int = 1024):
        self.embedder = embedder
        self.name = embedder.name
        self.dims = int(embedder.dims)
        self._query = lru_cache(maxsize=cache_size)(self._embed_query) if cache_size else self._embed_query

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32)
        return unit_rows(self.embedder.embed(list(texts), "document"), len(texts), self.dims, self.name)

    def query(self, text: str) -> np.ndarray:
        """A read-only unit vector; repeated query texts come from the cache."""
        return self._query(text)

    def _embed_query(self, text: str) -> np.ndarray:
        vector = unit_rows(self.embedder.embed([text], "query"), 1, self.dims, self.name)[0]
        vector.flags.writeable = False  # shared by every caller that hits the cache
        return vector

    def cache_info(self):
        return self._query.cache_info() if hasattr(self._query, "cache_info") else None
