"""Documents in PostgreSQL: the tables of the memory store's database, one tenant's rows.

Runs on the ``PostgresStore``'s pool with its transaction and retry rules; every
statement names the tenant. Writers of one collection take turns (``FOR UPDATE`` on
the collection's row), so two processes upserting the same document cannot interleave.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg.types.json import Jsonb

from memlane.documents.store_sql import SqlDocumentStore
from memlane.store.postgres import PostgresStore
from memlane.store.postgres_filters import PostgresFilterCompiler

T = TypeVar("T")


class PostgresDocumentStore(SqlDocumentStore):
    TABLES = {"collections": "memlane_doc_collections", "documents": "memlane_doc_documents",
              "pages": "memlane_doc_pages", "state": "memlane_doc_state"}
    LOCK = " FOR UPDATE OF c"
    DB_ERRORS = (psycopg.Error,)

    def __init__(self, store: PostgresStore):
        super().__init__(store.tenant, PostgresFilterCompiler(
            columns={}, documents={"document": "d.metadata", "collection": "c.metadata"},
            casefold=store.db.casefold))
        self.store = store

    def _run(self, work: Callable[[Any], T], *, write: bool) -> T:
        return self.store._run(work, write=write)

    def _json_in(self, value: dict[str, Any]) -> Jsonb:
        return Jsonb(value)

    def _json_out(self, value: Any) -> dict[str, Any]:
        return value

    def _in(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        params.append(list(values))
        return f"{column} = ANY(%s::text[])"
