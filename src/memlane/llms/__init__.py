"""Chat-model providers, chosen by ``llm.provider``."""

from __future__ import annotations

from memlane.config import ProviderSpec, validate
from memlane.errors import ConfigError
from memlane.llms.base import LLM, LLMError

__all__ = ["LLM", "LLMError", "create_llm", "PROVIDERS"]

PROVIDERS = ("openai", "ollama", "lmstudio", "vllm")


def create_llm(spec: ProviderSpec) -> LLM:
    if spec.provider not in PROVIDERS:
        raise ConfigError(f"llm.provider {spec.provider!r} is unknown; known providers: {', '.join(PROVIDERS)} "
                          "(any OpenAI-compatible endpoint works as 'openai' with base_url)")
    from memlane.llms.openai import OpenAILLM, OpenAILLMConfig

    return OpenAILLM(validate(OpenAILLMConfig, spec.config, "llm.config"), server=spec.provider)
