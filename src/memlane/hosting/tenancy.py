"""Tenants of the server: one store per tenant, one shared embedder.

Isolation is structural. A request only ever holds its own tenant's ``Memory``.
Which store is ``create_store``'s (store/__init__.py), as for ``Memory(tenant=...)`` and
the CLI: on SQLite a file of its own (the default tenant's ``<home>/memlane.db``, the
file of ``Memory()``, the CLI and ``memlane mcp``; another's ``<home>/tenants/<tenant>.db``);
on PostgreSQL (``vector_store.provider: postgres``, or ``$MEMLANE_DATABASE_URL`` when the
config names no store) a store bound to the tenant, whose every statement names the
tenant column, over one connection pool shared by all tenants. Either way no
filter, id or bug in a query can reach another tenant's rows. Every tenant's
``Memory`` shares one embedder instance, so the model is loaded once per process.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memlane.core import config as config_mod
from memlane.core import filters as flt
from memlane.core import scope
from memlane.embeddings import Embedder
from memlane.embeddings import choice as embedder_choice
from memlane.core.errors import FilterError, InvalidInputError
from memlane.hosting.keys import tenant_name
from memlane.background.workers import Workers
from memlane.memory import Memory
from memlane.store import (DEFAULT_TENANT, SQLiteStoreConfig, create_store, postgres_config, postgres_placement,
                           recorded_embedders, sqlite_path)

__all__ = ["DEFAULT_TENANT", "Tenants", "widens_scope"]

#: how often workers on SQLite look for tenant files with queued jobs that this process has not opened
RESCAN_SECONDS = 10.0


def widens_scope(filters: Mapping[str, Any] | None) -> bool:
    """True when the filters ask for every user / agent / run of the tenant (``{"user_id": "*"}``):
    the unscoped listing that only admin keys may do. A wildcard inside a filter that names its
    scopes by id narrows, not widens (``{"AND": [{"user_id": "alex"}, {"run_id": "*"}]}``: alex's
    memories of any run); an OR widens when one of its branches does.

    Filters that do not parse are left to ``Memory``, which reports them precisely; they widen the
    scope when a scope key set to ``"*"`` appears anywhere in them (the mem0 platform form, which
    ``core.platform_filters`` reads, is checked in memlane's form after it is read).
    """
    if not filters:
        return False
    try:
        node = flt.parse(filters)
    except (FilterError, InvalidInputError):
        return _raw_wildcard(filters)
    return _wildcard(node) and not scope.pins_scope(node, wildcards=False)


def _raw_wildcard(value: Any, depth: int = 0) -> bool:
    if depth > flt.MAX_DEPTH:  # deeper than any filter memlane reads: refused wherever it is read
        return False
    if isinstance(value, Mapping):
        return any((key in flt.SCOPE_COLUMNS and item == "*") or _raw_wildcard(item, depth + 1)
                   for key, item in value.items())
    if isinstance(value, list):
        return any(_raw_wildcard(item, depth + 1) for item in value)
    return False


def _wildcard(node: flt.Node) -> bool:
    if isinstance(node, flt.Compare):
        return node.field.column in flt.SCOPE_COLUMNS and node.op == "exists"
    if isinstance(node, (flt.And, flt.Or)):
        return any(_wildcard(item) for item in node.items)
    if isinstance(node, flt.Not):
        return _wildcard(node.item)
    return False


class Tenants:
    """A lazily filled, thread-safe cache of one ``Memory`` per tenant."""

    def __init__(self, home: str | Path, config: config_mod.MemoryConfig | Mapping[str, Any] | None = None, *,
                 embedder: Embedder | None = None):
        self.home = Path(home).expanduser()
        self.config = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        self.postgres = postgres_config(self.config)
        if self.postgres is not None:
            self.postgres.resolved_dsn()  # a missing DSN is a configuration error now, not at the first request
        self._placement = None  # the tenant directory and the pools of the deployment's databases, opened on first use
        # one model for the deployment: the configured one, else the one its stores were filled with
        self.embedder = embedder or embedder_choice.create(self.config, recorded_embedders(self.config, self.home))
        self._memories: dict[str, Memory] = {}
        self._lock = threading.Lock()
        #: the worker threads forming async adds of every tenant (``start_background``)
        self.workers: Workers | None = None
        self._queues: dict[int, Any] = {}  # a PostgreSQL database's job queue, by the database
        self._scanned = float("-inf")  # when the SQLite files were last looked at for queued jobs

    @staticmethod
    def describe(config: config_mod.MemoryConfig | Mapping[str, Any] | None, home: str | Path) -> str:
        """Where a server with this config keeps the tenants' stores (without opening anything)."""
        settings = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        postgres = postgres_config(settings)
        if postgres is None:
            default = Tenants.sqlite_file(settings, Path(home).expanduser(), DEFAULT_TENANT)
            return f"{default} (tenant {DEFAULT_TENANT!r}), {default.parent / 'tenants'}/<tenant>.db"
        from memlane.store.postgres import redact

        return f"{redact(postgres.resolved_dsn())} (tenant column)"

    @staticmethod
    def sqlite_file(config: config_mod.MemoryConfig, home: Path, tenant: str) -> Path:
        store = config_mod.validate(SQLiteStoreConfig, config.vector_store.config, "vector_store.config")
        return sqlite_path(store, config.history_db_path, tenant_name(tenant), home)

    @property
    def location(self) -> str:
        """Where the tenants' stores are, for people (the DSN without its password)."""
        return self.describe(self.config, self.home)

    @property
    def placement(self) -> Any:
        """The PostgreSQL deployment's tenant directory (store/placement.py), whose home database
        pool every tenant's store shares; None on SQLite."""
        if self.postgres is None:
            return None
        if self._placement is None:
            with self._lock:
                if self._placement is None:
                    self._placement = postgres_placement(self.postgres)
        return self._placement

    def database_state(self, *, confirm: bool = False) -> dict[str, Any]:
        """Whether the deployment's database answers: ``{"database": "ok"}``, or ``"unreachable"`` with
        ``since`` (ISO-8601) while a PostgreSQL database of it is away. Without ``confirm`` nothing is
        asked (what the pools last saw; safe on the event loop); with it, each open database is probed
        (at most once a second, a few seconds at worst). SQLite files are always there."""
        placement = self._placement
        if placement is None:  # SQLite, or PostgreSQL not opened yet (nothing has been asked of it)
            return {"database": "ok"}
        found = placement.reachability()
        if confirm:
            for reach in found:
                reach.confirm()
        away = [reach.state() for reach in found if reach.away]
        return away[0] if away else {"database": "ok"}

    def memory(self, tenant: str) -> Memory:
        memory = self._memories.get(tenant)
        if memory is not None:
            return memory
        tenant = tenant_name(tenant)
        placement = self.placement
        with self._lock:
            memory = self._memories.get(tenant)
            if memory is None:
                store = create_store(self.config, self.embedder.dims, tenant, home=self.home, placement=placement)
                memory = Memory(self.config, embedder=self.embedder, store=store, background=False)
                memory.on_queued = self._queued
                self._memories[tenant] = memory
        return memory

    # -- background formation: one set of workers for every tenant ----------------------------------

    def start_background(self, threads: int | None = None) -> Workers | None:
        """Start the workers (``threads``, default ``background.workers``) that form every tenant's
        async adds. On PostgreSQL they take the jobs of every tenant of every database of the
        deployment (any number of servers and ``memlane worker`` processes share them); on SQLite,
        those of the tenants this process has open, and of the tenants whose files hold queued jobs now."""
        settings = self.config.background
        if threads is not None:
            settings = settings.model_copy(update={"workers": threads})
        if not settings.workers or self.workers is not None:
            return self.workers
        self.workers = Workers(self._job_queues, self._runner, settings, any_tenant=self.postgres is not None,
                               name="memlane-formation").start()
        return self.workers

    def _queued(self) -> None:
        if self.workers is not None:
            self.workers.wake()

    def _job_queues(self) -> list[Any]:
        if self.postgres is None:  # the open tenants, and now and then those that other processes queued jobs in
            if time.monotonic() - self._scanned > RESCAN_SECONDS:
                self._scanned = time.monotonic()
                for tenant in self._tenants_with_jobs():
                    self.memory(tenant)
            return [memory.store for memory in list(self._memories.values())]
        from memlane.store.postgres import PostgresStore

        queues = []
        for database in self.placement.databases():
            queue = self._queues.get(id(database))
            if queue is None:
                queue = self._queues[id(database)] = PostgresStore(database, DEFAULT_TENANT)
            queues.append(queue)
        return queues

    def _runner(self, job: Any, queue: Any) -> Memory:
        if self.postgres is not None:
            return self.memory(job.tenant or DEFAULT_TENANT)
        return next(memory for memory in list(self._memories.values()) if memory.store is queue)

    def _tenants_with_jobs(self) -> list[str]:
        """The tenants whose SQLite file holds queued or running jobs (read-only look, no store opened)."""
        files = {DEFAULT_TENANT: self.sqlite_file(self.config, self.home, DEFAULT_TENANT)}
        directory = files[DEFAULT_TENANT].parent / "tenants"
        if directory.is_dir():
            for path in sorted(directory.glob("*.db")):
                files.setdefault(path.stem, path)
        found = []
        for tenant, path in files.items():
            if not path.exists():
                continue
            try:
                with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as con:
                    if con.execute("SELECT 1 FROM jobs WHERE status IN ('PENDING', 'RUNNING') LIMIT 1").fetchone():
                        found.append(tenant)
            except sqlite3.Error:  # no job table yet (a file of an older memlane), or not a store
                continue
        return found

    def open_tenants(self) -> list[str]:
        return sorted(self._memories)

    def close(self) -> None:
        if self.workers is not None:
            self.workers.stop()
            self.workers = None
        with self._lock:
            for memory in self._memories.values():
                memory.close()
            self._memories.clear()
            self._queues.clear()
            if self._placement is not None:
                self._placement.close()
                self._placement.home.close()
                self._placement = None
