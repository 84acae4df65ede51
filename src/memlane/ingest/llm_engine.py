"""The LLM formation engine: one extraction call and one reconciliation call per ``add``.

The model's output is untrusted input: ``llms.parsing`` recovers the JSON,
pydantic-free normalisation below coerces it to the stage schema (the shapes of
the malformed-output corpus), hallucinated ids are ignored, and an answer that
still cannot be used gets one repair round before the add reports failure.
"""

from __future__ import annotations

import json
from typing import Any

from memlane.core.config import MemoryConfig
from memlane.ingest import offline_extract, prompts
from memlane.ingest.offline import OfflineEngine
from memlane.ingest.types import Candidates, Decision, Fact, FormationFailed
from memlane.llms import LLM, LLMError, create_llm
from memlane.llms.parsing import LLMOutputError, ask_json
from memlane.core.models import MEMORY_TYPES, Message

EVENTS = ("ADD", "UPDATE", "DELETE", "NONE")
_FORGET_PREFIXES = ("forget:", "forget：", "忘记：", "忘记:", "删除：", "删除:")


def _decoded(value: Any) -> Any:
    """A list or object the model sent as a JSON string (``{"facts": "[\\"…\\"]"}``) is that list or object."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def normalize_facts(value: Any) -> list[tuple[str, str | None]]:
    """``{"facts": [...]}`` (or a bare list) → [(text, type or None)]; objects give their 'fact'/'text'."""
    if isinstance(value, dict):
        value = _decoded(value.get("facts"))
    if not isinstance(value, list):
        raise LLMOutputError("expected {\"facts\": [...]}")
    facts = []
    for item in value:
        kind = None
        if isinstance(item, dict):
            kind = item.get("type") if item.get("type") in MEMORY_TYPES[:4] else None
            item = next((item[k] for k in ("fact", "text", "memory") if isinstance(item.get(k), str)), None)
        if isinstance(item, str) and item.strip():
            facts.append((item.strip(), kind))
    return facts


_DECISION_KEYS = ("memory", "memories", "actions")  # mem0's answer, its plural, seed 002's


def normalize_updates(value: Any) -> list[dict[str, str]]:
    """``{"memory": [...]}`` (mem0), ``{"actions": [...]}`` (seed 002), a bare list, or one decision
    object (``{"event": "UPDATE", "id": …}``, as the seed's worked example answers) → entries with
    string id, upper-case event, text.

    Entries without a known event are skipped (the memory stays unchanged), not fatal. An answer
    holding two of the lists that disagree is not guessed at.
    """
    if isinstance(value, dict):
        if "event" in value and not any(key in value for key in _DECISION_KEYS):
            value = [value]
        else:
            lists = [_decoded(value[key]) for key in _DECISION_KEYS if key in value]
            if len(lists) > 1 and any(other != lists[0] for other in lists[1:]):
                raise LLMOutputError("the answer holds both " + " and ".join(
                    f'"{key}"' for key in _DECISION_KEYS if key in value) + " with different decisions")
            value = lists[0] if lists else None
    if not isinstance(value, list):
        raise LLMOutputError('expected {"memory": [...]} or {"actions": [...]}')
    entries = []
    for item in value:
        if not isinstance(item, dict):
            continue
        event = str(item.get("event", "")).strip().upper()
        if event not in EVENTS:
            continue
        entries.append({
            "id": str(item.get("id", "")).strip(),
            "event": event,
            "text": item.get("text") if isinstance(item.get("text"), str) else "",
            "old_memory": item.get("old_memory") if isinstance(item.get("old_memory"), str) else "",
        })
    return entries


class LLMEngine:
    #: ``extract`` takes the project's custom instructions (``instructions=``; ingest/formation.py)
    follows_instructions = True

    def __init__(self, llm: LLM, *, extraction_prompt: str | None = None, update_prompt: str | None = None):
        self.llm = llm
        self.name = f"llm:{llm.name}"
        self.extraction_prompt = extraction_prompt
        self.update_prompt = update_prompt or prompts.UPDATE_MEMORY

    @classmethod
    def from_config(cls, config: MemoryConfig) -> "LLMEngine":
        return cls(create_llm(config.llm), extraction_prompt=config.custom_fact_extraction_prompt,
                   update_prompt=config.custom_update_memory_prompt)

    # -- the two calls -----------------------------------------------------------------------

    def _ask(self, messages: list[dict[str, str]], normalize: Any) -> Any:
        """One call; if the answer cannot be used, one repair call; then FormationFailed."""
        return ask_json(self.llm, messages, normalize, repair=prompts.REPAIR, failure=FormationFailed)

    def extract(self, messages: list[Message], *, agent_facts: bool, instructions: str | None = None) -> list[Fact]:
        """``instructions``: the project's custom instructions (``follows_instructions``), added to the prompt."""
        speaker = "assistant (the agent)" if agent_facts else "user"
        system = self.extraction_prompt or prompts.fill(prompts.FACT_EXTRACTION, speaker=speaker)
        if instructions:
            system += prompts.PROJECT_INSTRUCTIONS + instructions
        transcript = "\n".join(f"{m.role}{f' ({m.name})' if m.name else ''}: {m.content}"
                               for m in messages if m.role != "system")
        found = self._ask([{"role": "system", "content": system},
                           {"role": "user", "content": f"Conversation:\n{transcript}"}], normalize_facts)
        sources = tuple(i for i, m in enumerate(messages) if m.role == ("assistant" if agent_facts else "user"))
        facts, seen = [], set()
        for text, kind in found:
            if text.casefold() in seen:
                continue
            seen.add(text.casefold())
            if text.lower().startswith(_FORGET_PREFIXES):
                facts.append(Fact(text=text, kind="forget", sources=sources))
            else:
                facts.append(Fact(text=text, memory_type=kind or offline_extract.classify(text), sources=sources))
        return facts

    def reconcile(self, facts: list[Fact], candidates: Candidates) -> list[Decision]:
        if not candidates.memories:  # nothing to compare with: every statement is new, no call needed
            return [Decision("ADD", text=f.text, fact=i, memory_type=f.memory_type)
                    for i, f in enumerate(facts) if f.kind == "statement"]
        short = {str(n): memory for n, memory in enumerate(candidates.memories)}  # the model sees small ids
        listing = json.dumps([{"id": n, "text": m.text} for n, m in short.items()], ensure_ascii=False, indent=1)
        fact_list = json.dumps([f.text for f in facts], ensure_ascii=False, indent=1)
        prompt = prompts.fill(self.update_prompt, memories=listing, facts=fact_list)
        entries = self._ask([{"role": "user", "content": prompt}], normalize_updates)
        by_text = {f.text: i for i, f in enumerate(facts)}
        decisions = []
        for entry in entries:
            if entry["event"] == "ADD":
                index = by_text.get(entry["text"])
                if index is not None and facts[index].kind == "forget":
                    continue  # a request to forget never becomes a memory
                decisions.append(Decision("ADD", text=entry["text"], fact=index,
                                          memory_type=facts[index].memory_type if index is not None else None))
                continue
            memory = short.get(entry["id"])
            if memory is None:
                continue  # an id the model made up
            reason = {"UPDATE": "changed", "DELETE": "contradicted", "NONE": "already known"}[entry["event"]]
            text = entry["text"] or memory.text
            index = by_text.get(text)
            kind = None  # an UPDATE gives the memory its new text's type
            if entry["event"] == "UPDATE":
                kind = facts[index].memory_type if index is not None else offline_extract.classify(text)
            decisions.append(Decision(entry["event"], text=text, target=memory.id, reason=reason, memory_type=kind))
        return decisions

    def skip_reason(self, message: Message, *, agent_facts: bool) -> str:
        """The offline reading when it names one (a question, a greeting …), else the model's silence."""
        reason = offline_extract.skip_reason(message, agent_facts=agent_facts)
        if set(reason.split(", ")) <= set(offline_extract.EVIDENT_REASONS):
            return reason
        return "the model found no durable fact in it"

    def merge(self, older: str, newer: str, similarity: float) -> str | None:
        """One chat call: the model's merged text, or None when it answers CONTRADICTION."""
        try:
            answer = self.llm.chat([{"role": "user", "content": prompts.fill(prompts.MERGE_MEMORIES, older=older,
                                                                              newer=newer)}], json_mode=False)
        except LLMError as exc:
            raise FormationFailed(str(exc)) from exc
        text = answer.strip()
        if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'":
            text = text[1:-1].strip()
        if text.strip(".").upper() == "CONTRADICTION":
            return None
        if not text:
            raise FormationFailed("the model answered the merge with no text")
        return text

    def summarize_procedure(self, messages: list[Message], prompt: str | None = None) -> str:
        """One procedural memory of the messages; ``prompt`` (mem0's ``add(prompt=)``) replaces the instructions."""
        history = "\n".join(f"[{m.role}{f' {m.name}' if m.name else ''}] {m.content}" for m in messages)
        try:
            summary = self.llm.chat([{"role": "system", "content": prompt or prompts.PROCEDURE_SUMMARY},
                                     {"role": "user", "content": history}], json_mode=False)
        except LLMError as exc:
            raise FormationFailed(str(exc)) from exc
        if not summary.strip():
            return OfflineEngine().summarize_procedure(messages)
        return summary.strip()
