"""The embedded store: one SQLite file in WAL mode.

- Several threads and processes may read and write at once: each thread has its
  own connection, writes take the write lock up front (``BEGIN IMMEDIATE``) and
  wait for it (busy timeout) instead of failing with "database is locked".
- Every public write is one transaction, history included; a killed process
  leaves the file as it was before the call.
- Vectors are raw little-endian float32 (or float16) blobs. A scoped search
  scores the scope's vectors exactly; a search without a scope id (e.g.
  ``{"user_id": "*"}``) uses an in-memory matrix of every vector, brought up to
  date from a change log when another connection has committed (``PRAGMA data_version``).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from memlane.core import jsonmatch, timeutil, vectors
from memlane.text import keywords
from memlane.core.errors import StorageFullError, StoreError
from memlane.core.filters import INTERNAL_MEMORY_COLUMNS, MEMORY_COLUMNS, MESSAGE_COLUMNS, SCOPE_COLUMNS, Compare, Node, clock_columns, conjoin, conjuncts, scope_ids
from memlane.core.models import SEARCHABLE, MemoryRecord
from memlane.store import bm25
from memlane.store import sqlite_keyword_stats as keyword_stats
from memlane.store.base import SearchReads
from memlane.store.sql import HISTORY_INSERT, RECORD_COLUMNS, SqlMemoryStore, added_history, unique
from memlane.store.sql_dialect import T
from memlane.store.sqlite_filters import JSON_FUNCTION, NOW_SQL, SqliteFilterCompiler
from memlane.store.sqlite_matrix import VectorMatrix
from memlane.store.sqlite_scope_cache import UNKNOWN, ScopeCache, ScopeEntry, signature_of
from memlane.store.sqlite_schema import migrate

#: ``json.dumps(..., ensure_ascii=False)`` without building an encoder per call (a tenth of a bulk insert's time)
_metadata_json = json.JSONEncoder(ensure_ascii=False).encode

#: ``vector_store.config.synchronous``: SQLite's ``PRAGMA synchronous`` by name, by the number it reads back
SYNCHRONOUS = {"normal": 1, "full": 2}

#: what ranking reads of a candidate's record (``SQLiteStore._ranked_records``), after its rowid
RANKED_COLUMNS = "m.id, m.created_at, m.user_id, m.agent_id, m.run_id, m.actor_id, m.metadata, m.context"
#: ``SearchReads.scans`` key of the RANKED_COLUMNS a small scope's scan read, by rowid
RANKED = "ranked"
#: ``SearchReads.scans`` key of what is kept of the searched scope between searches (``ScopeEntry``: its records)
KEPT = "kept"
#: a scope that admitted at most this many times a search's ``limit`` rows when last scanned is scanned with
#: its rows' RANKED_COLUMNS: most of its rows become candidates, and reading their records by rowid again
#: visits every row twice (100k memories, 100-row scopes, 1.4x the scan's time; the extra columns cost the
#: scan 0.45x, so the scan pays up to ~2.5 times the candidates)
SMALL_SCOPE = 2.5
#: scope sizes kept as that hint (cleared when full)
SCOPE_SIZES_KEPT = 4096

#: the indexed terms of a scope's rows, by rowid, read from the FTS5 table's own store of them (its
#: ``_content`` shadow table: reading them through ``memories_fts`` costs a virtual-table lookup per row, 1.6x)
SCOPE_TERMS = "SELECT id, c0 FROM memories_fts_content WHERE id IN (SELECT value FROM json_each(?))"
#: a small scope (``SMALL_SCOPE``) holding at most this share of the file's rows reads its rows' indexed terms
#: (``SCOPE_TERMS``) instead of a MATCH: a MATCH walks the query terms' doclists over the whole file (100k
#: memories, 100-row scopes, the benchmark's questions: 0.38 ms per scope read vs 1.09 ms per MATCH, both
#: then counted by ``term_hits``); in a file of a few scopes the doclists are short and a MATCH is cheaper
SCOPE_TERMS_SHARE = 0.01

#: rows of scopes searched again whose postings and ranking records are kept (``sqlite_scope_cache``; ~1 KB each)
SCOPE_CACHE_ROWS = 100_000

#: Entries of the ``memory_changes`` log kept: a matrix further behind than that reads every vector again.
CHANGE_LOG_KEEP = 10_000

_COMPILER = SqliteFilterCompiler(
    columns={"memory": "m.text", **{c: f"m.{c}" for c in (*MEMORY_COLUMNS, *INTERNAL_MEMORY_COLUMNS)
                                      if c != "memory"}},
    documents={"metadata": "m.metadata"},
)


def match_expression(terms: Sequence[str], scope: dict[str, list[str]]) -> str | None:
    """An FTS5 MATCH expression: any of the query ``terms`` (``keywords.query_terms``), within the
    scope ids given (AND across keys, OR across the values of one key). None without terms."""
    if not terms:
        return None
    expression = "(" + " OR ".join(f'"{t}"' for t in terms) + ")"
    for key, values in scope.items():
        expression += " AND (" + " OR ".join(keywords.scope_token(key, v) for v in values) + ")"
    return expression


def _count_terms(text: str, context: str | None = None, actor: str | None = None) -> int:
    """BM25's length of a memory: its terms, its context's and its speaker's with them (the ``nterms``
    column)."""
    return len(keywords.memory_terms(text, context, actor))


#: above this many query terms ``term_hits`` counts them all in one pass over a row (25 terms x 150-term
#: pages: 11 vs 54 ms per 1,400 rows); up to it, a pass per term is faster (1 term x 12: 5 vs 8 ms per 10k)
MANY_TERMS = 4


def term_hits(rows: list[tuple], terms: list[str]) -> Iterator[tuple[int, int, str, int]]:
    """(rowid, length, term, tf) for each query term a matched row holds. The FTS5 row's text is
    the memory's terms, then its scope tokens: counting in the first ``nterms`` tokens is counting
    in ``keywords.memory_terms(text, context, actor)``, without analysing again."""
    if len(terms) <= MANY_TERMS:  # a typical query: one C-speed pass over the row per term
        for rowid, nterms, indexed in rows:
            if not any(term in indexed for term in terms):  # a row holding a term holds its characters
                continue
            tokens = indexed.split(" ", nterms)[:nterms]
            for term in terms:
                tf = tokens.count(term)
                if tf:
                    yield rowid, nterms, term, tf
        return
    wanted = set(terms)  # an expanded (feedback) query: one pass over the row for all its terms
    for rowid, nterms, indexed in rows:
        counts: dict[str, int] = {}
        for token in indexed.split(" ", nterms)[:nterms]:
            if token in wanted:
                counts[token] = counts.get(token, 0) + 1
        for term in terms:
            if term in counts:
                yield rowid, nterms, term, counts[term]


def disk_full(exc: BaseException) -> bool:
    """Whether SQLite failed for want of space (``SQLITE_FULL``: the disk, or ``max_page_count``)."""
    return isinstance(exc, sqlite3.Error) and (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == sqlite3.SQLITE_FULL


def register_functions(con: sqlite3.Connection) -> None:
    """The SQL functions memlane's schema and queries call (the filter language's JSON match,
    the keyword index's terms and lengths); every connection to a store needs them."""
    con.create_function(JSON_FUNCTION, 3, jsonmatch.sql_function, deterministic=True)
    # (text, user_id, agent_id, run_id[, context[, actor]]): pages and the migrations before memories' context
    # and speakers have fewer
    for arguments in (4, 5, 6):
        con.create_function("ml_index_terms", arguments, keywords.index_text, deterministic=True)
    con.create_function("ml_count_terms", 1, _count_terms, deterministic=True)
    con.create_function("ml_count_terms", 3, _count_terms, deterministic=True)
    # filters.NOW, the time a read checks validity against. Declared deterministic so SQLite evaluates it
    # once per statement execution (a constant factored out of the row loop, as PostgreSQL's
    # statement_timestamp()), not once per row: counting 100,000 memories calls it once
    con.create_function("ml_now", 0, timeutil.now_iso, deterministic=True)


def _scope_filter(where: Node) -> tuple[str, list]:
    """``where``'s scope ids alone (its top-level user, agent and run conditions), compiled."""
    return _COMPILER.compile(conjoin(*(
        c for c in conjuncts(where) if isinstance(c, Compare) and c.field.column in SCOPE_COLUMNS)))


def _kept_records(reads: SearchReads) -> dict[int, MemoryRecord]:
    """The whole records of the scope this search found kept (``KEPT``), by rowid; empty for none."""
    entry: ScopeEntry | None = reads.scans.get(KEPT)
    return entry.records if entry is not None else {}


class SQLiteStore(SqlMemoryStore):
    #: ``vector_store.provider`` (``SharedDatabase``: the document store beside it is found by it)
    provider = "sqlite"
    TABLES = {"memories": "memories", "history": "history", "messages": "messages", "applied_keys": "applied_keys",
              "adds": "adds",
              "memory_tokens": "memory_tokens", "meta": "meta", "reembed": "reembed_vectors",
              "graph_entities": "graph_entities", "graph_relations": "graph_relations", "jobs": "jobs",
              "project_settings": "project_settings", "webhooks": "webhooks", "feedback": "feedback",
              "exports": "exports"}
    PLACEHOLDER = "?"
    NOW = NOW_SQL
    EPOCH = "((julianday('now') - 2440587.5) * 86400.0)"
    INTEGRITY_ERRORS = (sqlite3.IntegrityError,)
    EXTRA_TABLES = ("memories_fts",)
    #: the vector column is NOT NULL (since schema 1): a memory without a vector yet holds an empty blob
    NO_VECTOR = "vector = x''"
    HAS_VECTOR = "m.vector <> x''"
    SCOPES_FROM_INDEX = True
    #: searches of this process that read the file at once (``retrieval.searcher``): one, as its work is
    #: all under the GIL
    SEARCH_SLOTS = 1
    TOKENS_FROM = ("{memory_tokens} t JOIN {memories} m ON m.rowid = t.rowid", "m.id")
    REEMBED_PENDING = (
        "SELECT m.rowid, m.hash, m.text, m.metadata, m.actor_id, m.context FROM memories m"
        " LEFT JOIN reembed_vectors r ON r.rowid = m.rowid"
        " WHERE r.rowid IS NULL OR r.hash <> m.hash OR r.embedder <> %s ORDER BY m.rowid LIMIT %s"
    )
    REEMBED_SAVE = "INSERT OR REPLACE INTO reembed_vectors(rowid, hash, embedder, vector) VALUES (%s, %s, %s, %s)"
    REEMBED_SWAP = ("UPDATE memories SET vector = (SELECT r.vector FROM reembed_vectors r"
                    " WHERE r.rowid = memories.rowid)")

    def __init__(self, path: str | Path, *, vector_dtype: str = "float32", busy_timeout: float = 30.0,
                 synchronous: str = "normal", scope_cache_rows: int = SCOPE_CACHE_ROWS):
        history_scope = SqliteFilterCompiler(columns={c: c for c in SCOPE_COLUMNS}, documents={})
        super().__init__("default", _COMPILER, history_scope,
                         SqliteFilterCompiler(columns={c: c for c in MESSAGE_COLUMNS}, documents={}))
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory for the store {self.path}: {exc}") from None
        self.busy_timeout = busy_timeout
        if synchronous not in SYNCHRONOUS:
            raise StoreError(f"synchronous must be one of {', '.join(SYNCHRONOUS)}, not {synchronous!r}")
        self.synchronous = synchronous
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        with self._write() as con:
            migrate(con)
            con.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_dtype', ?)", (vector_dtype,))
        # The dtype chosen when the file was created wins; the setting only applies to new stores.
        self.dtype = vectors.DTYPES[self._run(lambda con: self._meta(con, ("vector_dtype",)))["vector_dtype"]]
        self._matrix = VectorMatrix(self._connect, self._dims, self.dtype)
        self._keyword_stats = keyword_stats.ScopeStats()
        self._scopes = ScopeCache(scope_cache_rows)
        #: rows each scope filter admitted when a search last scanned it (``SMALL_SCOPE``; a hint, never a result)
        self._scope_sizes: dict[tuple, int] = {}

    @property
    def location(self) -> str:
        return str(self.path)

    # -- connections and transactions ---------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            con = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            self._enable_wal(con)
        except sqlite3.Error as exc:
            if disk_full(exc):
                raise StorageFullError(self.location, str(exc)) from None
            raise StoreError(f"cannot open the store {self.path}: {exc}") from None
        # WAL + NORMAL: a killed process loses nothing committed, a power loss the last commits (never the
        # file); FULL flushes the WAL at each commit, so a commit survives power loss (docs/storage.md)
        con.execute(f"PRAGMA synchronous={self.synchronous.upper()}")
        con.execute("PRAGMA temp_store=MEMORY")
        # Reads go through one memory map of the file that every connection shares (pages the OS
        # already holds are not copied again); each connection's own page cache stays small, or a
        # server's 40 threads would each fill 32 MiB with copies of the same pages (issue 20's soak:
        # RSS +44 % after warm-up with 32 MiB per connection).
        con.execute("PRAGMA mmap_size=1073741824")
        con.execute("PRAGMA cache_size=-4096")
        register_functions(con)
        with self._connections_lock:
            self._connections.append(con)
        return con

    def _enable_wal(self, con: sqlite3.Connection) -> None:
        """Switch to WAL, waiting for other openers: SQLite does not call the busy handler
        while a new file changes journal mode, so "database is locked" comes back at once."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                mode = con.execute("PRAGMA journal_mode=WAL").fetchone()[0]
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.01)
        if mode.lower() != "wal":
            raise StoreError(f"the store {self.path} cannot use WAL mode (journal mode is {mode!r})")

    @property
    def _con(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("the store is closed")
        con = getattr(self._local, "con", None)
        if con is None:
            con = self._local.con = self._connect()
        return con

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        con = self._con
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise StoreError(
                f"could not take the write lock on {self.path} within {self.busy_timeout:g} s ({exc}); "
                "another connection (a thread or process) is holding it"
            ) from None
        try:
            yield con
            con.execute("DELETE FROM memory_changes WHERE seq <= (SELECT max(seq) FROM memory_changes) - ?",
                        (CHANGE_LOG_KEEP,))
            con.execute(keyword_stats.BUMP)  # cached keyword statistics are stale now
            con.execute("COMMIT")
        except BaseException as exc:
            if con.in_transaction:  # after some errors (a full disk) SQLite has rolled back already
                con.execute("ROLLBACK")
            if disk_full(exc):
                raise StorageFullError(self.location, str(exc)) from None
            raise

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: several statements see one consistent state."""
        con = self._con
        con.execute("BEGIN")
        try:
            yield con
        finally:
            con.execute("COMMIT")

    def _run(self, work: Callable[[sqlite3.Connection], T], *, write: bool = False) -> T:
        """Reads run in autocommit (the shared reads are single statements; a BEGIN/COMMIT pair would
        add a third to ``get``'s time); the searches take a ``_snapshot`` themselves."""
        if write:
            with self._write() as con:
                return work(con)
        return work(self._con)

    # -- the dialect ----------------------------------------------------------

    def _json_in(self, value: dict) -> str:
        return _metadata_json(value)

    def _json_out(self, value: str) -> dict:
        return {} if value == "{}" else json.loads(value)  # most memories have no metadata

    def _list_in(self, values: Sequence[str]) -> str:
        return json.dumps(list(values)) if values else "[]"

    def _list_out(self, value: str) -> list[str]:
        if value == "[]":
            return []
        if "\\" not in value and value.startswith('["') and value.endswith('"]'):  # ids as _list_in wrote them
            items = value[2:-2].split('", "')
            if value.count('"') == 2 * len(items):
                return items
        return json.loads(value)

    def _in(self, column: str, values: Sequence, params: list) -> str:
        params.append(json.dumps(list(values)))  # any number of values (no variable limit)
        return f"{column} IN (SELECT value FROM json_each(?))"

    def _vector_in(self, vector: np.ndarray | None) -> bytes:
        return b"" if vector is None else vectors.to_blob(vector, self.dtype)

    def _vectors_out(self, stored: list[bytes]) -> np.ndarray:
        return vectors.from_blobs(stored, self._dims(), self.dtype)

    def _keyword_columns(self, text: str, context: str | None, actor: str | None,
                         scope: Sequence[str | None]) -> dict[str, int]:
        return {"nterms": _count_terms(text, context, actor)}  # the FTS5 row follows the text (a trigger)

    def _drop_tokens(self, con: sqlite3.Connection, memory_id: str) -> None:
        con.execute("DELETE FROM memory_tokens WHERE rowid = (SELECT rowid FROM memories WHERE id = ?)", (memory_id,))

    def _reembed_start(self, con: sqlite3.Connection) -> None:
        con.execute("CREATE TABLE IF NOT EXISTS reembed_vectors (rowid INTEGER PRIMARY KEY, hash TEXT NOT NULL,"
                    " vector BLOB NOT NULL, embedder TEXT NOT NULL)")

    def _reembed_finish(self, con: sqlite3.Connection) -> None:
        con.execute("DROP TABLE IF EXISTS reembed_vectors")

    # -- the insert path ------------------------------------------------------

    def _insert(self, con: sqlite3.Connection, records: list[MemoryRecord]) -> None:
        """The only place rows enter ``memories``. It gives them their rowids, so it can index
        their keywords in the same transaction, and never hands out a rowid twice (SQLite would
        reuse the highest one after its row is deleted): rows above the highest rowid an
        unscoped-search matrix has read are exactly the rows inserted since."""
        dtype = self.dtype
        first = con.execute(
            "SELECT max(coalesce((SELECT max(rowid) FROM memories), 0),"
            " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'last_rowid'), 0)) + 1"
        ).fetchone()[0]
        con.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('last_rowid', ?)", (str(first + len(records) - 1),))
        analysed = [keywords.memory_terms(r.text, r.context, r.actor_id) for r in records]  # once for the length and the index
        try:
            con.executemany(
                "INSERT INTO memories(rowid, id, text, hash, created_at, updated_at, user_id, agent_id, run_id,"
                " actor_id, role, metadata, memory_type, source_message_ids, valid_to, invalid_reason, superseded_by,"
                " event_id, vector, nterms, context) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(rowid, r.id, r.text, r.hash, r.created_at, r.updated_at, r.user_id, r.agent_id, r.run_id,
                  r.actor_id, r.role, _metadata_json(r.metadata), r.memory_type,
                  self._list_in(unique(r.source_message_ids)), r.valid_to,
                  r.invalid_reason, r.superseded_by, r.event_id,
                  b"" if r.vector is None else vectors.to_blob(r.vector, dtype), len(terms),
                  r.context)
                 for rowid, r, terms in zip(range(first, first + len(records)), records, analysed)],
            )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"could not insert memories: {exc}") from None
        con.executemany(
            "INSERT INTO memories_fts(rowid, terms) VALUES (?, ?)",
            [(rowid, keywords.index_text(r.text, r.user_id, r.agent_id, r.run_id, terms=terms))
             for rowid, r, terms in zip(range(first, first + len(records)), records, analysed)],
        )
        events = added_history(records)
        con.executemany(self._sql(HISTORY_INSERT), events)
        self._announce(con, events)
        self._store_tokens(con, [(r.id, r.token_vectors) for r in records if r.token_vectors is not None])

    def _store_tokens(self, con: sqlite3.Connection, items: list[tuple[str, np.ndarray]]) -> None:
        if items:
            con.executemany(
                "INSERT OR REPLACE INTO memory_tokens(rowid, count, vectors) SELECT rowid, ?, ? FROM memories WHERE id = ?",
                [(len(t), np.asarray(t, dtype="<f2").tobytes(), memory_id) for memory_id, t in items],
            )

    # -- search ---------------------------------------------------------------

    def _records_by_rowid(self, con: sqlite3.Connection, rowids: list[int],
                          reads: SearchReads | None = None) -> dict[int, MemoryRecord]:
        """The records of ``rowids`` that exist (with ``reads``: read once per search, ``SearchReads.of``, and
        in part: ``_ranked_records``)."""
        if reads is not None:
            return reads.of(rowids, lambda missing: self._ranked_records(con, missing, reads))
        rows = con.execute(
            f"SELECT m.rowid, {RECORD_COLUMNS} FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),),
        ).fetchall()
        return {row[0]: self._record(row[1:]) for row in rows}

    def _ranked_records(self, con: sqlite3.Connection, rowids: list[int], reads: SearchReads) -> dict[int, MemoryRecord]:
        """The records of ``rowids`` with what ranking reads of them (``SearchReads``: a search's 100-odd
        candidates, of which it returns ten), named in ``reads.partial``; ``reads.whole`` reads the rest.
        Rows a small scope's scan read them of (``search``) are not read again; a kept scope's are whole
        (``ScopeEntry.records``)."""
        if reads.read_whole is None:
            reads.read_whole = self._whole_records
        kept = _kept_records(reads)
        if len(rowids) == len(kept) and kept.keys() >= set(rowids):  # the whole kept scope (a small one's candidates)
            return kept
        found = {rowid: kept[rowid] for rowid in rowids if rowid in kept}
        if len(found) < len(rowids):
            read = self._ranking_rows(con, [rowid for rowid in rowids if rowid not in found], reads)
            reads.partial.update((record.id, rowid) for rowid, record in read.items())
            found.update(read)
        return found

    def _whole_records(self, reads: SearchReads, rowids: list[int]) -> dict[int, MemoryRecord]:
        """``SearchReads.whole``'s read: the records of ``rowids`` that exist, whole; those of a scope this search
        kept (``_scope_entry``) from its entry."""
        kept = _kept_records(reads)
        found = {rowid: kept[rowid] for rowid in rowids if rowid in kept}
        if len(found) < len(rowids):
            found.update(self._run(lambda con: self._records_by_rowid(con, [r for r in rowids if r not in found])))
        return found

    def _ranking_rows(self, con: sqlite3.Connection, rowids: list[int], reads: SearchReads) -> dict[int, MemoryRecord]:
        """The ranking records of ``rowids`` (``_ranked_records``): from a small scope's scan, else read."""
        scanned = reads.scans.get(RANKED, {})
        rows = [(rowid, *scanned[rowid]) for rowid in rowids if rowid in scanned]
        unread = [rowid for rowid in rowids if rowid not in scanned]
        if unread:
            rows += con.execute(f"SELECT m.rowid, {RANKED_COLUMNS} FROM memories m"
                                " WHERE m.rowid IN (SELECT value FROM json_each(?))", (json.dumps(unread),)).fetchall()
        json_out = self._json_out
        # ranking reads of the metadata only whether the memory is kept out of search (``searchable``): a document
        # not naming that key is not decoded (a tenth of a hybrid search's time)
        return {rowid: MemoryRecord(memory_id, "", "", created_at, "", user_id=user_id, agent_id=agent_id,
                                    run_id=run_id, actor_id=actor_id,
                                    metadata=json_out(metadata) if SEARCHABLE in metadata else {}, context=context)
                for rowid, memory_id, created_at, user_id, agent_id, run_id, actor_id, metadata, context in rows}

    def search(self, query: np.ndarray, where: Node, limit: int, threshold: float | None,
               reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float]]:
        sql, params = _COMPILER.compile(where)
        scope = scope_ids(where)
        key = keyword_stats.ScopeScan.key(sql, params) if scope and reads is not None else None
        if key is not None and self._scopes.holds(key) and \
                (found := self._kept_search(key, scope, query, limit, threshold, reads)) is not None:
            return found
        with self._snapshot() as con:
            if scope:
                generation, signature = signature_of(con, scope) if key is not None else (None, ())
                kept = self._scopes.get(key, signature) if key is not None else None
                if kept is not None and kept.until is UNKNOWN:  # its first use: nothing written since it was read
                    kept.until = self._admits_until(con, where, kept.moment)
                if kept is not None and kept.current():
                    return self._kept_hits(kept, key, generation, signature, query, limit, threshold, reads)
                rowids, matrix, scan = self._scan(con, sql, params, query, key, kept, generation, signature, limit,
                                                  reads)
                hits = self._nearest(rowids, matrix, scan, query, limit, threshold)
            else:
                hits = self._matrix.search(con, query, sql, params, limit, threshold)
            records = self._records_by_rowid(con, [rowid for rowid, _ in hits], reads)
        return [(records[rowid], score) for rowid, score in hits if rowid in records]

    def _kept_search(self, key: tuple, scope: dict[str, list[str]], query: np.ndarray, limit: int,
                     threshold: float | None, reads: SearchReads) -> list[tuple[MemoryRecord, float]] | None:
        """The search of a kept scope with nothing written to it and no expiry passed since it was read
        (``ScopeEntry.current``): one statement, its generations (consistent by itself: no read transaction);
        None when the scope is not kept so (``search`` reads it)."""
        generation, signature = signature_of(self._con, scope)
        kept = self._scopes.get(key, signature)
        if kept is None or not kept.current():
            return None
        return self._kept_hits(kept, key, generation, signature, query, limit, threshold, reads)

    def _kept_hits(self, kept: ScopeEntry, key: tuple, generation: str | None, signature: tuple, query: np.ndarray,
                   limit: int, threshold: float | None, reads: SearchReads) -> list[tuple[MemoryRecord, float]]:
        """The nearest rows of a kept scope, from its kept vectors and records: no row read."""
        reads.scans[KEPT] = kept  # its records are the cache's: read, never changed
        scan = self._keep_scan(reads, key, keyword_stats.ScopeScan(generation, (), query, kept, signature))
        hits = self._nearest(kept.rowids, kept.matrix, scan, query, limit, threshold)
        records = self._records_by_rowid(self._con, [rowid for rowid, _ in hits], reads)  # all kept: no statement
        return [(records[rowid], score) for rowid, score in hits if rowid in records]

    @staticmethod
    def _nearest(rowids: np.ndarray, matrix: np.ndarray, scan: keyword_stats.ScopeScan | None, query: np.ndarray,
                 limit: int, threshold: float | None) -> list[tuple[int, float]]:
        """The best ``limit`` of the scope's rows with a vector (``rowids``, ``matrix``) by cosine to ``query``, the
        cosines of all kept with the ``scan`` for the keyword stage."""
        scores = matrix @ query
        if scan is not None:
            scan.rowids, scan.scores, scan.matrix = rowids, scores, matrix
        if not len(rowids):
            return []
        best = vectors.top_k(scores, limit, threshold)
        return list(zip(rowids[best].tolist(), scores[best].tolist()))

    def _scan(self, con: sqlite3.Connection, sql: str, params: list, query: np.ndarray, key: tuple | None,
              kept: ScopeEntry | None, generation: str | None, signature: tuple, limit: int, reads: SearchReads | None
              ) -> tuple[np.ndarray, np.ndarray, keyword_stats.ScopeScan | None]:
        """A scoped search's read of the rows its filter admits: the rowids and vectors of those with a vector,
        and (with ``reads``) the scan kept for the keyword stage. ``kept``: the scope's entry, used when the scan
        reads the rows it was made of (a row may have left without a write: an expiry)."""
        size = self._scope_sizes.get(key) if key is not None else None
        ranked = kept is None and size is not None and size <= SMALL_SCOPE * limit
        moment = timeutil.now_iso()  # no later than the statement's ml_now()
        admitted = con.execute(f"SELECT m.rowid, m.vector, m.nterms{', ' + RANKED_COLUMNS if ranked else ''}"
                               f" FROM memories m WHERE {sql}", params).fetchall()
        if kept is not None and not kept.admits(admitted):  # a row left without a write (an expiry)
            self._scopes.drop(key)
            kept = None
        if kept is not None:  # searched before since its last write: its ranking records are kept
            reads.scans[KEPT] = kept  # its records are the cache's: read, never changed
        if key is not None:
            if len(self._scope_sizes) >= SCOPE_SIZES_KEPT:
                self._scope_sizes.clear()
            self._scope_sizes[key] = len(admitted)
            if ranked:
                reads.scans.setdefault(RANKED, {}).update((row[0], row[3:]) for row in admitted)
        scan = self._keep_scan(reads, key, keyword_stats.ScopeScan(generation, admitted, query, kept, signature, moment))
        rows = [row for row in admitted if row[1]]  # a memory not embedded yet has an empty blob
        matrix = vectors.from_blobs([r[1] for r in rows], self._dims(), self.dtype)
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)), matrix, scan

    def keyword_search(self, query: str, vector: np.ndarray, where: Node, limit: int,
                       reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float, float]]:
        """FTS5 finds the matching rows (the scope ids go into the MATCH, so only the scope's postings
        are read); the scores are ``store/bm25.py``'s over the rows ``where`` admits, not FTS5's
        ``bm25()``, whose statistics span the whole file (every user) and count scope tokens. After this
        search's scoped vector search of the same filter (``reads``, nothing written since), its scan of the
        admitted rows gives the lengths, N and avgdl and the cosines: no join, no count, no vector read again."""
        terms = keywords.query_terms(query)
        expression = match_expression(terms, scope_ids(where))
        if expression is None:
            return []
        sql, params = _COMPILER.compile(where)
        scan = self._kept_scan(reads, sql, params)
        if scan is not None:  # in memory, in the snapshot of this search's vector scan: no statement at all
            return self._ranked_matches(None, scan, scan.kept.hits(terms), scan.stats(), terms, vector, limit, reads)
        with self._snapshot() as con:
            scan = self._scan_of(con, reads, sql, params)
            kept = self._scope_entry(con, scan, sql, params, limit, reads)
            if kept is not None:  # every admitted row's terms at hand: read now
                hits = kept.hits(terms)
            elif scan is not None:  # the vector search read the rows the filter admits: no join, no count
                lengths = scan.lengths()
                hits = list(term_hits([(rowid, lengths[rowid], indexed) for rowid, indexed in con.execute(
                    "SELECT rowid, terms FROM memories_fts WHERE memories_fts MATCH ?", (expression,))
                    if rowid in lengths], terms))
            else:
                hits = list(term_hits(con.execute(
                    # CROSS JOIN keeps FTS5 the outer loop: with memories outside (the planner's choice for
                    # a scope index) FTS5 would evaluate the MATCH again for every row of the scope
                    "SELECT m.rowid, m.nterms, memories_fts.terms FROM memories_fts CROSS JOIN memories m"
                    f" ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND {sql}",
                    (expression, *params),
                ).fetchall(), terms))
            if not hits:
                return []
            stats = scan.stats() if scan is not None else self._keyword_stats.get(
                con, sql, params, covering=lambda: self._lengths_index_pays(con, where))
            return self._ranked_matches(con, scan, hits, stats, terms, vector, limit, reads)

    def _ranked_matches(self, con: sqlite3.Connection | None, scan: keyword_stats.ScopeScan | None,
                        hits: list[tuple[int, int, str, int]], stats: tuple[int, float], terms: list[str],
                        vector: np.ndarray, limit: int, reads: SearchReads | None
                        ) -> list[tuple[MemoryRecord, float, float | None]]:
        """The best ``limit`` keyword matches of ``hits`` by BM25 over ``stats`` (N, avgdl), with their records and
        cosines: read in ``con``'s snapshot, or (``con`` None) all from ``scan`` and what is kept of its scope."""
        if not hits:
            return []
        best = bm25.rank(hits, *stats, limit, terms=terms)
        rowids = [rowid for rowid, _ in best]
        cosines = scan.cosines(vector) if scan is not None else {}
        if con is None:  # the kept scope holds every admitted row's record; one without a cosine has no vector
            records = reads.of(rowids, lambda missing: self._run(lambda c: self._ranked_records(c, missing, reads)))
            return [(records[rowid], score, cosines.get(rowid)) for rowid, score in best if rowid in records]
        records = self._records_by_rowid(con, rowids, reads)
        unscored = [rowid for rowid in rowids if rowid not in cosines]
        blobs = dict(con.execute("SELECT rowid, vector FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
                                 (json.dumps(unscored),)).fetchall()) if unscored else {}
        best = [(rowid, score) for rowid, score in best if rowid in records]
        embedded = [rowid for rowid, _ in best if blobs.get(rowid)]  # a memory not embedded yet has no cosine
        if embedded:
            cosines = {**cosines, **dict(zip(embedded, (vectors.from_blobs(
                [blobs[rowid] for rowid in embedded], self._dims(), self.dtype) @ vector).tolist()))}
        return [(records[rowid], score, cosines.get(rowid)) for rowid, score in best]

    @staticmethod
    def _kept_scan(reads: SearchReads | None, sql: str, params: list) -> keyword_stats.ScopeScan | None:
        """This search's vector scan of the filter ``sql`` compiles to, when what is kept of its scope came with it."""
        key = keyword_stats.ScopeScan.key(sql, params) if reads is not None else None
        scan = reads.scans.get(key) if key is not None else None
        return scan if scan is not None and scan.kept is not None else None

    def _scope_entry(self, con: sqlite3.Connection, scan: keyword_stats.ScopeScan | None, sql: str, params: list,
                     limit: int, reads: SearchReads) -> ScopeEntry | None:
        """Every admitted row's indexed terms for the keyword search after this search's vector scan (``scan``), read
        now (the FTS5 table's store of them) when the scope is small (``_reads_scope_terms``) or searched a second
        time since its last write, and kept with the rows' vectors and whole records when they fit (an entry kept
        earlier comes with the scan: ``_kept_scan``). None: a MATCH reads the matches instead."""
        if scan is None or (key := keyword_stats.ScopeScan.key(sql, params)) is None:
            return None
        rows = len(scan.rows)
        if not self._reads_scope_terms(con, rows, limit) and not self._scopes.wanted(key, scan.signature, rows):
            return None
        lengths = scan.lengths()
        rowids = list(lengths)
        texts = con.execute(SCOPE_TERMS, (json.dumps(rowids),)).fetchall()
        if not self._scopes.fits(rows):
            return ScopeEntry(lengths, texts, {})  # this search's alone
        entry = ScopeEntry(lengths, texts, self._records_by_rowid(con, rowids), scan.rowids, scan.matrix, scan.moment)
        self._scopes.put(key, scan.signature, entry)
        reads.scans[KEPT] = entry  # the answer's records are among its records
        return entry

    def _admits_until(self, con: sqlite3.Connection, where: Node, moment: str) -> str | None:
        """The earliest moment after ``moment`` at which ``where`` may admit other rows with no write: the first
        ``valid_to`` to pass among the rows of its scope ids, when it compares ``valid_to`` with the clock (None:
        none to pass; "": it compares another column with the clock, or the scan read no clock)."""
        clocked = clock_columns(where)
        if not clocked:
            return None
        if clocked != {"valid_to"} or not moment:
            return ""
        scope_sql, scope_params = _scope_filter(where)
        return con.execute(f"SELECT min(m.valid_to) FROM memories m WHERE {scope_sql} AND m.valid_to > ?",
                           (*scope_params, moment)).fetchone()[0]

    @staticmethod
    def _reads_scope_terms(con: sqlite3.Connection, rows: int, limit: int) -> bool:
        """Whether a keyword search reads the indexed terms of each of the ``rows`` a scope holds (``SCOPE_TERMS``)
        rather than MATCH the query: the scope is small (``SMALL_SCOPE``) and a small share of the file
        (``SCOPE_TERMS_SHARE``), whose doclists of the query's terms a MATCH walks whole."""
        if rows > SMALL_SCOPE * limit:
            return False
        top = con.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0  # rowids are never reused
        return rows <= SCOPE_TERMS_SHARE * top

    @staticmethod
    def _keep_scan(reads: SearchReads | None, key: tuple | None,
                   scan: keyword_stats.ScopeScan) -> keyword_stats.ScopeScan | None:
        """Keep a scoped vector search's read of the rows its filter (``key``) admits for the keyword stage."""
        if reads is None or key is None:
            return None
        reads.scans[key] = scan
        return scan

    def focused_search(self, query: np.ndarray, where: Node, focus: Node, limit: int, reads: SearchReads | None = None
                       ) -> tuple[list[tuple[MemoryRecord, float]], list[tuple[MemoryRecord, float]] | None]:
        """``Store.focused_search``: the search, and the focus from its own scan when the scope is kept
        (``sqlite_scope_cache``: every row's speaker known) and ``focus`` picks speakers (``actors.focus``)."""
        near = self.search(query, where, limit, None, reads)
        return near, self._focused_in_scan(where, focus, limit, reads)

    def _focused_in_scan(self, where: Node, focus: Node, limit: int,
                         reads: SearchReads | None) -> list[tuple[MemoryRecord, float]] | None:
        """The nearest ``limit`` rows of ``where`` whose ``actor_id`` is in ``focus`` (an ``actor_id IN`` filter),
        from the cosines the scan of ``where`` computed: what a search of both filters finds (ties in the same
        order), without a second scan. None when the scan or the scope's speakers are not at hand."""
        if reads is None or not (isinstance(focus, Compare) and focus.field.column == "actor_id"
                                 and not focus.field.path and focus.op == "in" and None not in focus.value):
            return None
        key = keyword_stats.ScopeScan.key(*_COMPILER.compile(where))
        scan = reads.scans.get(key) if key is not None else None
        if scan is None or scan.kept is None or scan.rowids is None:
            return None
        speakers = scan.kept.rows_of(focus.value)
        if not len(speakers):
            return []
        positions = np.flatnonzero(np.isin(scan.rowids, speakers))
        best = positions[vectors.top_k(scan.scores[positions], limit)]
        rowids = scan.rowids[best].tolist()
        records = reads.of(rowids, lambda missing: self._run(lambda con: self._ranked_records(con, missing, reads)))
        return [(records[rowid], float(score)) for rowid, score in zip(rowids, scan.scores[best].tolist())
                if rowid in records]

    @staticmethod
    def _scan_of(con: sqlite3.Connection, reads: SearchReads | None, sql: str,
                 params: list) -> keyword_stats.ScopeScan | None:
        """This search's earlier read of the rows ``sql`` admits, when nothing was written since."""
        key = keyword_stats.ScopeScan.key(sql, params) if reads is not None else None
        scan = reads.scans.get(key) if key is not None else None
        if scan is None or scan.generation != keyword_stats.current_generation(con):
            return None
        return scan

    def _lengths_index_pays(self, con: sqlite3.Connection, where: Node) -> bool:
        """Count a search's BM25 statistics from the memories_lengths index (sqlite_keyword_stats.py)?"""
        scope_sql, scope_params = _scope_filter(where) if scope_ids(where) else (None, [])
        return keyword_stats.use_lengths_index(con, where, scope_sql, scope_params)

    def similar(self, queries: np.ndarray, where: Node, k: int) -> tuple[list[MemoryRecord], np.ndarray]:
        sql, params = _COMPILER.compile(where)
        with self._snapshot() as con:
            rows = [row for row in con.execute(f"SELECT m.rowid, m.vector FROM memories m WHERE {sql}", params)
                    if row[1]]
            if not rows or not len(queries):
                return [], np.zeros((len(queries), 0), dtype=np.float32)
            scores = queries @ vectors.from_blobs([r[1] for r in rows], self._dims(), self.dtype).T
            chosen: dict[int, None] = {}
            for row_scores in scores:
                chosen.update(dict.fromkeys(int(i) for i in vectors.top_k(row_scores, k)))
            columns = list(chosen)
            records = self._records_by_rowid(con, [rows[i][0] for i in columns])
        return [records[rows[i][0]] for i in columns], scores[:, columns]

    def _durability(self, con: sqlite3.Connection) -> str:
        level = con.execute("PRAGMA synchronous").fetchone()[0]
        return "synchronous=" + next((name for name, number in SYNCHRONOUS.items() if number == level), str(level))

    def transaction(self, work: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        """``work`` on this store's connection for tables kept in its file (``SharedDatabase``): under
        BEGIN IMMEDIATE (the store's write lock) when ``write``, else in one read snapshot."""
        with (self._write() if write else self._snapshot()) as con:
            return work(con)

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            for con in self._connections:
                con.close()
            self._connections.clear()
        self._matrix.clear()
