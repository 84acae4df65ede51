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

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memlane.core import config as config_mod
from memlane.core import filters as flt
from memlane.embeddings import Embedder, create_embedder
from memlane.embeddings import choice as embedder_choice
from memlane.core.errors import FilterError, InvalidInputError
from memlane.hosting.keys import tenant_name
from memlane.memory import Memory
from memlane.store import (DEFAULT_TENANT, SQLiteStoreConfig, create_store, postgres_config, postgres_database,
                           recorded_embedders, sqlite_path)

__all__ = ["DEFAULT_TENANT", "Tenants", "widens_scope"]


def widens_scope(filters: Mapping[str, Any] | None) -> bool:
    """True when the filters ask for every user / agent / run of the tenant (``{"user_id": "*"}``):
    the unscoped listing that only admin keys may do.

    Filters that do not parse are left to ``Memory``, which reports them precisely.
    """
    if not filters:
        return False
    try:
        return _wildcard(flt.parse(filters))
    except (FilterError, InvalidInputError):
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
        self._database = None  # the pool shared by every tenant's PostgreSQL store, opened on first use
        # one model for the deployment: the configured one, else the one its stores were filled with
        self.embedder = embedder or create_embedder(
            embedder_choice.spec_for(self.config, recorded_embedders(self.config, self.home)))
        self._memories: dict[str, Memory] = {}
        self._lock = threading.Lock()

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

    def memory(self, tenant: str) -> Memory:
        memory = self._memories.get(tenant)
        if memory is not None:
            return memory
        tenant = tenant_name(tenant)
        with self._lock:
            memory = self._memories.get(tenant)
            if memory is None:
                if self.postgres is not None and self._database is None:
                    self._database = postgres_database(self.postgres)
                store = create_store(self.config, self.embedder.dims, tenant, home=self.home, database=self._database)
                memory = Memory(self.config, embedder=self.embedder, store=store)
                self._memories[tenant] = memory
        return memory

    def open_tenants(self) -> list[str]:
        return sorted(self._memories)

    def close(self) -> None:
        with self._lock:
            for memory in self._memories.values():
                memory.close()
            self._memories.clear()
            if self._database is not None:
                self._database.close()
                self._database = None
