"""The change-set types: what a formation or maintenance step asks a store to apply in one
transaction (inserts, updates, invalidations, deletes, messages, idempotency keys, graph changes,
and the journal of an ``add``)."""

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
    #: the memory's new type (formation's UPDATE: the new text's), or None: unchanged
    memory_type: str | None = None
    reason: str | None = None
    #: messages that led to this change, appended to the memory's provenance
    source_message_ids: list[str] = field(default_factory=list)
    token_vectors: np.ndarray | None = None
    #: the history event written (``MERGE`` when maintenance merges another memory into this one)
    event: str = "UPDATE"
    #: when the memory was said, replacing its ``created_at`` (``update(timestamp=)``); None: unchanged
    created_at: str | None = None


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
class Embedded:
    """The vector (and token vectors) of a memory stored without one: an async add's provisional memory,
    embedded by a worker after the call answered. Written only while the memory still has no vector (no
    history row: a stand-in leaves no trace)."""

    id: str
    vector: np.ndarray
    token_vectors: np.ndarray | None = None


#: the states of an ``AddRecord``
PENDING = "pending"
DONE = "done"


@dataclass(slots=True)
class AddRecord:
    """One ``add`` as the store journals it (``store/sql_adds.py``): written in the transaction that
    keeps the call's messages, ``pending`` until the transaction writing what they formed also sets it
    ``done`` with the call's outcome. So a crash between the two leaves a pending record to complete
    (the messages are stored, the request is here), a retry with the same idempotency ``key`` finds the
    first call's outcome, and completing it twice is impossible (``AddDone``). A queue of adds to form
    later is the same record, pending until a worker completes it.

    ``owner`` names the process forming it (``host:pid:start``) and ``lease_until`` when another may
    take it over without knowing whether that process is alive (another host)."""

    id: str
    fingerprint: str
    request: dict[str, Any]
    message_ids: list[str]
    created_at: str
    key: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    status: str = PENDING
    outcome: dict[str, Any] | None = None
    owner: str | None = None
    lease_until: str | None = None
    updated_at: str | None = None


@dataclass(slots=True)
class AddDone:
    """Complete a pending add with its outcome, in the transaction that writes what it formed.
    Fails (``AddAlreadyDone``, nothing written) if the add is not pending any more. ``keep``: keep the
    record with its outcome (an add with an idempotency key, for its retries); else it is removed.
    ``forget_messages`` (with ``keep=False``): its messages are removed too, the add leaves nothing (one
    the disk had no room for)."""

    id: str
    outcome: dict[str, Any]
    keep: bool = True
    forget_messages: bool = False


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
    #: an add to journal with its ``messages`` (``AddKeyTaken`` if its key is), and one to complete
    journal: AddRecord | None = None
    done: AddDone | None = None
    jobs: list[Job] = field(default_factory=list)
    job_done: JobDone | None = None
    #: vectors of memories stored without one (``Embedded``)
    embedded: list[Embedded] = field(default_factory=list)

    def __bool__(self) -> bool:
        """Whether there is anything to write."""
        return bool(self.inserts or self.updates or self.invalidations or self.expiries or self.deletes
                    or self.messages or self.keys or self.graph or self.jobs or self.job_done
                    or self.journal or self.done or self.embedded)
