"""Tenants of the server: one store per tenant, one shared embedder.

Isolation is structural. A request only ever holds its own tenant's ``Memory``.
On SQLite that is a file of its own (``<home>/tenants/<tenant>.db``); on PostgreSQL
(``vector_store.provider: postgres``, or ``$MEMLANE_DATABASE_URL`` when the config
names no store) it is a store bound to the tenant, whose every statement names the
tenant column, over one connection pool shared by all tenants. Either way no
filter, id or bug in a query can reach another tenant's rows. Every tenant's
``Memory`` shares one embedder instance, so the model is loaded once per process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memlane import config as config_mod
from memlane import filters as flt
from memlane.embeddings import Embedder, create_embedder
from memlane.errors import ConfigError, FilterError, InvalidInputError
from memlane.keys import tenant_name
from memlane.memory import Memory
from memlane.store import DATABASE_URL_ENV, PostgresStoreConfig, postgres_settings

POSTGRES_PROVIDERS = ("postgres", "postgresql", "pgvector")

DEFAULT_TENANT = "default"


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
        self.postgres = _postgres(self.config)
        self._database = None  # the pool shared by every tenant's PostgreSQL store, opened on first use
        self.embedder = embedder or create_embedder(self.config.embedder)
        self._memories: dict[str, Memory] = {}
        self._lock = threading.Lock()

    @staticmethod
    def describe(config: config_mod.MemoryConfig | Mapping[str, Any] | None, home: str | Path) -> str:
        """Where a server with this config keeps the tenants' stores (without opening anything)."""
        settings = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        postgres = _postgres(settings)
        if postgres is None:
            return f"{Path(home).expanduser() / 'tenants'}/<tenant>.db"
        from memlane.store.postgres import redact

        return f"{redact(postgres.resolved_dsn())} (tenant column)"

    @property
    def location(self) -> str:
        """Where the tenants' stores are, for people (the DSN without its password)."""
        return self.describe(self.config, self.home)

    def path(self, tenant: str) -> Path:
        return self.home / "tenants" / f"{tenant_name(tenant)}.db"

    def memory(self, tenant: str) -> Memory:
        memory = self._memories.get(tenant)
        if memory is not None:
            return memory
        path = self.path(tenant)
        with self._lock:
            memory = self._memories.get(tenant)
            if memory is None and self.postgres is not None:
                memory = Memory(self.config, embedder=self.embedder, store=self._postgres_store(tenant))
                self._memories[tenant] = memory
            if memory is None:
                path.parent.mkdir(parents=True, exist_ok=True)
                settings = self.config.model_copy(deep=True)
                settings.vector_store.config = {**settings.vector_store.config, "path": str(path)}
                settings.history_db_path = None
                memory = Memory(settings, embedder=self.embedder)
                self._memories[tenant] = memory
        return memory

    def _postgres_store(self, tenant: str):
        from memlane.store.postgres import PostgresDatabase, PostgresStore

        settings = self.postgres
        if self._database is None:
            self._database = PostgresDatabase(settings.resolved_dsn(), **settings.database_options())
        return PostgresStore(self._database, tenant_name(tenant), exact_search_limit=settings.exact_search_limit,
                             ann_candidates=settings.ann_candidates)

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


def _postgres(config: config_mod.MemoryConfig) -> PostgresStoreConfig | None:
    """The PostgreSQL settings the tenants' stores use, or None for one SQLite file per tenant."""
    spec = config.vector_store
    if spec.provider in POSTGRES_PROVIDERS:
        settings = postgres_settings(spec.config)
        settings.resolved_dsn()  # a missing DSN is a configuration error now, not at the first request
        return settings
    if "vector_store" not in config.model_fields_set and os.environ.get(DATABASE_URL_ENV):
        return postgres_settings({})
    if spec.provider != "sqlite":
        raise ConfigError(
            f"the server keeps one store per tenant; vector_store.provider {spec.provider!r} "
            "is not supported for that (use 'sqlite' or 'postgres')"
        )
    return None
