"""Background jobs: an ``add(async_mode=True)`` is kept at once and formed later by a worker.

A job is one row of the store's job table (``store/sql_jobs.py``), so it lives in the same
database as the memories it changes: a worker's result is written in the same transaction as
the job's effect (``JobDone`` in a ``ChangeSet``), which is what makes the effect happen once
however many times a job is claimed (a worker that died, a lease that ran out).

States: ``PENDING`` (queued), ``RUNNING`` (held by a worker under a lease), ``SUCCEEDED`` (the
add's full result is kept) and ``FAILED`` (with the reason). Jobs of one *order key* (the
user, else the agent, else the run) run one at a time, oldest first.

An async add queues two jobs: its formation (``ADD``, the event users see) and the embedding of
its provisional memories (``EMBED``, an order key of its own, so it never waits for the formation
of the user's earlier adds; a lane of the workers runs only these quick jobs:
background/workers.py). Only ``ADD`` jobs are events.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memlane.core import timeutil
from memlane.core.errors import MemlaneError

PENDING, RUNNING, SUCCEEDED, FAILED = "PENDING", "RUNNING", "SUCCEEDED", "FAILED"
OPEN = (PENDING, RUNNING)
STATES = (PENDING, RUNNING, SUCCEEDED, FAILED)
#: the job kinds a worker knows: a memory formation, a webhook delivery (core/webhooks.py), the embedding of
#: an async add's provisional memories (so they are found by meaning before the add is formed)
ADD = "ADD"
WEBHOOK = "WEBHOOK"
EMBED = "EMBED"
#: the kinds the workers' quick lane runs (they take milliseconds, never an LLM call)
QUICK = (EMBED,)


class JobLostError(MemlaneError):
    """A worker tried to finish a job it no longer holds (its lease ran out and another worker
    took the job over): nothing of its transaction is written."""


def order_key(ids: dict[str, str]) -> str:
    """The key jobs are ordered by: adds to one user are formed in the order they arrived
    (formation reads and changes the memories of that user); without a user, those of one
    agent; without either, those of one run."""
    for column in ("user_id", "agent_id", "run_id"):
        if ids.get(column):
            return f"{column}:{ids[column]}"
    raise ValueError("a job needs a scope id")


def embed_key(event_id: str) -> str:
    """The order key of an ``EMBED`` job: its own, so it waits for no other job."""
    return f"embed:{event_id}"


@dataclass(slots=True)
class Job:
    """One queued call and what became of it."""

    id: str
    kind: str
    order_key: str
    #: the call's validated arguments (JSON)
    request: dict[str, Any]
    created_at: str
    status: str = PENDING
    attempts: int = 0
    worker: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    #: the call's full result (``SUCCEEDED``; also ``FAILED`` when formation reported a failure)
    result: dict[str, Any] | None = None
    error: str | None = None
    #: the tenant of the row (a PostgreSQL queue read across tenants)
    tenant: str | None = None

    def to_event(self) -> dict[str, Any]:
        """The event as mem0's platform shows it (``GET /v1/event/{id}/``), with memlane's detail:
        ``result`` is the add's full answer, ``error`` the reason of a failure."""
        request = self.request
        payload = {key: request[key] for key in ("user_id", "agent_id", "run_id", "metadata", "infer",
                                                 "memory_type") if request.get(key) is not None}
        payload["messages"] = [{k: v for k, v in m.items() if k in ("role", "content", "name") and v is not None}
                               for m in request.get("messages", [])]
        results = [{**item, "data": {"memory": item.get("memory")}} for item in (self.result or {}).get("results", [])]
        event: dict[str, Any] = {
            "id": self.id, "event_type": self.kind, "status": self.status, "payload": payload,
            "metadata": request.get("metadata") or {}, "results": results, "result": self.result,
            "error": self.error, "attempts": self.attempts, "worker": self.worker, "created_at": self.created_at,
            "updated_at": self.finished_at or self.started_at or self.created_at,
            "started_at": self.started_at, "finished_at": self.finished_at, "latency": None,
        }
        if self.finished_at:
            event["latency"] = round(1000 * timeutil.seconds_between(self.created_at, self.finished_at), 1)
        return event


@dataclass(slots=True)
class JobDone:
    """The end of a held job, written in the same transaction as its effect: the update only
    counts when ``worker`` still holds attempt ``attempt`` of the job (else ``JobLostError``,
    and the transaction's other changes are rolled back with it)."""

    id: str
    worker: str
    attempt: int
    status: str
    result: dict[str, Any] | None = None
    error: str | None = None
    #: the event's provisional memories (what was sent, searchable at once) to erase
    provisional: bool = True
