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
from memlane.store.postgres import PostgresStore, lexeme, page_terms
from memlane.store.postgres_filters import PostgresFilterCompiler

T = TypeVar("T")


class PostgresDocumentStore(SqlDocumentStore):
    TABLES = {"collections": "memlane_doc_collections", "documents": "memlane_doc_documents",
              "pages": "memlane_doc_pages", "state": "memlane_doc_state"}
    LOCK = " FOR UPDATE OF c"
    DB_ERRORS = (psycopg.Error,)
    FTS_FROM = " FROM {pages} p CROSS JOIN LATERAL unnest(p.terms) AS u"

    def __init__(self, store: PostgresStore):
        super().__init__(store.tenant, PostgresFilterCompiler(
            columns={}, documents={"document": "d.metadata", "collection": "c.metadata"},
            casefold=store.db.casefold))
        self.store = store
        self._index_old_pages()

    def _run(self, work: Callable[[Any], T], *, write: bool) -> T:
        return self.store.transaction(work, write=write)

    def _json_in(self, value: dict[str, Any]) -> Jsonb:
        return Jsonb(value)

    def _json_out(self, value: Any) -> dict[str, Any]:
        return value

    def _in(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        params.append(list(values))
        return f"{column} = ANY(%s::text[])"

    def _page_terms(self, text: str) -> dict[str, Any]:
        terms, nterms = page_terms(text, self.tenant)
        return {"terms": terms, "nterms": nterms}

    def _keyword_hits(self, con: Any, terms: list[str], pages: str, params: list[Any]) -> list[tuple]:
        # the tenant's token narrows the GIN lookup to the tenant's pages, as for memories
        expression = "(" + " | ".join(lexeme(t) for t in terms) + ") & " + lexeme(self.store.tenant_token)
        return con.execute("SELECT p.id, p.nterms, u.lexeme, cardinality(u.positions)" + pages +
                           " AND p.terms @@ %s::tsquery AND u.lexeme = ANY(%s)", (*params, expression, terms)).fetchall()

    def _index_old_pages(self) -> None:
        """Give the keyword columns to the tenant's pages written before there were any."""
        def write(con: Any) -> None:
            rows = con.execute("SELECT id, text FROM memlane_doc_pages WHERE tenant = %s AND nterms IS NULL"
                               " FOR UPDATE", (self.tenant,)).fetchall()
            con.cursor().executemany(
                "UPDATE memlane_doc_pages SET terms = %s, nterms = %s WHERE tenant = %s AND id = %s",
                [(*self._page_terms(text).values(), self.tenant, page_id) for page_id, text in rows])

        self._run(write, write=True)
