"""What the facade embeds through: batch document embedding and an LRU cache for queries."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from memlane.embeddings.base import Embedder, unit_rows
from memlane.vectors import pool_tokens


class Embeddings:
    def __init__(self, embedder: Embedder, cache_size: int = 1024):
        self.embedder = embedder
        self.name = embedder.name
        self.dims = int(embedder.dims)
        self._query = lru_cache(maxsize=cache_size)(self._embed_query) if cache_size else self._embed_query
        self._query_tokens = lru_cache(maxsize=cache_size)(self._embed_query_tokens) if cache_size else self._embed_query_tokens

    def documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dims), dtype=np.float32)
        return unit_rows(self.embedder.embed(list(texts), "document"), len(texts), self.dims, self.name)

    @property
    def has_tokens(self) -> bool:
        return hasattr(self.embedder, "embed_with_tokens")

    def documents_and_tokens(self, texts: Sequence[str], max_tokens: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """Sentence vectors plus pooled unit token vectors (late interaction), one model pass."""
        sentences, tokens = self.embedder.embed_with_tokens(list(texts))
        matrix = unit_rows(sentences, len(texts), self.dims, self.name)
        return matrix, [pool_tokens(t, max_tokens) for t in tokens]

    def query_tokens(self, text: str) -> np.ndarray:
        return self._query_tokens(text)

    def _embed_query_tokens(self, text: str) -> np.ndarray:
        tokens = self.embedder.embed_with_tokens([text])[1][0]
        tokens = pool_tokens(tokens, 64)
        tokens.flags.writeable = False
        return tokens

    def query(self, text: str) -> np.ndarray:
        """A read-only unit vector; repeated query texts come from the cache."""
        return self._query(text)

    def _embed_query(self, text: str) -> np.ndarray:
        vector = unit_rows(self.embedder.embed([text], "query"), 1, self.dims, self.name)[0]
        vector.flags.writeable = False  # shared by every caller that hits the cache
        return vector

    def cache_info(self):
        return self._query.cache_info() if hasattr(self._query, "cache_info") else None
