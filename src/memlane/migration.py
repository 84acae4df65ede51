"""Copy an embedded store (one SQLite file) into PostgreSQL: ``memlane migrate``.

What moves, per table, into one tenant of the target: raw messages, memories with
their vectors as stored (no re-embedding) and their token vectors, history events,
and the idempotency keys of imports. The keyword index is rebuilt from the text by
the PostgreSQL store's own analyzer (the same one the SQLite index uses).

- **Resumable.** Each table is copied in source order (rowid / id) in batches. A
  batch and the checkpoint "copied up to row N of this source" commit in one
  PostgreSQL transaction, so after an interruption (Ctrl-C, a crash, a lost
  connection) the next run continues after the last committed batch and copies no
  row twice. Checkpoints live in ``memlane_meta`` under the target tenant.
- **Refuses** a target tenant that already holds data from elsewhere (the counts
  could not be verified), and a target whose embedder or dimensions differ from
  the source's (the vectors would be meaningless there).
- **Index.** pgvector inserts into an HNSW graph one row at a time, ~100x slower
  than a COPY into the bare table. When the target holds no vectors of the
  source's dimensions yet, the HNSW index of those dimensions is dropped, the rows
  loaded, and the index built once at the end. Otherwise (other tenants' vectors
  of the same size are already indexed and being searched) the index stays and
  the load is slower (``docs/scaling.md``).
- **Verifies** the counts of every table at the end; a mismatch is a ``StoreError``.

The source is opened read-only and never changed. Stop the processes writing to it first: rows
they add during the copy may or may not be copied (the final count check then fails).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from memlane import vectors
from memlane.errors import EmbedderMismatchError, InvalidInputError, StoreError
from memlane.models import MemoryRecord, MessageRecord
from memlane.store import sqlite_schema

#: Tables copied, in this order: (name, source SELECT after the checkpoint, source count).
#: Messages first: memories name them as provenance.
TABLES = ("messages", "memories", "history", "applied_keys")

_SOURCE_SQL = {
    "messages": "SELECT rowid, id, role, content, created_at, name, user_id, agent_id, run_id FROM messages"
                " WHERE rowid > ? ORDER BY rowid LIMIT ?",
    "memories": "SELECT m.rowid, m.id, m.text, m.hash, m.created_at, m.updated_at, m.user_id, m.agent_id, m.run_id,"
                " m.actor_id, m.role, m.metadata, m.memory_type, m.valid_to, m.invalid_reason, m.superseded_by,"
                " m.source_message_ids, m.vector, t.count, t.vectors FROM memories m"
                " LEFT JOIN memory_tokens t ON t.rowid = m.rowid WHERE m.rowid > ? ORDER BY m.rowid LIMIT ?",
    "history": "SELECT id, memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id, agent_id,"
               " run_id, reason FROM history WHERE id > ? ORDER BY id LIMIT ?",
    "applied_keys": "SELECT key, key, created_at FROM applied_keys WHERE key > ? ORDER BY key LIMIT ?",
}
_FIRST = {"messages": 0, "memories": 0, "history": 0, "applied_keys": ""}

#: Target tables counted per source table (token vectors are verified too).
_TARGET_TABLES = {"messages": "memlane_messages", "memories": "memlane_memories", "history": "memlane_history",
                  "applied_keys": "memlane_applied_keys", "memory_tokens": "memlane_memory_tokens"}

Progress = Callable[[str, int, int], None]


@dataclass
class MigrationReport:
    source: str
    target: str
    tenant: str
    embedder: str | None
    dims: int | None
    #: table -> (rows in the source, rows in the target tenant) after the run
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: rows this run copied (a resumed run copies only what was missing)
    copied: dict[str, int] = field(default_factory=dict)
    resumed: bool = False
    #: how the HNSW index was maintained: "built after the load", "kept (rows inserted into it)", "none"
    index: str = "none"

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "counts": {k: list(v) for k, v in self.counts.items()}}


def sqlite_source(url: str) -> Path:
    """The file a ``sqlite:///path`` URL names (SQLAlchemy's convention: ``sqlite:///relative.db``,
    ``sqlite:////absolute.db``); a plain path is accepted too."""
    if not isinstance(url, str) or not url:
        raise InvalidInputError("--from: give the SQLite store as sqlite:///path/to/file.db", field="from")
    if "://" in url:
        if not url.startswith("sqlite:///"):
            raise InvalidInputError(f"--from: expected a sqlite:///path/to/file.db URL, got {url.split('://')[0]}://...",
                                    field="from")
        url = unquote(url[len("sqlite:///"):])
    path = Path(url).expanduser()
    if not path.is_file():
        raise InvalidInputError(f"--from: no SQLite store at {path} (the file does not exist)", field="from")
    return path


def postgres_target(url: str) -> str:
    if not isinstance(url, str) or urlparse(url).scheme not in ("postgresql", "postgres"):
        raise InvalidInputError("--to: expected a postgresql://user:password@host:5432/dbname URL", field="to")
    return url


class _Source:
    """The SQLite store, read-only."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            version = self.con.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise InvalidInputError(f"--from: {path} is not a SQLite database ({exc})", field="from") from None
        if not {"memories", "history", "meta"} <= tables:
            raise InvalidInputError(f"--from: {path} is not a memlane store (it has no memories table)", field="from")
        if version < 3:  # token vectors and raw messages came with schema 2 and 3
            raise InvalidInputError(
                f"--from: {path} has memlane schema version {version}; open it once with this memlane "
                "(e.g. `memlane info`) to upgrade it, then migrate", field="from")
        if version > sqlite_schema.VERSION:
            raise InvalidInputError(f"--from: {path} was written by a newer memlane (schema {version}); upgrade memlane",
                                    field="from")
        meta = dict(self.con.execute("SELECT key, value FROM meta").fetchall())
        self.embedder = meta.get("embedder")
        self.dims = int(meta["dims"]) if meta.get("dims") else None
        self.dtype = vectors.DTYPES[meta.get("vector_dtype", "float32")]
        self.key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]

    def count(self, table: str) -> int:
        return self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # table: one of our names

    def rows(self, table: str, after: Any, batch: int) -> list[tuple]:
        return self.con.execute(_SOURCE_SQL[table], (after, batch)).fetchall()

    def close(self) -> None:
        self.con.close()


def _memory(row: tuple, dims: int, dtype: np.dtype) -> MemoryRecord:
    (_, id_, text, hash_, created, updated, user, agent, run, actor, role, metadata, memory_type, valid_to,
     reason, superseded_by, sources, blob, token_count, token_blob) = row
    vector = np.frombuffer(blob, dtype=dtype).astype(np.float32)
    if len(vector) != dims:
        raise StoreError(f"memory {id_} in the source has a {len(vector)}-dimensional vector, the store's embedder "
                         f"has {dims}: the source is damaged")
    tokens = None if token_blob is None else np.frombuffer(token_blob, dtype="<f2").reshape(token_count, -1)
    return MemoryRecord(id_, text, hash_, created, updated, user, agent, run, actor, role,
                        metadata=json.loads(metadata), memory_type=memory_type, valid_to=valid_to,
                        invalid_reason=reason, superseded_by=superseded_by, source_message_ids=json.loads(sources),
                        vector=vector, token_vectors=tokens)


def migrate(source_url: str, target_url: str, *, tenant: str = "default", schema_name: str = "public",
            batch_size: int = 2000, progress: Progress | None = None) -> MigrationReport:
    """Copy the SQLite store at ``source_url`` into ``tenant`` of the PostgreSQL database at
    ``target_url``; safe to run again after an interruption (see the module docstring)."""
    from memlane.store.postgres import PostgresDatabase, copy_history, copy_memories, copy_messages

    if not isinstance(tenant, str) or not 0 < len(tenant) <= 200:
        raise InvalidInputError("--tenant must be a non-empty string of at most 200 characters", field="tenant")
    if batch_size < 1:
        raise InvalidInputError("--batch-size must be at least 1", field="batch_size")
    path = sqlite_source(source_url)
    postgres_target(target_url)
    source = _Source(path)
    database = None
    try:
        database = PostgresDatabase(target_url, schema_name=schema_name, min_size=1, max_size=3)
        report = MigrationReport(source=str(path), target=database.location, tenant=tenant,
                                 embedder=source.embedder, dims=source.dims)
        prefix = f"migrate:{source.key}:"
        with database.pool.connection() as lock_con:
            # one migration per tenant at a time (a session lock, released when this connection is returned)
            if not lock_con.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (f"memlane-migrate:{tenant}",)).fetchone()[0]:
                raise StoreError(f"another `memlane migrate` into tenant {tenant!r} of {database.location} is running")
            try:
                with database.pool.connection() as con, con.transaction():
                    report.resumed = _check_target(con, source, tenant, prefix)
                index = database.prepare_bulk_load(source.dims) if source.dims else "none"
                for table in TABLES:
                    report.copied[table] = _copy_table(database, source, table, tenant, prefix, batch_size, progress,
                                                       copy_memories=copy_memories, copy_history=copy_history,
                                                       copy_messages=copy_messages)
                if index == "build":
                    database.finish_bulk_load(source.dims)
                    report.index = "built after the load"
                elif index == "keep":
                    report.index = "kept (rows inserted into it)"
                report.counts = _verify(database, source, tenant)
            finally:
                lock_con.execute("SELECT pg_advisory_unlock(hashtext(%s))", (f"memlane-migrate:{tenant}",))
        return report
    finally:
        source.close()
        if database is not None:
            database.close()


def _check_target(con: Any, source: _Source, tenant: str, prefix: str) -> bool:
    """Refuse a foreign embedder or a tenant holding other data; record the source's embedder.
    Returns True when an earlier run of this migration has already copied something."""
    meta = dict(con.execute("SELECT key, value FROM memlane_meta WHERE tenant = %s", (tenant,)).fetchall())
    started = any(k.startswith(prefix) for k in meta)
    if source.embedder is not None and meta.get("embedder") is not None and (
            meta.get("embedder") != source.embedder or meta.get("dims") != str(source.dims)):
        raise EmbedderMismatchError(
            f"tenant {tenant!r} of the target was filled by embedder {meta['embedder']!r} ({meta.get('dims')} "
            f"dimensions), the source by {source.embedder!r} ({source.dims} dimensions): migrate into another "
            "tenant (--tenant), or re-embed one of them first (`memlane reembed`)")
    if not started:
        holds = con.execute(
            "SELECT EXISTS (SELECT 1 FROM memlane_memories WHERE tenant = %(t)s)"
            " OR EXISTS (SELECT 1 FROM memlane_history WHERE tenant = %(t)s)"
            " OR EXISTS (SELECT 1 FROM memlane_messages WHERE tenant = %(t)s)", {"t": tenant}).fetchone()[0]
        if holds:
            raise StoreError(
                f"tenant {tenant!r} of the target already holds memories, history or messages that did not come "
                "from this source; migrate into an empty tenant (--tenant NAME) so the copy can be verified")
    if source.embedder is not None:
        con.cursor().executemany(
            "INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, %s, %s)"
            " ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value",
            [(tenant, "embedder", source.embedder), (tenant, "dims", str(source.dims))])
    return started


def _copy_table(database: Any, source: _Source, table: str, tenant: str, prefix: str, batch_size: int,
                progress: Progress | None, **writers: Callable) -> int:
    """Copy the rows of ``table`` after its checkpoint, one transaction per batch (rows + checkpoint)."""
    key = prefix + table
    total = source.count(table)
    with database.pool.connection() as con:
        row = con.execute("SELECT value FROM memlane_meta WHERE tenant = %s AND key = %s", (tenant, key)).fetchone()
    after = _FIRST[table] if row is None else json.loads(row[0])
    done = _copied_before(database, table, tenant) if row is not None else 0
    if progress:
        progress(table, done, total)
    copied = 0
    for rows in _batches(source, table, after, batch_size):
        with database.pool.connection() as con, con.transaction():
            cur = con.cursor()
            _write(cur, table, tenant, rows, source, **writers)
            cur.execute("INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, %s, %s)"
                        " ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value",
                        (tenant, key, json.dumps(rows[-1][0])))
        copied += len(rows)
        if progress:
            progress(table, done + copied, total)
    return copied


def _batches(source: _Source, table: str, after: Any, batch_size: int) -> Iterator[list[tuple]]:
    while rows := source.rows(table, after, batch_size):
        yield rows
        after = rows[-1][0]


def _write(cur: Any, table: str, tenant: str, rows: list[tuple], source: _Source, *, copy_memories: Callable,
           copy_history: Callable, copy_messages: Callable) -> None:
    if table == "messages":
        copy_messages(cur, tenant, [MessageRecord(*r[1:]) for r in rows])
    elif table == "memories":
        if source.dims is None:
            raise StoreError(f"{source.path} holds memories but records no embedder: the source is damaged")
        copy_memories(cur, tenant, [_memory(r, source.dims, source.dtype) for r in rows])
    elif table == "history":
        copy_history(cur, tenant, (r[1:] for r in rows))
    else:
        cur.executemany("INSERT INTO memlane_applied_keys (tenant, key, created_at) VALUES (%s, %s, %s)",
                        [(tenant, r[1], r[2]) for r in rows])


def _copied_before(database: Any, table: str, tenant: str) -> int:
    with database.pool.connection() as con:
        return con.execute(f"SELECT count(*) FROM {_TARGET_TABLES[table]} WHERE tenant = %s", (tenant,)).fetchone()[0]


def _verify(database: Any, source: _Source, tenant: str) -> dict[str, tuple[int, int]]:
    counts = {}
    for table, target in _TARGET_TABLES.items():
        with database.pool.connection() as con:
            copied = con.execute(f"SELECT count(*) FROM {target} WHERE tenant = %s", (tenant,)).fetchone()[0]
        counts[table] = (source.count(table), copied)
    wrong = {t: c for t, c in counts.items() if c[0] != c[1]}
    if wrong:
        detail = ", ".join(f"{t}: {s} in the source, {c} in the target" for t, (s, c) in wrong.items())
        raise StoreError(f"the copy does not match the source ({detail}); was tenant {tenant!r} written to during "
                         "the migration? Nothing was deleted; check and run `memlane migrate` again")
    return counts
