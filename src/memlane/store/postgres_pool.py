"""The connection pool of one PostgreSQL database, which knows when the database is away.

A database that goes away (stopped, restarting, the network cut) must not hold requests for the
pool's whole timeout, nor be found again only when the pool's reconnect back-off next tries:

* ``Reachability`` is what this process knows of the database: it answers, or it has been away
  since a moment, and why. A connection that breaks, or a wait for a connection that runs out of
  a slice, asks it to ``confirm`` with a probe (a fresh connection, at most ``PROBE_TIMEOUT`` s;
  one probe at a time, its answer shared for a second). A failed probe marks the database away
  and starts a watcher thread that probes every ``PROBE_EVERY`` s until it answers again.
* ``GuardedPool`` is psycopg_pool's pool that refuses at once while the database is away
  (``StoreUnavailableError``: the server answers 503 with ``Retry-After``), and otherwise waits
  for a connection in slices of ``WAIT_SLICE`` s, confirming between them: a request already
  waiting when the database goes away is answered within a slice and a probe, not after the
  pool's timeout. When the database answers again the idle connections (dead after a restart)
  are tested and replaced at once; the pool's own reconnect attempts give up after
  ``RECONNECT_SECONDS`` instead of backing off for minutes, so a pool emptied by an outage grows
  again on the first request after it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import psycopg_pool

from memlane.core import timeutil
from memlane.core.errors import StoreUnavailableError

log = logging.getLogger("memlane.store")

#: how often the watcher probes a database that is away
PROBE_EVERY = 0.25
#: the longest a probe's connection attempt may take (libpq's minimum connect_timeout)
PROBE_TIMEOUT = 2
#: a request waiting for a connection looks at the database's state this often
WAIT_SLICE = 0.5
#: how long the pool keeps trying to replace a lost connection before it gives up (the watcher, not
#: the pool's exponential back-off, finds the database again)
RECONNECT_SECONDS = 2.0


class Reachability:
    """Whether one database answers, as this process last saw it (thread-safe)."""

    def __init__(self, dsn: str, location: str, *, on_back: Callable[[], None] | None = None):
        """``location``: the database for messages (no password); ``on_back``: called (in the thread that
        saw it) when the database answers again after being away."""
        self.dsn = dsn
        self.location = location
        self.on_back = on_back
        self._lock = threading.Lock()  # the state below
        self._probing = threading.Lock()  # one probe at a time
        self._since: str | None = None  # when it was found away (ISO-8601, UTC); None: it answers
        self._away_at = 0.0
        self._reason = ""
        self._probed_at = float("-inf")  # when the last finished probe started (monotonic)
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()

    @property
    def away(self) -> bool:
        return self._since is not None

    def confirm(self, max_age: float = 1.0) -> bool:
        """Whether the database answers: a probe now, unless one that started less than ``max_age`` s
        ago has finished (its answer then). Callers arriving during a probe wait for it."""
        asked = time.monotonic()
        with self._probing:
            if self._probed_at < asked - max_age:
                started = time.monotonic()
                self._record(self._probe())
                self._probed_at = started
            return not self.away

    def state(self) -> dict[str, Any]:
        """``{"database": "ok"}``, or ``"unreachable"`` with ``since`` (ISO-8601). Neither where the
        database is nor why it is away (the log says both): the health routes need no API key."""
        since = self._since
        return {"database": "ok"} if since is None else {"database": "unreachable", "since": since}

    def unavailable(self) -> StoreUnavailableError:
        since, reason = self._since, self._reason
        return StoreUnavailableError(
            f"the database is unreachable: PostgreSQL at {self.location} has not answered since {since} "
            f"({reason or 'no answer'}); retry in a few seconds", location=self.location, since=since)

    def close(self) -> None:
        self._closed.set()

    # -- internals --------------------------------------------------------------------------------

    def _probe(self) -> str | None:
        """None when a fresh connection opens, else why not (one line)."""
        try:
            with psycopg.connect(self.dsn, autocommit=True, connect_timeout=PROBE_TIMEOUT):
                return None
        except psycopg.Error as exc:
            return " ".join(str(exc).split()) or type(exc).__name__

    def _record(self, why: str | None) -> None:
        back = False
        with self._lock:
            if why is None:
                if self._since is not None:
                    log.warning("PostgreSQL at %s answers again (away %.1f s)", self.location,
                                time.monotonic() - self._away_at)
                    self._since, self._reason, back = None, "", True
            else:
                if self._since is None:
                    self._since, self._away_at = timeutil.now_iso(), time.monotonic()
                    log.warning("PostgreSQL at %s is unreachable (%s): requests answer 503 until it is back",
                                self.location, why)
                self._reason = why
                if self._watcher is None and not self._closed.is_set():
                    self._watcher = threading.Thread(target=self._watch, name="memlane-db-watch", daemon=True)
                    self._watcher.start()
        if back and self.on_back is not None:
            try:
                self.on_back()
            except Exception:  # the pool closed meanwhile, or the database went away again
                log.debug("refreshing the pool of %s after it came back failed", self.location, exc_info=True)

    def _watch(self) -> None:
        while not self._closed.wait(PROBE_EVERY):
            self.confirm(max_age=0)
            with self._lock:
                if self._since is None:
                    self._watcher = None
                    return
        with self._lock:
            self._watcher = None


class GuardedPool(psycopg_pool.ConnectionPool):
    """A pool that answers ``StoreUnavailableError`` at once while its database is away (``reach``)."""

    def __init__(self, conninfo: str, *, location: str, **kwargs: Any):
        self.reach = Reachability(conninfo, location, on_back=self._refill)
        kwargs.setdefault("reconnect_timeout", RECONNECT_SECONDS)
        super().__init__(conninfo, **kwargs)

    def getconn(self, timeout: float | None = None) -> Any:
        if self.reach.away:
            raise self.reach.unavailable()
        budget = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + budget
        while True:
            try:
                return super().getconn(timeout=min(WAIT_SLICE, max(deadline - time.monotonic(), 0.01)))
            except psycopg_pool.PoolTimeout:
                if not self.reach.confirm():
                    raise self.reach.unavailable() from None
                if time.monotonic() >= deadline:
                    raise psycopg_pool.PoolTimeout(f"couldn't get a connection after {budget:.2f} sec") from None

    def lost(self) -> bool:
        """After a connection broke: whether the database still answers (False: it is marked away)."""
        return self.reach.confirm(max_age=0.5)

    def _refill(self) -> None:
        if not self.closed:
            self.check()  # the idle connections died with the server: test them, replace the dead at once

    def close(self, timeout: float = 5.0) -> None:
        self.reach.close()
        super().close(timeout)
