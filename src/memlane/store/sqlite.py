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

from memlane import jsonmatch, keywords, timeutil, vectors
from memlane.errors import EmbedderMismatchError, MemoryNotFoundError, StoreError
from memlane.filters import MATCH_ALL, MEMORY_COLUMNS, MESSAGE_COLUMNS, SCOPE_COLUMNS, Compare, Node, conjoin, conjuncts, scope_ids
from memlane.graph_models import Entity, Relation
from memlane.models import HistoryRecord, MemoryRecord, MessageRecord
from memlane.store import bm25, sqlite_graph
from memlane.store import sqlite_keyword_stats as keyword_stats
from memlane.store.base import ChangeSet, Invalidate, StoreInfo, Update
from memlane.store.scope_counts import ScopeCount, scope_counts, scope_counts_sql
from memlane.store.sqlite_filters import JSON_FUNCTION, SqliteFilterCompiler
from memlane.store.sqlite_schema import migrate

_RECORD_COLUMNS = (
    "m.id, m.text, m.hash, m.created_at, m.updated_at, m.user_id, m.agent_id, m.run_id, m.actor_id, m.role,"
    " m.metadata, m.memory_type, m.valid_to, m.invalid_reason, m.superseded_by, m.source_message_ids"
)
_HISTORY_COLUMNS = "id, memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id, agent_id, run_id, reason"
_MESSAGE_COLUMNS = "id, role, content, created_at, name, user_id, agent_id, run_id"
_HISTORY_INSERT = (
    "INSERT INTO history(memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id, agent_id,"
    " run_id, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?)"
)

#: ``json.dumps(..., ensure_ascii=False)`` without building an encoder per call (a tenth of a bulk insert's time)
_metadata_json = json.JSONEncoder(ensure_ascii=False).encode

#: Entries of the ``memory_changes`` log kept: a matrix further behind than that reads every vector again.
CHANGE_LOG_KEEP = 10_000

_COMPILER = SqliteFilterCompiler(
    columns={"memory": "m.text", **{c: f"m.{c}" for c in MEMORY_COLUMNS if c != "memory"}},
    documents={"metadata": "m.metadata"},
)
#: Scope-only conditions on the history and messages tables (purge, get_messages).
_HISTORY_SCOPE = SqliteFilterCompiler(columns={c: c for c in SCOPE_COLUMNS}, documents={})
_MESSAGES = SqliteFilterCompiler(columns={c: c for c in MESSAGE_COLUMNS}, documents={})


def _record(row: Sequence) -> MemoryRecord:
    return MemoryRecord(*row[:10], metadata=json.loads(row[10]), memory_type=row[11], valid_to=row[12],
                        invalid_reason=row[13], superseded_by=row[14], source_message_ids=json.loads(row[15]))


def _count_terms(text: str) -> int:
    """BM25's length of a memory: its analysed text terms (the ``nterms`` column)."""
    return len(keywords.analyze(text))


def _term_hits(rows: list[tuple], terms: list[str]) -> Iterator[tuple[int, int, str, int]]:
    """(rowid, length, term, tf) for each query term a matched row holds. The FTS5 row's text is
    the memory's analysed terms, then its scope tokens: counting in the first ``nterms`` tokens
    is counting in ``keywords.analyze(text)``, without analysing again."""
    for rowid, nterms, indexed in rows:
        tokens = indexed.split(" ", nterms)[:nterms]
        for term in terms:
            tf = tokens.count(term)
            if tf:
                yield rowid, nterms, term, tf



def register_functions(con: sqlite3.Connection) -> None:
    """The SQL functions memlane's schema and queries call (the filter language's JSON match,
    the keyword index's terms and lengths); every connection to a store needs them."""
    con.create_function(JSON_FUNCTION, 3, jsonmatch.sql_function, deterministic=True)
    con.create_function("ml_index_terms", 4, keywords.index_text, deterministic=True)
    con.create_function("ml_count_terms", 1, _count_terms, deterministic=True)

class SQLiteStore:
    def __init__(self, path: str | Path, *, vector_dtype: str = "float32", busy_timeout: float = 30.0):
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the directory for the store {self.path}: {exc}") from None
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        self.dims: int | None = None
        with self._write() as con:
            migrate(con)
            con.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('vector_dtype', ?)", (vector_dtype,))
        # The dtype chosen when the file was created wins; the setting only applies to new stores.
        self.dtype = vectors.DTYPES[self._meta("vector_dtype")]
        self._matrix = _VectorMatrix(self)
        self._keyword_stats = keyword_stats.ScopeStats()

    # -- connections and transactions ---------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            con = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False)
            self._enable_wal(con)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}") from None
        con.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: a killed process loses nothing committed
        con.execute("PRAGMA temp_store=MEMORY")
        con.execute("PRAGMA cache_size=-32768")
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
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: several statements see one consistent state."""
        con = self._con
        con.execute("BEGIN")
        try:
            yield con
        finally:
            con.execute("COMMIT")

    def _meta(self, key: str) -> str | None:
        row = self._con.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    # -- embedder binding ---------------------------------------------------

    def bind_embedder(self, name: str, dims: int) -> None:
        with self._write() as con:
            rows = dict(con.execute("SELECT key, value FROM meta WHERE key IN ('embedder', 'dims')").fetchall())
            if rows.get("embedder") == name and rows.get("dims") == str(dims):
                return
            if rows and con.execute("SELECT EXISTS (SELECT 1 FROM memories)").fetchone()[0]:
                raise EmbedderMismatchError(
                    f"the store {self.path} was filled by embedder {rows.get('embedder')!r} "
                    f"({rows.get('dims')} dimensions) but this Memory is configured with {name!r} "
                    f"({dims} dimensions). Configure the original embedder, or re-embed every memory "
                    "with the new one: `memlane reembed --config NEW_CONFIG.json` (Memory.reembed())."
                )
            con.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                            [("embedder", name), ("dims", str(dims))])
        self.dims = dims

    def _dims(self) -> int:
        dims = self.dims
        if dims is None:
            value = self._meta("dims")
            if value is None:
                raise StoreError("no embedder is bound to this store yet")
            dims = self.dims = int(value)
        return dims

    # -- writes -------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        with self._write() as con:
            if changes.messages:
                con.executemany(
                    f"INSERT INTO messages({_MESSAGE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)",
                    [(m.id, m.role, m.content, m.created_at, m.name, m.user_id, m.agent_id, m.run_id)
                     for m in changes.messages],
                )
            if changes.inserts:
                self._insert(con, changes.inserts)
            for update in changes.updates:
                self._update(con, update)
            for invalidation in changes.invalidations:
                self._invalidate(con, invalidation)
            for delete in changes.deletes:
                self._delete(con, delete.id, delete.actor_id, delete.role)
            if changes.keys:
                now = timeutil.now_iso()
                con.executemany("INSERT OR IGNORE INTO applied_keys(key, created_at) VALUES (?, ?)",
                                [(key, now) for key in changes.keys])
            if changes.graph:
                sqlite_graph.apply(con, changes.graph)

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
        analysed = [keywords.analyze(r.text) for r in records]  # once for the length and the index
        try:
            con.executemany(
                "INSERT INTO memories(rowid, id, text, hash, created_at, updated_at, user_id, agent_id, run_id,"
                " actor_id, role, metadata, memory_type, source_message_ids, valid_to, invalid_reason, superseded_by,"
                " vector, nterms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(rowid, r.id, r.text, r.hash, r.created_at, r.updated_at, r.user_id, r.agent_id, r.run_id,
                  r.actor_id, r.role, _metadata_json(r.metadata), r.memory_type,
                  json.dumps(r.source_message_ids) if r.source_message_ids else "[]", r.valid_to,
                  r.invalid_reason, r.superseded_by, vectors.to_blob(r.vector, dtype), len(terms))
                 for rowid, r, terms in zip(range(first, first + len(records)), records, analysed)],
            )
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"could not insert memories: {exc}") from None
        con.executemany(
            "INSERT INTO memories_fts(rowid, terms) VALUES (?, ?)",
            [(rowid, keywords.index_text(r.text, r.user_id, r.agent_id, r.run_id, terms=terms))
             for rowid, r, terms in zip(range(first, first + len(records)), records, analysed)],
        )
        con.executemany(
            _HISTORY_INSERT,
            [(r.id, "ADD", None, r.text, r.created_at, r.actor_id, r.role, r.user_id, r.agent_id, r.run_id, None)
             for r in records],
        )
        self._store_tokens(con, [(r.id, r.token_vectors) for r in records if r.token_vectors is not None])

    def _store_tokens(self, con: sqlite3.Connection, items: list[tuple[str, np.ndarray]]) -> None:
        if items:
            con.executemany(
                "INSERT OR REPLACE INTO memory_tokens(rowid, count, vectors) SELECT rowid, ?, ? FROM memories WHERE id = ?",
                [(len(t), np.asarray(t, dtype="<f2").tobytes(), memory_id) for memory_id, t in items],
            )

    def _update(self, con: sqlite3.Connection, u: Update) -> None:
        row = con.execute("SELECT text, user_id, agent_id, run_id, source_message_ids FROM memories WHERE id = ?",
                          (u.id,)).fetchone()
        if row is None:
            raise MemoryNotFoundError(u.id)
        old_text, sources = row[0], json.loads(row[4])
        sources += [i for i in u.source_message_ids if i not in sources]
        con.execute(
            "UPDATE memories SET text = COALESCE(?, text), hash = COALESCE(?, hash), metadata = COALESCE(?, metadata),"
            " vector = COALESCE(?, vector), updated_at = ?, source_message_ids = ?, nterms = COALESCE(?, nterms)"
            " WHERE id = ?",
            (u.text, u.hash, None if u.metadata is None else json.dumps(u.metadata, ensure_ascii=False),
             None if u.vector is None else vectors.to_blob(u.vector, self.dtype), u.updated_at, json.dumps(sources),
             None if u.text is None else _count_terms(u.text), u.id),
        )
        row = row[:4]
        con.execute(
            _HISTORY_INSERT,
            (u.id, "UPDATE", old_text, u.text if u.text is not None else old_text, u.updated_at, u.actor_id, u.role,
             *row[1:], u.reason),
        )
        if u.vector is not None:  # the old token vectors described the old text
            con.execute("DELETE FROM memory_tokens WHERE rowid = (SELECT rowid FROM memories WHERE id = ?)", (u.id,))
            self._store_tokens(con, [(u.id, u.token_vectors)] if u.token_vectors is not None else [])

    def _invalidate(self, con: sqlite3.Connection, inv: Invalidate) -> None:
        row = con.execute("SELECT text, user_id, agent_id, run_id FROM memories WHERE id = ? AND valid_to IS NULL",
                          (inv.id,)).fetchone()
        if row is None:
            raise MemoryNotFoundError(inv.id)
        now = timeutil.now_iso()
        con.execute("UPDATE memories SET valid_to = ?, invalid_reason = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
                    (now, inv.reason, inv.superseded_by, now, inv.id))
        con.execute(_HISTORY_INSERT, (inv.id, "DELETE", row[0], None, now, inv.actor_id, inv.role, *row[1:], inv.reason))

    def _delete(self, con: sqlite3.Connection, memory_id: str, actor_id: str | None, role: str | None) -> None:
        row = con.execute("SELECT rowid, text, user_id, agent_id, run_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
        if row is None:
            raise MemoryNotFoundError(memory_id)
        self._delete_rows(con, [(memory_id, *row)], actor_id, role)

    def _delete_rows(self, con: sqlite3.Connection, rows: list[tuple], actor_id: str | None, role: str | None) -> None:
        """``rows``: (id, rowid, text, user_id, agent_id, run_id)."""
        now = timeutil.now_iso()
        con.executemany(_HISTORY_INSERT,
                        [(r[0], "DELETE", r[2], None, now, actor_id, role, r[3], r[4], r[5], None) for r in rows])
        con.execute("DELETE FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
                    (json.dumps([r[1] for r in rows]),))

    def delete_matching(self, where: Node, *, actor_id: str | None = None, role: str | None = None) -> int:
        sql, params = _COMPILER.compile(where)
        with self._write() as con:
            rows = con.execute(
                f"SELECT m.id, m.rowid, m.text, m.user_id, m.agent_id, m.run_id FROM memories m WHERE {sql}", params
            ).fetchall()
            if rows:
                self._delete_rows(con, rows, actor_id, role)
        return len(rows)

    def reset(self) -> None:
        with self._write() as con:
            for table in ("memories", "history", "messages", "applied_keys", "memories_fts", "memory_tokens"):
                con.execute(f"DELETE FROM {table}")
            sqlite_graph.reset(con)
            con.execute("DELETE FROM meta WHERE key IN ('embedder', 'dims')")
        self.dims = None

    # -- reads --------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        row = self._con.execute(f"SELECT {_RECORD_COLUMNS} FROM memories m WHERE m.id = ?", (memory_id,)).fetchone()
        return _record(row) if row else None

    def list(self, where: Node, limit: int) -> list[MemoryRecord]:
        sql, params = _COMPILER.compile(where)
        rows = self._con.execute(
            f"SELECT {_RECORD_COLUMNS} FROM memories m WHERE {sql} ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [_record(row) for row in rows]

    def count(self, where: Node = MATCH_ALL) -> int:
        sql, params = _COMPILER.compile(where)
        return self._con.execute(f"SELECT count(*) FROM memories m WHERE {sql}", params).fetchone()[0]

    def scopes(self, column: str, limit: int) -> list[ScopeCount]:
        sql = scope_counts_sql(column, memories="memories", messages="messages", scan_memories=True)
        return scope_counts(self._con.execute(sql, (limit,)).fetchall())

    def iter_records(self, where: Node, batch_size: int = 1000) -> Iterator[list[MemoryRecord]]:
        sql, params = _COMPILER.compile(where)
        last = 0
        while True:
            rows = self._con.execute(
                f"SELECT m.rowid, {_RECORD_COLUMNS} FROM memories m WHERE m.rowid > ? AND {sql} ORDER BY m.rowid LIMIT ?",
                (last, *params, batch_size),
            ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield [_record(row[1:]) for row in rows]

    def _records_by_rowid(self, con: sqlite3.Connection, rowids: list[int]) -> dict[int, MemoryRecord]:
        rows = con.execute(
            f"SELECT m.rowid, {_RECORD_COLUMNS} FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(rowids),),
        ).fetchall()
        return {row[0]: _record(row[1:]) for row in rows}

    def search(self, query: np.ndarray, where: Node, limit: int, threshold: float | None) -> list[tuple[MemoryRecord, float]]:
        dims = self._dims()
        sql, params = _COMPILER.compile(where)
        with self._snapshot() as con:
            if scope_ids(where):
                rows = con.execute(f"SELECT m.rowid, m.vector FROM memories m WHERE {sql}", params).fetchall()
                if not rows:
                    return []
                scores = vectors.from_blobs([r[1] for r in rows], dims, self.dtype) @ query
                rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
                best = vectors.top_k(scores, limit, threshold)
                hits = [(int(rowids[i]), float(scores[i])) for i in best]
            else:
                hits = self._matrix.search(con, query, sql, params, limit, threshold)
            records = self._records_by_rowid(con, [rowid for rowid, _ in hits])
        return [(records[rowid], score) for rowid, score in hits if rowid in records]

    def keyword_search(self, query: str, vector: np.ndarray, where: Node, limit: int) -> list[tuple[MemoryRecord, float, float]]:
        """FTS5 finds the matching rows (the scope ids go into the MATCH, so only the scope's postings
        are read); the scores are ``store/bm25.py``'s over the rows ``where`` admits, not FTS5's
        ``bm25()``, whose statistics span the whole file (every user) and count scope tokens."""
        expression = keywords.match_expression(query, scope_ids(where))
        if expression is None:
            return []
        terms = list(dict.fromkeys(keywords.analyze(query)))
        sql, params = _COMPILER.compile(where)
        with self._snapshot() as con:
            rows = con.execute(
                # CROSS JOIN keeps FTS5 the outer loop: with memories outside (the planner's choice for
                # a scope index) FTS5 would evaluate the MATCH again for every row of the scope
                "SELECT m.rowid, m.nterms, memories_fts.terms FROM memories_fts CROSS JOIN memories m"
                f" ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND {sql}",
                (expression, *params),
            ).fetchall()
            if not rows:
                return []
            n, avgdl = self._keyword_stats.get(con, sql, params,
                                               covering=lambda: self._lengths_index_pays(con, where))
            best = bm25.rank(_term_hits(rows, terms), n, avgdl, limit)
            rowids = [rowid for rowid, _ in best]
            records = self._records_by_rowid(con, rowids)
            blobs = dict(con.execute("SELECT rowid, vector FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
                                     (json.dumps(rowids),)).fetchall())
        best = [(rowid, score) for rowid, score in best if rowid in records]
        cosines = vectors.from_blobs([blobs[rowid] for rowid, _ in best], self._dims(), self.dtype) @ vector
        return [(records[rowid], score, float(c)) for (rowid, score), c in zip(best, cosines)]

    def _lengths_index_pays(self, con: sqlite3.Connection, where: Node) -> bool:
        """Count a search's BM25 statistics from the memories_lengths index (sqlite_keyword_stats.py)?"""
        scope_sql, scope_params = None, []
        if scope_ids(where):
            scope_sql, scope_params = _COMPILER.compile(conjoin(*(
                c for c in conjuncts(where) if isinstance(c, Compare) and c.field.column in SCOPE_COLUMNS)))
        return keyword_stats.use_lengths_index(con, where, scope_sql, scope_params)

    def token_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        rows = self._con.execute(
            "SELECT m.id, t.count, t.vectors FROM memory_tokens t JOIN memories m ON m.rowid = t.rowid"
            " WHERE m.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ).fetchall()
        return {r[0]: np.frombuffer(r[2], dtype="<f2").reshape(r[1], -1).astype(np.float32) for r in rows}

    def similar(self, queries: np.ndarray, where: Node, k: int) -> tuple[list[MemoryRecord], np.ndarray]:
        sql, params = _COMPILER.compile(where)
        with self._snapshot() as con:
            rows = con.execute(f"SELECT m.rowid, m.vector FROM memories m WHERE {sql}", params).fetchall()
            if not rows or not len(queries):
                return [], np.zeros((len(queries), 0), dtype=np.float32)
            scores = queries @ vectors.from_blobs([r[1] for r in rows], self._dims(), self.dtype).T
            chosen: dict[int, None] = {}
            for row_scores in scores:
                chosen.update(dict.fromkeys(int(i) for i in vectors.top_k(row_scores, k)))
            columns = list(chosen)
            records = self._records_by_rowid(con, [rows[i][0] for i in columns])
        return [records[rows[i][0]] for i in columns], scores[:, columns]

    def messages(self, where: Node, limit: int) -> list[MessageRecord]:
        sql, params = _MESSAGES.compile(where)
        rows = self._con.execute(
            f"SELECT {_MESSAGE_COLUMNS} FROM (SELECT rowid AS r, * FROM messages WHERE {sql} ORDER BY rowid DESC LIMIT ?)"
            " ORDER BY r",
            (*params, limit),
        ).fetchall()
        return [MessageRecord(*row) for row in rows]

    def purge(self, where: Node) -> int:
        memories_sql, memories_params = _COMPILER.compile(where)
        scope_sql, scope_params = _HISTORY_SCOPE.compile(where)
        with self._write() as con:
            count = con.execute(f"DELETE FROM memories AS m WHERE {memories_sql}", memories_params).rowcount
            con.execute(f"DELETE FROM history WHERE {scope_sql}", scope_params)
            con.execute(f"DELETE FROM messages WHERE {scope_sql}", scope_params)
            con.execute(f"DELETE FROM graph_relations WHERE {scope_sql}", scope_params)
            con.execute(f"DELETE FROM graph_entities WHERE {scope_sql}", scope_params)
        return count

    # -- graph memory (store/sqlite_graph.py) -------------------------------

    def graph_entities(self, scope: dict[str, str]) -> list[Entity]:
        return sqlite_graph.entities(self._con, scope)

    def graph_relations(self, scope: dict[str, str], *, include_invalid: bool = False, as_of: str | None = None,
                        entity_ids: Sequence[str] | None = None, limit: int | None = None) -> list[Relation]:
        with self._snapshot() as con:
            return sqlite_graph.relations(con, scope, include_invalid=include_invalid, as_of=as_of,
                                          entity_ids=entity_ids, limit=limit)

    def delete_graph(self, scope: dict[str, str]) -> int:
        with self._write() as con:
            return sqlite_graph.delete(con, scope)

    def history(self, memory_id: str) -> list[HistoryRecord]:
        rows = self._con.execute(
            f"SELECT {_HISTORY_COLUMNS} FROM history WHERE memory_id = ? ORDER BY id", (memory_id,)
        ).fetchall()
        return [HistoryRecord(*row) for row in rows]

    def known_keys(self, keys: Sequence[str]) -> set[str]:
        if not keys:
            return set()
        rows = self._con.execute(
            "SELECT key FROM applied_keys WHERE key IN (SELECT value FROM json_each(?))", (json.dumps(list(keys)),)
        ).fetchall()
        return {row[0] for row in rows}

    def info(self) -> StoreInfo:
        con = self._con
        dims = self._meta("dims")
        return StoreInfo(
            location=str(self.path),
            embedder=self._meta("embedder"),
            dims=int(dims) if dims else None,
            memories=con.execute("SELECT count(*) FROM memories").fetchone()[0],
            history_events=con.execute("SELECT count(*) FROM history").fetchone()[0],
        )

    # -- re-embedding -------------------------------------------------------

    def reembed(self, embed: Callable[[list[str]], np.ndarray], name: str, dims: int, *,
                batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """New vectors go to a side table in small transactions (resumable, other
        writers keep working); one final transaction swaps them in, embedding any
        memory added or changed meanwhile, and records the new embedder."""
        con = self._con
        con.execute(
            "CREATE TABLE IF NOT EXISTS reembed_vectors (rowid INTEGER PRIMARY KEY, hash TEXT NOT NULL,"
            " vector BLOB NOT NULL, embedder TEXT NOT NULL)"
        )
        pending_sql = (
            "SELECT m.rowid, m.hash, m.text FROM memories m LEFT JOIN reembed_vectors r ON r.rowid = m.rowid"
            " WHERE r.rowid IS NULL OR r.hash <> m.hash OR r.embedder <> ? ORDER BY m.rowid LIMIT ?"
        )
        total = con.execute("SELECT count(*) FROM memories").fetchone()[0]

        def embed_rows(con: sqlite3.Connection, rows: list[tuple]) -> None:
            matrix = embed([row[2] for row in rows])
            con.executemany(
                "INSERT OR REPLACE INTO reembed_vectors(rowid, hash, vector, embedder) VALUES (?, ?, ?, ?)",
                [(row[0], row[1], vectors.to_blob(vec, self.dtype), name) for row, vec in zip(rows, matrix)],
            )

        while rows := con.execute(pending_sql, (name, batch_size)).fetchall():
            with self._write() as wcon:
                embed_rows(wcon, rows)
            if progress:
                done = con.execute("SELECT count(*) FROM reembed_vectors WHERE embedder = ?", (name,)).fetchone()[0]
                progress(min(done, total), total)
        with self._write() as wcon:
            while rows := wcon.execute(pending_sql, (name, batch_size)).fetchall():
                embed_rows(wcon, rows)
            wcon.execute("UPDATE memories SET vector = (SELECT r.vector FROM reembed_vectors r WHERE r.rowid = memories.rowid)")
            wcon.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                             [("embedder", name), ("dims", str(dims))])
            count = wcon.execute("SELECT count(*) FROM memories").fetchone()[0]
            wcon.execute("DROP TABLE reembed_vectors")
        self.dims = dims
        return count

    def close(self) -> None:
        self._closed = True
        with self._connections_lock:
            for con in self._connections:
                con.close()
            self._connections.clear()
        self._matrix.clear()


def _grown(rows: int) -> int:
    """Capacity for ``rows`` rows and the appends of a while (a quarter more)."""
    return rows + rows // 4 + 1024


class _VectorMatrix:
    """Every vector of the store in one float32 matrix, for searches no scope index narrows.

    Kept current without re-reading the table after each write. When ``PRAGMA data_version``
    on its own read-only connection says another connection committed, it reads (in one read
    transaction) the rows above the highest rowid it has seen (rowids are never reused, see
    ``SQLiteStore._insert``) and the ``memory_changes`` log past the last entry it applied
    (vector updates and deletions, written by triggers in the writer's transaction, so other
    processes' writes are logged too). When that stretch of the log was pruned, most rows
    changed or the dimensions differ, it reads everything again. Candidates are taken
    best-first and checked against the filter in SQL, widening until ``limit`` pass."""

    def __init__(self, store: SQLiteStore):
        self.store = store
        self._lock = threading.Lock()
        self.rebuilds = 0  # full reads so far (tests check that writes take the incremental path)
        self._reset()

    def clear(self) -> None:
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._con: sqlite3.Connection | None = None
        self._version: int | None = None
        self._seq = 0  # the last change-log entry applied
        self._top = 0  # the highest rowid read
        self._n = 0  # rows in use; the arrays below have spare capacity for appends
        self._dead = 0  # deleted rows still in the arrays (masked until the next compaction)
        self._rowids = np.empty(0, dtype=np.int64)
        self._ids: list[str] = []
        self._alive = np.empty(0, dtype=bool)
        self._matrix: np.ndarray | None = None

    def _refresh(self) -> None:
        """Bring the matrix up to the latest commit. Caller holds ``_lock``."""
        if self._con is None:
            self._con = self.store._connect()
        con = self._con
        con.execute("BEGIN")
        try:
            version = con.execute("PRAGMA data_version").fetchone()[0]
            if self._matrix is not None and version == self._version:
                return
            if self._matrix is None or not self._catch_up(con):
                self._rebuild(con)
            self._version = version
        finally:
            con.execute("COMMIT")

    def _rebuild(self, con: sqlite3.Connection) -> None:
        self.rebuilds += 1
        seq = con.execute("SELECT coalesce(max(seq), 0) FROM memory_changes").fetchone()[0]
        rows = con.execute("SELECT rowid, id, vector FROM memories ORDER BY rowid").fetchall()
        n, dims = len(rows), self.store._dims()
        capacity = _grown(n)  # room for appends: growing means copying the whole matrix
        self._rowids = np.empty(capacity, dtype=np.int64)
        self._rowids[:n] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        self._ids = [r[1] for r in rows]
        if self.store.dtype == np.float32:  # one copy of the blobs, into memory numpy may write to
            spare = bytes((capacity - n) * dims * 4)
            self._matrix = np.frombuffer(bytearray().join([*(r[2] for r in rows), spare]),
                                         dtype=np.float32).reshape(capacity, dims)
        else:
            self._matrix = np.empty((capacity, dims), dtype=np.float32)
            self._matrix[:n] = vectors.from_blobs([r[2] for r in rows], dims, self.store.dtype)
        self._alive = np.zeros(capacity, dtype=bool)
        self._alive[:n] = True
        self._n, self._dead, self._seq = n, 0, seq
        self._top = max(self._top, rows[-1][0] if rows else 0)

    def _catch_up(self, con: sqlite3.Connection) -> bool:
        """Apply the writes since the last read; False when only a full read can tell."""
        first, last = con.execute("SELECT min(seq), max(seq) FROM memory_changes").fetchone()
        if last is not None and last > self._seq:
            if first > self._seq + 1:  # entries this matrix has not seen were pruned
                return False
            changed = [r[0] for r in con.execute(
                "SELECT DISTINCT memory_rowid FROM memory_changes WHERE seq > ?", (self._seq,))]
            if len(changed) * 4 > self._n:
                return False
            if not self._apply_changes(con, changed):
                return False
            self._seq = last
        new = con.execute("SELECT rowid, id, vector FROM memories WHERE rowid > ? ORDER BY rowid",
                          (self._top,)).fetchall()
        if new:
            if not self._append(new):
                return False
            self._top = new[-1][0]
        if self._dead > 64 and self._dead * 4 > self._n:
            self._compact()
        return True

    def _blob_ok(self, blob: bytes) -> bool:
        return self._matrix is not None and len(blob) == self._matrix.shape[1] * self.store.dtype.itemsize

    def _apply_changes(self, con: sqlite3.Connection, changed: list[int]) -> bool:
        rowids = self._rowids[:self._n]
        wanted = np.asarray(changed, dtype=np.int64)
        at = np.searchsorted(rowids, wanted)
        inside = at < len(rowids)
        known = inside.copy()
        known[inside] = rowids[at[inside]] == wanted[inside]
        positions = dict(zip(wanted[known].tolist(), at[known].tolist()))
        if not positions:
            return True
        current = dict(con.execute("SELECT rowid, vector FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
                                   (json.dumps(list(positions)),)).fetchall())
        for rowid, i in positions.items():
            blob = current.get(rowid)
            if blob is None:
                if self._alive[i]:
                    self._alive[i] = False
                    self._dead += 1
            elif self._blob_ok(blob):
                self._matrix[i] = vectors.from_blobs([blob], self._matrix.shape[1], self.store.dtype)[0]
            else:
                return False
        return True

    def _append(self, rows: list[tuple]) -> bool:
        if not all(self._blob_ok(r[2]) for r in rows):
            return False
        n, k = self._n, len(rows)
        if n + k > len(self._rowids):
            self._resize(_grown(n + k))
        self._rowids[n:n + k] = [r[0] for r in rows]
        self._matrix[n:n + k] = vectors.from_blobs([r[2] for r in rows], self._matrix.shape[1], self.store.dtype)
        self._alive[n:n + k] = True
        self._ids.extend(r[1] for r in rows)
        self._n = n + k
        return True

    def _resize(self, capacity: int) -> None:
        """New arrays (never in place: a search may still hold the old ones)."""
        n = self._n
        rowids = np.empty(capacity, dtype=np.int64)
        rowids[:n] = self._rowids[:n]
        matrix = np.empty((capacity, self._matrix.shape[1]), dtype=np.float32)
        matrix[:n] = self._matrix[:n]
        alive = np.zeros(capacity, dtype=bool)
        alive[:n] = self._alive[:n]
        self._rowids, self._matrix, self._alive, self._ids = rowids, matrix, alive, self._ids[:n]

    def _compact(self) -> None:
        """Drop the deleted rows, into new arrays."""
        keep = np.flatnonzero(self._alive[:self._n])
        n, capacity = len(keep), _grown(len(keep))
        rowids = np.empty(capacity, dtype=np.int64)
        rowids[:n] = self._rowids[keep]
        matrix = np.empty((capacity, self._matrix.shape[1]), dtype=np.float32)
        np.take(self._matrix, keep, axis=0, out=matrix[:n])
        alive = np.zeros(capacity, dtype=bool)
        alive[:n] = True
        self._ids = [self._ids[i] for i in keep.tolist()]
        self._rowids, self._matrix, self._alive = rowids, matrix, alive
        self._n, self._dead = n, 0

    def search(self, con: sqlite3.Connection, query: np.ndarray, sql: str, params: list, limit: int,
               threshold: float | None) -> list[tuple[int, float]]:
        with self._lock:  # scoring too: a refresh may rewrite rows of the matrix in place
            self._refresh()
            n, live = self._n, self._n - self._dead
            if not live:
                return []
            scores = self._matrix[:n] @ query
            if self._dead:
                scores[~self._alive[:n]] = -np.inf
            rowids, ids = self._rowids[:n], self._ids  # appends and compactions leave these entries alone
        want = min(live, max(4 * limit, 256))
        while True:
            best = vectors.top_k(scores, want, threshold)
            candidates = [int(rowids[i]) for i in best]
            passed = dict(con.execute(
                f"SELECT m.rowid, m.id FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?)) AND {sql}",
                (json.dumps(candidates), *params),
            ).fetchall())
            # the id check drops a row deleted (or changed) since the matrix was read
            hits = [(rowid, float(scores[i])) for rowid, i in zip(candidates, best) if passed.get(rowid) == ids[i]]
            if len(hits) >= limit or len(best) < want or want >= live:
                return hits[:limit]
            want = min(live, want * 4)
