"""Which embedder a store uses when the configuration names none.

A new store gets ``DEFAULT`` (multilingual-e5-small: Chinese, English and 100 other languages in one
space). A store that was filled before keeps the model it was filled with — its recorded embedder
name says which (``Store.bound_embedder``) — so upgrading memlane never strands anyone's memories;
``memlane reembed`` moves a store to the current default. A configuration that names an embedder
always wins (and a store filled by another refuses it, saying how to re-embed).
"""

from __future__ import annotations

from collections.abc import Iterable

from memlane.core.config import MemoryConfig, ProviderSpec
from memlane.embeddings import Embedder, create_embedder

#: the model of new stores
DEFAULT = ProviderSpec(provider="multilingual-e5-small")

def recognise(name: str | None) -> ProviderSpec | None:
    """The settings of a built-in model from its recorded name (None for any other model)."""
    if not name:
        return None
    if name == "local/all-MiniLM-L6-v2":
        return ProviderSpec(provider="local")
    if name.startswith("local/all-MiniLM-L6-v2+int8_"):
        return ProviderSpec(provider="local", config={"quantize": "int8"})
    if name.startswith("e5/multilingual-e5-small-q4@"):
        config: dict = {"compute": "int8"} if "+int8" in name else {}
        if "+centred@" not in name:
            config["centre"] = False
        return ProviderSpec(provider="multilingual-e5-small", config=config)
    if name.startswith("use/universal-sentence-encoder-multilingual-3@"):
        return ProviderSpec(provider="use-multilingual")
    return None


def configured(config: MemoryConfig) -> bool:
    """Whether the configuration names an embedder itself."""
    return "embedder" in config.model_fields_set


def spec_for(config: MemoryConfig, recorded: Iterable[str | None] = ()) -> ProviderSpec:
    """The embedder of a store: the configured one, else the built-in model the store (or the first of
    a deployment's stores) was filled with, else ``DEFAULT``."""
    if configured(config):
        return config.embedder
    for name in recorded:
        spec = recognise(name)
        if spec is not None:
            return spec
    return DEFAULT


def create(config: MemoryConfig, recorded: Iterable[str | None] = ()) -> Embedder:
    """The embedder of a store, made: the configured one, else the model it was filled with (``spec_for``)."""
    return create_embedder(spec_for(config, recorded))
