"""The memory store over SQL, written once for SQLite and PostgreSQL (the way
``documents/store_sql.py`` is).

Everything but what differs lives here: the ``apply`` dispatch with its history,
updates, invalidations and deletions, reads, purge, the embedder binding and the
two-phase ``reembed``. A dialect (``store/sqlite.py``, ``store/postgres.py``) keeps the
insert path, vector search, keyword search with its statistics, ``similar``, its
connections and transactions, and its side of the templates (store/sql_dialect.py).
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from memlane.core import timeutil
from memlane.core.errors import EmbedderMismatchError, MaintenanceBusyError, MemoryNotFoundError, StoreError
from memlane.core.filters import MATCH_ALL, Node
from memlane.core.models import HistoryRecord, MemoryRecord, MessageRecord
from memlane.core.changes import EXPIRED, Embedded, Expiry
from memlane.store.base import ChangeSet, Invalidate, ReembedItem, SearchReads, StoreInfo, Update
from memlane.store.sql_dialect import Con
from memlane.store.sql_filters import FilterCompiler
from memlane.store.scope_counts import ScopeCount, scope_counts, scope_counts_sql
from memlane.store.sql_adds import SqlAddJournal
from memlane.store.sql_graph import GRAPH_TABLES, SqlGraph
from memlane.store.sql_jobs import SqlJobs
from memlane.store.sql_project import SqlProject

RECORD_COLUMNS = (
    "m.id, m.text, m.hash, m.created_at, m.updated_at, m.user_id, m.agent_id, m.run_id, m.actor_id, m.role,"
    " m.metadata, m.memory_type, m.valid_to, m.invalid_reason, m.superseded_by, m.source_message_ids, m.event_id,"
    " m.context"
)
#: how many columns RECORD_COLUMNS reads (a statement's own columns follow them)
RECORD_WIDTH = 18
HISTORY_COLUMNS = "id, memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id, agent_id, run_id, reason"
MESSAGE_COLUMNS = "id, role, content, created_at, name, user_id, agent_id, run_id"
#: the tables of a memory store that ``reset`` empties (a dialect's ``TABLES`` names each, and ``meta``, ``reembed``)
MEMORY_TABLES = ("memory_tokens", "memories", "history", "messages", "applied_keys", "jobs", "adds", "feedback",
                 "exports")
HISTORY_INSERT = (
    "INSERT INTO {history} ({tenant_col}memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id,"
    " agent_id, run_id, reason) VALUES ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
)


#: the maintenance locks of this process, by (store location, scope)
_MAINTENANCE: dict[tuple[str, str], threading.Lock] = {}


def unique(ids: Sequence[str]) -> list[str]:
    """``ids`` without repeats, in order (a memory's source message ids)."""
    return list(dict.fromkeys(ids))


def added_history(records: Sequence[MemoryRecord]) -> list[tuple]:
    """The ADD events of inserted memories: (memory_id, event, old, new, created_at, actor_id, role,
    user_id, agent_id, run_id, reason) rows. A provisional memory (``event_id``) has none: it stands
    in for what its event's formation writes, and goes without a trace when that is written."""
    return [(r.id, "ADD", None, r.text, r.created_at, r.actor_id, r.role, r.user_id, r.agent_id, r.run_id, None)
            for r in records if r.event_id is None]


def token_matrix(count: int, blob: bytes) -> np.ndarray:
    """Stored late-interaction token vectors (float16 rows) as float32."""
    return np.frombuffer(blob, dtype="<f2").reshape(count, -1).astype(np.float32)


class SqlMemoryStore(SqlGraph, SqlJobs, SqlAddJournal, SqlProject):
    #: tables ``reset`` empties besides the memory and graph tables (SQLite: its FTS5 index)
    EXTRA_TABLES: tuple[str, ...] = ()
    #: rows of token vectors joined to their memory's id: (FROM clause, id column)
    TOKENS_FROM = ("", "")
    #: count each scope's memories from a covering index, not the rows (SQLite; ``scope_counts_sql``)
    SCOPES_FROM_INDEX = False
    #: the condition of a memory stored without a vector yet (an async add's provisional memory until a
    #: worker embeds it: found by its keywords only), and of one with a vector (alias m)
    NO_VECTOR = "vector IS NULL"
    HAS_VECTOR = "m.vector IS NOT NULL"

    def __init__(self, tenant: str, compiler: FilterCompiler, scope_compiler: FilterCompiler,
                 message_compiler: FilterCompiler):
        super().__init__(tenant)
        self.compiler = compiler  # conditions on memories (alias m)
        self.scope_compiler = scope_compiler  # scope conditions on history, messages and graph rows
        self.message_compiler = message_compiler
        self.dims: int | None = None

    # -- the dialect --------------------------------------------------------------------------------

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the store is, for people (no password)."""

    @abstractmethod
    def _insert(self, con: Con, records: list[MemoryRecord]) -> None:
        """Insert memories with their keyword index, token vectors and ADD history."""

    @abstractmethod
    def _vector_in(self, vector: np.ndarray) -> Any:
        """A vector as the dialect stores it."""

    @abstractmethod
    def _vectors_out(self, stored: list[Any]) -> np.ndarray:
        """Stored vectors as one float32 matrix, a row each."""

    @abstractmethod
    def _keyword_columns(self, text: str, context: str | None, actor: str | None,
                         scope: Sequence[str | None]) -> dict[str, Any]:
        """The keyword index columns of a memory whose text becomes ``text`` (with its ``context`` and who
        said it, ``actor``; scope: user, agent, run)."""

    @abstractmethod
    def _store_tokens(self, con: Con, items: list[tuple[str, np.ndarray]]) -> None:
        """Save (memory id, token vectors) pairs, replacing any stored."""

    @abstractmethod
    def _drop_tokens(self, con: Con, memory_id: str) -> None: ...

    @abstractmethod
    def _durability(self, con: Con) -> str:
        """The setting that decides what an acknowledged write survives (``synchronous=normal``)."""

    def _lock_binding(self, con: Con) -> None:
        """Make two processes binding an embedder at once take turns (SQLite's write lock does already)."""

    def _bound(self, dims: int) -> None:
        """After an embedder of ``dims`` dimensions is bound (PostgreSQL: its vector index exists)."""

    # -- helpers ------------------------------------------------------------------------------------

    def _where(self, compiler: FilterCompiler, where: Node) -> tuple[str, list[Any]]:
        sql, params = compiler.compile(where)
        return sql, list(self._t(*params))

    def _record(self, row: Sequence[Any]) -> MemoryRecord:
        return MemoryRecord(*row[:5], user_id=row[5], agent_id=row[6], run_id=row[7], actor_id=row[8], role=row[9],
                            metadata=self._json_out(row[10]), memory_type=row[11], valid_to=row[12],
                            invalid_reason=row[13], superseded_by=row[14], source_message_ids=self._list_out(row[15]),
                            event_id=row[16], context=row[17])

    def _meta(self, con: Con, keys: Sequence[str]) -> dict[str, str]:
        params = list(self._t())
        sql = self._sql("SELECT key, value FROM {meta} WHERE {tenant}{keys}", keys=self._in("key", list(keys), params))
        return dict(con.execute(sql, params).fetchall())

    def _set_meta(self, con: Con, values: dict[str, str]) -> None:
        con.cursor().executemany(
            self._sql("INSERT INTO {meta} ({tenant_col}key, value) VALUES ({tenant_val}%s, %s)"
                      " ON CONFLICT ({tenant_col}key) DO UPDATE SET value = excluded.value"),
            [self._t(k, v) for k, v in values.items()])

    # -- embedder binding ---------------------------------------------------------------------------

    def bind_embedder(self, name: str, dims: int) -> None:
        def bind(con: Con) -> None:
            self._lock_binding(con)
            rows = self._meta(con, ("embedder", "dims"))
            if rows.get("embedder") == name and rows.get("dims") == str(dims):
                return
            if rows and con.execute(self._sql("SELECT EXISTS (SELECT 1 FROM {memories} WHERE {tenant}TRUE)"),
                                    self._t()).fetchone()[0]:
                raise EmbedderMismatchError(
                    f"the store {self.location} was filled by embedder {rows.get('embedder')!r} "
                    f"({rows.get('dims')} dimensions) but this Memory is configured with {name!r} "
                    f"({dims} dimensions). Configure the original embedder, or re-embed every memory "
                    "with the new one: `memlane reembed --config NEW_CONFIG.json` (Memory.reembed())."
                )
            self._set_meta(con, {"embedder": name, "dims": str(dims)})

        self._run(bind, write=True)
        self._bound(dims)
        self.dims = dims

    def bound_embedder(self) -> tuple[str | None, int | None]:
        rows = self._run(lambda con: self._meta(con, ("embedder", "dims")))
        return rows.get("embedder"), int(rows["dims"]) if rows.get("dims") else None

    def focused_search(self, query: np.ndarray, where: Node, focus: Node, limit: int, reads: SearchReads | None = None
                       ) -> tuple[list[tuple[MemoryRecord, float]], list[tuple[MemoryRecord, float]] | None]:
        """``Store.focused_search``: here the search alone (a store answering both in one pass overrides it)."""
        return self.search(query, where, limit, None, reads), None

    def _dims(self) -> int:
        if self.dims is None:
            value = self._run(lambda con: self._meta(con, ("dims",)).get("dims"))
            if value is None:
                raise StoreError("no embedder is bound to this store yet")
            self.dims = int(value)
        return self.dims

    # -- writes -------------------------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        def write(con: Con) -> None:
            if changes.messages:
                con.cursor().executemany(
                    self._sql("INSERT INTO {messages} ({tenant_col}" + MESSAGE_COLUMNS + ")"
                              " VALUES ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s)"),
                    [self._t(m.id, m.role, m.content, m.created_at, m.name, m.user_id, m.agent_id, m.run_id)
                     for m in changes.messages])
            if changes.journal is not None:
                self.write_journal(con, changes.journal)
            if changes.inserts:
                self._insert(con, changes.inserts)
            for update in changes.updates:
                self._update(con, update)
            if changes.invalidations:
                self._invalidate(con, changes.invalidations)
            for expiry in changes.expiries:
                self._expire(con, expiry)
            for delete in changes.deletes:
                self._delete(con, delete.id, delete.actor_id, delete.role)
            if changes.keys:
                now = timeutil.now_iso()
                con.cursor().executemany(
                    self._sql("INSERT INTO {applied_keys} ({tenant_col}key, created_at) VALUES ({tenant_val}%s, %s)"
                              " ON CONFLICT DO NOTHING"), [self._t(key, now) for key in changes.keys])
            if changes.graph:
                self.write_graph(con, changes.graph)
            if changes.jobs:
                self._enqueue(con, changes.jobs)
            if changes.embedded:
                self._fill_vectors(con, changes.embedded)
            if changes.job_done is not None:
                self._finish_job(con, changes.job_done)
            if changes.done is not None:  # last: a void completion rolls back everything above
                self.complete_journal(con, changes.done)

        self._run(write, write=True)

    def _update(self, con: Con, u: Update) -> None:
        row = con.execute(self._sql("SELECT text, user_id, agent_id, run_id, source_message_ids, context, actor_id"
                                    " FROM {memories} WHERE {tenant}id = %s{lock}"), self._t(u.id)).fetchone()
        if row is None:
            raise MemoryNotFoundError(u.id)
        old_text, scope, sources, context, speaker = row[0], row[1:4], self._list_out(row[4]), row[5], row[6]
        sources += [i for i in unique(u.source_message_ids) if i not in sources]
        values: dict[str, Any] = {"updated_at": u.updated_at, "source_message_ids": self._list_in(sources)}
        if u.text is not None:
            values.update(text=u.text, **self._keyword_columns(u.text, context, speaker, scope))
        if u.hash is not None:
            values["hash"] = u.hash
        if u.metadata is not None:
            values["metadata"] = self._json_in(u.metadata)
        if u.memory_type is not None:
            values["memory_type"] = u.memory_type
        if u.vector is not None:
            values["vector"] = self._vector_in(u.vector)
        if u.created_at is not None:
            values["created_at"] = u.created_at
        assignments = ", ".join(f"{column} = {self.PLACEHOLDER}" for column in values)
        con.execute(self._sql("UPDATE {memories} SET {assignments} WHERE {tenant}id = %s", assignments=assignments),
                    (*values.values(), *self._t(u.id)))
        event = (u.id, u.event, old_text, old_text if u.text is None else u.text, u.updated_at, u.actor_id, u.role,
                 *scope, u.reason)
        con.execute(self._sql(HISTORY_INSERT), self._t(*event))
        self._announce(con, [event])
        if u.vector is not None:  # the old token vectors described the old text
            self._drop_tokens(con, u.id)
            self._store_tokens(con, [(u.id, u.token_vectors)] if u.token_vectors is not None else [])

    def _fill_vectors(self, con: Con, items: Sequence[Embedded]) -> None:
        """Vectors of memories stored without one (``Embedded``), each written only while its memory is
        still there without a vector; their token vectors with them."""
        statement = self._sql("UPDATE {memories} SET vector = %s WHERE {tenant}id = %s AND " + self.NO_VECTOR)
        filled = [e for e in items if con.execute(statement, (self._vector_in(e.vector), *self._t(e.id))).rowcount]
        self._store_tokens(con, [(e.id, e.token_vectors) for e in filled if e.token_vectors is not None])

    def _invalidate(self, con: Con, invalidations: Sequence[Invalidate]) -> None:
        """Invalidate memories that are valid now, in three statements whatever their number (cleanup
        and merge invalidate thousands); ``MemoryNotFoundError`` if one is unknown, already invalid
        or named twice."""
        params = list(self._t())
        rows = con.execute(self._sql("SELECT id, text, user_id, agent_id, run_id FROM {memories} WHERE {tenant}{ids}"
                                     " AND (valid_to IS NULL OR valid_to > {now}){lock}",
                                     ids=self._in("id", [inv.id for inv in invalidations], params)), params).fetchall()
        found = {row[0]: row for row in rows}
        seen: set[str] = set()
        for inv in invalidations:
            if inv.id not in found or inv.id in seen:
                raise MemoryNotFoundError(inv.id)
            seen.add(inv.id)
        now = timeutil.now_iso()
        # valid_to by the clock reads compare it with ({now}): invalid at once, whatever the client's clock says;
        # an invalidation said at a past time (add(timestamp=)) ends the memory then
        con.cursor().executemany(
            self._sql("UPDATE {memories} SET valid_to = coalesce(%s, {now}), invalid_reason = %s, superseded_by = %s,"
                      " updated_at = %s WHERE {tenant}id = %s"),
            [(inv.at, inv.reason, inv.superseded_by, inv.at or now, *self._t(inv.id)) for inv in invalidations])
        events = [(inv.id, inv.event, found[inv.id][1], None, inv.at or now, inv.actor_id, inv.role, *found[inv.id][2:5],
                   inv.reason) for inv in invalidations]
        con.cursor().executemany(self._sql(HISTORY_INSERT), [self._t(*event) for event in events])
        self._announce(con, events)

    def _expire(self, con: Con, e: Expiry) -> None:
        """Set or clear ``e.id``'s expiry (``Expiry``); ``MemoryNotFoundError`` if it is unknown or was
        invalidated for another reason than expiring."""
        changed = con.execute(self._sql("UPDATE {memories} SET valid_to = %s, invalid_reason = %s WHERE {tenant}id = %s"
                                        " AND (invalid_reason IS NULL OR invalid_reason = %s)"),
                              (e.valid_to, EXPIRED if e.valid_to else None, *self._t(e.id), EXPIRED)).rowcount
        if not changed:
            raise MemoryNotFoundError(e.id)

    def _delete(self, con: Con, memory_id: str, actor_id: str | None, role: str | None) -> None:
        row = con.execute(self._sql("SELECT id, text, user_id, agent_id, run_id FROM {memories}"
                                    " WHERE {tenant}id = %s{lock}"), self._t(memory_id)).fetchone()
        if row is None:
            raise MemoryNotFoundError(memory_id)
        self._delete_rows(con, [row], actor_id, role)

    def _delete_rows(self, con: Con, rows: list[tuple], actor_id: str | None, role: str | None) -> None:
        """``rows``: (id, text, user_id, agent_id, run_id), locked."""
        now = timeutil.now_iso()
        events = [(r[0], "DELETE", r[1], None, now, actor_id, role, *r[2:5], None) for r in rows]
        con.cursor().executemany(self._sql(HISTORY_INSERT), [self._t(*event) for event in events])
        self._announce(con, events)
        params = list(self._t())
        con.execute(self._sql("DELETE FROM {memories} WHERE {tenant}{ids}",
                              ids=self._in("id", [r[0] for r in rows], params)), params)

    def delete_matching(self, where: Node, *, actor_id: str | None = None, role: str | None = None) -> int:
        sql, params = self._where(self.compiler, where)

        def delete(con: Con) -> int:
            rows = con.execute(self._sql("SELECT m.id, m.text, m.user_id, m.agent_id, m.run_id FROM {memories} m"
                                         " WHERE {tenant:m}{where} ORDER BY m.{seq}{lock}", where=sql), params).fetchall()
            if rows:
                self._delete_rows(con, rows, actor_id, role)
            return len(rows)

        return self._run(delete, write=True)

    def purge(self, where: Node) -> int:
        memories_sql, memories_params = self._where(self.compiler, where)
        scope_sql, scope_params = self._where(self.scope_compiler, where)

        def purge(con: Con) -> int:
            count = con.execute(self._sql("DELETE FROM {memories} AS m WHERE {tenant:m}{where}", where=memories_sql),
                                memories_params).rowcount
            for table in ("history", "messages", "adds", "feedback", *GRAPH_TABLES):
                con.execute(self._sql("DELETE FROM {" + table + "} WHERE {tenant}{where}", where=scope_sql),
                            scope_params)
            return count

        return self._run(purge, write=True)

    def reset(self) -> None:
        def reset(con: Con) -> None:
            for table in (*MEMORY_TABLES, *GRAPH_TABLES):
                con.execute(self._sql("DELETE FROM {" + table + "} WHERE {tenant}TRUE"), self._t())
            for table in self.EXTRA_TABLES:
                con.execute(f"DELETE FROM {table}")
            self._reembed_finish(con)
            con.execute(self._sql("DELETE FROM {meta} WHERE {tenant}key IN ('embedder', 'dims')"), self._t())

        self._run(reset, write=True)
        self.dims = None

    # -- maintenance runs once at a time per scope --------------------------------------------------

    @contextmanager
    def maintenance_lock(self, key: str) -> Iterator[None]:
        """Hold the maintenance lock of ``key`` (a scope) while the block runs; ``MaintenanceBusyError``
        at once when another call holds it (this process; on PostgreSQL any process of the database)."""
        lock = _MAINTENANCE.setdefault((self.location, key), threading.Lock())
        if not lock.acquire(blocking=False):
            raise MaintenanceBusyError(f"maintenance of {key} is running already; try again when it has finished")
        try:
            yield
        finally:
            lock.release()

    # -- reads --------------------------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        row = self._run(lambda con: con.execute(
            self._sql("SELECT " + RECORD_COLUMNS + " FROM {memories} m WHERE {tenant:m}m.id = %s"),
            self._t(memory_id)).fetchone())
        return self._record(row) if row else None

    def list(self, where: Node, limit: int, offset: int = 0) -> list[MemoryRecord]:
        sql, params = self._where(self.compiler, where)
        rows = self._run(lambda con: con.execute(self._sql(
            "SELECT " + RECORD_COLUMNS + " FROM {memories} m WHERE {tenant:m}{where}"
            " ORDER BY m.created_at DESC, m.{seq} DESC LIMIT %s OFFSET %s", where=sql),
            (*params, limit, offset)).fetchall())
        return [self._record(row) for row in rows]

    def with_vectors(self, where: Node) -> tuple[list[MemoryRecord], np.ndarray]:
        sql, params = self._where(self.compiler, where)
        rows = self._run(lambda con: con.execute(self._sql(
            "SELECT " + RECORD_COLUMNS + ", m.vector FROM {memories} m WHERE {tenant:m}{where} AND " + self.HAS_VECTOR
            + " ORDER BY m.created_at, m.{seq}", where=sql), params).fetchall())
        if not rows:
            return [], np.zeros((0, self._dims()), dtype=np.float32)
        return [self._record(row) for row in rows], self._vectors_out([row[-1] for row in rows])

    def count(self, where: Node = MATCH_ALL) -> int:
        sql, params = self._where(self.compiler, where)
        return self._run(lambda con: con.execute(
            self._sql("SELECT count(*) FROM {memories} m WHERE {tenant:m}{where}", where=sql), params).fetchone()[0])

    def scopes(self, column: str, limit: int) -> list[ScopeCount]:
        sql = scope_counts_sql(column, memories=self.TABLES["memories"], messages=self.TABLES["messages"],
                               now=self.NOW, tenant="tenant = %s AND " if self.TENANTED else "", mark=self.PLACEHOLDER,
                               scan_memories=self.SCOPES_FROM_INDEX)
        return scope_counts(self._run(lambda con: con.execute(sql, (*self._t(), *self._t(), limit)).fetchall()))

    def iter_records(self, where: Node, batch_size: int = 1000) -> Iterator[list[MemoryRecord]]:
        sql, params = self._where(self.compiler, where)
        statement = self._sql("SELECT m.{seq}, " + RECORD_COLUMNS + " FROM {memories} m WHERE {tenant:m}{where}"
                              " AND m.{seq} > %s ORDER BY m.{seq} LIMIT %s", where=sql)
        last = 0
        while True:
            rows = self._run(lambda con: con.execute(statement, (*params, last, batch_size)).fetchall())
            if not rows:
                return
            last = rows[-1][0]
            yield [self._record(row[1:]) for row in rows]

    def token_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        source, key = self.TOKENS_FROM
        params = list(self._t())
        sql = self._sql("SELECT " + key + ", t.count, t.vectors FROM " + source + " WHERE {tenant:t}{ids}",
                        ids=self._in(key, list(ids), params))
        rows = self._run(lambda con: con.execute(sql, params).fetchall())
        return {r[0]: token_matrix(r[1], r[2]) for r in rows}

    def keep_token_vectors(self, items: Sequence[tuple[MemoryRecord, np.ndarray]]) -> int:
        """Store token vectors a rerank computed, for memories still as they were read: the same
        ``updated_at`` and ``hash`` (an update or invalidation since changes them) and valid now; the
        rows are locked while checked (PostgreSQL), so a concurrent update waits or wins. Others are
        left alone. Returns how many were stored."""
        if not items:
            return 0

        def write(con: Con) -> int:
            params = list(self._t())
            rows = con.execute(self._sql("SELECT id, updated_at, hash FROM {memories} WHERE {tenant}{ids}"
                                         " AND (valid_to IS NULL OR valid_to > {now}){lock}",
                                         ids=self._in("id", [r.id for r, _ in items], params)), params).fetchall()
            current = {row[0]: (row[1], row[2]) for row in rows}
            fresh = [(r.id, tokens) for r, tokens in items if current.get(r.id) == (r.updated_at, r.hash)]
            self._store_tokens(con, fresh)
            return len(fresh)

        return self._run(write, write=True)

    def messages(self, where: Node, limit: int) -> list[MessageRecord]:
        sql, params = self._where(self.message_compiler, where)
        rows = self._run(lambda con: con.execute(self._sql(
            "SELECT " + MESSAGE_COLUMNS + " FROM (SELECT {seq} AS r, " + MESSAGE_COLUMNS + " FROM {messages}"
            " WHERE {tenant}{where} ORDER BY {seq} DESC LIMIT %s) AS latest ORDER BY r", where=sql),
            (*params, limit)).fetchall())
        return [MessageRecord(*row) for row in rows]

    def history(self, memory_id: str) -> list[HistoryRecord]:
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + HISTORY_COLUMNS + " FROM {history} WHERE {tenant}memory_id = %s ORDER BY id"),
            self._t(memory_id)).fetchall())
        return [HistoryRecord(*row) for row in rows]

    def known_keys(self, keys: Sequence[str]) -> set[str]:
        if not keys:
            return set()
        params = list(self._t())
        sql = self._sql("SELECT key FROM {applied_keys} WHERE {tenant}{keys}", keys=self._in("key", list(keys), params))
        return {row[0] for row in self._run(lambda con: con.execute(sql, params).fetchall())}

    def info(self) -> StoreInfo:
        def read(con: Con) -> StoreInfo:
            meta = self._meta(con, ("embedder", "dims"))
            memories, events = (con.execute(self._sql("SELECT count(*) FROM {" + table + "} WHERE {tenant}TRUE"),
                                            self._t()).fetchone()[0] for table in ("memories", "history"))
            return StoreInfo(location=self.location, embedder=meta.get("embedder"),
                             dims=int(meta["dims"]) if meta.get("dims") else None, memories=memories,
                             history_events=events, durability=self._durability(con))

        return self._run(read)

    # -- re-embedding -------------------------------------------------------------------------------

    #: the memories whose new vector is not in the side table yet: (key, hash, text) rows; parameters
    #: (tenant,) embedder name, batch size
    REEMBED_PENDING = ""
    #: one row into the side table: (tenant,) key, hash, embedder, vector
    REEMBED_SAVE = ""
    #: the side table's vectors into the memories (tenant parameter only)
    REEMBED_SWAP = ""

    def _reembed_start(self, con: Con) -> None:
        """Before the first batch (SQLite: the side table exists)."""

    def _reembed_lock(self, con: Con) -> None:
        """In the final transaction, before the last batches: no writer slips in meanwhile."""

    def _reembed_finish(self, con: Con) -> None:
        """The side table emptied (or dropped) after the swap."""
        con.execute(self._sql("DELETE FROM {reembed} WHERE {tenant}TRUE"), self._t())

    def reembed(self, embed: Callable[[list[ReembedItem]], np.ndarray], name: str, dims: int, *,
                batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """New vectors go to a side table in small transactions (resumable, other writers keep
        working); one final transaction swaps them in, embedding any memory added or changed
        meanwhile, and records the new embedder."""
        self._run(self._reembed_start, write=True)
        pending, save = self._sql(self.REEMBED_PENDING), self._sql(self.REEMBED_SAVE)
        total = self.count(MATCH_ALL)

        def embed_rows(con: Con, rows: list[tuple]) -> None:
            matrix = np.asarray(embed([ReembedItem(row[2], self._json_out(row[3]), row[4], row[5]) for row in rows]),
                                dtype=np.float32)
            con.cursor().executemany(save, [self._t(row[0], row[1], name, self._vector_in(vec))
                                            for row, vec in zip(rows, matrix)])

        def batch(con: Con) -> list[tuple]:
            return con.execute(pending, self._t(name, batch_size)).fetchall()

        while rows := self._run(batch):
            self._run(lambda con: embed_rows(con, rows), write=True)
            if progress:
                done = self._run(lambda con: con.execute(
                    self._sql("SELECT count(*) FROM {reembed} WHERE {tenant}embedder = %s"), self._t(name)).fetchone()[0])
                progress(min(done, total), total)

        def swap(con: Con) -> int:
            self._reembed_lock(con)
            while rows := batch(con):
                embed_rows(con, rows)
            con.execute(self._sql(self.REEMBED_SWAP), self._t())
            # token vectors are the old embedder's: a rerank computes (and keeps) the new one's
            con.execute(self._sql("DELETE FROM {memory_tokens} WHERE {tenant}TRUE"), self._t())
            self._set_meta(con, {"embedder": name, "dims": str(dims)})
            self._reembed_finish(con)
            return con.execute(self._sql("SELECT count(*) FROM {memories} WHERE {tenant}TRUE"), self._t()).fetchone()[0]

        count = self._run(swap, write=True)
        self._bound(dims)
        self.dims = dims
        return count
