"""What a local model runtime (sentence-transformers on torch, or ONNX Runtime) gives the local
embedder: per text, from one forward pass, its token ids, contextual token vectors and unit sentence
vector, as numpy arrays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class TokenOutput:
    """One text's forward pass, padding removed. ``ids`` and ``tokens`` include [CLS] and [SEP]."""

    ids: np.ndarray  # (n_tokens,) int64
    tokens: np.ndarray  # (n_tokens, dims) float32, not normalised
    sentence: np.ndarray  # (dims,) float32, mean-pooled and L2-normalised


class Runtime(Protocol):
    #: ids of the tokenizer's special tokens ([CLS], [SEP], [PAD], [UNK], [MASK])
    special_ids: frozenset[int]

    def use_threads(self, threads: int | None) -> None:
        """Run the next call on ``threads`` intra-op threads (None: the runtime's default)."""
        ...

    def sentences(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Unit sentence vectors, one row per text."""
        ...

    def outputs(self, texts: Sequence[str], batch_size: int) -> list[TokenOutput]:
        ...

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """The word pieces of token ids (``##`` marks a continuation)."""
        ...
