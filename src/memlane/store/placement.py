"""Where each tenant lives when a deployment spans several PostgreSQL databases.

The *home* database (the one the configuration names) holds the directory,
``memlane_tenant_placement``: a row per tenant placed elsewhere, naming the database (a label of
``vector_store.config.databases``, or a DSN) and its state. A tenant without a row lives in the
home database, so a deployment of one database has an empty directory.

Each process reads the directory at most every ``refresh_seconds`` (when a store of it is
used) and opens one connection pool per database it meets. A PostgreSQL store asks
``where(tenant)`` before each transaction and follows its tenant when it moved.

A move (store/tenant_move.py) ends by switching the directory row: ``switching`` while the
servers learn the new place (writes of the tenant wait, reads see identical copies on both
sides), then ``active``. Writes also guard themselves in the database they write to: each
write transaction takes the tenant's move lock (shared) and checks that the tenant was not
moved away from there (``moved_to`` in ``memlane_meta``), so a server that has not yet read
the new directory cannot write to the old place (``TenantMovedError``; the store then reads
the directory again and writes in the new place).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from memlane.core.errors import StoreError, StoreUnavailableError

log = logging.getLogger("memlane.store")

#: the directory's name for the home database
HOME = ""
ACTIVE, SWITCHING = "active", "switching"
#: the first key of the advisory locks of a tenant's moves (the second: hashtext(tenant))
MOVE_LOCK = 0x6D6C6D76  # "mlmv"
#: how long a write waits for a tenant's move to finish switching
SWITCH_TIMEOUT = 60.0


class TenantMovedError(StoreError):
    """A write reached a database its tenant has been moved away from."""


class Placement:
    """The directory of one deployment, as one process reads it, and the pools of its databases."""

    def __init__(self, home: Any, open_database: Callable[[str], Any], *, labels: dict[str, str] | None = None,
                 refresh_seconds: float = 0.5):
        """``home``: the home ``PostgresDatabase``; ``open_database(dsn)`` opens another with the same
        settings; ``labels``: the configured names of databases (label -> DSN)."""
        self.home = home
        self.labels = dict(labels or {})
        self.refresh_seconds = refresh_seconds
        self._open = open_database
        self._databases: dict[str, Any] = {HOME: home}
        self._entries: dict[str, tuple[str, str]] = {}
        self._read_at = float("-inf")
        self._lock = threading.Lock()

    def where(self, tenant: str, *, fresh: bool = False) -> tuple[Any, str]:
        """The database of ``tenant`` and its state (``active`` or ``switching``)."""
        self._refresh(fresh)
        location, state = self._entries.get(tenant, (HOME, ACTIVE))
        return self.database(location), state

    def location(self, tenant: str, *, fresh: bool = False) -> str:
        self._refresh(fresh)
        return self._entries.get(tenant, (HOME, ACTIVE))[0]

    def entries(self, *, fresh: bool = True) -> dict[str, tuple[str, str]]:
        """Every tenant placed outside the home database: tenant -> (location, state)."""
        self._refresh(fresh)
        return dict(self._entries)

    def wait_active(self, tenant: str, timeout: float = SWITCH_TIMEOUT) -> Any:
        """The tenant's database once its move (if one is switching) has finished."""
        deadline = time.monotonic() + timeout
        database, state = self.where(tenant)
        while state != ACTIVE:
            if time.monotonic() > deadline:
                raise StoreError(f"tenant {tenant!r} is still being moved after {timeout:g} s "
                                 "(memlane tenants move); try again")
            time.sleep(min(0.05, self.refresh_seconds))
            database, state = self.where(tenant, fresh=True)
        return database

    def database(self, location: str) -> Any:
        """The pool of a database by its directory name (HOME, a label or a DSN), opened on first use."""
        database = self._databases.get(location)
        if database is None:
            with self._lock:
                database = self._databases.get(location)
                if database is None:
                    database = self._databases[location] = self._open(self.dsn(location))
        return database

    def dsn(self, location: str) -> str:
        if location == HOME:
            return self.home.dsn
        return self.labels.get(location, location)

    def name(self, target: str) -> str:
        """The directory's name for a database given as a label, a DSN or the home database's DSN."""
        if target in self.labels or target == HOME:
            return target
        for label, dsn in self.labels.items():
            if dsn == target:
                return label
        return HOME if target == self.home.dsn else target

    def databases(self) -> list[Any]:
        """Every database of the deployment this process knows (home, labels, placed tenants')."""
        self._refresh(False)
        for location in [*self.labels, *(loc for loc, _ in self._entries.values())]:
            self.database(location)
        return list(self._databases.values())

    def reachability(self) -> list[Any]:
        """What this process knows of whether each database it has opened answers (nothing is asked)."""
        return [database.reachability for database in list(self._databases.values())]

    def _refresh(self, force: bool) -> None:
        if not force and time.monotonic() - self._read_at < self.refresh_seconds:
            return
        with self._lock:
            if not force and time.monotonic() - self._read_at < self.refresh_seconds:
                return
            reading = time.monotonic()  # what was read is at least this fresh
            try:
                with self.home.pool.connection() as con:
                    rows = con.execute("SELECT tenant, location, state FROM memlane_tenant_placement").fetchall()
            except Exception as exc:  # the home database is away: serve from what was known (its call reports it)
                away = isinstance(exc, StoreUnavailableError)  # its pool logged it once already
                (log.debug if away else log.warning)("could not read the tenant directory in %s: %s",
                                                     self.home.location, exc)
                self._read_at = reading
                return
            self._entries = {tenant: (location, state) for tenant, location, state in rows}
            self._read_at = reading

    def close(self) -> None:
        with self._lock:
            for location, database in list(self._databases.items()):
                if location != HOME:
                    database.close()
            self._databases = {HOME: self.home}
