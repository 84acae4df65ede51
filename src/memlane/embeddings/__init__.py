"""Embedding providers, chosen by config name. Adding one means adding a row to ``PROVIDERS``."""

from __future__ import annotations

from collections.abc import Callable

from memlane.config import ProviderSpec, validate
from memlane.embeddings.base import Embedder, unit_rows
from memlane.embeddings.cache import Embeddings
from memlane.errors import ConfigError

__all__ = ["Embedder", "Embeddings", "create_embedder", "unit_rows", "PROVIDERS"]


def _local(spec: ProviderSpec) -> Embedder:
    from memlane.embeddings.local import LocalEmbedder, LocalEmbedderConfig

    return LocalEmbedder.from_config(validate(LocalEmbedderConfig, spec.config, "embedder.config"))


def _openai_compatible(server: str) -> Callable[[ProviderSpec], Embedder]:
    def create(spec: ProviderSpec) -> Embedder:
        from memlane.embeddings.openai import OpenAIEmbedder, OpenAIEmbedderConfig

        return OpenAIEmbedder(validate(OpenAIEmbedderConfig, spec.config, "embedder.config"), server=server)

    return create


PROVIDERS: dict[str, Callable[[ProviderSpec], Embedder]] = {
    "local": _local,
    "huggingface": _local,  # mem0's name for local sentence-transformers models
    "sentence_transformers": _local,
    "openai": _openai_compatible("openai"),
    "ollama": _openai_compatible("ollama"),
    "lmstudio": _openai_compatible("lmstudio"),
    "vllm": _openai_compatible("vllm"),
}


def create_embedder(spec: ProviderSpec) -> Embedder:
    factory = PROVIDERS.get(spec.provider)
    if factory is None:
        raise ConfigError(f"embedder.provider {spec.provider!r} is unknown; known providers: {', '.join(PROVIDERS)}")
    return factory(spec)
