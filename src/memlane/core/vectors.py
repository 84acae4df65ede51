"""Vector math shared by backends: compact blobs and exact top-k by cosine."""

from __future__ import annotations

import numpy as np

DTYPES = {"float32": np.dtype("<f4"), "float16": np.dtype("<f2")}


def to_blob(vector: np.ndarray, dtype: np.dtype) -> bytes:
    return np.asarray(vector, dtype=dtype).tobytes()


def from_blobs(blobs: list[bytes], dims: int, dtype: np.dtype) -> np.ndarray:
    """Stack stored vectors into a float32 matrix (one row per blob)."""
    matrix = np.frombuffer(b"".join(blobs), dtype=dtype).reshape(len(blobs), dims)
    return matrix if dtype == np.float32 else matrix.astype(np.float32)


def top_k(scores: np.ndarray, k: int, threshold: float | None = None) -> np.ndarray:
    """Indices of the ``k`` best scores (at or above ``threshold``), best first; ties by index."""
    if threshold is not None:
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(len(scores))
    if len(candidates) > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        candidates = candidates[part]
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order]


def pool_tokens(tokens: np.ndarray, max_tokens: int) -> np.ndarray:
    """At most ``max_tokens`` unit vectors: neighbouring token vectors averaged in equal groups
    (token pooling keeps late-interaction storage bounded), then L2-normalised."""
    tokens = np.asarray(tokens, dtype=np.float32)
    if len(tokens) > max_tokens:
        groups = np.array_split(np.arange(len(tokens)), max_tokens)
        tokens = np.stack([tokens[g].mean(axis=0) for g in groups])
    norms = np.linalg.norm(tokens, axis=1, keepdims=True)
    return tokens / np.where(norms == 0, 1, norms)


def maxsim(query_tokens: np.ndarray, doc_tokens: np.ndarray) -> float:
    """Late-interaction score: mean over query tokens of the best cosine with any document token."""
    if not len(query_tokens) or not len(doc_tokens):
        return 0.0
    return float((query_tokens @ doc_tokens.T).max(axis=1).mean())
