"""The nouns: records as stored, and the shapes memlane hands back.

``MemoryRecord`` and ``HistoryRecord`` are what the store reads and writes.
The pydantic models describe the public output (mem0's ``MemoryItem`` shape)
and validate it at the boundaries (REST, tests).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any, Literal, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict

#: Keys lifted from the payload to the top level of a MemoryItem (mem0's promoted keys).
PROMOTED_KEYS = ("user_id", "agent_id", "run_id", "actor_id", "role")
#: memlane's own fields, shown when set: the type, validity (an invalidated memory
#: has ``valid_to``) and provenance (ids of the messages it came from).
EXTRA_KEYS = ("memory_type", "valid_to", "invalid_reason", "superseded_by", "source_message_ids", "context")
MEMORY_TYPES = ("fact", "preference", "event", "profile", "procedural")
#: metadata key: ``False`` keeps a memory out of every search (vector, keyword, agent context) while it is
#: stored, listed, read and changed as any other (the LangGraph store's ``index=False`` items)
SEARCHABLE = "searchable"


def text_hash(text: str) -> str:
    """mem0's memory hash: MD5 of the text (an identity check, not security)."""
    return hashlib.md5(text.encode()).hexdigest()


@dataclass(slots=True, kw_only=True)
class MemoryFields:
    """What a memory holds besides its text and times, stored or about to be (keyword arguments): its
    scope, who said it, metadata, type, provenance and validity."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    actor_id: str | None = None
    role: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    memory_type: str | None = None
    source_message_ids: list[str] = field(default_factory=list)
    #: set on a new memory only when restoring an invalidated one (import) or when it expires
    valid_to: str | None = None
    invalid_reason: str | None = None
    superseded_by: str | None = None
    #: the event of an ``add(async_mode=True)`` whose formation replaces this provisional memory
    event_id: str | None = None
    #: the conversation just before the message a verbatim memory keeps (``retrieval.context_messages``):
    #: embedded before its text and indexed with its keywords, so a reply is found by what it answers
    context: str | None = None


@dataclass(slots=True)
class NewMemory(MemoryFields):
    """A validated memory about to be stored (``Memory.insert``)."""

    text: str
    id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


def _copied(metadata: dict[str, Any]) -> dict[str, Any]:
    """The caller's own copy of a record's metadata, nested values too (a store may share its records between
    answers: ``store/sqlite_scope_cache.py``); a flat document costs one ``dict`` copy."""
    copied = dict(metadata)
    for key, value in copied.items():
        if isinstance(value, (dict, list)):
            copied[key] = copy.deepcopy(value)
    return copied


@dataclass(slots=True)
class MemoryRecord(MemoryFields):
    id: str
    text: str
    hash: str
    created_at: str
    updated_at: str
    vector: np.ndarray | None = None
    #: pooled contextual token vectors (late-interaction reranking), when the store keeps them
    token_vectors: np.ndarray | None = None

    @property
    def searchable(self) -> bool:
        return self.metadata.get(SEARCHABLE) is not False

    def to_item(self, score: float | None = None) -> dict[str, Any]:
        """The mem0 ``MemoryItem`` dict; promoted keys and memlane's extra fields appear only when set."""
        item: dict[str, Any] = {
            "id": self.id,
            "memory": self.text,
            "hash": self.hash,
            "metadata": _copied(self.metadata),
            "score": score,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        for key in (*PROMOTED_KEYS, *EXTRA_KEYS):
            value = getattr(self, key)
            if value:
                item[key] = list(value) if isinstance(value, list) else value
        if self.event_id:
            item["provisional"], item["event_id"] = True, self.event_id
        return item


@dataclass(slots=True)
class HistoryRecord:
    id: int
    memory_id: str
    event: str
    old_memory: str | None
    new_memory: str | None
    created_at: str
    actor_id: str | None = None
    role: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "memory_id": self.memory_id,
            "event": self.event,
            "old_memory": self.old_memory,
            "new_memory": self.new_memory,
            "created_at": self.created_at,
            "actor_id": self.actor_id,
            "role": self.role,
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "run_id": self.run_id,
            "reason": self.reason,
            "is_deleted": self.event == "DELETE",  # mem0's flag of the row that deleted the memory
        }


@dataclass(slots=True)
class MessageRecord:
    """A message as ``add`` received it, kept verbatim whatever happens next."""

    id: str
    role: str
    content: str
    created_at: str
    name: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "role": self.role, "content": self.content, "name": self.name,
                "created_at": self.created_at, "user_id": self.user_id, "agent_id": self.agent_id,
                "run_id": self.run_id}


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    name: Optional[str] = None
    #: when it was said (stored form), if the caller said so (``add(timestamp=)``, a message's ``created_at``)
    created_at: Optional[str] = None


class MemoryItem(BaseModel):
    """Public shape of one memory (``get``, ``get_all``, ``search`` results)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    memory: str
    hash: str
    metadata: dict[str, Any]
    score: Optional[float] = None
    created_at: str
    updated_at: str
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
    actor_id: Optional[str] = None
    role: Optional[str] = None
    memory_type: Optional[Literal["fact", "preference", "event", "profile", "procedural"]] = None
    valid_to: Optional[str] = None
    invalid_reason: Optional[str] = None
    superseded_by: Optional[str] = None
    source_message_ids: Optional[list[str]] = None
    #: what was said just before a verbatim memory's message (embedded and indexed with it)
    context: Optional[str] = None
    #: a provisional memory (what an ``add(async_mode=True)`` sent) and the event whose formation replaces it
    provisional: Optional[bool] = None
    event_id: Optional[str] = None
    #: per-stage scores of an advanced search (vector, keyword, rerank)
    scores: Optional[dict[str, float]] = None


class HistoryEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    memory_id: str
    event: Literal["ADD", "UPDATE", "DELETE", "MERGE"]
    old_memory: Optional[str]
    new_memory: Optional[str]
    created_at: str
    actor_id: Optional[str] = None
    role: Optional[str] = None
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
    reason: Optional[str] = None
    is_deleted: bool = False
