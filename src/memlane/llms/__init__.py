"""Chat-model providers, chosen by ``llm.provider`` from the ``LLMS`` registry (a factory takes the
``ProviderSpec``; a new provider registers one, or an entry point in the group ``memlane.llms``)."""

from __future__ import annotations

from collections.abc import Callable

from memlane.core.config import MemoryConfig, ProviderSpec, validate
from memlane.llms.base import LLM, LLMError
from memlane.openai_endpoint import register_servers
from memlane.core.registry import Registry

__all__ = ["LLM", "LLMError", "create_llm", "check_llm", "LLMS"]

LLMS: Registry[Callable[[ProviderSpec], LLM]] = Registry(
    "llms", "llm.provider", hint="any OpenAI-compatible endpoint works as 'openai' with base_url")


def _openai_compatible(spec: ProviderSpec, *, server: str) -> LLM:
    from memlane.llms.openai import OpenAILLM, OpenAILLMConfig

    return OpenAILLM(validate(OpenAILLMConfig, spec.config, "llm.config"), server=server)


register_servers(LLMS, _openai_compatible)  # openai, ollama, lmstudio, vllm


def create_llm(spec: ProviderSpec) -> LLM:
    return LLMS.get(spec.provider)(spec)


def check_llm(config: MemoryConfig) -> None:
    """Make the configured chat model once, sending nothing: a wrong ``llm`` block (an unknown provider
    or setting, no key for OpenAI) is a ``ConfigError`` when a server starts, not a failure of every add."""
    if config.llm is not None:
        create_llm(config.llm)
