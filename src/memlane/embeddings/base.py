"""The embedder seam: a provider turns texts into vectors; memlane checks and normalises them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from memlane.core.errors import EmbeddingError

Purpose = Literal["document", "query"]


@runtime_checkable
class Embedder(Protocol):
    """``name`` identifies the model (recorded in the store); ``dims`` its output size."""

    name: str
    dims: int

    def embed(self, texts: Sequence[str], purpose: Purpose) -> Any:
        """Return one vector per text, as an array-like of shape (len(texts), dims)."""
        ...


def unit_rows(raw: Any, rows: int | None, dims: int | None, provider: str, *, source: str = "embedder") -> np.ndarray:
    """Check a provider's output and return it as L2-normalised float32 rows.

    Providers are outside memlane's control (remote servers, custom models): a
    wrong shape, NaN or an all-zero vector is an ``EmbeddingError`` here rather
    than a silently corrupt store later. ``rows=None`` takes any positive number
    of rows (one item's token vectors), ``dims=None`` any width; ``source`` names
    the kind of provider in messages (embedder, encoder).
    """
    try:
        matrix = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{source} {provider} returned something that is not a matrix of numbers: "
                             f"{str(exc)[:200]}") from None
    if rows is not None and dims is not None:
        if matrix.shape != (rows, dims):
            raise EmbeddingError(f"{source} {provider} returned shape {matrix.shape}; expected ({rows}, {dims})")
    elif matrix.ndim != 2 or (matrix.shape[0] == 0 if rows is None else matrix.shape[0] != rows):
        expected = "(n_tokens >= 1, dims)" if rows is None else f"({rows}, dims)"
        raise EmbeddingError(f"{source} {provider} returned shape {matrix.shape}; expected {expected}")
    elif dims is not None and matrix.shape[1] != dims:
        raise EmbeddingError(f"{source} {provider} returned {matrix.shape[1]}-dim vectors; configured dims is {dims}")
    if not np.isfinite(matrix).all():
        raise EmbeddingError(f"{source} {provider} returned NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if (norms == 0).any():
        raise EmbeddingError(f"{source} {provider} returned an all-zero vector")
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
