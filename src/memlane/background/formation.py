"""``add(async_mode=True)``: keep the call at once, form it later (docs/deployment.md).

``enqueue`` writes, in one transaction, the messages (verbatim, as every add does), a
*provisional* memory per message (what was sent, embedded as a memory is, so the very next
search finds it) and the job. ``run`` is a worker's turn: the same formation a synchronous add
does (``Memory.decide``), written in one transaction with the job's end and the removal of the
provisional memories, so a search sees either what was sent or what was formed, never both,
and a job's effect is applied once however many workers tried it.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from memlane.core import timeutil
from memlane.core.changes import EXPIRED, ChangeSet
from memlane.core.jobs import ADD, FAILED, SUCCEEDED, Job, JobDone, order_key
from memlane.core.models import MessageRecord, NewMemory
from memlane.ingest import records as ingest_records
from memlane.ingest.request import AddRequest

if TYPE_CHECKING:
    from memlane.memory import Memory

QUEUED = "queued: formed in the background; Memory.event(event_id) or GET /v1/event/{event_id}/ tells its outcome"


def enqueue(memory: "Memory", request: AddRequest, kept: list[MessageRecord]) -> dict[str, Any]:
    """Keep the messages, their provisional memories and the job in one transaction; mem0's answer
    (``PENDING`` with the event id) with the kept message ids and the provisional memories."""
    job = Job(id=_event_id(), kind=ADD, order_key=order_key(request.ids), created_at=timeutil.now_iso(),
              request=request.to_json([m.id for m in kept]))
    provisional = ingest_records.records(_provisional(memory, request, kept, job.id), memory.embeddings,
                                         memory.config.retrieval)
    memory.store.apply(ChangeSet(messages=kept, inserts=provisional, jobs=[job]))
    return {"results": [{"message": QUEUED, "status": "PENDING", "event_id": job.id}], "status": "PENDING",
            "event_id": job.id, "message_ids": [m.id for m in kept],
            "provisional": [{"id": r.id, "memory": r.text} for r in provisional]}


def _event_id() -> str:
    return str(uuid.uuid4())


def _provisional(memory: "Memory", request: AddRequest, kept: list[MessageRecord], event_id: str) -> list[NewMemory]:
    """What was sent, a memory per message but system messages (as ``infer=False`` stores them)."""
    if not memory.config.background.provisional:
        return []
    return [NewMemory(text=m.content, actor_id=request.promoted.get("actor_id", m.name),
                      role=request.promoted.get("role", m.role), metadata=request.metadata,
                      memory_type=request.memory_type, source_message_ids=[record.id], event_id=event_id,
                      valid_to=request.expires, invalid_reason=EXPIRED if request.expires else None, **request.ids)
            for m, record in zip(request.received, kept) if m.role != "system"]


def run(memory: "Memory", job: Job, worker: str) -> None:
    """Form a held job and end it, in one transaction (``JobLostError`` when another worker took it)."""
    request, message_ids = AddRequest.from_json(job.request)
    changes, outcome = memory.decide(request, message_ids)
    status = SUCCEEDED if outcome.get("status") == "ok" else FAILED
    changes.job_done = JobDone(id=job.id, worker=worker, attempt=job.attempts, status=status, result=outcome,
                               error=outcome.get("reason"))
    memory.store.apply(changes)


def fail(memory: "Memory", job: Job, worker: str, error: str) -> None:
    """End a job that could not be formed (its messages stay kept; its provisional memories go)."""
    memory.store.apply(ChangeSet(job_done=JobDone(id=job.id, worker=worker, attempt=job.attempts, status=FAILED,
                                                  error=error)))
