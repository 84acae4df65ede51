"""Documents in the embedded store's SQLite file (the same file, connections and write lock as the memories)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from memlane.documents.store_sql import SqlDocumentStore
from memlane.store.base import SharedDatabase
from memlane.store.sqlite import match_expression, term_hits
from memlane.text import keywords
from memlane.store.sqlite_filters import SqliteFilterCompiler

T = TypeVar("T")

_encode = json.JSONEncoder(ensure_ascii=False).encode


class SQLiteDocumentStore(SqlDocumentStore):
    TABLES = {"collections": "doc_collections", "documents": "doc_documents", "pages": "doc_pages",
              "state": "doc_state"}
    PLACEHOLDER = "?"
    DB_ERRORS = (sqlite3.Error,)
    # the keyword index is the outer loop (as for memories: store/sqlite.py, keyword_search)
    FTS_FROM = " FROM doc_pages_fts CROSS JOIN {pages} p ON p.rowid = doc_pages_fts.rowid"

    def __init__(self, store: SharedDatabase, tenant: str = "default"):
        super().__init__(tenant, SqliteFilterCompiler(columns={}, documents={"document": "d.metadata",
                                                                             "collection": "c.metadata"}))
        self.store = store

    def _run(self, work: Callable[[Any], T], *, write: bool) -> T:
        # BEGIN IMMEDIATE (the store's write lock) for writes; one read snapshot for reads
        return self.store.transaction(work, write=write)

    def _json_in(self, value: dict[str, Any]) -> str:
        return _encode(value)

    def _json_out(self, value: Any) -> dict[str, Any]:
        return json.loads(value)

    def _in(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        params.extend(values)
        return f"{column} IN ({','.join('?' * len(values))})"

    def _page_terms(self, text: str) -> dict[str, Any]:
        return {"nterms": len(keywords.analyze(text))}  # the FTS5 row follows the page (a trigger)

    def _keyword_hits(self, con: Any, terms: list[str], pages: str, params: list[Any]) -> list[tuple]:
        rows = con.execute("SELECT p.id, p.nterms, doc_pages_fts.terms" + pages + " AND doc_pages_fts MATCH ?",
                           (*params, match_expression(terms, {}))).fetchall()
        return list(term_hits(rows, terms))
