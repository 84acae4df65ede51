"""``add(async_mode=True)``: keep the call at once, form it later (docs/deployment.md).

``enqueue`` writes, in one transaction, the messages (verbatim, as every add does), a
*provisional* memory per message (what was sent, in the keyword index at once, so the very next
search finds it by its words) and two jobs, without running the embedding model: the call answers
in the time of that one write. The ``EMBED`` job (an order key of its own, run by the workers'
quick lane) gives the provisional memories their vectors, so a search finds them by meaning a few
milliseconds later, even while a worker still forms the same user's earlier adds (``ADD`` jobs of
one user run in order). The ``ADD`` job (``run``; the event users see) runs the same formation a
synchronous add does (``Formation.decide``), written in one transaction with the job's end and the
removal of the provisional memories, so a search sees either what was sent or what was formed,
never both, and a job's effect is applied once however many workers tried it. Formation reads the
scope's formed memories only, so it needs none of the provisional vectors; formed first, an add
leaves its ``EMBED`` job nothing to do.
"""

from __future__ import annotations

import uuid
from typing import Any

from memlane.background.workers import Workers
from memlane.background import webhooks
from memlane.core import filters as flt
from memlane.core import timeutil, validation
from memlane.core.arguments import AddCall
from memlane.core.changes import AddRecord, ChangeSet, Embedded
from memlane.core.errors import EventNotFoundError
from memlane.core.jobs import ADD, EMBED, FAILED, STATES, SUCCEEDED, WEBHOOK, Job, JobDone, embed_key, order_key
from memlane.core.models import Message, MessageRecord, NewMemory
from memlane.core.scope import SCOPE_KEYS
from memlane.ingest import records as ingest_records

#: the ``Memory`` (memory.py) whose side this is: named, not imported (memory.py imports this module)
Facade = Any

QUEUED = "queued: formed in the background; Memory.event(event_id) or GET /v1/event/{event_id}/ tells its outcome"


class FormsInBackground:
    """``Memory``'s side of background formation: its events, and the workers that form its async adds
    (unless a server's or ``memlane worker``'s do: ``Memory(background=False)``)."""

    def stop_background(self: Facade) -> None:
        """Stop this ``Memory``'s workers, if they run."""
        if self._workers is not None:
            self._workers.stop()
            self._workers = None

    def event(self: Facade, event_id: str) -> dict[str, Any]:
        """An async add's event: ``status`` ``PENDING`` / ``RUNNING`` / ``SUCCEEDED`` (``result``: the
        add's full answer; ``results`` as mem0's platform lists them) / ``FAILED`` (``error``: why)."""
        job = self.store.job(validation.identifier(event_id, "event_id", required=True))
        if job is None:
            raise EventNotFoundError(event_id)
        return job.to_event()

    def events(self: Facade, status: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """The newest ``limit`` events (of one ``status``), newest first."""
        status = validation.choice(status, STATES, "status")
        return [job.to_event() for job in self.store.jobs(status, validation.limit(limit, self.limits), kind=ADD)]

    def start_background(self: Facade) -> None:
        """Start this ``Memory``'s workers (``config.background.workers`` threads); they also form the
        jobs an earlier process queued and left (after a crash, once their lease has run out)."""
        if self._workers is None and self.background and self.config.background.workers:
            self._workers = Workers(lambda: [self.store], lambda job, queue: self, self.config.background).start()

    def _queued(self: Facade) -> None:
        if self.on_queued is not None:
            return self.on_queued()
        self.start_background()
        if self._workers is not None:
            self._workers.wake()

    def run_job(self: Facade, job: Job, worker: str) -> None:
        """Form a job ``worker`` holds (a worker thread calls it); a webhook delivery is posted."""
        if job.kind == WEBHOOK:
            return webhooks.deliver(self, job, worker)
        if job.kind == EMBED:
            return embed(self, job, worker)
        run(self, job, worker)

    def fail_job(self: Facade, job: Job, worker: str, error: str) -> None:
        fail(self, job, worker, error)


def enqueue(memory: Facade, call: AddCall, kept: list[MessageRecord], journal: AddRecord | None = None
            ) -> dict[str, Any]:
    """Keep the messages, their provisional memories and the jobs in one transaction; mem0's answer
    (``PENDING`` with the event id) with the kept message ids and the provisional memories. ``journal``:
    the add's record (``ingest/adds.py``, an add with an idempotency key), written in that transaction
    with the answer as its outcome."""
    job = Job(id=_event_id(), kind=ADD, order_key=order_key(call.ids), created_at=timeutil.now_iso(),
              request=call_json(call, kept))
    provisional = ingest_records.unembedded(_provisional(memory, call, kept, job.id))
    answer = {"results": [{"message": QUEUED, "status": "PENDING", "event_id": job.id}], "status": "PENDING",
              "event_id": job.id, "message_ids": [m.id for m in kept],
              "provisional": [{"id": r.id, "memory": r.text} for r in provisional]}
    if journal is not None:
        journal.outcome = answer
    jobs = [job]
    if provisional:  # after the ADD job: a worker free to form it at once takes that first
        jobs.append(Job(id=_event_id(), kind=EMBED, order_key=embed_key(job.id), created_at=job.created_at,
                        request={"event_id": job.id}))
    memory.store.apply(ChangeSet(messages=kept, inserts=provisional, jobs=jobs, journal=journal))
    return answer


def _event_id() -> str:
    return str(uuid.uuid4())


def _provisional(memory: Facade, call: AddCall, kept: list[MessageRecord], event_id: str) -> list[NewMemory]:
    """What was sent, a memory per message but system messages (as ``infer=False`` stores them)."""
    if not memory.config.background.provisional:
        return []
    return [NewMemory(text=m.content, actor_id=call.promoted.get("actor_id", m.name),
                      role=call.promoted.get("role", m.role), metadata=call.metadata, memory_type=call.memory_type,
                      source_message_ids=[record.id], event_id=event_id, created_at=record.created_at,
                      updated_at=record.created_at, **call.expiry, **call.ids)
            for m, record in zip(call.messages, kept) if m.role != "system"]


def call_json(call: AddCall, kept: list[MessageRecord]) -> dict[str, Any]:
    """What a queued job keeps of the add (checked when it was queued) and of its kept messages (their
    ids, and when each was said: formed later, the memories still carry the time of the add)."""
    return {**call.ids, "messages": [m.model_dump(exclude_none=True) for m in call.messages],
            "message_ids": [m.id for m in kept], "times": [m.created_at for m in kept], "metadata": call.metadata,
            "promoted": call.promoted, "infer": call.infer, "memory_type": call.memory_type,
            "expires": call.expires, "prompt": call.prompt, "said_at": call.said_at}


def from_json(data: dict[str, Any], queued_at: str) -> tuple[AddCall, list[str], list[str]]:
    """A queued job's add, the ids of its kept messages and when each was said (a job queued before the
    times were kept: ``queued_at``)."""
    call = AddCall(ids={k: data[k] for k in SCOPE_KEYS if data.get(k)}, messages=[Message(**m) for m in data["messages"]],
                   metadata=data.get("metadata") or {}, promoted=data.get("promoted") or {},
                   infer=data.get("infer", True), memory_type=data.get("memory_type"), expires=data.get("expires"),
                   prompt=data.get("prompt"), said_at=data.get("said_at"))
    return call, list(data["message_ids"]), list(data.get("times") or call.times(queued_at))


def run(memory: Facade, job: Job, worker: str) -> None:
    """Form an ``ADD`` job and end it, in one transaction (``JobLostError`` when another worker took it)."""
    call, message_ids, times = from_json(job.request, job.created_at)
    changes, outcome = memory.formation.decide(call, message_ids, times)
    status = SUCCEEDED if outcome.get("status") == "ok" else FAILED
    changes.job_done = JobDone(id=job.id, worker=worker, attempt=job.attempts, status=status, result=outcome,
                               error=outcome.get("reason"))
    memory.store.apply(changes)


def embed(memory: Facade, job: Job, worker: str) -> None:
    """Run an ``EMBED`` job: its event's provisional memories get their vectors in the transaction that
    ends the job (``JobLostError`` when another worker took it; then nothing of it is written)."""
    event_id = job.request["event_id"]
    done = JobDone(id=job.id, worker=worker, attempt=job.attempts, status=SUCCEEDED, result={"event_id": event_id},
                   provisional=False)
    if not embed_provisional(memory, event_id, done):  # formed already: the job only ends
        memory.store.apply(ChangeSet(job_done=done))


def embed_provisional(memory: Facade, event_id: str, done: JobDone | None = None) -> int:
    """Give the event's provisional memories their vectors (one batch, one transaction, with ``done``:
    the end of the job that embeds them); how many were read. A vector is written only where the memory
    has none yet (``Embedded``): a job tried again after its worker died embeds again, and changes
    nothing."""
    waiting = memory.store.list(flt.Compare(flt.Field(column="event_id"), "eq", event_id),
                                memory.config.limits.max_messages)
    if not waiting:
        return 0
    ingest_records.embed(waiting, memory.embeddings, memory.config.retrieval)
    memory.store.apply(ChangeSet(embedded=[Embedded(r.id, r.vector, r.token_vectors) for r in waiting],
                                 job_done=done))
    return len(waiting)


def fail(memory: Facade, job: Job, worker: str, error: str) -> None:
    """End a job that could not be formed (its messages stay kept; its provisional memories go)."""
    memory.store.apply(ChangeSet(job_done=JobDone(id=job.id, worker=worker, attempt=job.attempts, status=FAILED,
                                                  error=error)))
