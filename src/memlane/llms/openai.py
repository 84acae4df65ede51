"""Any OpenAI-compatible chat endpoint through the official ``openai`` SDK.

``timeout`` is one deadline for a whole chat call, retries included: after a
timeout, a dropped connection, 429 or 5xx the call is retried (``max_retries``,
exponential backoff, honouring ``Retry-After``) only within what is left of it
(``memlane.core.deadline``), so a hung endpoint holds ``add`` for at most
``timeout`` seconds per call. JSON mode
(``response_format={"type": "json_object"}``) is used until the endpoint
rejects it once; then this client stops asking for it.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import Field

from memlane.llms.base import LLMError
from memlane.openai_endpoint import EndpointConfig, client, failure, request


class OpenAILLMConfig(EndpointConfig):
    model: str = "gpt-4o-mini"
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(2000, ge=1)
    timeout: float = Field(30.0, gt=0, description="seconds for one chat call, retries included")
    max_retries: int = Field(3, ge=0)


class OpenAILLM:
    def __init__(self, config: OpenAILLMConfig, *, server: str = "openai"):
        # retries are memlane's (call_within), so that they stay inside the call's deadline
        self.client = client(config, server, "llm.config", sdk_retries=False)
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
                raise LLMError(failure(exc, f"chat request to {self.client.base_url}", "llm.config", attempts=1,
                                       retries=self.config.max_retries, timeout=self.config.timeout)) from exc
            self._json_mode = False  # this endpoint has no JSON mode; the prompt asks for JSON anyway
            response = self._create(messages, {})
        choices = getattr(response, "choices", None)
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            raise LLMError(f"{self.client.base_url} answered the chat request without a message "
                           "(its JSON has no choices[0].message)")
        return getattr(message, "content", None) or ""

    def _create(self, messages: list[dict[str, str]], extra: dict[str, Any]) -> Any:
        def attempt(time_left: float) -> Any:
            return self.client.chat.completions.create(
                model=self.config.model, messages=messages, temperature=self.config.temperature,
                max_tokens=self.config.max_tokens, timeout=time_left, **extra)

        response = request(self.client, attempt, timeout=self.config.timeout, retries=self.config.max_retries,
                           error=LLMError, kind="chat", deadline="llm.config.timeout, the deadline for one call",
                           setting="llm.config",
                           passthrough=(self._openai.BadRequestError,))
        with self._lock:
            self.calls += 1
        return response
