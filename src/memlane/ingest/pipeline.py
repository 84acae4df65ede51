"""What a pipeline conducted for ``Memory`` works with (formation, maintenance): the configuration
and its limits, the embedder, the store it reads and the formation engine."""

from __future__ import annotations

from typing import Any

from memlane.core.config import MemoryConfig
from memlane.embeddings import Embeddings
from memlane.ingest.types import Engine


class Pipeline:
    def __init__(self, config: MemoryConfig, embeddings: Embeddings, store: Any, engine: Engine):
        self.config = config
        self.limits = config.limits.to_limits()
        self.embeddings = embeddings
        self.store = store
        self.engine = engine
