"""The extractor seam: messages in, triples out. Offline rules here, or the configured LLM
(``llm_extract.py``); ``graph/memory.py`` chooses one."""

from __future__ import annotations

from typing import Protocol

from memlane.graph import rules
from memlane.core.models import Message


class GraphExtractionFailed(Exception):
    """The extractor could not produce a usable answer (reported in the add result)."""


class Extractor(Protocol):
    name: str

    def extract(self, messages: list[Message]) -> list[rules.Triple]:
        """Triples stated by the user in the messages (first person as ``models.USER``)."""


class RuleExtractor:
    """``rules.extract`` over the user's messages (what the assistant says is context, not fact)."""

    name = "rules"

    def extract(self, messages: list[Message]) -> list[rules.Triple]:
        found: dict[rules.Triple, None] = {}
        for message in messages:
            if message.role == "user":
                found.update(dict.fromkeys(rules.extract(message.content)))
        return list(found)
