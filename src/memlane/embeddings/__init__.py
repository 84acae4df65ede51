"""Embedding providers, chosen by ``embedder.provider`` from the ``EMBEDDERS`` registry.

A factory takes the ``ProviderSpec`` and returns an ``Embedder``; a new provider registers one
(``EMBEDDERS.register``, or an entry point in the group ``memlane.embedders``)."""

from __future__ import annotations

from collections.abc import Callable

from memlane.core.config import ProviderSpec, validate
from memlane.embeddings.base import Embedder, unit_rows
from memlane.embeddings.cache import Embeddings
from memlane.openai_endpoint import register_servers
from memlane.core.registry import Registry

__all__ = ["Embedder", "Embeddings", "create_embedder", "unit_rows", "EMBEDDERS"]

EMBEDDERS: Registry[Callable[[ProviderSpec], Embedder]] = Registry("embedders", "embedder.provider")


@EMBEDDERS.register("local", aliases=("huggingface", "sentence_transformers"))  # mem0's names for local models
def _local(spec: ProviderSpec) -> Embedder:
    from memlane.embeddings.local import LocalEmbedder, LocalEmbedderConfig

    return LocalEmbedder.from_config(validate(LocalEmbedderConfig, spec.config, "embedder.config"))


def _openai_compatible(spec: ProviderSpec, *, server: str) -> Embedder:
    from memlane.embeddings.openai import OpenAIEmbedder, OpenAIEmbedderConfig

    return OpenAIEmbedder(validate(OpenAIEmbedderConfig, spec.config, "embedder.config"), server=server)


register_servers(EMBEDDERS, _openai_compatible)  # openai, ollama, lmstudio, vllm


@EMBEDDERS.register("multilingual-e5-small", aliases=("e5", "multilingual-e5"))
def _e5(spec: ProviderSpec) -> Embedder:
    from memlane.embeddings.e5 import E5Embedder, E5EmbedderConfig

    return E5Embedder.from_config(validate(E5EmbedderConfig, spec.config, "embedder.config"))


@EMBEDDERS.register("use-multilingual", aliases=("use", "universal-sentence-encoder"))
def _use(spec: ProviderSpec) -> Embedder:
    from memlane.embeddings.use import UseEmbedder, UseEmbedderConfig

    return UseEmbedder.from_config(validate(UseEmbedderConfig, spec.config, "embedder.config"))


@EMBEDDERS.register("hashing")
def _hashing(spec: ProviderSpec) -> Embedder:
    from memlane.embeddings.hashing import HashingEmbedder, HashingEmbedderConfig

    return HashingEmbedder.from_config(validate(HashingEmbedderConfig, spec.config, "embedder.config"))


def create_embedder(spec: ProviderSpec) -> Embedder:
    return EMBEDDERS.get(spec.provider)(spec)
