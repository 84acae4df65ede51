"""One ``add`` call's arguments, validated once: formed at once (``Memory.add``) or queued and
formed later by a worker (``add(async_mode=True)``; the job keeps them as JSON)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from memlane.core import scope, validation
from memlane.core.errors import InvalidInputError
from memlane.core.ids import new_id
from memlane.core.models import MEMORY_TYPES, Message, MessageRecord


@dataclass(slots=True)
class AddRequest:
    ids: dict[str, str]
    received: list[Message]
    #: the metadata to store, and the fields lifted out of it (``actor_id``, ``role``)
    metadata: dict[str, Any] = field(default_factory=dict)
    promoted: dict[str, str] = field(default_factory=dict)
    infer: bool = True
    memory_type: str | None = None
    #: when the memories added expire (stored form), or None
    expires: str | None = None

    @classmethod
    def validate(cls, messages: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
                 metadata: Any = None, infer: Any = True, memory_type: Any = None,
                 expiration_date: str | date | datetime | None = None,
                 limits: validation.Limits) -> "AddRequest":
        ids = scope.scope_ids(user_id, agent_id, run_id)
        scope.require_ids(ids)
        if not isinstance(infer, bool):
            raise InvalidInputError(f"infer must be true or false, got {infer!r}", field="infer")
        memory_type = validation.choice(memory_type, MEMORY_TYPES, "memory_type")
        if memory_type == "procedural" and "agent_id" not in ids:
            raise InvalidInputError("procedural memories belong to an agent: give agent_id", field="agent_id")
        stored, promoted = validation.metadata(metadata, limits)
        expires = validation.expiration(expiration_date)
        received = validation.messages(messages, limits)
        return cls(ids=ids, received=received, metadata=stored, promoted=promoted, infer=infer,
                   memory_type=memory_type, expires=expires)

    def keep(self, now: str) -> list[MessageRecord]:
        """The messages as the store keeps them, verbatim, each with a new id."""
        return [MessageRecord(id=new_id(), role=m.role, content=m.content, created_at=now, name=m.name, **self.ids)
                for m in self.received]

    def to_json(self, message_ids: list[str]) -> dict[str, Any]:
        """What a queued job keeps of the call (with the ids of its kept messages)."""
        return {**self.ids, "messages": [m.model_dump(exclude_none=True) for m in self.received],
                "message_ids": list(message_ids), "metadata": self.metadata, "promoted": self.promoted,
                "infer": self.infer, "memory_type": self.memory_type, "expires": self.expires}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> tuple["AddRequest", list[str]]:
        """A queued job's call (validated when it was queued), and the ids of its kept messages."""
        return (cls(ids={k: data[k] for k in scope.SCOPE_KEYS if data.get(k)},
                    received=[Message(**m) for m in data["messages"]], metadata=data.get("metadata") or {},
                    promoted=data.get("promoted") or {}, infer=data.get("infer", True),
                    memory_type=data.get("memory_type"), expires=data.get("expires")),
                list(data["message_ids"]))
