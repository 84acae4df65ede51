"""Copy an embedded store (one SQLite file) into PostgreSQL: ``memlane migrate``.

What moves, per table, into one tenant of the target: raw messages, memories with
their vectors as stored (no re-embedding) and their token vectors, history events,
the idempotency keys of imports, the jobs of async adds (queued ones are formed there), graph memory (entities and relations with their
validity, provenance and float32 vectors as stored), and document collections,
documents and pages (metadata, source, text, image, float16 token vectors, the
encoder's name and the fast-path encodings, as stored; a source from before those
were stored gives NULL encodings, computed by the first process that loads them; each collection's
recorded encoder, which an emptied collection keeps for its next pages: NULL from a source from
before it was recorded, whose pages' encoder then stands for it), and the
project (mem0's platform features): its settings, its webhooks with their signing secrets, the
feedback given on memories and the memory exports. The keyword index is rebuilt from the text by the
PostgreSQL store's own analyzer (the same one the SQLite index uses).

- **Tenants.** A SQLite file is one tenant for memories and graph; its document tables
  carry a tenant column, which is 'default' in a file used embedded (``Documents()``)
  and in a server's file of one tenant. The documents of the one tenant present are
  copied into the target tenant; a file holding several tenants' documents needs
  ``source_tenant`` (``--source-tenant``) to pick one: tenants are never merged.

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
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from memlane.core import vectors
from memlane.core.errors import EmbedderMismatchError, InvalidInputError, StoreError
from memlane.core.graph_models import Entity, GraphChanges, Relation
from memlane.core.models import MemoryRecord, MessageRecord
from memlane.core.project import ExportRecord, FeedbackRecord
from memlane.core.webhooks import Webhook
from memlane.store import sqlite_schema
from memlane.store.sql_project import PROJECT_TABLES

#: Tables copied, in this order. Messages first: memories name them as provenance; graph
#: entities before the relations between them; collections, documents, pages (foreign keys).
TABLES = ("messages", "memories", "history", "applied_keys", "jobs", "graph_entities", "graph_relations",
          "doc_collections", "doc_documents", "doc_pages", *PROJECT_TABLES)
#: the document tables carry a tenant column (the others: the file is the tenant)
DOC_TABLES = ("doc_collections", "doc_documents", "doc_pages")

#: Source rows after a checkpoint, in checkpoint order; the first column is the checkpoint.
#: The document tables are read by id (their rowids are implicit and a VACUUM could renumber them).
_SOURCE_SQL = {
    "messages": "SELECT rowid, id, role, content, created_at, name, user_id, agent_id, run_id FROM messages"
                " WHERE rowid > :after ORDER BY rowid LIMIT :batch",
    "memories": "SELECT m.rowid, m.id, m.text, m.hash, m.created_at, m.updated_at, m.user_id, m.agent_id, m.run_id,"
                " m.actor_id, m.role, m.metadata, m.memory_type, m.valid_to, m.invalid_reason, m.superseded_by,"
                " m.source_message_ids, {event}, {context}, m.vector, t.count, t.vectors FROM memories m"
                " LEFT JOIN memory_tokens t ON t.rowid = m.rowid WHERE m.rowid > :after ORDER BY m.rowid LIMIT :batch",
    "history": "SELECT id, memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id, agent_id,"
               " run_id, reason FROM history WHERE id > :after ORDER BY id LIMIT :batch",
    "applied_keys": "SELECT key, key, created_at FROM applied_keys WHERE key > :after ORDER BY key LIMIT :batch",
    "jobs": "SELECT seq, id, kind, order_key, status, request, result, error, attempts, worker, lease_until, not_before,"
            " created_at, started_at, finished_at FROM jobs WHERE seq > :after ORDER BY seq LIMIT :batch",
    "graph_entities": "SELECT rowid, id, name, key, user_id, agent_id, run_id, created_at, updated_at, vector"
                      " FROM graph_entities WHERE rowid > :after ORDER BY rowid LIMIT :batch",
    "graph_relations": "SELECT rowid, id, source_id, relationship, destination_id, user_id, agent_id, run_id,"
                       " created_at, updated_at, valid_from, valid_to, invalid_reason, superseded_by,"
                       " source_message_ids, vector FROM graph_relations WHERE rowid > :after ORDER BY rowid"
                       " LIMIT :batch",
    "doc_collections": "SELECT id, name, metadata, created_at, updated_at, {collection_encoder} FROM doc_collections"
                       " WHERE tenant = :tenant AND id > :after ORDER BY id LIMIT :batch",
    "doc_documents": "SELECT id, collection_id, name, metadata, source, created_at, updated_at FROM doc_documents"
                     " WHERE tenant = :tenant AND id > :after ORDER BY id LIMIT :batch",
    "doc_pages": "SELECT id, document_id, page_number, text, image, encoder, dims, n_tokens, vectors, {encodings}"
                 " FROM doc_pages WHERE tenant = :tenant AND id > :after ORDER BY id LIMIT :batch",
    "project_settings": "SELECT key, key, value, updated_at FROM project_settings WHERE key > :after ORDER BY key"
                        " LIMIT :batch",
    "webhooks": "SELECT seq, id, name, url, event_types, secret, is_active, created_at, updated_at FROM webhooks"
                " WHERE seq > :after ORDER BY seq LIMIT :batch",
    "feedback": "SELECT seq, id, memory_id, feedback, reason, created_at, user_id, agent_id, run_id FROM feedback"
                " WHERE seq > :after ORDER BY seq LIMIT :batch",
    "exports": "SELECT seq, id, schema, filters, status, created_at, instructions, result, error, method FROM exports"
               " WHERE seq > :after ORDER BY seq LIMIT :batch",
}
#: the pages' fast-path encodings, or NULLs from a source written before they were stored
_PAGE_ENCODINGS = {True: "fde, fde_config", False: "NULL, NULL"}
#: A PostgreSQL memory size accepted for --index-memory (it goes into set_config, bound).
_MEMORY = re.compile(r"[1-9][0-9]{0,6}(kB|MB|GB)")
_FIRST = {"messages": 0, "memories": 0, "history": 0, "applied_keys": "", "jobs": 0, "graph_entities": 0,
          "graph_relations": 0,
          "doc_collections": "", "doc_documents": "", "doc_pages": "",
          "project_settings": "", "webhooks": 0, "feedback": 0, "exports": 0}

#: Target tables counted per source table (token vectors are verified too).
_TARGET_TABLES = {"messages": "memlane_messages", "memories": "memlane_memories", "history": "memlane_history",
                  "applied_keys": "memlane_applied_keys", "jobs": "memlane_jobs",
                  "memory_tokens": "memlane_memory_tokens",
                  "graph_entities": "memlane_graph_entities", "graph_relations": "memlane_graph_relations",
                  "doc_collections": "memlane_doc_collections", "doc_documents": "memlane_doc_documents",
                  "doc_pages": "memlane_doc_pages",
                  **{table: f"memlane_{table}" for table in PROJECT_TABLES}}

Progress = Callable[[str, int, int], None]


@dataclass
class MigrationReport:
    source: str
    target: str
    tenant: str
    #: the tenant of the source's document tables copied into ``tenant`` (None: the source has no documents)
    source_tenant: str | None
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

    def __init__(self, path: Path, tenant: str | None = None):
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
        self.tables = tables  # a store older than graph memory or documents has none of those rows
        self.page_encodings = "doc_pages" in tables and "fde" in {
            r[1] for r in self.con.execute("PRAGMA table_info(doc_pages)")}
        #: a store from before collections recorded their encoder has no such column (NULL: its pages' stands)
        self.collection_encoder = "doc_collections" in tables and "encoder" in {
            r[1] for r in self.con.execute("PRAGMA table_info(doc_collections)")}
        #: a store from before memories kept their context has no such column
        self.memory_context = "context" in {r[1] for r in self.con.execute("PRAGMA table_info(memories)")}
        self.tenant = self._doc_tenant(tenant)

    def _doc_tenant(self, chosen: str | None) -> str | None:
        """The tenant of the document tables to copy: the one present (a file used embedded, or a
        server's file of one tenant, holds only 'default'), or ``chosen`` when there are several."""
        present = sorted({r[0] for t in DOC_TABLES if t in self.tables
                          for r in self.con.execute(f"SELECT DISTINCT tenant FROM {t}")})
        if chosen is not None:
            if present and chosen not in present:
                raise InvalidInputError(f"--source-tenant: {self.path} holds documents of tenant(s) "
                                        f"{', '.join(map(repr, present))}, not {chosen!r}", field="source_tenant")
            return chosen
        if len(present) > 1:
            raise InvalidInputError(
                f"--source-tenant: {self.path} holds documents of several tenants ({', '.join(map(repr, present))}); "
                "name the one to copy into the target tenant (tenants are never merged)", field="source_tenant")
        return present[0] if present else None

    def count(self, table: str) -> int:
        if table not in self.tables:
            return 0
        if table in DOC_TABLES:  # table: one of our names
            return self.con.execute(f"SELECT count(*) FROM {table} WHERE tenant = ?", (self.tenant,)).fetchone()[0]
        return self.con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def rows(self, table: str, after: Any, batch: int) -> list[tuple]:
        if table not in self.tables:
            return []
        sql = _SOURCE_SQL[table].format(encodings=_PAGE_ENCODINGS[self.page_encodings],
                                        event="m.event_id" if "jobs" in self.tables else "NULL",
                                        context="m.context" if self.memory_context else "NULL",
                                        collection_encoder="encoder" if self.collection_encoder else "NULL")
        return self.con.execute(sql, {"after": after, "batch": batch, "tenant": self.tenant}).fetchall()

    def close(self) -> None:
        self.con.close()


def _memory(row: tuple, dims: int, dtype: np.dtype) -> MemoryRecord:
    (_, id_, text, hash_, created, updated, user, agent, run, actor, role, metadata, memory_type, valid_to,
     reason, superseded_by, sources, event_id, context, blob, token_count, token_blob) = row
    vector = np.frombuffer(blob, dtype=dtype).astype(np.float32) if blob else None  # empty: not embedded yet
    if vector is not None and len(vector) != dims:
        raise StoreError(f"memory {id_} in the source has a {len(vector)}-dimensional vector, the store's embedder "
                         f"has {dims}: the source is damaged")
    tokens = None if token_blob is None else np.frombuffer(token_blob, dtype="<f2").reshape(token_count, -1)
    return MemoryRecord(id_, text, hash_, created, updated, user_id=user, agent_id=agent, run_id=run, actor_id=actor,
                        role=role, metadata=json.loads(metadata), memory_type=memory_type, valid_to=valid_to,
                        invalid_reason=reason, superseded_by=superseded_by, source_message_ids=json.loads(sources),
                        event_id=event_id, context=context, vector=vector, token_vectors=tokens)


def migrate(source_url: str, target_url: str, *, tenant: str = "default", schema_name: str = "public",
            batch_size: int = 2000, progress: Progress | None = None,
            source_tenant: str | None = None, index_memory: str = "1GB") -> MigrationReport:
    """Copy the SQLite store at ``source_url`` into ``tenant`` of the PostgreSQL database at
    ``target_url``; safe to run again after an interruption (see the module docstring).
    ``source_tenant`` picks the tenant of the source's document tables when it holds several.
    ``index_memory``: PostgreSQL's ``maintenance_work_mem`` for the HNSW build after a bulk load
    (e.g. '4GB'); the build is several times faster when the whole graph fits in it."""
    from memlane.store.postgres import PostgresDatabase, PostgresStore, copy_history, copy_memories, copy_messages

    if not isinstance(tenant, str) or not 0 < len(tenant) <= 200:
        raise InvalidInputError("--tenant must be a non-empty string of at most 200 characters", field="tenant")
    if batch_size < 1:
        raise InvalidInputError("--batch-size must be at least 1", field="batch_size")
    if not isinstance(index_memory, str) or not _MEMORY.fullmatch(index_memory):
        raise InvalidInputError(f"--index-memory must be a size such as 512MB or 4GB, not {index_memory!r}",
                                field="index_memory")
    path = sqlite_source(source_url)
    postgres_target(target_url)
    if source_tenant is not None and (not isinstance(source_tenant, str) or not 0 < len(source_tenant) <= 200):
        raise InvalidInputError("--source-tenant must be a non-empty string of at most 200 characters",
                                field="source_tenant")
    source = _Source(path, source_tenant)
    database = None
    try:
        database = PostgresDatabase(target_url, schema_name=schema_name, min_size=1, max_size=3)
        report = MigrationReport(source=str(path), target=database.location, tenant=tenant,
                                 source_tenant=source.tenant, embedder=source.embedder, dims=source.dims)
        prefix = f"migrate:{source.key}:"
        target = PostgresStore(database, tenant)

        def graph(cur: Any, _tenant: str, changes: Any) -> None:
            target.write_graph(cur.connection, changes)

        def project(cur: Any, rows: dict[str, list[Any]]) -> None:
            target.write_project(cur.connection, **rows)

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
                                                       copy_messages=copy_messages, copy_graph=graph,
                                                       copy_project=project)
                if index == "build":
                    database.finish_bulk_load(source.dims, maintenance_work_mem=index_memory)
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
    copied_tenant = meta.get(prefix + "source_tenant")
    if copied_tenant is not None and source.tenant is not None and json.loads(copied_tenant) != source.tenant:
        raise InvalidInputError(
            f"--source-tenant: an earlier run copied the documents of source tenant {json.loads(copied_tenant)!r} "
            f"into tenant {tenant!r}, not {source.tenant!r}; tenants are never merged: migrate into another --tenant",
            field="source_tenant")
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
            " OR EXISTS (SELECT 1 FROM memlane_messages WHERE tenant = %(t)s)"
            " OR EXISTS (SELECT 1 FROM memlane_graph_entities WHERE tenant = %(t)s)"
            " OR EXISTS (SELECT 1 FROM memlane_doc_collections WHERE tenant = %(t)s)"
            + "".join(f" OR EXISTS (SELECT 1 FROM memlane_{table} WHERE tenant = %(t)s)" for table in PROJECT_TABLES),
            {"t": tenant}).fetchone()[0]
        if holds:
            raise StoreError(
                f"tenant {tenant!r} of the target already holds memories, history, messages, graph memory, "
                "document collections or project settings, webhooks, feedback or exports that did not come "
                "from this source; migrate into an empty tenant (--tenant NAME) so the copy can be verified")
    if source.tenant is not None:
        con.execute("INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, %s, %s)"
                    " ON CONFLICT (tenant, key) DO NOTHING",
                    (tenant, prefix + "source_tenant", json.dumps(source.tenant)))
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
           copy_history: Callable, copy_messages: Callable, copy_graph: Callable, copy_project: Callable) -> None:
    if table == "messages":
        copy_messages(cur, tenant, [MessageRecord(*r[1:]) for r in rows])
    elif table == "memories":
        if source.dims is None:
            raise StoreError(f"{source.path} holds memories but records no embedder: the source is damaged")
        copy_memories(cur, tenant, [_memory(r, source.dims, source.dtype) for r in rows])
    elif table == "history":
        copy_history(cur, tenant, (r[1:] for r in rows))
    elif table == "applied_keys":
        cur.executemany("INSERT INTO memlane_applied_keys (tenant, key, created_at) VALUES (%s, %s, %s)",
                        [(tenant, r[1], r[2]) for r in rows])
    elif table == "jobs":  # queued async adds, and the events of those formed (their provisional memories came along)
        cur.executemany("INSERT INTO memlane_jobs (tenant, id, kind, order_key, status, request, result, error, attempts,"
                        " worker, lease_until, not_before, created_at, started_at, finished_at)"
                        " VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, %s, %s, %s, %s, %s, %s, %s)",
                        [(tenant, *r[1:]) for r in rows])
    elif table in ("graph_entities", "graph_relations"):
        copy_graph(cur, tenant, _graph_changes(table, rows))
    elif table in PROJECT_TABLES:
        copy_project(cur, _project_rows(table, rows))
    else:
        _write_documents(cur, table, tenant, rows)


def _graph_changes(table: str, rows: list[tuple]) -> GraphChanges:
    """Rows as the graph store writes them (vectors: the float32 blobs as stored; names of a
    relation's ends are not stored, only their ids)."""
    if table == "graph_entities":
        return GraphChanges.model_construct(entities=[Entity.model_construct(
            id=r[1], name=r[2], key=r[3], user_id=r[4], agent_id=r[5], run_id=r[6], created_at=r[7],
            updated_at=r[8], vector=_f32(r[9])) for r in rows], relations=[], invalidations=[], confirmations=[])
    return GraphChanges.model_construct(entities=[], relations=[Relation.model_construct(
        id=r[1], source_id=r[2], source="", relationship=r[3], destination_id=r[4], destination="", user_id=r[5],
        agent_id=r[6], run_id=r[7], created_at=r[8], updated_at=r[9], valid_from=r[10], valid_to=r[11],
        invalid_reason=r[12], superseded_by=r[13], source_message_ids=json.loads(r[14]), vector=_f32(r[15]))
        for r in rows], invalidations=[], confirmations=[])


def _project_rows(table: str, rows: list[tuple]) -> dict[str, list[Any]]:
    """Project rows as ``write_project`` takes them (the source's JSON texts decoded; a webhook's secret as stored)."""
    if table == "project_settings":
        return {"settings": [(key, json.loads(value), at) for _, key, value, at in rows]}
    if table == "webhooks":
        return {"webhooks": [Webhook(id=r[1], name=r[2], url=r[3], event_types=json.loads(r[4]), secret=r[5],
                                     is_active=bool(r[6]), created_at=r[7], updated_at=r[8]) for r in rows]}
    if table == "feedback":
        return {"feedback": [FeedbackRecord(*r[1:]) for r in rows]}
    return {"exports": [ExportRecord(id=r[1], schema=json.loads(r[2]), filters=json.loads(r[3]), status=r[4],
                                     created_at=r[5], instructions=r[6],
                                     result=None if r[7] is None else json.loads(r[7]), error=r[8], method=r[9])
                        for r in rows]}


def _f32(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype="<f4")


def _write_documents(cur: Any, table: str, tenant: str, rows: list[tuple]) -> None:
    """Document rows into the target tenant (token vectors and encodings: the bytes as stored), and a
    bump of the tenant's document version so running processes reload their page index."""
    from psycopg.types.json import Jsonb

    from memlane.store.postgres import page_terms

    if table == "doc_collections":
        cur.executemany("INSERT INTO memlane_doc_collections (tenant, id, name, metadata, created_at, updated_at,"
                        " encoder) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        [(tenant, r[0], r[1], Jsonb(json.loads(r[2])), *r[3:]) for r in rows])
    elif table == "doc_documents":
        cur.executemany("INSERT INTO memlane_doc_documents (tenant, id, collection_id, name, metadata, source,"
                        " created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                        [(tenant, r[0], r[1], r[2], Jsonb(json.loads(r[3])), *r[4:]) for r in rows])
    else:  # with their keyword index (r[3]: the page's text)
        cur.executemany("INSERT INTO memlane_doc_pages (tenant, id, document_id, page_number, text, image, encoder,"
                        " dims, n_tokens, vectors, fde, fde_config, terms, nterms)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        [(tenant, *r, *page_terms(r[3], tenant)) for r in rows])
    cur.execute("INSERT INTO memlane_doc_state (tenant, version) VALUES (%s, 1)"
                " ON CONFLICT (tenant) DO UPDATE SET version = memlane_doc_state.version + 1", (tenant,))


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
