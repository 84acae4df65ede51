"""Any OpenAI-compatible chat endpoint through the official ``openai`` SDK.

Timeouts and retries with exponential backoff on 429 / 5xx / connection errors
are the SDK's own (``max_retries``, honouring ``Retry-After``). JSON mode
(``response_format={"type": "json_object"}``) is used until the endpoint
rejects it once; then this client stops asking for it.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import Field

from memlane.llms.base import LLMError
from memlane.openai_endpoint import EndpointConfig, client


class OpenAILLMConfig(EndpointConfig):
    model: str = "gpt-4o-mini"
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(2000, ge=1)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)


class OpenAILLM:
    def __init__(self, config: OpenAILLMConfig, *, server: str = "openai"):
        self.client = client(config, server, "llm.config")
        import openai

        self._openai = openai
        self.config = config
        self.name = f"{server}/{config.model}"
        self.calls = 0
        self._json_mode = True
        self._lock = threading.Lock()

    def chat(self, messages: list[dict[str, str]], *, json_mode: bool = True) -> str:
        extra: dict[str, Any] = {"response_format": {"type": "json_object"}} if json_mode and self._json_mode else {}
        try:
            response = self._create(messages, extra)
        except self._openai.BadRequestError as exc:
            if not extra or "response_format" not in str(exc):
                raise LLMError(f"the model at {self.client.base_url} rejected the request: {exc}") from exc
            self._json_mode = False  # this endpoint has no JSON mode; the prompt asks for JSON anyway
            response = self._create(messages, {})
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError) as exc:
            raise LLMError(f"{self.client.base_url} returned no chat message: {exc}") from exc
        return content or ""

    def _create(self, messages: list[dict[str, str]], extra: dict[str, Any]) -> Any:
        try:
            response = self.client.chat.completions.create(
                model=self.config.model, messages=messages, temperature=self.config.temperature,
                max_tokens=self.config.max_tokens, **extra)
        except self._openai.BadRequestError:
            raise
        except self._openai.OpenAIError as exc:
            raise LLMError(f"chat request to {self.client.base_url} failed: {exc}") from exc
        except (ValueError, TypeError, AttributeError) as exc:  # the SDK could not read a 200 answer
            raise LLMError(f"{self.client.base_url} returned an unusable chat response: {exc}") from exc
        with self._lock:
            self.calls += 1
        return response
