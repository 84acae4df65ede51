"""API keys checked without blocking the server's event loop, and served from a cache while their
store cannot answer.

The key store is SQLite (``<home>/keys.db``) or PostgreSQL, and a lookup blocks: on a locked file,
or a database that went away, for as long as the driver waits (seconds). ``KeyCheck`` makes every
lookup in a small pool of its own threads (a hung store cannot take the threads the requests run in),
and keeps what it read by the key's hash:

* while the store answers, a key is read again as its store promises (``refresh_seconds``: 0, every
  request, on SQLite; 1 s on PostgreSQL), so a revoked key stops as before;
* when a lookup fails or does not answer within ``wait_seconds``, the store counts as unreachable:
  a key read within the last ``stale_seconds`` keeps working (its request waits for nothing); an
  unknown key is ``KeyStoreUnreachable`` (503: whether it is valid cannot be told); one lookup at a
  time keeps probing, and the first that answers ends the outage;
* each key's last use is written at most once every ``touch_seconds``, by the same threads, never on
  a request's path.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from memlane.core import timeutil
from memlane.core.errors import StoreUnavailableError
from memlane.hosting.keys import Principal, digest, well_formed

log = logging.getLogger("memlane.server")

#: how long a request waits for a lookup before the store counts as unreachable
WAIT_SECONDS = 2.0
#: how long after its last successful read a key keeps working while the store is unreachable
STALE_SECONDS = 900.0
#: a key's last use is written at most this often (per key and server)
TOUCH_SECONDS = 60.0
#: the threads that read and write keys (their own: a hung store never holds a request's thread)
THREADS = 4
#: keys remembered (the cache is emptied when it holds more)
MAX_CACHED = 10_000


class KeyStoreUnreachable(StoreUnavailableError):
    """The key store did not answer, and the key is not one verified recently: whether it is valid
    cannot be told (503 with ``Retry-After``, not 401)."""


class Keys(Protocol):
    def verify(self, key: str) -> Principal | None: ...

    def touch(self, used: dict[str, str]) -> None: ...


@dataclass(frozen=True)
class _Known:
    principal: Principal | None  # None: read, and not a valid key
    read_at: float


class KeyCheck:
    def __init__(self, keys: Keys, *, refresh_seconds: float = 0.0, wait_seconds: float = WAIT_SECONDS,
                 stale_seconds: float = STALE_SECONDS, touch_seconds: float = TOUCH_SECONDS,
                 clock: Callable[[], float] = time.monotonic):
        self.keys = keys
        self.refresh_seconds = refresh_seconds
        self.wait_seconds = wait_seconds
        self.stale_seconds = stale_seconds
        self.touch_seconds = touch_seconds
        self.clock = clock
        self._pool = concurrent.futures.ThreadPoolExecutor(THREADS, thread_name_prefix="memlane-keys")
        self._lock = threading.Lock()
        self._known: dict[str, _Known] = {}
        self._reading: dict[str, concurrent.futures.Future] = {}  # one lookup of a key at a time
        self._touched: dict[str, float] = {}
        self._unused: dict[str, str] = {}  # key id -> last use not written yet
        self._touching = False
        #: since when (clock) the store has not answered; None while it answers
        self.unreachable_since: float | None = None

    async def principal(self, key: str) -> Principal | None:
        """The principal of ``key``; None for a key that is not valid (401); ``KeyStoreUnreachable``
        when that cannot be told."""
        if not well_formed(key):
            return None
        hashed = digest(key)
        now = self.clock()
        known = self._known.get(hashed)
        if known is not None and now - known.read_at < self.refresh_seconds:
            return self._used(known.principal)
        stale = known if known is not None and known.principal is not None and \
            now - known.read_at < self.stale_seconds else None
        reading = self._read(key, hashed)
        if stale is not None and self.unreachable_since is not None:
            return self._used(stale.principal)  # the lookup started above probes; nobody waits for it
        try:
            principal = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(reading)), self.wait_seconds)
        except Exception as exc:  # the store is locked, down or slower than a request can wait
            if self.unreachable_since is None:
                self.unreachable_since = now
                log.warning("the API key store does not answer (%s); keys verified in the last %d s keep working",
                            "no answer in time" if isinstance(exc, asyncio.TimeoutError) else exc, self.stale_seconds)
            if stale is not None:
                return self._used(stale.principal)
            if isinstance(exc, StoreUnavailableError):  # the database says why
                raise exc from None
            cause = "it did not answer in time" if isinstance(exc, asyncio.TimeoutError) else f"{exc}"
            raise KeyStoreUnreachable(f"the API key store cannot be read ({cause}), so this key cannot be checked "
                                      "now; retry shortly") from None
        return self._used(principal)

    def _read(self, key: str, hashed: str) -> concurrent.futures.Future:
        with self._lock:
            reading = self._reading.get(hashed)
            if reading is None:
                reading = self._reading[hashed] = self._pool.submit(self._lookup, key, hashed)
            return reading

    def _lookup(self, key: str, hashed: str) -> Principal | None:
        """In a thread of the pool: read the store, remember what it said."""
        try:
            principal = self.keys.verify(key)
        except BaseException:
            with self._lock:
                self._reading.pop(hashed, None)
            raise
        with self._lock:
            self._reading.pop(hashed, None)
            if len(self._known) >= MAX_CACHED:
                self._known.clear()
            self._known[hashed] = _Known(principal, self.clock())
            if self.unreachable_since is not None:
                log.warning("the API key store answers again")
                self.unreachable_since = None
        return principal

    def _used(self, principal: Principal | None) -> Principal | None:
        """Note a key's use; write the uses not written for ``touch_seconds`` (in the pool, while the store
        answers: a write would only wait for it)."""
        if principal is None or principal.key_id is None:
            return principal
        now = self.clock()
        if now - self._touched.get(principal.key_id, float("-inf")) >= self.touch_seconds:
            with self._lock:
                self._touched[principal.key_id] = now
                self._unused[principal.key_id] = timeutil.now_iso()
        if self._unused and not self._touching and self.unreachable_since is None:
            self._touching = True
            self._pool.submit(self._touch)
        return principal

    def _touch(self) -> None:
        with self._lock:
            used, self._unused = self._unused, {}
        try:
            if used:
                self.keys.touch(used)
        except Exception as exc:  # the time of a last use is worth no failed request, nor a retry
            log.debug("could not record the last use of API keys: %s", exc)
        finally:
            self._touching = False

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
