"""Each ``add`` exactly once: journaled with its messages, formed, and completed in one transaction.

``Memory.add`` writes twice: the messages first (nothing a user sends is lost, even if formation
fails or the process dies), then what they formed. ``Adds`` makes the pair behave as one call:

1. **Journal.** The first transaction writes the messages and a pending record of the call
   (``core/changes.AddRecord``: scope, request, message ids, idempotency key, owner).
2. **Form and complete.** Formation runs (``ingest/formation.py``); the second transaction writes its
   changes and sets the record done with the call's outcome, on the condition that it is still
   pending (``AddAlreadyDone``: someone else completed it; this one's writes roll back).
3. **Recover.** A pending record whose owner is gone (a process on this host that no longer runs,
   another host's whose lease ran out, or none: released by a recovery whose formation raised) is
   completed from its stored request and messages: when a ``Memory`` opens the store, and by the
   next add in its scope, before that add.
4. **Retry.** An add with an ``idempotency_key`` already journaled answers the first call's outcome
   (completing it first if its process died); the same key with a different request is an error.
5. **A full disk.** An add whose formation could not be written for want of space
   (``StorageFullError``) is undone: its messages and its record are removed, so the error means
   nothing of it was stored and a retry (with its key or not) adds it once. If the disk is too full
   even to delete, this process undoes it later: before a retry with its key, or the next add in its
   scope (should the process stop first, the next open completes it as a crashed add's).
   An add the database went away from (``StoreUnavailableError``: the server answered 503) is undone
   the same way, so its retry with the same key keeps its messages once.

An async add (``add(async_mode=True)``, ``background/``) keeps its messages and its job in one
transaction, so it needs no recovery here; with a key it is journaled in that transaction as done
with its answer (``PENDING`` and the event id), and a retry answers that event (``queue``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from memlane.core import filters as flt
from memlane.core import timeutil
from memlane.core.arguments import AddCall
from memlane.core.changes import DONE, PENDING, AddDone, AddRecord, ChangeSet
from memlane.core.errors import (AddAlreadyDone, AddInProgress, AddKeyTaken, IdempotencyKeyReused, StorageFullError,
                                 StoreUnavailableError)
from memlane.core.ids import new_id
from memlane.core.models import Message, MessageRecord
from memlane.ingest.formation import Formation

log = logging.getLogger("memlane.adds")

#: how long another host waits before it takes over a pending add whose owner it cannot see
LEASE = timedelta(minutes=10)
#: how long a retry with the same idempotency key gets the first call's outcome
KEY_RETENTION = timedelta(days=7)
#: how long a completed add without a key stays journaled (a completion racing a recovery reads it)
UNKEYED_RETENTION = timedelta(hours=1)
#: how long a retry waits for the first call with its key, still being formed by a live process
WAIT_SECONDS = 30.0
#: adds completed between two prunings of old records (per process)
PRUNE_EVERY = 500


def _start_time(pid: int) -> str:
    """When process ``pid`` started (clock ticks since boot, Linux), so a reused pid is told apart."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return ""


HOST = socket.gethostname()


def this_process() -> str:
    """This process as an add's owner: ``host:pid:start``."""
    return f"{HOST}:{os.getpid()}:{_start_time(os.getpid())}"


def owner_alive(owner: str | None) -> bool | None:
    """Whether the process named ``owner`` still runs: True, False, or None (another host's: unknown)."""
    if not owner:
        return False
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or parts[0] != HOST:
        return None
    try:
        pid = int(parts[1])
        os.kill(pid, 0)
    except ValueError:
        return None
    except ProcessLookupError:
        return False
    except PermissionError:  # runs, as another user
        pass
    return not parts[2] or _start_time(pid) == parts[2]


def fingerprint(call: AddCall, queued: bool = False) -> str:
    """The request an idempotency key stands for: the same key must come with the same request
    (``queued``: an async add)."""
    body = {**request(call), "queued": True} if queued else request(call)
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def request(call: AddCall) -> dict[str, Any]:
    """What completing the add needs besides its messages (those are stored), as JSON."""
    return {"ids": call.ids, "messages": [[m.role, m.content, m.name, m.created_at] for m in call.messages],
            "metadata": call.metadata, "promoted": call.promoted, "infer": call.infer,
            "memory_type": call.memory_type, "expires": call.expires, "prompt": call.prompt,
            "said_at": call.said_at}


class Adds:
    """The add path of one ``Memory``: its store, formation and graph memory."""

    def __init__(self, store: Any, formation: Formation):
        self.store = store
        self.formation = formation
        self.owner = this_process()
        self._completed = 0
        #: adds of this process the disk had no room to undo (``forget``) or to release (``release``) yet
        self._to_forget: set[str] = set()
        self._released: set[str] = set()

    # -- the call ---------------------------------------------------------------------------------

    def add(self, call: AddCall, key: str | None = None) -> dict[str, Any]:
        if key is not None:
            found = self.store.add_record(key=key)
            if found is not None:
                return self._replay(found, call)
        self.complete_stale(call.ids)  # what a crash left behind in this scope comes first
        for add_id in list(self._to_forget):  # the store answers again: undo what it could not undo then
            self.forget(add_id)
        record, kept = self.journal_record(call, key)
        try:
            self.store.apply(ChangeSet(messages=kept, journal=record))
        except AddKeyTaken:  # a concurrent call with the same key journaled first
            return self.add(call, key)
        except StoreUnavailableError:  # the database went away, maybe while it committed: undone if it did
            self.forget(record.id)
            raise
        try:
            return self.complete(record, call, [m.created_at for m in kept])
        except (StorageFullError, StoreUnavailableError):
            self.forget(record.id)
            raise
        except BaseException:
            self.drop(record.id)
            raise

    def journal_record(self, call: AddCall, key: str | None, queued: bool = False
                       ) -> tuple[AddRecord, list[MessageRecord]]:
        now = timeutil.now_iso()
        kept = call.message_records(now)
        body = request(call)
        del body["messages"]  # stored as the messages themselves
        record = AddRecord(id=new_id(), fingerprint=fingerprint(call, queued), request=body,
                           message_ids=[m.id for m in kept], created_at=now, key=key, owner=self.owner,
                           lease_until=_later(LEASE), **call.ids)
        return record, kept

    def queue(self, call: AddCall, key: str | None,
              enqueue: Callable[[list[MessageRecord], AddRecord | None], dict[str, Any]]) -> dict[str, Any]:
        """An async add (``add(async_mode=True)``): ``enqueue(kept, record)`` keeps the messages and the
        add's job in one transaction, and writes ``record`` with them when the call has a key: the add
        journaled done with the answer (``PENDING``, the event id), so a retry answers the same event."""
        if key is None:
            return enqueue(call.message_records(timeutil.now_iso()), None)
        found = self.store.add_record(key=key)
        if found is not None:
            return self._replay(found, call, queued=True)
        record, kept = self.journal_record(call, key, queued=True)
        record.status, record.owner, record.lease_until = DONE, None, None
        try:
            return enqueue(kept, record)
        except AddKeyTaken:  # a concurrent call with the same key journaled first
            return self.queue(call, key, enqueue)

    def complete(self, record: AddRecord, call: AddCall | None = None, times: list[str] | None = None
                 ) -> dict[str, Any]:
        """Form a journaled add and write what it formed with its outcome (``call``: the request and
        ``times`` when its messages were said, when known; else read back from the record and its
        stored messages)."""
        if call is None or times is None:
            call, times = self._call(record)
        outcome, changes = self._form(call, record.message_ids, times)
        changes.done = AddDone(record.id, outcome)
        try:
            self.store.apply(changes)
        except AddAlreadyDone:  # completed by another process meanwhile: its outcome is the add's
            done = self.store.add_record(add_id=record.id)
            if done is None or done.outcome is None:
                raise
            return done.outcome
        self._completed += 1
        if self._completed % PRUNE_EVERY == 0:
            self.prune()
        return outcome

    # -- recovery ---------------------------------------------------------------------------------

    def stale(self, record: AddRecord) -> bool:
        """Whether a pending add's owner is gone: a process of this host that stopped, or another
        host's whose lease ran out."""
        if record.id in self._released and record.owner == self.owner:
            return True  # this process gave it up, and could not write so
        alive = owner_alive(record.owner)
        if alive is None:
            return not record.lease_until or record.lease_until < timeutil.now_iso()
        return not alive

    def take_over(self, record: AddRecord) -> dict[str, Any] | None:
        """Claim a stale pending add and complete it; None if another process claimed it first."""
        if not self.store.claim_add(record.id, record.owner, self.owner, _later(LEASE)):
            return None
        self._released.discard(record.id)
        log.info("completing add %s of %s (its process %s is gone)", record.id,
                 {k: v for k, v in (("user_id", record.user_id), ("agent_id", record.agent_id),
                                    ("run_id", record.run_id)) if v}, record.owner)
        return self._complete_or_release(record)

    def drop(self, add_id: str) -> None:
        """End an add whose formation raised to its caller (a provider down, a bug): its messages stay
        kept and it forms nothing, as the caller was told; a retry (with its key or not) adds it anew.
        Nothing completes it behind the caller's back."""
        try:
            self.store.apply(ChangeSet(done=AddDone(add_id, {}, keep=False)))
        except Exception:  # the store itself failed (or the add was completed meanwhile)
            log.exception("could not end the failed add %s", add_id)

    def forget(self, add_id: str) -> None:
        """Undo an add the disk had no room for: its messages and its record are removed (its caller
        was told nothing was stored). A disk too full even for that: kept in ``_to_forget`` for later."""
        try:
            self.store.apply(ChangeSet(done=AddDone(add_id, {}, keep=False, forget_messages=True)))
        except AddAlreadyDone:  # not pending any more: nothing of it is left to undo
            pass
        except Exception as exc:
            log.warning("could not undo the add %s yet (%s); undone before its retry or the next add of its "
                        "scope", add_id, type(exc).__name__)
            self._to_forget.add(add_id)
            return
        self._to_forget.discard(add_id)

    def release(self, add_id: str) -> None:
        """Give up a recovered add this process could not complete (its formation raised: a provider
        down): the next add in its scope, a retry with its key or the next open tries again, instead of
        it waiting for this process to end."""
        try:
            self.store.claim_add(add_id, self.owner, None, None)
        except Exception:  # the store itself failed (a full disk): stale to this process from now on
            log.exception("could not release the pending add %s", add_id)
            self._released.add(add_id)

    def complete_stale(self, scope: dict[str, str] | None = None, limit: int = 100) -> int:
        """Complete the stale pending adds (of exactly ``scope``, or all), oldest first; how many."""
        done = 0
        for record in self.store.pending_adds(scope, limit):
            if record.id in self._to_forget:
                self.forget(record.id)
            elif self.stale(record):
                try:
                    if self.take_over(record) is not None:
                        done += 1
                except Exception:  # one broken record must not stop the store from opening or adding
                    log.exception("could not complete the pending add %s", record.id)
        return done

    def recover(self) -> int:
        """At open: complete every stale pending add, and forget old completed ones."""
        done = self.complete_stale(None, limit=10_000)
        self.prune()
        return done

    def prune(self) -> int:
        return self.store.forget_adds(_earlier(UNKEYED_RETENTION), _earlier(KEY_RETENTION))

    # -- internals --------------------------------------------------------------------------------

    def _complete_or_release(self, record: AddRecord) -> dict[str, Any]:
        try:
            return self.complete(record)
        except BaseException:
            self.release(record.id)
            raise

    def _replay(self, record: AddRecord, call: AddCall, queued: bool = False) -> dict[str, Any]:
        """The outcome of the first call with ``record``'s key (waiting for it, or completing it)."""
        if record.fingerprint != fingerprint(call, queued):
            raise IdempotencyKeyReused(f"idempotency key {record.key!r} was used for another add (other messages, "
                                       "scope or options); use a new key for a new add", field="idempotency_key")
        if record.id in self._to_forget:  # its first call was told the disk was full: undo it, then add anew
            self.forget(record.id)
            if record.id in self._to_forget:
                raise StorageFullError(getattr(self.store, "location", None), "the first call is not undone yet")
            return self.add(call, record.key)
        deadline = time.monotonic() + WAIT_SECONDS
        while record.status == PENDING:
            if self.stale(record):
                outcome = self.take_over(record)
                if outcome is not None:
                    return outcome
            elif time.monotonic() > deadline:
                raise AddInProgress(record.key or record.id)
            time.sleep(0.05)
            found = self.store.add_record(add_id=record.id)
            if found is None:  # its scope was purged meanwhile: a new add
                return self.add(call, record.key)
            record = found
        return record.outcome or {}

    def _call(self, record: AddRecord) -> tuple[AddCall, list[str]]:
        """A journaled add's request, and when each of its messages was said, from its stored messages."""
        ids = list(record.message_ids)
        where = flt.Compare(flt.Field(column="id"), "in", tuple(ids))
        stored = [m for m in ({m.id: m for m in self.store.messages(where, len(ids))}.get(i) for i in ids) if m]
        body = record.request
        messages = [Message(role=m.role, content=m.content, name=m.name) for m in stored]
        call = AddCall(ids=body["ids"], messages=messages, metadata=body["metadata"], promoted=body["promoted"],
                       infer=body["infer"], memory_type=body["memory_type"], expires=body["expires"],
                       prompt=body.get("prompt"), said_at=body.get("said_at"))
        return call, [m.created_at for m in stored]

    def _form(self, call: AddCall, message_ids: list[str], times: list[str]) -> tuple[dict[str, Any], ChangeSet]:
        """What the add writes besides its messages, and its outcome (``Memory.add``'s result); ``times``:
        when each message was said."""
        changes, outcome = self.formation.decide(call, message_ids, times)
        return outcome, changes


def _later(delta: timedelta) -> str:
    return timeutil.canonical(datetime.now(timezone.utc) + delta)


def _earlier(delta: timedelta) -> str:
    return timeutil.canonical(datetime.now(timezone.utc) - delta)
