"""Versioned schema of the embedded store (``PRAGMA user_version`` holds the version).

Migrations run inside the caller's write transaction, so two processes opening
a new file at once cannot both apply them. Append new migrations; never edit old ones.
"""

from __future__ import annotations

import sqlite3

from memlane.core.errors import StoreError


def _history_table(name: str, events: tuple[str, ...], *added: str) -> str:
    """The history table as migration 1 created it (the ``events`` its CHECK allows), with the ``added``
    columns after it: migration 10 restates it to allow MERGE (SQLite cannot alter a CHECK). Its text
    is stored as the table's schema (``sqlite_master``): frozen like the migrations that write it."""
    allowed = ", ".join(f"'{event}'" for event in events)
    more = "".join(f",\n            {column}" for column in added)
    return f"""CREATE TABLE {name} (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            event TEXT NOT NULL CHECK (event IN ({allowed})),
            old_memory TEXT,
            new_memory TEXT,
            created_at TEXT NOT NULL,
            actor_id TEXT,
            role TEXT,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT{more}
        )"""


def _bumps(rows: tuple[str, ...]) -> str:
    """A trigger's statements raising the generation of each scope id of its ``rows`` (``old``, ``new``: the new
    row's ids only where they changed). Frozen, as the migration that calls it."""
    return "\n            ".join(
        f"INSERT INTO scope_generations(col, value, generation) SELECT '{column}', {row}.{column}, 1"
        f" WHERE {row}.{column} IS NOT NULL{f' AND new.{column} IS NOT old.{column}' if rows == ('old', 'new') and row == 'new' else ''}"
        " ON CONFLICT(col, value) DO UPDATE SET generation = generation + 1;"
        for row in rows for column in ("user_id", "agent_id", "run_id"))


MIGRATIONS: list[list[str]] = [
    # 1: memories with their vectors, history, store metadata, idempotency keys
    [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE memories (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            actor_id TEXT,
            role TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            vector BLOB NOT NULL
        )""",
        "CREATE INDEX memories_user ON memories(user_id, created_at) WHERE user_id IS NOT NULL",
        "CREATE INDEX memories_agent ON memories(agent_id, created_at) WHERE agent_id IS NOT NULL",
        "CREATE INDEX memories_run ON memories(run_id, created_at) WHERE run_id IS NOT NULL",
        "CREATE INDEX memories_created ON memories(created_at)",
        _history_table("history", ("ADD", "UPDATE", "DELETE")),
        "CREATE INDEX history_memory ON history(memory_id, id)",
        "CREATE TABLE applied_keys (key TEXT PRIMARY KEY, created_at TEXT NOT NULL) WITHOUT ROWID",
    ],
    # 2: memory formation — types, validity instead of destruction, provenance, raw messages
    [
        "ALTER TABLE memories ADD COLUMN memory_type TEXT",
        "ALTER TABLE memories ADD COLUMN valid_to TEXT",
        "ALTER TABLE memories ADD COLUMN invalid_reason TEXT",
        "ALTER TABLE memories ADD COLUMN superseded_by TEXT",
        "ALTER TABLE memories ADD COLUMN source_message_ids TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE history ADD COLUMN reason TEXT",
        "CREATE INDEX history_user ON history(user_id) WHERE user_id IS NOT NULL",
        "CREATE INDEX history_agent ON history(agent_id) WHERE agent_id IS NOT NULL",
        "CREATE INDEX history_run ON history(run_id) WHERE run_id IS NOT NULL",
        """CREATE TABLE messages (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            role TEXT NOT NULL,
            name TEXT,
            content TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX messages_user ON messages(user_id) WHERE user_id IS NOT NULL",
        "CREATE INDEX messages_agent ON messages(agent_id) WHERE agent_id IS NOT NULL",
        "CREATE INDEX messages_run ON messages(run_id) WHERE run_id IS NOT NULL",
    ],
    # 3: retrieval — a keyword index kept in step by triggers (ml_index_terms is registered on every
    # connection), and optional per-memory token vectors for late-interaction reranking
    [
        "CREATE VIRTUAL TABLE memories_fts USING fts5(terms, tokenize = 'unicode61')",
        "INSERT INTO memories_fts(rowid, terms)"
        " SELECT rowid, ml_index_terms(text, user_id, agent_id, run_id) FROM memories",
        """CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts(rowid, terms)
            VALUES (new.rowid, ml_index_terms(new.text, new.user_id, new.agent_id, new.run_id));
        END""",
        """CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
            UPDATE memories_fts SET terms = ml_index_terms(new.text, new.user_id, new.agent_id, new.run_id)
            WHERE rowid = new.rowid;
        END""",
        "CREATE TABLE memory_tokens (rowid INTEGER PRIMARY KEY, count INTEGER NOT NULL, vectors BLOB NOT NULL)",
        """CREATE TRIGGER memories_delete AFTER DELETE ON memories BEGIN
            DELETE FROM memories_fts WHERE rowid = old.rowid;
            DELETE FROM memory_tokens WHERE rowid = old.rowid;
        END""",
    ],
    # 4: the store fills the keyword index of new memories itself, one statement per batch
    # (SQLiteStore._insert). Inside a trigger FTS5 writes its pending terms to disk for every
    # row (each trigger statement is a savepoint): ~70 instead of ~25 us per inserted memory.
    [
        "DROP TRIGGER memories_fts_insert",
    ],
    # 5: a log of vector changes and deletions, so the in-memory matrix of unscoped searches
    # (store/sqlite_matrix.py, VectorMatrix) catches up with other connections' writes instead of
    # re-reading every vector; inserts need no entry (rowids only grow). The store prunes it.
    [
        "CREATE TABLE memory_changes (seq INTEGER PRIMARY KEY, memory_rowid INTEGER NOT NULL)",
        """CREATE TRIGGER memory_changes_vector AFTER UPDATE OF vector ON memories
            WHEN old.vector IS NOT new.vector BEGIN
            INSERT INTO memory_changes(memory_rowid) VALUES (new.rowid);
        END""",
        """CREATE TRIGGER memory_changes_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memory_changes(memory_rowid) VALUES (old.rowid);
        END""",
    ],
    # graph memory: entities (with name vectors) and relations (with validity and provenance),
    # scoped like memories (the file is the tenant), indexed for scoped lookups and by entity
    [
        """CREATE TABLE graph_entities (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            key TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            vector BLOB
        )""",
        "CREATE INDEX graph_entities_user ON graph_entities(user_id) WHERE user_id IS NOT NULL",
        "CREATE INDEX graph_entities_agent ON graph_entities(agent_id) WHERE agent_id IS NOT NULL",
        "CREATE INDEX graph_entities_run ON graph_entities(run_id) WHERE run_id IS NOT NULL",
        """CREATE TABLE graph_relations (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            source_id TEXT NOT NULL,
            relationship TEXT NOT NULL,
            destination_id TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            valid_from TEXT NOT NULL,
            valid_to TEXT,
            invalid_reason TEXT,
            superseded_by TEXT,
            source_message_ids TEXT NOT NULL DEFAULT '[]',
            vector BLOB
        )""",
        "CREATE INDEX graph_relations_user ON graph_relations(user_id, created_at) WHERE user_id IS NOT NULL",
        "CREATE INDEX graph_relations_agent ON graph_relations(agent_id, created_at) WHERE agent_id IS NOT NULL",
        "CREATE INDEX graph_relations_run ON graph_relations(run_id, created_at) WHERE run_id IS NOT NULL",
        "CREATE INDEX graph_relations_source ON graph_relations(source_id)",
        "CREATE INDEX graph_relations_destination ON graph_relations(destination_id)",
    ],
    # documents: collections, documents and pages with their late-interaction token vectors
    # (float16 blobs, memlane.documents). A tenant column like the PostgreSQL tables, so one
    # file can hold several tenants' collections; doc_state counts writes per tenant, so a
    # process sees when another one changed the pages it holds in memory.
    [
        """CREATE TABLE doc_collections (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            name TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, name)
        )""",
        """CREATE TABLE doc_documents (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            collection_id TEXT NOT NULL,
            name TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}',
            source TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, collection_id, name)
        )""",
        """CREATE TABLE doc_pages (
            tenant TEXT NOT NULL,
            id TEXT NOT NULL,
            document_id TEXT NOT NULL,
            page_number INTEGER NOT NULL,
            text TEXT NOT NULL DEFAULT '',
            image BLOB,
            encoder TEXT NOT NULL,
            dims INTEGER NOT NULL,
            n_tokens INTEGER NOT NULL,
            vectors BLOB NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, document_id, page_number)
        )""",
        "CREATE TABLE doc_state (tenant TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID",
    ],
    # keyword scores: each memory's number of analysed text terms (keywords.analyze, scope tokens
    # not counted), BM25's document length; the scope's mean of it is avgdl (store/bm25.py).
    # ml_count_terms is registered on every connection; the store sets nterms on every write.
    # memories_lengths lets an unscoped search count N and avgdl from a narrow index instead of
    # the rows with their vectors (store/sqlite_keyword_stats.py); nterms first, so no other
    # query's plan takes it for a search.
    [
        "ALTER TABLE memories ADD COLUMN nterms INTEGER NOT NULL DEFAULT 0",
        "UPDATE memories SET nterms = ml_count_terms(text)",
        "CREATE INDEX memories_lengths ON memories(nterms, valid_to, user_id, agent_id, run_id)",
    ],
    # documents: each page's fast-path (MUVERA) encoding, float32 bytes, computed at upsert, with
    # the name of its parameters (PageIndex.encoding_id), so a process loading its page index
    # reads it instead of computing it. NULL for pages written before: encoded at load, written back.
    [
        "ALTER TABLE doc_pages ADD COLUMN fde BLOB",
        "ALTER TABLE doc_pages ADD COLUMN fde_config TEXT",
    ],
    # maintenance (seed 002): history records MERGE events. SQLite cannot change a CHECK constraint,
    # so the table is rebuilt (its rows, ids and indexes as they were).
    [
        _history_table("history_merge", ("ADD", "UPDATE", "DELETE", "MERGE"), "reason TEXT"),
        "INSERT INTO history_merge (id, memory_id, event, old_memory, new_memory, created_at, actor_id, role,"
        " user_id, agent_id, run_id, reason) SELECT id, memory_id, event, old_memory, new_memory, created_at,"
        " actor_id, role, user_id, agent_id, run_id, reason FROM history",
        "DROP TABLE history",
        "ALTER TABLE history_merge RENAME TO history",
        "CREATE INDEX history_memory ON history(memory_id, id)",
        "CREATE INDEX history_user ON history(user_id) WHERE user_id IS NOT NULL",
        "CREATE INDEX history_agent ON history(agent_id) WHERE agent_id IS NOT NULL",
        "CREATE INDEX history_run ON history(run_id) WHERE run_id IS NOT NULL",
    ],
    # documents: keyword search over page text, BM25 by the memories' rule (store/bm25.py): an FTS5
    # index of each page's analysed terms (ml_index_terms, the memories' analyser) kept by triggers
    # (a page's text never changes: an upsert deletes and inserts pages), and each page's number of
    # terms (BM25's length), written by the store with the page
    [
        "ALTER TABLE doc_pages ADD COLUMN nterms INTEGER NOT NULL DEFAULT 0",
        "UPDATE doc_pages SET nterms = ml_count_terms(text)",
        "CREATE VIRTUAL TABLE doc_pages_fts USING fts5(terms, tokenize = 'unicode61')",
        "INSERT INTO doc_pages_fts(rowid, terms) SELECT rowid, ml_index_terms(text, NULL, NULL, NULL) FROM doc_pages",
        """CREATE TRIGGER doc_pages_fts_insert AFTER INSERT ON doc_pages BEGIN
            INSERT INTO doc_pages_fts(rowid, terms) VALUES (new.rowid, ml_index_terms(new.text, NULL, NULL, NULL));
        END""",
        """CREATE TRIGGER doc_pages_fts_delete AFTER DELETE ON doc_pages BEGIN
            DELETE FROM doc_pages_fts WHERE rowid = old.rowid;
        END""",
    ],
    # keyword analyzer 2 (text/keywords.py): Chinese as rjieba's words instead of characters and
    # pairs, accents folded, words of every alphabet. Text that is all printable ASCII is analysed as
    # before; every other memory and page is indexed again.
    [
        "UPDATE memories_fts SET terms = (SELECT ml_index_terms(m.text, m.user_id, m.agent_id, m.run_id)"
        " FROM memories m WHERE m.rowid = memories_fts.rowid)"
        " WHERE rowid IN (SELECT rowid FROM memories WHERE text GLOB '*[^ -~]*')",
        "UPDATE memories SET nterms = ml_count_terms(text) WHERE text GLOB '*[^ -~]*'",
        "UPDATE doc_pages_fts SET terms = (SELECT ml_index_terms(p.text, NULL, NULL, NULL) FROM doc_pages p"
        " WHERE p.rowid = doc_pages_fts.rowid) WHERE rowid IN (SELECT rowid FROM doc_pages WHERE text GLOB '*[^ -~]*')",
        "UPDATE doc_pages SET nterms = ml_count_terms(text) WHERE text GLOB '*[^ -~]*'",
    ],
    # background formation (core/jobs.py, store/sql_jobs.py): the queue of add(async_mode=True) calls,
    # with their state, result and lease; and each provisional memory's event (what was sent, verbatim,
    # searchable until the event's formation replaces it)
    [
        """CREATE TABLE jobs (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            order_key TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
            request TEXT NOT NULL,
            result TEXT,
            error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            worker TEXT,
            lease_until REAL,
            not_before REAL,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT
        )""",
        "CREATE INDEX jobs_open ON jobs(order_key, seq) WHERE status IN ('PENDING', 'RUNNING')",
        "CREATE INDEX jobs_finished ON jobs(finished_at) WHERE finished_at IS NOT NULL",
        "ALTER TABLE memories ADD COLUMN event_id TEXT",
        "CREATE INDEX memories_event ON memories(event_id) WHERE event_id IS NOT NULL",
    ],
    # the add journal (store/sql_adds.py): each add's request, messages, idempotency key and outcome,
    # pending between the transaction keeping its messages and the one writing what they formed
    [
        """CREATE TABLE IF NOT EXISTS adds (
            id TEXT PRIMARY KEY,
            key TEXT UNIQUE,
            fingerprint TEXT NOT NULL,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            request TEXT NOT NULL,
            message_ids TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('pending', 'done')),
            outcome TEXT,
            owner TEXT,
            lease_until TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        ) WITHOUT ROWID""",
        "CREATE INDEX IF NOT EXISTS adds_pending ON adds(created_at) WHERE status = 'pending'",
        "CREATE INDEX IF NOT EXISTS adds_done ON adds(updated_at) WHERE status = 'done'",
    ],
    # a verbatim memory's context (what was said just before its message, ``retrieval.context_messages``),
    # kept so re-embedding, exports and moves keep it, and indexed with the memory's keywords
    [
        "ALTER TABLE memories ADD COLUMN context TEXT",
        "DROP TRIGGER memories_fts_update",
        """CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, context ON memories BEGIN
            UPDATE memories_fts SET terms = ml_index_terms(new.text, new.user_id, new.agent_id, new.run_id, new.context)
            WHERE rowid = new.rowid;
        END""",
    ],
    # who said a memory (its actor_id) joins its keyword terms, as it is in its embedded text: the memories
    # of a speaker are indexed again, their lengths counted again
    [
        "DROP TRIGGER memories_fts_update",
        """CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, context, actor_id ON memories BEGIN
            UPDATE memories_fts
            SET terms = ml_index_terms(new.text, new.user_id, new.agent_id, new.run_id, new.context, new.actor_id)
            WHERE rowid = new.rowid;
        END""",
        "UPDATE memories_fts SET terms = (SELECT ml_index_terms(m.text, m.user_id, m.agent_id, m.run_id, m.context,"
        " m.actor_id) FROM memories m WHERE m.rowid = memories_fts.rowid)"
        " WHERE rowid IN (SELECT rowid FROM memories WHERE actor_id IS NOT NULL)",
        "UPDATE memories SET nterms = ml_count_terms(text, context, actor_id) WHERE actor_id IS NOT NULL",
    ],
    # keyword analyzer 3 (text/keywords.py): the stems of each detected language beside the English ones,
    # Korean syllable pairs, Japanese kanji as characters and pairs, ß ł ı folded. Every memory's and
    # page's terms are computed again; those that changed (English text has not) are written, with
    # their lengths
    [
        "CREATE TEMP TABLE ml_terms_3 AS SELECT rowid AS id,"
        " ml_index_terms(text, user_id, agent_id, run_id, context, actor_id) AS terms FROM memories",
        "DELETE FROM ml_terms_3 WHERE terms IS (SELECT f.terms FROM memories_fts f WHERE f.rowid = ml_terms_3.id)",
        "UPDATE memories_fts SET terms = (SELECT t.terms FROM ml_terms_3 t WHERE t.id = memories_fts.rowid)"
        " WHERE rowid IN (SELECT id FROM ml_terms_3)",
        "UPDATE memories SET nterms = ml_count_terms(text, context, actor_id) WHERE rowid IN (SELECT id FROM ml_terms_3)",
        "DELETE FROM ml_terms_3",
        "INSERT INTO ml_terms_3 (id, terms) SELECT rowid, ml_index_terms(text, NULL, NULL, NULL) FROM doc_pages",
        "DELETE FROM ml_terms_3 WHERE terms IS (SELECT f.terms FROM doc_pages_fts f WHERE f.rowid = ml_terms_3.id)",
        "UPDATE doc_pages_fts SET terms = (SELECT t.terms FROM ml_terms_3 t WHERE t.id = doc_pages_fts.rowid)"
        " WHERE rowid IN (SELECT id FROM ml_terms_3)",
        "UPDATE doc_pages SET nterms = ml_count_terms(text) WHERE rowid IN (SELECT id FROM ml_terms_3)",
        "DROP TABLE ml_terms_3",
    ],
    # the project of the tenant (mem0's platform; core/project.py, core/webhooks.py, store/sql_project.py): its
    # settings, its webhooks (deliveries are jobs), the feedback given on memories, memory exports.
    # (each statement may run again: tests roll the version back past it)
    [
        "CREATE TABLE IF NOT EXISTS project_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL,"
        " updated_at TEXT NOT NULL) WITHOUT ROWID",
        """CREATE TABLE IF NOT EXISTS webhooks (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            url TEXT NOT NULL,
            event_types TEXT NOT NULL,
            secret TEXT NOT NULL,
            is_active INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS feedback (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            memory_id TEXT NOT NULL,
            feedback TEXT CHECK (feedback IN ('POSITIVE', 'NEGATIVE', 'VERY_NEGATIVE')),
            reason TEXT,
            user_id TEXT,
            agent_id TEXT,
            run_id TEXT,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS feedback_memory ON feedback(memory_id, seq)",
        """CREATE TABLE IF NOT EXISTS exports (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            schema TEXT NOT NULL,
            filters TEXT NOT NULL,
            instructions TEXT,
            status TEXT NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
            method TEXT NOT NULL,
            result TEXT,
            error TEXT,
            created_at TEXT NOT NULL
        )""",
    ],
    # documents: each collection's encoder (the name recorded with its pages), chosen on its first write
    # (memlane.documents.encoder_choice) and kept for every later write and query; NULL: not chosen yet
    # (an empty collection) or a collection written before, whose pages' encoder stands for it
    [
        "ALTER TABLE doc_collections ADD COLUMN encoder TEXT",
    ],
    # each scope id's write generation, raised by every change of a memory holding it (old and new values):
    # what a search kept of a scope (store/sqlite_scope_cache.py) outlives writes to other scopes
    [
        """CREATE TABLE IF NOT EXISTS scope_generations (
            col TEXT NOT NULL,
            value TEXT NOT NULL,
            generation INTEGER NOT NULL,
            PRIMARY KEY (col, value)
        ) WITHOUT ROWID""",
        *(f"""CREATE TRIGGER IF NOT EXISTS scope_generations_{event.lower()} AFTER {event} ON memories BEGIN
            {_bumps(rows)}
        END""" for event, rows in (("INSERT", ("new",)), ("UPDATE", ("old", "new")), ("DELETE", ("old",)))),
    ],
    # an async add queued by a version before embedding jobs (background/formation.py: ``EMBED``) gets its own,
    # so its provisional memories are found by meaning once a worker's quick lane embeds them, not only once
    # the add is formed (an add that has one, or holds no provisional memory, gets none)
    [
        """INSERT INTO jobs (id, kind, order_key, status, request, attempts, created_at)
        SELECT lower(hex(randomblob(16))), 'EMBED', 'embed:' || a.id, 'PENDING', json_object('event_id', a.id), 0,
               a.created_at
        FROM jobs a
        WHERE a.kind = 'ADD' AND a.status IN ('PENDING', 'RUNNING')
          AND NOT EXISTS (SELECT 1 FROM jobs e WHERE e.kind = 'EMBED' AND e.order_key = 'embed:' || a.id)
          AND EXISTS (SELECT 1 FROM memories m WHERE m.event_id = a.id)""",
    ],
]

VERSION = len(MIGRATIONS)


def migrate(con: sqlite3.Connection) -> None:
    """Bring the schema up to ``VERSION``. Call inside a write transaction."""
    current = con.execute("PRAGMA user_version").fetchone()[0]
    if current > VERSION:
        raise StoreError(
            f"this store was written by a newer memlane (schema {current}, this one reads up to {VERSION}); "
            "upgrade memlane"
        )
    for version in range(current, VERSION):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    if current != VERSION:
        con.execute(f"PRAGMA user_version = {VERSION}")
