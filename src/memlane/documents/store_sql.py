"""The document store over SQL, written once for SQLite and PostgreSQL.

A dialect (``store_sqlite``, ``store_postgres``) says how it runs a transaction,
writes a placeholder, passes JSON and lists, and compiles a filter; the statements
here are the same on both. Templates are written with ``%s`` placeholders and
``{collections}``-style table names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from memlane.core import timeutil
from memlane.documents.errors import (
    CollectionChangedError,
    CollectionNotFoundError,
    DocumentNotFoundError,
    DuplicateNameError,
    EncoderConflictError,
)
from memlane.documents.models import (
    CollectionRecord,
    DocumentRecord,
    PageHit,
    PageRecord,
    PageWrite,
    StoredVectors,
    UpsertResult,
)
from memlane.documents.store import COLLECTION_COLUMNS, DOCUMENT_COLUMNS, HIT_COLUMNS
from memlane.core.errors import EmbedderMismatchError, StoreError
from memlane.core.filters import MATCH_ALL, Node
from memlane.core.ids import new_id
from memlane.store import bm25
from memlane.store.sql_filters import FilterCompiler
from memlane.text import keywords

T = TypeVar("T")
Con = Any  # a DB-API connection whose execute(sql, params) returns a cursor


class SqlDocumentStore(ABC):
    #: table names (the PostgreSQL dialect prefixes them with memlane_)
    TABLES: dict[str, str] = {}
    PLACEHOLDER = "%s"
    #: appended to the read of a row the transaction then changes (PostgreSQL: FOR UPDATE)
    LOCK = ""
    #: the driver's errors (``save_encodings`` reports them as a StoreError)
    DB_ERRORS: tuple[type[Exception], ...] = ()
    #: the FROM of a keyword search's matches (SQLite: the FTS5 index first, joined to its page ``p``)
    FTS_FROM = " FROM {pages} p"

    def __init__(self, tenant: str, compiler: FilterCompiler):
        self.tenant = tenant
        self.compiler = compiler

    # -- dialect ----------------------------------------------------------------------------------

    @abstractmethod
    def _run(self, work: Callable[[Con], T], *, write: bool) -> T:
        """``work`` on a connection, in one transaction when ``write``."""

    @abstractmethod
    def _json_in(self, value: dict[str, Any]) -> Any:
        """A JSON object as the dialect stores it."""

    @abstractmethod
    def _json_out(self, value: Any) -> dict[str, Any]:
        """A stored JSON object back as a dict."""

    @abstractmethod
    def _in(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        """``column`` is one of ``values``."""

    @abstractmethod
    def _page_terms(self, text: str) -> dict[str, Any]:
        """The keyword columns of a page of ``text`` (its ``nterms``; PostgreSQL: its ``terms`` too)."""

    @abstractmethod
    def _keyword_hits(self, con: Con, terms: list[str], pages: str, params: list[Any]) -> list[tuple]:
        """(page id, nterms, term, tf) for each of ``terms`` a page of ``pages`` (a FROM ... WHERE
        clause over ``p``, ``d``, ``c`` taking ``params``) holds."""

    # -- helpers ----------------------------------------------------------------------------------

    def _sql(self, template: str, **parts: str) -> str:
        text = template.format(**self.TABLES, **{k: "{" + k + "}" for k in parts})
        if self.PLACEHOLDER != "%s":
            text = text.replace("%s", self.PLACEHOLDER)
        return text.format(**parts) if parts else text

    def _where(self, where: Node, params: list[Any]) -> str:
        if where == MATCH_ALL:
            return self.compiler.TRUE
        clause, filter_params = self.compiler.compile(where)
        params.extend(filter_params)
        return clause

    def _bump(self, con: Con) -> None:
        con.execute(self._sql("INSERT INTO {state} (tenant, version) VALUES (%s, 1) ON CONFLICT (tenant)"
                              " DO UPDATE SET version = {state}.version + 1"), (self.tenant,))

    def _collection_row(self, con: Con, name: str, *, lock: bool = False) -> CollectionRecord:
        if lock and self.LOCK:
            con.execute(self._sql("SELECT 1 FROM {collections} c WHERE c.tenant = %s AND c.name = %s" + self.LOCK),
                        (self.tenant, name))
        row = con.execute(self._sql("SELECT " + COLLECTION_COLUMNS + " FROM {collections} c"
                                    " WHERE c.tenant = %s AND c.name = %s"), (self.tenant, name)).fetchone()
        if row is None:
            raise CollectionNotFoundError(name)
        return self._collection(row)

    def _collection(self, row: Sequence[Any]) -> CollectionRecord:
        return CollectionRecord(row[0], row[1], self._json_out(row[2]), row[3], row[4], int(row[5]), row[6])

    def _document(self, row: Sequence[Any]) -> DocumentRecord:
        return DocumentRecord(row[0], row[1], row[2], row[3], self._json_out(row[4]), row[5], row[6], row[7],
                              int(row[8]))

    def _document_row(self, con: Con, collection_name: str, name: str) -> DocumentRecord | None:
        row = con.execute(self._sql("SELECT " + DOCUMENT_COLUMNS + " FROM {documents} d JOIN {collections} c"
                                    " ON c.tenant = d.tenant AND c.id = d.collection_id"
                                    " WHERE d.tenant = %s AND c.name = %s AND d.name = %s"),
                          (self.tenant, collection_name, name)).fetchone()
        return self._document(row) if row else None

    def _remove_pages(self, con: Con, of: str, value: str) -> list[str]:
        """Delete the pages of a document (``of="document"``) or of every document of a collection
        (``"collection"``); returns their ids, for the in-memory page index."""
        if of == "document":
            select = "SELECT id FROM {pages} WHERE tenant = %s AND document_id = %s"
            delete, params = "DELETE FROM {pages} WHERE tenant = %s AND document_id = %s", (self.tenant, value)
        else:
            select = ("SELECT p.id FROM {pages} p JOIN {documents} d ON d.tenant = p.tenant AND d.id = p.document_id"
                      " WHERE p.tenant = %s AND d.collection_id = %s")
            delete = ("DELETE FROM {pages} WHERE tenant = %s AND document_id IN"
                      " (SELECT id FROM {documents} WHERE tenant = %s AND collection_id = %s)")
            params = (self.tenant, self.tenant, value)
        removed = [r[0] for r in con.execute(self._sql(select), (self.tenant, value)).fetchall()]
        con.execute(self._sql(delete), params)
        return removed

    # -- collections ------------------------------------------------------------------------------

    def create_collection(self, name: str, metadata: dict[str, Any], encoder: str | None = None) -> CollectionRecord:
        now = timeutil.now_iso()

        def write(con: Con) -> CollectionRecord:
            row = con.execute(self._sql("INSERT INTO {collections} (tenant, id, name, metadata, created_at, updated_at,"
                                        " encoder) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"
                                        " RETURNING id"),
                              (self.tenant, new_id(), name, self._json_in(metadata), now, now, encoder)).fetchone()
            if row is None:
                raise DuplicateNameError(f"a collection named {name!r} exists already", field="name")
            self._bump(con)
            return self._collection_row(con, name)

        return self._run(write, write=True)

    def collection(self, name: str) -> CollectionRecord | None:
        def read(con: Con) -> CollectionRecord | None:
            try:
                return self._collection_row(con, name)
            except CollectionNotFoundError:
                return None

        return self._run(read, write=False)

    def collections(self, where: Node) -> list[CollectionRecord]:
        params: list[Any] = [self.tenant]
        clause = self._where(where, params)
        sql = self._sql("SELECT " + COLLECTION_COLUMNS + " FROM {collections} c WHERE c.tenant = %s AND {clause}"
                        " ORDER BY c.name", clause=clause)
        return self._run(lambda con: [self._collection(r) for r in con.execute(sql, params).fetchall()], write=False)

    def update_collection(self, name: str, *, new_name: str | None, metadata: dict[str, Any] | None) -> CollectionRecord:
        def write(con: Con) -> CollectionRecord:
            current = self._collection_row(con, name, lock=True)
            target = new_name or name
            if target != name and con.execute(self._sql("SELECT 1 FROM {collections} WHERE tenant = %s AND name = %s"),
                                              (self.tenant, target)).fetchone():
                raise DuplicateNameError(f"a collection named {target!r} exists already", field="name")
            con.execute(self._sql("UPDATE {collections} SET name = %s, metadata = %s, updated_at = %s"
                                  " WHERE tenant = %s AND id = %s"),
                        (target, self._json_in(current.metadata if metadata is None else metadata),
                         timeutil.now_iso(), self.tenant, current.id))
            self._bump(con)
            return self._collection_row(con, target)

        return self._run(write, write=True)

    def delete_collection(self, name: str) -> list[str]:
        def write(con: Con) -> list[str]:
            current = self._collection_row(con, name, lock=True)
            removed = self._remove_pages(con, "collection", current.id)
            con.execute(self._sql("DELETE FROM {documents} WHERE tenant = %s AND collection_id = %s"),
                        (self.tenant, current.id))
            con.execute(self._sql("DELETE FROM {collections} WHERE tenant = %s AND id = %s"), (self.tenant, current.id))
            self._bump(con)
            return removed

        return self._run(write, write=True)

    # -- documents --------------------------------------------------------------------------------

    def upsert_document(self, collection_name: str, name: str, metadata: dict[str, Any], source: str | None,
                        pages: Sequence[PageWrite], encoder: str, dims: int, *, chosen: bool = False) -> UpsertResult:
        now = timeutil.now_iso()

        def write(con: Con) -> UpsertResult:
            collection = self._collection_row(con, collection_name, lock=True)  # writers of a collection take turns
            if collection.encoder is not None and collection.encoder != encoder:
                if chosen and collection.num_documents:
                    raise EncoderConflictError(collection.name, collection.num_documents, collection.encoder, encoder)
                if not chosen:
                    raise EmbedderMismatchError(
                        f"collection {collection_name!r} holds pages encoded by {collection.encoder!r}, not "
                        f"{encoder!r}; a collection keeps the encoder of its first pages (write it into another "
                        "collection)")
            # recorded by its first pages, or chosen by its user for a collection without documents
            con.execute(self._sql("UPDATE {collections} SET encoder = %s WHERE tenant = %s AND id = %s"
                                  " AND (encoder IS NULL OR %s)"), (encoder, self.tenant, collection.id,
                                                                    chosen and not collection.num_documents))
            existing = self._document_row(con, collection_name, name)
            removed: list[str] = []
            if existing is None:
                document_id = new_id()
                con.execute(self._sql("INSERT INTO {documents} (tenant, id, collection_id, name, metadata, source,"
                                      " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"),
                            (self.tenant, document_id, collection.id, name, self._json_in(metadata), source, now, now))
            else:
                document_id = existing.id
                removed = self._remove_pages(con, "document", document_id)
                con.execute(self._sql("UPDATE {documents} SET metadata = %s, source = %s, updated_at = %s"
                                      " WHERE tenant = %s AND id = %s"),
                            (self._json_in(metadata), source, now, self.tenant, document_id))
            self._insert_pages(con, [(document_id, p) for p in pages], encoder, dims)
            self._bump(con)
            document = self._document_row(con, collection_name, name)
            assert document is not None
            return UpsertResult(document, removed, created=existing is None)

        return self._run(write, write=True)

    def _insert_pages(self, con: Con, pages: Sequence[tuple[str, PageWrite]], encoder: str, dims: int) -> None:
        """Insert (document id, page) rows with their token vectors and keyword columns."""
        indexed = [self._page_terms(p.text) for _, p in pages]
        columns = list(indexed[0]) if indexed else []
        con.cursor().executemany(
            self._sql("INSERT INTO {pages} (tenant, id, document_id, page_number, text, image, encoder, dims,"
                      " n_tokens, vectors, fde, fde_config" + "".join(", " + c for c in columns) + ") VALUES"
                      " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s" + ", %s" * len(columns) + ")"),
            [(self.tenant, p.id, document_id, p.page_number, p.text, p.image, encoder, dims, p.n_tokens, p.vectors,
              p.fde, p.fde_config, *terms.values()) for (document_id, p), terms in zip(pages, indexed)])

    def collection_pages(self, collection_name: str) -> list[PageRecord]:
        def read(con: Con) -> list[PageRecord]:
            collection = self._collection_row(con, collection_name)
            rows = con.execute(self._sql(
                "SELECT p.id, p.document_id, p.page_number, p.text, p.image FROM {pages} p JOIN {documents} d"
                " ON d.tenant = p.tenant AND d.id = p.document_id WHERE p.tenant = %s AND d.collection_id = %s"
                " ORDER BY p.document_id, p.page_number"), (self.tenant, collection.id)).fetchall()
            return [PageRecord(r[0], r[1], r[2], r[3], _bytes(r[4])) for r in rows]

        return self._run(read, write=False)

    def reencode_collection(self, collection_name: str, read_page_ids: Sequence[str],
                            pages: Sequence[tuple[str, PageWrite]], encoder: str, dims: int) -> list[str]:
        def write(con: Con) -> list[str]:
            collection = self._collection_row(con, collection_name, lock=True)  # writers of a collection take turns
            current = [r[0] for r in con.execute(self._sql(
                "SELECT p.id FROM {pages} p JOIN {documents} d ON d.tenant = p.tenant AND d.id = p.document_id"
                " WHERE p.tenant = %s AND d.collection_id = %s"), (self.tenant, collection.id)).fetchall()]
            if set(current) != set(read_page_ids):
                raise CollectionChangedError(collection_name)
            removed = self._remove_pages(con, "collection", collection.id)
            self._insert_pages(con, pages, encoder, dims)
            con.execute(self._sql("UPDATE {collections} SET encoder = %s, updated_at = %s"
                                  " WHERE tenant = %s AND id = %s"),
                        (encoder, timeutil.now_iso(), self.tenant, collection.id))
            self._bump(con)
            return removed

        return self._run(write, write=True)

    def document(self, collection_name: str, name: str) -> DocumentRecord | None:
        return self._run(lambda con: self._document_row(con, collection_name, name), write=False)

    def documents(self, collection_name: str | None, where: Node, limit: int) -> list[DocumentRecord]:
        params: list[Any] = [self.tenant]
        scope = ""
        if collection_name is not None:
            scope = " AND c.name = %s"
            params.append(collection_name)
        clause = self._where(where, params)
        params.append(limit)
        sql = self._sql("SELECT " + DOCUMENT_COLUMNS + " FROM {documents} d JOIN {collections} c"
                        " ON c.tenant = d.tenant AND c.id = d.collection_id WHERE d.tenant = %s" + scope +
                        " AND {clause} ORDER BY c.name, d.name LIMIT %s", clause=clause)

        def read(con: Con) -> list[DocumentRecord]:
            if collection_name is not None:
                self._collection_row(con, collection_name)  # an unknown collection is an error, not "no documents"
            return [self._document(r) for r in con.execute(sql, params).fetchall()]

        return self._run(read, write=False)

    def update_document(self, collection_name: str, name: str, *, new_name: str | None,
                        metadata: dict[str, Any] | None) -> DocumentRecord:
        def write(con: Con) -> DocumentRecord:
            self._collection_row(con, collection_name, lock=True)
            current = self._document_row(con, collection_name, name)
            if current is None:
                raise DocumentNotFoundError(name, collection_name)
            target = new_name or name
            if target != name and self._document_row(con, collection_name, target) is not None:
                raise DuplicateNameError(f"collection {collection_name!r} has a document named {target!r} already",
                                         field="name")
            con.execute(self._sql("UPDATE {documents} SET name = %s, metadata = %s, updated_at = %s"
                                  " WHERE tenant = %s AND id = %s"),
                        (target, self._json_in(current.metadata if metadata is None else metadata),
                         timeutil.now_iso(), self.tenant, current.id))
            self._bump(con)
            updated = self._document_row(con, collection_name, target)
            assert updated is not None
            return updated

        return self._run(write, write=True)

    def delete_document(self, collection_name: str, name: str) -> list[str]:
        def write(con: Con) -> list[str]:
            self._collection_row(con, collection_name, lock=True)
            current = self._document_row(con, collection_name, name)
            if current is None:
                raise DocumentNotFoundError(name, collection_name)
            removed = self._remove_pages(con, "document", current.id)
            con.execute(self._sql("DELETE FROM {documents} WHERE tenant = %s AND id = %s"), (self.tenant, current.id))
            self._bump(con)
            return removed

        return self._run(write, write=True)

    # -- pages ------------------------------------------------------------------------------------

    def pages(self, document_id: str) -> list[PageRecord]:
        sql = self._sql("SELECT id, document_id, page_number, text, image FROM {pages}"
                        " WHERE tenant = %s AND document_id = %s ORDER BY page_number")
        return self._run(lambda con: [PageRecord(r[0], r[1], r[2], r[3], _bytes(r[4]))
                                      for r in con.execute(sql, (self.tenant, document_id)).fetchall()], write=False)

    def _pages(self, collection_name: str | None, where: Node, params: list[Any], *, fts: bool = False) -> str:
        """FROM ... WHERE: the tenant's pages (``p``, with document ``d`` and collection ``c``) of one
        collection (or all) matching ``where``; its parameters are appended to ``params``. ``fts``:
        the SQLite keyword index first (``FTS_FROM``)."""
        params.append(self.tenant)
        scope = ""
        if collection_name is not None:
            scope = " AND c.name = %s"
            params.append(collection_name)
        clause = self._where(where, params)
        return self._sql((self.FTS_FROM if fts else " FROM {pages} p") +
                         " JOIN {documents} d ON d.tenant = p.tenant AND d.id = p.document_id"
                         " JOIN {collections} c ON c.tenant = d.tenant AND c.id = d.collection_id"
                         " WHERE p.tenant = %s" + scope + " AND {clause}", clause=clause)

    def page_ids(self, collection_name: str | None, where: Node) -> list[str]:
        params: list[Any] = []
        sql = "SELECT p.id" + self._pages(collection_name, where, params)
        return self._run(lambda con: [r[0] for r in con.execute(sql, params).fetchall()], write=False)

    def keyword_search(self, query: str | Mapping[str, float], collection_name: str | None, where: Node,
                       encoder: str, limit: int) -> list[tuple[str, float]]:
        """The best ``limit`` (page id, BM25 score) of the pages ``page_ids`` admits that were encoded by
        ``encoder``, best first: the memories' analyser and BM25 rule (store/bm25.py), statistics
        (number of pages, mean length, document frequencies) of the admitted pages only. A query
        without a usable term (only stop words, punctuation) matches nothing. ``query`` is a text, or
        analysed terms with their weights (a feedback query: ``retrieval/feedback.py``)."""
        weights = None if isinstance(query, str) else dict(query)
        terms = keywords.query_terms(query) if weights is None else [t for t, w in weights.items() if w > 0]
        if not terms:
            return []
        params: list[Any] = []
        admitted = self._pages(collection_name, where, params) + self._sql(" AND p.encoder = %s")
        params.append(encoder)
        hits_params: list[Any] = []
        hits_from = self._pages(collection_name, where, hits_params, fts=True) + self._sql(" AND p.encoder = %s")
        hits_params.append(encoder)

        def read(con: Con) -> list[tuple[str, float]]:
            hits = self._keyword_hits(con, terms, hits_from, hits_params)
            if not hits:
                return []
            n, avgdl = con.execute("SELECT count(*), coalesce(avg(p.nterms), 0)" + admitted, params).fetchone()
            return bm25.rank(hits, int(n), float(avgdl), limit, weights)

        return self._run(read, write=False)

    def iter_vectors(self, encoder: str, fde_config: str | None = None,
                     batch_size: int = 500) -> Iterator[list[StoredVectors]]:
        after = ""
        sql = self._sql("SELECT id, n_tokens, vectors, " + _FDE_OF_CONFIG + " FROM {pages}"
                        " WHERE tenant = %s AND encoder = %s AND id > %s ORDER BY id LIMIT %s")
        while True:
            rows = self._run(lambda con: con.execute(sql, (fde_config, self.tenant, encoder, after,
                                                           batch_size)).fetchall(), write=False)
            if not rows:
                return
            yield [_stored(r) for r in rows]
            after = rows[-1][0]

    def page_ids_of_encoder(self, encoder: str) -> list[str]:
        sql = self._sql("SELECT id FROM {pages} WHERE tenant = %s AND encoder = %s")
        return self._run(lambda con: [r[0] for r in con.execute(sql, (self.tenant, encoder)).fetchall()], write=False)

    def vectors(self, page_ids: Sequence[str], fde_config: str | None = None) -> list[StoredVectors]:
        if not page_ids:
            return []
        params: list[Any] = [fde_config, self.tenant]
        members = self._in("id", list(page_ids), params)
        sql = self._sql("SELECT id, n_tokens, vectors, " + _FDE_OF_CONFIG + " FROM {pages}"
                        " WHERE tenant = %s AND {members}", members=members)
        return self._run(lambda con: [_stored(r) for r in con.execute(sql, params).fetchall()], write=False)

    def save_encodings(self, encodings: Sequence[tuple[str, bytes]], fde_config: str) -> None:
        """Store the fast-path encodings of existing pages (pages written before encodings were
        stored, or with other parameters). Not a change of the pages' content: no version bump."""
        if not encodings:
            return
        sql = self._sql("UPDATE {pages} SET fde = %s, fde_config = %s WHERE tenant = %s AND id = %s")
        try:
            self._run(lambda con: con.cursor().executemany(
                sql, [(fde, fde_config, self.tenant, page_id) for page_id, fde in encodings]), write=True)
        except self.DB_ERRORS as exc:
            raise StoreError(f"could not store page encodings: {exc}") from None

    def encoders(self) -> dict[str, int]:
        sql = self._sql("SELECT encoder, count(*) FROM {pages} WHERE tenant = %s GROUP BY encoder")
        return self._run(lambda con: {r[0]: int(r[1]) for r in con.execute(sql, (self.tenant,)).fetchall()},
                         write=False)

    def hits(self, page_ids: Sequence[str]) -> dict[str, PageHit]:
        if not page_ids:
            return {}
        params: list[Any] = [self.tenant]
        members = self._in("p.id", list(page_ids), params)
        sql = self._sql("SELECT " + HIT_COLUMNS + " FROM {pages} p JOIN {documents} d"
                        " ON d.tenant = p.tenant AND d.id = p.document_id JOIN {collections} c"
                        " ON c.tenant = d.tenant AND c.id = d.collection_id WHERE p.tenant = %s AND {members}",
                        members=members)

        def read(con: Con) -> dict[str, PageHit]:
            out = {}
            for r in con.execute(sql, params).fetchall():
                page = PageRecord(r[0], r[1], r[2], r[3], _bytes(r[4]))
                document = DocumentRecord(r[5], r[6], r[7], r[8], self._json_out(r[9]), r[10], r[11], r[12])
                collection = CollectionRecord(r[13], r[14], self._json_out(r[15]), r[16], r[17])
                out[page.id] = PageHit(page, document, collection)
            return out

        return self._run(read, write=False)

    def version(self) -> int:
        sql = self._sql("SELECT version FROM {state} WHERE tenant = %s")
        row = self._run(lambda con: con.execute(sql, (self.tenant,)).fetchone(), write=False)
        return int(row[0]) if row else 0


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


#: a page's stored encoding when it was made with the parameters asked for (the first parameter)
_FDE_OF_CONFIG = "CASE WHEN fde_config = %s THEN fde END"


def _stored(row: Sequence[Any]) -> StoredVectors:
    return StoredVectors(row[0], int(row[1]), bytes(row[2]), _bytes(row[3]))
