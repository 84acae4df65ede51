"""The settings of an OpenAI-compatible endpoint (OpenAI, Ollama, LM Studio, vLLM), shared by the
embedder (``embeddings/openai.py``) and the chat model (``llms/openai.py``): where it is, the key,
the timeout and retries, mem0's ``<server>_base_url`` aliases, the official SDK client made from
them, and which failures are worth a retry within a call's deadline (``memlane.core.deadline``)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from http import HTTPStatus
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
            error: type[Exception], kind: str, deadline: str, setting: str,
            passthrough: tuple[type[Exception], ...] = ()) -> Any:
    """``attempt(time left)`` within ``timeout`` seconds, retried by ``retry_after`` (``call_within``);
    a failure becomes ``error`` saying which endpoint and what happened (``failure``): ``kind`` names
    the request ("embedding", "chat"), ``deadline`` the setting and what it bounds ("llm.config.timeout,
    the deadline for one call"), ``setting`` the config block (``llm.config``). ``passthrough``: SDK
    errors the caller handles itself. An answer that is not an OpenAI response (a body that is not
    JSON, JSON of another shape) is an ``error`` too."""
    import openai

    attempts = 0

    def counted(time_left: float) -> Any:
        nonlocal attempts
        attempts += 1
        return attempt(time_left)

    url = str(sdk_client.base_url)
    noun = "embeddings" if kind == "embedding" else kind
    try:
        answer = call_within(counted, seconds=timeout, retries=retries, retry_after=retry_after)
    except passthrough:
        raise
    except (openai.APITimeoutError, DeadlineExceeded) as exc:
        raise error(f"{kind} request to {url} timed out: no answer within {timeout:g} s "
                    f"({deadline}, retries included)") from exc
    except openai.APIStatusError as exc:
        raise error(failure(exc, f"{kind} request to {url}", setting, attempts=attempts, retries=retries,
                            timeout=timeout)) from exc
    except openai.APIConnectionError as exc:
        raise error(f"{kind} request to {url} failed: could not connect {_tries(attempts)} ({exc}); is the "
                    f"server running, and is {setting}.base_url its address?") from exc
    except openai.OpenAIError as exc:
        raise error(f"{kind} request to {url} failed: {exc}") from exc
    except ValueError as exc:  # the body said it was JSON and was not
        raise error(f"{url} answered the {kind} request with a body that is not JSON ({exc})") from exc
    except (TypeError, AttributeError) as exc:  # the SDK could not read a 200 answer
        raise error(f"{url} returned an unusable {noun} response: {exc}") from exc
    if not isinstance(answer, openai.BaseModel):  # the SDK hands over what it could not parse as it came
        what = "a body that is not JSON" if isinstance(answer, (str, bytes)) else "JSON that is not an OpenAI response"
        raise error(f"{url} answered the {kind} request with {what}: {_preview(answer)}")
    return answer


def failure(exc: Any, what: str, setting: str, *, attempts: int, retries: int, timeout: float) -> str:
    """What an HTTP error answer (``openai.APIStatusError``) to ``what`` ("chat request to URL") means,
    the setting to check, and the endpoint's own message."""
    status = exc.status_code
    try:
        phrase = f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        phrase = str(status)
    if status == 401:
        text = f"{what} was refused ({phrase}): the endpoint did not accept the API key; check {setting}.api_key"
    elif status == 403:
        text = (f"{what} was refused ({phrase}): the API key may not use this model or endpoint; check the key's "
                f"permissions and {setting}.model")
    elif status == 404:
        text = (f"{what} found nothing ({phrase}): check {setting}.model and {setting}.base_url (an OpenAI-"
                "compatible base URL usually ends in /v1)")
    elif status == 429 or status >= 500 or status in (408, 409):
        text = f"{what} failed ({phrase}) {_tries(attempts)}"
        asked = retry_after_status(status, exc.response.headers) or 0.0
        if attempts <= retries:  # retries were left: the next one could not have ended within the deadline
            wait = f"it asked to wait {asked:g} s (Retry-After)" if asked else "the next retry"
            text += f"; {wait}, past the {timeout:g} s deadline ({setting}.timeout)"
        elif retries:
            text += f" ({setting}.max_retries is {retries})"
        else:
            text += f" ({setting}.max_retries is 0: no retry)"
    else:
        text = f"{what} was rejected ({phrase})"
    said = _endpoint_said(exc)
    return f"{text}; the endpoint said: {said}" if said else text


def _tries(attempts: int) -> str:
    return f"after {attempts} attempt{'s' if attempts != 1 else ''}"


def _endpoint_said(exc: Any) -> str:
    """The error answer's own message (OpenAI's ``{"error": {"message"}}``, or the body's text)."""
    body = exc.body
    if isinstance(body, dict):
        body = body.get("message") or body.get("error") or body
    return _preview(body) if body not in (None, "", {}) else ""


def _preview(value: Any, limit: int = 200) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value if isinstance(value, str) else repr(value)
    flat = " ".join(text.split())
    return repr(flat[:limit] + ("…" if len(flat) > limit else ""))


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
