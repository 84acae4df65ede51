"""The document store kept beside each memory store, in its file or database: ``DOCUMENT_STORES``
maps the memory store's ``provider`` (``store.base.SharedDatabase``) to a factory of
``(memory store, tenant) -> DocumentStore``. The memory stores know nothing of documents: the
document stores ask them for transactions through ``SharedDatabase``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memlane.core.errors import ConfigError
from memlane.core.registry import Registry
from memlane.documents.store import DocumentStore

DOCUMENT_STORES: Registry[Callable[[Any, str], DocumentStore]] = Registry(
    "document_stores", "vector_store.provider",
    hint="document collections live beside the sqlite or postgres memory store")


def document_store(store: Any, tenant: str) -> DocumentStore:
    """The document store sharing a memory store's file or database (and, on PostgreSQL, its tenant)."""
    provider = getattr(store, "provider", None)
    if not isinstance(provider, str) or provider not in DOCUMENT_STORES:
        raise ConfigError(f"document collections need the sqlite or postgres store, not {type(store).__name__}")
    return DOCUMENT_STORES.get(provider)(store, tenant)


@DOCUMENT_STORES.register("sqlite")
def _sqlite(store: Any, tenant: str) -> DocumentStore:
    """Rows of ``tenant`` in the store's SQLite file."""
    from memlane.documents.store_sqlite import SQLiteDocumentStore

    return SQLiteDocumentStore(store, tenant)


@DOCUMENT_STORES.register("postgres")
def _postgres(store: Any, tenant: str) -> DocumentStore:
    """Rows of the store's own tenant (``tenant`` is not used: a PostgreSQL store is bound to one)."""
    from memlane.documents.store_postgres import PostgresDocumentStore

    return PostgresDocumentStore(store)
