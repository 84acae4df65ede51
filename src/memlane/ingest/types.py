"""The values that flow through memory formation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from memlane.core.models import MemoryRecord, Message

Event = Literal["ADD", "UPDATE", "DELETE", "NONE"]
FactKind = Literal["statement", "forget"]


@dataclass(slots=True)
class Fact:
    """A durable statement worth remembering (``statement``), or a request to forget
    something (``forget``: ``text`` says what; it deletes, it never adds)."""

    text: str
    memory_type: str = "fact"
    kind: FactKind = "statement"
    #: indices (into the call's messages) of the messages the fact came from
    sources: tuple[int, ...] = ()
    #: who stated it (set by the caller from its messages' names): a memory of another actor is
    #: not its counterpart (``Memory.add``; the offline reconciler skips such pairs)
    actor_id: str | None = None
    #: said as a refinement of something already said ("Specifically, …", "To be precise, …", 具体来说…)
    refines: bool = False


@dataclass(slots=True)
class Decision:
    event: Event
    #: the new text (ADD, UPDATE); for DELETE/NONE the fact that caused it
    text: str = ""
    #: the existing memory (UPDATE, DELETE, NONE)
    target: str | None = None
    #: the fact (index into the facts list) behind the decision, when known
    fact: int | None = None
    reason: str = ""
    memory_type: str | None = None


@dataclass(slots=True)
class Candidates:
    """Active memories of the scope near the facts, and fact × memory cosine similarities."""

    memories: list[MemoryRecord] = field(default_factory=list)
    similarity: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))


class FormationFailed(Exception):
    """Extraction or reconciliation could not produce a usable answer (reported in the add result)."""


class Engine(Protocol):
    """Turns messages into facts and facts into decisions. Offline rules or an LLM."""

    name: str

    def extract(self, messages: list[Message], *, agent_facts: bool) -> list[Fact]:
        """Facts stated in the messages (user facts; assistant facts too when ``agent_facts``). An engine whose
        ``reads_earlier_turns`` is true also takes ``earlier=``: the scope's turns said just before them
        (whom a pronoun points to); one whose ``follows_instructions`` is true takes ``instructions=``: the
        project's custom instructions (core/project.py), when it has some."""

    def reconcile(self, facts: list[Fact], candidates: Candidates) -> list[Decision]:
        """One decision per fact (and per memory a fact contradicts)."""

    def skip_reason(self, message: Message, *, agent_facts: bool) -> str:
        """Why ``message`` gave no fact, in a few words (a question, a greeting, an assistant turn …)."""

    def summarize_procedure(self, messages: list[Message], prompt: str | None = None) -> str:
        """One memory summarising an agent's execution history."""

    def merge(self, older: str, newer: str, similarity: float) -> str | None:
        """One text for two near-duplicate memories (maintenance), or None when they disagree and
        must stay apart. ``FormationFailed`` when no text could be written."""
