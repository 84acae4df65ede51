"""Relation extraction with the configured chat model: one call per ``add``, one repair call
when the answer cannot be used. The answer is untrusted input: ``llms.parsing`` recovers the
JSON, items that are not well-formed triples are skipped, and an answer that is still unusable
after the repair is a ``GraphExtractionFailed`` (the add reports it; the memories are unaffected).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from memlane.graph.extract import GraphExtractionFailed
from memlane.graph.prompts import RELATION_EXTRACTION
from memlane.core.graph_models import USER, Triple
from memlane.llms import LLM
from memlane.llms.parsing import LLMOutputError, ask_json
from memlane.core.models import Message

_FIRST_PERSON = {"user", "i", "me", "myself", "我", "用户", "使用者"}
_REPAIR = ("Your previous answer could not be used: {problem}. Answer again with only the JSON object "
           '{{"relations": [{{"source": "...", "relationship": "...", "destination": "...", "negated": false}}]}}.')


def _relationship(value: Any) -> str:
    text = re.sub(r"[^a-z0-9]+", "_", str(value).strip().lower()).strip("_")
    return text if text and text[0].isalpha() else ""


def normalize_relations(value: Any) -> list[Triple]:
    """``{"relations": [...]}`` (or a bare list) → triples; malformed items are skipped."""
    if isinstance(value, dict):
        value = value.get("relations", value.get("triples"))
    if not isinstance(value, list):
        raise LLMOutputError('expected {"relations": [...]}')
    triples: dict[Triple, None] = {}
    for item in value:
        if not isinstance(item, dict):
            continue
        source, destination = item.get("source"), item.get("destination")
        if not isinstance(source, str) or not isinstance(destination, str):
            continue
        source = USER if source.strip().casefold() in _FIRST_PERSON else source.strip()
        destination = destination.strip()
        if destination.casefold() in _FIRST_PERSON:
            continue  # a relation pointing at the user is stated the other way round or not at all
        try:
            triple = Triple(source=source, relationship=_relationship(item.get("relationship", "")),
                            destination=destination, negated=item.get("negated") is True)
        except ValidationError:
            continue
        triples.setdefault(triple, None)
    return list(triples)


class LLMExtractor:
    def __init__(self, llm: LLM):
        self.llm = llm
        self.name = f"llm:{llm.name}"

    def extract(self, messages: list[Message]) -> list[Triple]:
        transcript = "\n".join(f"{m.role}: {m.content}" for m in messages if m.role != "system")
        if not any(m.role == "user" for m in messages):
            return []
        request = [{"role": "system", "content": RELATION_EXTRACTION},
                   {"role": "user", "content": f"Conversation:\n{transcript}"}]
        return ask_json(self.llm, request, normalize_relations, repair=_REPAIR, failure=GraphExtractionFailed,
                        what="relations")
