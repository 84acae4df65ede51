"""Any OpenAI-compatible chat endpoint through the official ``openai`` SDK.

``timeout`` is one deadline for a whole chat call, retries included: after a
timeout, a dropped connection, 429 or 5xx the call is retried (``max_retries``,
exponential backoff, honouring ``Retry-After``) only within what is left of it
(``memlane.deadline``), so a hung endpoint holds ``add`` for at most
``timeout`` seconds per call. JSON mode
(``response_format={"type": "json_object"}``) is used until the endpoint
rejects it once; then this client stops asking for it.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from memlane.deadline import DeadlineExceeded, call_within
from memlane.errors import ConfigError
from memlane.llms.base import LLMError

SERVERS = {
    "openai": (None, "openai_base_url"),
    "ollama": ("http://localhost:11434/v1", "ollama_base_url"),
    "lmstudio": ("http://localhost:1234/v1", "lmstudio_base_url"),
    "vllm": ("http://localhost:8000/v1", "vllm_base_url"),
}


class OpenAILLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = "gpt-4o-mini"
    api_key: Optional[SecretStr] = None
    base_url: Optional[str] = None
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(2000, ge=1)
    timeout: float = Field(30.0, gt=0, description="seconds for one chat call, retries included")
    max_retries: int = Field(3, ge=0)

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


class OpenAILLM:
    def __init__(self, config: OpenAILLMConfig, *, server: str = "openai"):
        default_url, _ = SERVERS[server]
        use_env = server == "openai"  # OPENAI_* describe OpenAI, not a local server
        base_url = config.base_url or (os.environ.get("OPENAI_BASE_URL") if use_env else None) or default_url
        if base_url and server == "ollama" and not base_url.rstrip("/").endswith("/v1"):
            base_url = base_url.rstrip("/") + "/v1"
        api_key = config.api_key.get_secret_value() if config.api_key else (os.environ.get("OPENAI_API_KEY") if use_env else None)
        if not api_key:
            if base_url is None:
                raise ConfigError("the openai llm needs an API key: set llm.config.api_key or OPENAI_API_KEY, "
                                  "or point llm.config.base_url at a local OpenAI-compatible server")
            api_key = "unused"
        import openai

        self._openai = openai
        # retries are memlane's (call_within), so that they stay inside the call's deadline
        self.client = openai.OpenAI(api_key=api_key, base_url=base_url, timeout=config.timeout, max_retries=0)
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
        def attempt(time_left: float) -> Any:
            return self.client.chat.completions.create(
                model=self.config.model, messages=messages, temperature=self.config.temperature,
                max_tokens=self.config.max_tokens, timeout=time_left, **extra)

        try:
            response = call_within(attempt, seconds=self.config.timeout, retries=self.config.max_retries,
                                   retry_after=self._retry_after)
        except self._openai.BadRequestError:
            raise
        except (self._openai.APITimeoutError, DeadlineExceeded) as exc:
            raise LLMError(f"chat request to {self.client.base_url} timed out: no answer within "
                           f"{self.config.timeout:g} s (llm.config.timeout, the deadline for one call, "
                           "retries included)") from exc
        except self._openai.OpenAIError as exc:
            raise LLMError(f"chat request to {self.client.base_url} failed: {exc}") from exc
        except (ValueError, TypeError, AttributeError) as exc:  # the SDK could not read a 200 answer
            raise LLMError(f"{self.client.base_url} returned an unusable chat response: {exc}") from exc
        with self._lock:
            self.calls += 1
        return response

    def _retry_after(self, exc: Exception) -> float | None:
        """Whether a failed attempt is worth another (the SDK's own rule: connection errors, timeouts,
        408, 409, 429, 5xx), and the pause the endpoint asked for (0: the default backoff)."""
        if isinstance(exc, self._openai.APIConnectionError):  # includes APITimeoutError
            return 0.0
        if not isinstance(exc, self._openai.APIStatusError):
            return None
        if exc.status_code not in (408, 409, 429) and exc.status_code < 500:
            return None
        return retry_after_header(exc.response.headers)


def retry_after_header(headers: Any) -> float:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number of seconds); 0 when absent or unreadable."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name))
        except (TypeError, ValueError):
            continue
        if value >= 0:
            return value / scale
    return 0.0
