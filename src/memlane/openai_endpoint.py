"""The settings of an OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, vLLM), shared by the
embedder (``embeddings/openai.py``) and the chat model (``llms/openai.py``): where it is, the key,
the timeout and retries, mem0's ``<server>_base_url`` aliases, the official SDK client made from
them, and which failures are worth a retry within a call's deadline (``memlane.core.deadline``)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from memlane.core.deadline import DeadlineExceeded, call_within, retry_after_status
from memlane.core.errors import ConfigError
from memlane.core.registry import Registry

#: Provider names of OpenAI-compatible servers: default endpoint and the mem0 config key that names it.
SERVERS = {
    "openai": (None, "openai_base_url"),
    "ollama": ("http://localhost:11434/v1", "ollama_base_url"),
    "lmstudio": ("http://localhost:1234/v1", "lmstudio_base_url"),
    "vllm": ("http://localhost:8000/v1", "vllm_base_url"),
}


class EndpointConfig(BaseModel):
    """The connection settings every OpenAI-compatible provider's ``config`` block has; each provider
    adds its own (model, batch size …) and its defaults for ``timeout`` and ``max_retries``."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    api_key: Optional[SecretStr] = None
    base_url: Optional[str] = None
    timeout: float = Field(30.0, gt=0)
    max_retries: int = Field(2, ge=0)

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


def register_servers(registry: Registry[Any], create: Callable[..., Any]) -> None:
    """Register ``create(spec, server=name)`` in ``registry`` under the name of each server in ``SERVERS``."""
    for server in SERVERS:
        registry.register(server, functools.partial(create, server=server))


def client(config: EndpointConfig, server: str, setting: str, *, sdk_retries: bool = True) -> Any:
    """An ``openai.OpenAI`` client for ``config`` on ``server`` (a key of ``SERVERS``). ``setting``
    names the config block in messages (``embedder.config``, ``llm.config``).

    ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` are read for the ``openai`` server only: they
    describe OpenAI (or a proxy standing in for it), not a local Ollama or vLLM server.
    ``sdk_retries=False``: the caller retries itself (``call_within`` with ``retry_after``), so that
    the retries stay inside one deadline; the SDK makes one attempt per call."""
    default_url, _ = SERVERS[server]
    use_env = server == "openai"
    base_url = config.base_url or (os.environ.get("OPENAI_BASE_URL") if use_env else None) or default_url
    if base_url and server == "ollama" and not base_url.rstrip("/").endswith("/v1"):
        base_url = base_url.rstrip("/") + "/v1"  # mem0's ollama_base_url has no /v1
    api_key = config.api_key.get_secret_value() if config.api_key else (
        os.environ.get("OPENAI_API_KEY") if use_env else None)
    if not api_key:
        if base_url is None:
            kind = setting.split(".")[0]
            raise ConfigError(f"the openai {kind} needs an API key: set {setting}.api_key or OPENAI_API_KEY, "
                              f"or point {setting}.base_url at a local OpenAI-compatible server")
        api_key = "unused"  # local servers (Ollama, vLLM, LM Studio) ignore it; the SDK requires one
    import openai

    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=config.timeout,
                         max_retries=config.max_retries if sdk_retries else 0)


def request(sdk_client: Any, attempt: Callable[[float], Any], *, timeout: float, retries: int,
            error: type[Exception], kind: str, deadline: str, passthrough: tuple[type[Exception], ...] = ()) -> Any:
    """``attempt(time left)`` within ``timeout`` seconds, retried by ``retry_after`` (``call_within``);
    a failure becomes ``error`` saying which endpoint and what happened: ``kind`` names the request
    ("embedding", "chat"), ``deadline`` the setting and what it bounds ("llm.config.timeout, the
    deadline for one call"). ``passthrough``: SDK errors the caller handles itself."""
    import openai

    try:
        return call_within(attempt, seconds=timeout, retries=retries, retry_after=retry_after)
    except passthrough:
        raise
    except (openai.APITimeoutError, DeadlineExceeded) as exc:
        raise error(f"{kind} request to {sdk_client.base_url} timed out: no answer within {timeout:g} s "
                    f"({deadline}, retries included)") from exc
    except openai.OpenAIError as exc:
        raise error(f"{kind} request to {sdk_client.base_url} failed: {exc}") from exc
    except (ValueError, TypeError, AttributeError) as exc:  # the SDK could not read a 200 answer
        noun = "embeddings" if kind == "embedding" else kind
        raise error(f"{sdk_client.base_url} returned an unusable {noun} response: {exc}") from exc


def retry_after(exc: Exception) -> float | None:
    """Whether a failed SDK call is worth another attempt: connection errors and timeouts, and HTTP
    answers by ``deadline.retry_after_status`` (408, 409, 429, 5xx: the SDK's own rule), with the
    pause the endpoint asked for (0: the default backoff)."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return 0.0
    if isinstance(exc, openai.APIStatusError):
        return retry_after_status(exc.status_code, exc.response.headers)
    return None
