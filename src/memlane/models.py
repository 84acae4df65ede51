"""The nouns: records as stored, and the shapes memlane hands back.

``MemoryRecord`` and ``HistoryRecord`` are what the store reads and writes.
The pydantic models describe the public output (mem0's ``MemoryItem`` shape)
and validate it at the boundaries (REST, tests).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict

#: Keys lifted from the payload to the top level of a MemoryItem (mem0's promoted keys).
PROMOTED_KEYS = ("user_id", "agent_id", "run_id", "actor_id", "role")


@dataclass(slots=True)
class MemoryRecord:
    id: str
    text: str
    hash: str
    created_at: str
    updated_at: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    actor_id: str | None = None
    role: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    vector: np.ndarray | None = None

    def to_item(self, score: float | None = None) -> dict[str, Any]:
        """The mem0 ``MemoryItem`` dict; promoted keys appear only when set."""
        item: dict[str, Any] = {
            "id": self.id,
            "memory": self.text,
            "hash": self.hash,
            "metadata": dict(self.metadata),
            "score": score,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        for key in PROMOTED_KEYS:
            value = getattr(self, key)
            if value is not None:
                item[key] = value
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
        }


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    name: Optional[str] = None


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


class HistoryEvent(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: int
    memory_id: str
    event: Literal["ADD", "UPDATE", "DELETE"]
    old_memory: Optional[str]
    new_memory: Optional[str]
    created_at: str
    actor_id: Optional[str] = None
    role: Optional[str] = None
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
