"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, LM Studio),
through the official ``openai`` SDK.

``timeout`` is one deadline per embedding request (a batch of ``batch_size`` texts), retries
included (``memlane.deadline``): a hung endpoint holds a search or an ``add`` for at most
``timeout`` seconds, however large ``max_retries`` is."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from memlane.deadline import DeadlineExceeded, call_within, openai_retry_after
from memlane.errors import ConfigError, EmbeddingError

KNOWN_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}

#: Provider aliases: default endpoint and the mem0 config key that names it.
SERVERS = {
    "openai": (None, "openai_base_url"),
    "ollama": ("http://localhost:11434/v1", "ollama_base_url"),
    "lmstudio": ("http://localhost:1234/v1", "lmstudio_base_url"),
    "vllm": ("http://localhost:8000/v1", "vllm_base_url"),
}


class OpenAIEmbedderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = "text-embedding-3-small"
    api_key: Optional[SecretStr] = None
    base_url: Optional[str] = None
    embedding_dims: Optional[int] = Field(None, ge=1)
    timeout: float = Field(30.0, gt=0, description="seconds for one embedding request, retries included")
    max_retries: int = Field(2, ge=0)
    batch_size: int = Field(256, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _mem0_aliases(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for _, alias in SERVERS.values():
                if alias in data:
                    if data.get("base_url") not in (None, data[alias]):
                        raise ValueError(f"give either base_url or {alias}, not both")
                    data["base_url"] = data.pop(alias)
        return data


class OpenAIEmbedder:
    def __init__(self, config: OpenAIEmbedderConfig, *, server: str = "openai"):
        default_url, _ = SERVERS[server]
        # OPENAI_* variables describe OpenAI (or a proxy standing in for it), not a local Ollama/vLLM server
        use_env = server == "openai"
        base_url = config.base_url or (os.environ.get("OPENAI_BASE_URL") if use_env else None) or default_url
        if base_url and server == "ollama" and not base_url.rstrip("/").endswith("/v1"):
            base_url = base_url.rstrip("/") + "/v1"  # mem0's ollama_base_url has no /v1
        api_key = config.api_key.get_secret_value() if config.api_key else (os.environ.get("OPENAI_API_KEY") if use_env else None)
        if not api_key:
            if base_url is None:
                raise ConfigError(
                    "the openai embedder needs an API key: set embedder.config.api_key or OPENAI_API_KEY, "
                    "or point embedder.config.base_url at a local OpenAI-compatible server"
                )
            api_key = "unused"  # local servers (Ollama, vLLM, LM Studio) ignore it; the SDK requires one
        dims = config.embedding_dims or KNOWN_DIMS.get(config.model)
        if dims is None:
            raise ConfigError(f"embedder.config.embedding_dims is required for model {config.model!r}")
        import openai

        self._openai = openai
        # retries are memlane's (call_within), so that they stay inside the request's deadline
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=config.timeout, max_retries=0)
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
            try:
                response = call_within(
                    lambda time_left: self.client.embeddings.create(model=self.model, input=batch, timeout=time_left,
                                                                    **self._extra),
                    seconds=self.timeout, retries=self.max_retries, retry_after=openai_retry_after)
            except (self._openai.APITimeoutError, DeadlineExceeded) as exc:
                raise EmbeddingError(f"embedding request to {self.client.base_url} timed out: no answer within "
                                     f"{self.timeout:g} s (embedder.config.timeout, the deadline for one request, "
                                     "retries included)") from exc
            except self._openai.OpenAIError as exc:
                raise EmbeddingError(f"embedding request to {self.client.base_url} failed: {exc}") from exc
            except (ValueError, TypeError, AttributeError) as exc:  # the SDK could not read a 200 answer
                raise EmbeddingError(f"{self.client.base_url} returned an unusable embeddings response: {exc}") from exc
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
