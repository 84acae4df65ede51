"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, LM Studio),
through the official ``openai`` SDK.

``timeout`` is one deadline per embedding request (a batch of ``batch_size`` texts), retries
included (``memlane.core.deadline``): a hung endpoint holds a search or an ``add`` for at most
``timeout`` seconds, however large ``max_retries`` is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from pydantic import Field

from memlane.core.errors import ConfigError, EmbeddingError
from memlane.openai_endpoint import EndpointConfig, client, request

KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIEmbedderConfig(EndpointConfig):
    model: str = "text-embedding-3-small"
    embedding_dims: Optional[int] = Field(None, ge=1)
    batch_size: int = Field(256, ge=1)


class OpenAIEmbedder:
    def __init__(self, config: OpenAIEmbedderConfig, *, server: str = "openai"):
        self.client = client(config, server, "embedder.config", sdk_retries=False)  # retries: call_within
        dims = config.embedding_dims or KNOWN_DIMS.get(config.model)
        if dims is None:
            raise ConfigError(f"embedder.config.embedding_dims is required for model {config.model!r}")
        self.timeout = config.timeout
        self.max_retries = config.max_retries
        self.model = config.model
        self.name = f"openai/{config.model}"
        self.dims = dims
        self.batch_size = config.batch_size
        # Only OpenAI's v3 models take a dimensions argument; other servers may reject it.
        self._extra = {"dimensions": dims} if config.embedding_dims and config.model.startswith("text-embedding-3") else {}

    def embed(self, texts: Sequence[str], purpose: str) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start:start + self.batch_size])
            response = request(
                self.client, lambda time_left: self.client.embeddings.create(model=self.model, input=batch,
                                                                             timeout=time_left, **self._extra),
                timeout=self.timeout, retries=self.max_retries, error=EmbeddingError, kind="embedding",
                deadline="embedder.config.timeout, the deadline for one request", setting="embedder.config")
            vectors.extend(self._in_order(getattr(response, "data", None), len(batch)))
        return vectors

    def _in_order(self, data: Any, count: int) -> list[list[float]]:
        """The vectors of one response in input order; the server must number them 0..count-1."""
        if not isinstance(data, list):
            raise EmbeddingError(f"{self.client.base_url} returned no list of embeddings")
        if len(data) != count:
            raise EmbeddingError(f"{self.client.base_url} returned {len(data)} embeddings for {count} texts")
        indices = [getattr(item, "index", None) for item in data]
        if sorted(i for i in indices if type(i) is int) != list(range(count)):
            raise EmbeddingError(
                f"{self.client.base_url} returned embedding indices {indices[:8]}; expected each of 0..{count - 1} once"
            )
        return [item.embedding for item in sorted(data, key=lambda item: item.index)]
