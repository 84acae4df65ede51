"""Tenants of the server: one store file per tenant, one shared embedder.

Isolation is structural. A request only ever holds its own tenant's ``Memory``
(``<home>/tenants/<tenant>.db``), so no filter, id or bug in a query can reach
another tenant's rows. Every tenant's ``Memory`` shares one embedder instance,
so the model is loaded once per process.
"""

from __future__ import annotations

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
        if self.config.vector_store.provider != "sqlite":
            raise ConfigError(
                f"the server keeps one store per tenant; vector_store.provider {self.config.vector_store.provider!r} "
                "is not supported for that (use 'sqlite')"
            )
        self.embedder = embedder or create_embedder(self.config.embedder)
        self._memories: dict[str, Memory] = {}
        self._lock = threading.Lock()

    def path(self, tenant: str) -> Path:
        return self.home / "tenants" / f"{tenant_name(tenant)}.db"

    def memory(self, tenant: str) -> Memory:
        memory = self._memories.get(tenant)
        if memory is not None:
            return memory
        path = self.path(tenant)
        with self._lock:
            memory = self._memories.get(tenant)
            if memory is None:
                path.parent.mkdir(parents=True, exist_ok=True)
                settings = self.config.model_copy(deep=True)
                settings.vector_store.config = {**settings.vector_store.config, "path": str(path)}
                settings.history_db_path = None
                memory = Memory(settings, embedder=self.embedder)
                self._memories[tenant] = memory
        return memory

    def open_tenants(self) -> list[str]:
        return sorted(self._memories)

    def close(self) -> None:
        with self._lock:
            for memory in self._memories.values():
                memory.close()
            self._memories.clear()
