"""The embedder seam: a provider turns texts into vectors; memlane checks and normalises them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from memlane.errors import EmbeddingError

Purpose = Literal["document", "query"]


@runtime_checkable
class Embedder(Protocol):
    """``name`` identifies the model (recorded in the store); ``dims`` its output size."""

    name: str
    dims: int

    def embed(self, texts: Sequence[str], purpose: Purpose) -> Any:
        """Return one vector per text, as an array-like of shape (len(texts), dims)."""
        ...


def unit_rows(raw: Any, rows: int, dims: int, provider: str) -> np.ndarray:
    """Check a provider's output and return it as L2-normalised float32 rows.

    Providers are outside memlane's control (remote servers, custom models): a
    wrong shape, NaN or an all-zero vector is an ``EmbeddingError`` here rather
    than a silently corrupt store later.
    """
    try:
        matrix = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"embedder {provider} returned something that is not a matrix of numbers: {exc}") from None
    if matrix.shape != (rows, dims):
        raise EmbeddingError(f"embedder {provider} returned shape {matrix.shape}; expected ({rows}, {dims})")
    if not np.isfinite(matrix).all():
        raise EmbeddingError(f"embedder {provider} returned NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise EmbeddingError(f"embedder {provider} returned an all-zero vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
