"""The threads that form queued adds (``add(async_mode=True)``) in the background.

A ``Workers`` runs ``threads`` worker threads over one or more *queues* (stores with a job
table: store/sql_jobs.py). Each thread claims the next job that may run, has the ``Memory`` of
the job's tenant form it (``Memory.run_job``: the effect and the job's end in one transaction),
and claims again; with nothing to do it sleeps ``poll_seconds`` or until ``wake()`` (an add of
this process queued a job). One more thread, the *quick lane*, claims only quick jobs (``QUICK``:
the embedding of an async add's provisional memories), so they never wait behind formations that
hold every other thread in an LLM call; the other threads take quick jobs too when they are free.
A separate thread renews the leases of the jobs being held, so a slow formation keeps its job
while a dead process's jobs are taken over when their lease runs out.

A job that raises is given back to the queue and tried again after ``retry_seconds`` (times its
attempt), first of its order key; after ``max_attempts`` it ends ``FAILED`` with the error.
``JobLostError`` (the lease ran out meanwhile and another worker took the job) needs nothing:
the transaction that would have ended the job was rolled back whole.

Every ``housekeeping_seconds`` one process of the deployment (the one that takes the queue's
housekeeping lock: an advisory lock on PostgreSQL) erases the jobs that ended more than
``keep_days`` ago.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from memlane.core import timeutil
from memlane.core.config import BackgroundConfig
from memlane.core.jobs import QUICK, Job, JobLostError
from memlane.core.errors import StoreUnavailableError

log = logging.getLogger("memlane.background")


class Queue(Protocol):
    """What a worker needs of a store's job table (``SqlJobs``)."""

    def claim_job(self, worker: str, lease: float, *, any_tenant: bool = False,
                  kinds: tuple[str, ...] = ()) -> Job | None: ...

    def renew_jobs(self, worker: str, held: list[Job], lease: float) -> set[str]: ...

    def release_job(self, job: Job, worker: str, error: str, retry_in: float) -> bool: ...

    def prune_jobs(self, finished_before: str, *, any_tenant: bool = False) -> int: ...


class Runner(Protocol):
    """Forms a held job (the ``Memory`` of its tenant)."""

    def run_job(self, job: Job, worker: str) -> None: ...

    def fail_job(self, job: Job, worker: str, error: str) -> None: ...


@dataclass
class _Held:
    job: Job
    worker: str
    queue: Queue


class Workers:
    """``threads`` threads forming the jobs of ``queues()`` (called again on every round, so the
    queues may change: tenants opened later) with the runner ``runner_for(job, queue)`` returns.
    ``any_tenant``: the queues are databases whose every tenant's jobs this process forms."""

    def __init__(self, queues: Callable[[], list[Queue]], runner_for: Callable[[Job, Queue], Runner],
                 settings: BackgroundConfig, *, any_tenant: bool = False, name: str = "memlane-worker"):
        self.queues = queues
        self.runner_for = runner_for
        self.settings = settings
        self.any_tenant = any_tenant
        self.name = name
        self.host = f"{socket.gethostname()}:{os.getpid()}"
        self._stop = threading.Event()
        self._wake = threading.Condition()
        self._woken = 0
        self._quick_wake = threading.Event()
        self._held: dict[str, _Held] = {}
        self._held_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._next = 0
        self._housekept = 0.0
        self.formed = 0

    # -- control -------------------------------------------------------------------------------------

    def start(self) -> "Workers":
        if self._threads:
            return self
        lanes: list[tuple[str, tuple[str, ...]]] = [(f"{self.name}-{n}", ()) for n in range(self.settings.workers)]
        if self.settings.workers:
            lanes.append((f"{self.name}-quick", QUICK))
        for name, kinds in lanes:
            thread = threading.Thread(target=self._work, args=(kinds,), name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        renewer = threading.Thread(target=self._renew, name=f"{self.name}-leases", daemon=True)
        renewer.start()
        self._threads.append(renewer)
        return self

    @property
    def running(self) -> bool:
        return bool(self._threads) and not self._stop.is_set()

    def wake(self) -> None:
        """A job was queued here: a sleeping worker claims it now instead of at its next poll."""
        self._quick_wake.set()
        with self._wake:
            self._woken += 1
            self._wake.notify()

    def stop(self, timeout: float | None = None) -> None:
        """Stop claiming; wait up to ``timeout`` (``settings.stop_seconds``) for the jobs being
        formed, then give back those still running (their end is refused: ``JobLostError``)."""
        self._stop.set()
        self._quick_wake.set()
        with self._wake:
            self._wake.notify_all()
        deadline = time.monotonic() + (self.settings.stop_seconds if timeout is None else timeout)
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._held_lock:
            left = list(self._held.values())
            self._held.clear()
        for held in left:
            try:
                held.queue.release_job(held.job, held.worker, "the worker stopped", 0.0)
            except Exception as exc:  # the store may be closing: the lease runs out instead
                log.warning("could not give back job %s: %s", held.job.id, exc)
        self._threads = []

    # -- the threads ---------------------------------------------------------------------------------

    def _work(self, kinds: tuple[str, ...] = ()) -> None:
        """A thread's loop: claim a job (of ``kinds``, else of any kind), run it, claim again."""
        worker = f"{self.host}:{threading.current_thread().name}:{uuid.uuid4().hex[:8]}"
        while not self._stop.is_set():
            if kinds:  # cleared before the claim: a job queued after it sets it again, and the wait returns at once
                self._quick_wake.clear()
            try:
                claimed = self._claim(worker, kinds)
            except StoreUnavailableError as exc:  # the database is away (its pool logged it once): the next poll
                log.debug("could not claim a job: %s", exc)
                claimed = None
            except Exception as exc:  # a database that is down: try again at the next poll
                log.warning("could not claim a job: %s", exc)
                claimed = None
            if claimed is None:
                if kinds:
                    self._quick_wake.wait(self.settings.poll_seconds)
                    continue
                self._housekeeping()
                self._sleep()
                continue
            job, queue = claimed
            with self._held_lock:
                self._held[job.id] = _Held(job, worker, queue)
            try:
                self._form(job, worker, queue)
            finally:
                with self._held_lock:
                    self._held.pop(job.id, None)

    def _claim(self, worker: str, kinds: tuple[str, ...] = ()) -> tuple[Job, Queue] | None:
        queues = self.queues()
        for n in range(len(queues)):  # round robin, so one busy database does not starve the others
            queue = queues[(self._next + n) % len(queues)]
            job = queue.claim_job(worker, self.settings.lease_seconds, any_tenant=self.any_tenant, kinds=kinds)
            if job is not None:
                self._next = (self._next + n + 1) % len(queues)
                return job, queue
        return None

    def _form(self, job: Job, worker: str, queue: Queue) -> None:
        try:
            self.runner_for(job, queue).run_job(job, worker)
            self.formed += 1
        except JobLostError as exc:
            log.info("%s", exc)
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            if job.attempts >= self.settings.max_attempts:
                log.error("job %s failed for good after %d attempts: %s", job.id, job.attempts, reason)
                try:
                    self.runner_for(job, queue).fail_job(job, worker, reason)
                except JobLostError:
                    pass
                except Exception as again:
                    log.error("could not record the failure of job %s: %s", job.id, again)
            else:
                log.warning("job %s failed (attempt %d of %d), tried again later: %s", job.id, job.attempts,
                            self.settings.max_attempts, reason)
                try:
                    queue.release_job(job, worker, reason, self.settings.retry_seconds * job.attempts)
                except Exception as again:  # its lease runs out instead
                    log.warning("could not give back job %s: %s", job.id, again)

    def _sleep(self) -> None:
        with self._wake:
            if self._woken:
                self._woken -= 1
                return
            self._wake.wait(self.settings.poll_seconds)
            if self._woken:
                self._woken -= 1

    def _renew(self) -> None:
        every = self.settings.lease_seconds / 3
        while not self._stop.wait(every):
            with self._held_lock:
                held = list(self._held.values())
            for item in held:
                try:
                    if not item.queue.renew_jobs(item.worker, [item.job], self.settings.lease_seconds):
                        log.warning("job %s was taken over by another worker (its lease had run out)", item.job.id)
                except Exception as exc:
                    log.warning("could not renew the lease of job %s: %s", item.job.id, exc)

    def _housekeeping(self) -> None:
        now = time.monotonic()
        if now - self._housekept < self.settings.housekeeping_seconds:
            return
        self._housekept = now
        before = timeutil.shift(timeutil.now_iso(), -self.settings.keep_days * 86400)
        for queue in self.queues():
            try:
                pruned = queue.prune_jobs(before, any_tenant=self.any_tenant)
                if pruned:
                    log.info("erased %d jobs that ended before %s", pruned, before)
            except Exception as exc:
                log.warning("could not erase old jobs: %s", exc)

