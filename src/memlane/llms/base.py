"""The LLM seam: a chat model that answers a list of messages with text."""

from __future__ import annotations

from typing import Protocol

from memlane.core.errors import MemlaneError


class LLMError(MemlaneError):
    """The model could not be reached or refused the request (after retries)."""


class LLM(Protocol):
    name: str
    #: completed chat calls since creation (the pipeline promises at most two per add)
    calls: int

    def chat(self, messages: list[dict[str, str]], *, json_mode: bool = True) -> str:
        """The model's reply text. ``json_mode`` asks for a JSON object where the endpoint supports it."""
        ...
