"""The change-set types: what a formation or maintenance step asks a store to apply in one
transaction (inserts, updates, invalidations, deletes, messages, idempotency keys, graph changes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memlane.core.graph_models import GraphChanges
from memlane.core.jobs import Job, JobDone
from memlane.core.models import MemoryRecord, MessageRecord


@dataclass(slots=True, kw_only=True)
class Attributed:
    """Who made a change, recorded in the history row it writes (by keyword only)."""

    actor_id: str | None = None
    role: str | None = None


@dataclass(slots=True)
class Update(Attributed):
    id: str
    updated_at: str
    text: str | None = None
    hash: str | None = None
    vector: np.ndarray | None = None
    metadata: dict[str, Any] | None = None
    reason: str | None = None
    #: messages that led to this change, appended to the memory's provenance
    source_message_ids: list[str] = field(default_factory=list)
    token_vectors: np.ndarray | None = None
    #: the history event written (``MERGE`` when maintenance merges another memory into this one)
    event: str = "UPDATE"


@dataclass(slots=True)
class Delete(Attributed):
    id: str


@dataclass(slots=True)
class Invalidate(Attributed):
    """Mark a memory no longer valid (contradicted or retracted) without erasing it."""

    id: str
    reason: str
    superseded_by: str | None = None
    #: the history event written (``MERGE`` when the memory was merged into ``superseded_by``)
    event: str = "DELETE"
    #: when it stopped being valid (a conversation said at that time ended it), or None: now
    at: str | None = None


#: the ``invalid_reason`` of a memory whose ``valid_to`` was set ahead of time (an expiry, a TTL)
EXPIRED = "expired"


@dataclass(slots=True)
class Expiry:
    """Set when a memory stops being valid (``valid_to``, reason ``EXPIRED``), or clear it (None: valid
    until changed), for a memory that is valid or has expired; one that was invalidated otherwise
    (contradicted, retracted, merged) is not brought back. No history row: when a memory lapses is not a
    change of what it says (a LangGraph TTL is pushed back on every read)."""

    id: str
    valid_to: str | None


@dataclass(slots=True)
class ChangeSet:
    """Everything one public call writes. ``keys`` are idempotency keys recorded in
    the same transaction (e.g. lines already imported), so a retried batch is a no-op. ``jobs``
    are queued with the rest (an ``add(async_mode=True)``: its messages, provisional memories and
    job at once); ``job_done`` ends a held job with the effect it had (core/jobs.py)."""

    inserts: list[MemoryRecord] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    invalidations: list[Invalidate] = field(default_factory=list)
    expiries: list[Expiry] = field(default_factory=list)
    deletes: list[Delete] = field(default_factory=list)
    messages: list[MessageRecord] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    #: entities and relations (graph memory), written in the same transaction
    graph: GraphChanges = field(default_factory=GraphChanges)
    jobs: list[Job] = field(default_factory=list)
    job_done: JobDone | None = None

    def __bool__(self) -> bool:
        """Whether there is anything to write."""
        return bool(self.inserts or self.updates or self.invalidations or self.expiries or self.deletes
                    or self.messages or self.keys or self.graph or self.jobs or self.job_done)
