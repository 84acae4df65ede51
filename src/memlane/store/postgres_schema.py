"""Versioned schema of the PostgreSQL store (``memlane_schema_version`` records each version applied).

Every table carries a ``tenant`` column that leads its primary key and indexes, and
every query names the tenant, so the tables can be distributed by tenant (e.g.
Citus) without cross-shard queries. Text columns that filters compare or sort
(ids, scope, timestamps) use the "C" collation: byte order, the order SQLite uses,
so ISO timestamps sort chronologically whatever the database's locale.

Migrations run in one transaction under an advisory lock, so several processes
starting at once apply them exactly once. Append new migrations; never edit old ones.
"""

from __future__ import annotations

from contextlib import nullcontext

import psycopg

from memlane.core.errors import StoreError
from memlane.text import keywords

#: The advisory lock key of schema changes (migrations and vector indexes).
LOCK_KEY = 0x6D656D6C616E65  # "memlane"

_C = 'COLLATE "C"'
#: the migration after which a memory's keyword terms hold who said it (``KEYWORD_SPEAKERS``)
_SPEAKER_TERMS = ("COMMENT ON COLUMN memlane_memories.terms IS 'analysed terms of the text, its context and its"
                  " speaker (actor_id), then scope tokens'")

#: a POSIX regular expression (case-insensitive) finding one of the words that make ASCII text English to the
#: keyword analyzer (``keywords.ENGLISH_WORDS``), standing as a word of its own
_ENGLISH_WORD = ("(^|[^[:alnum:]''’])(" + "|".join(sorted(keywords.ENGLISH_WORDS)).replace("'", "''")
                 + ")($|[^[:alnum:]''’])")


def analyzer_3_changes(column: str) -> str:
    """A condition true for every value of ``column`` whose keyword terms the analyzer 3 may have changed:
    text beyond printable ASCII, and ASCII text holding none of the words that make it English without
    the language detector (the rest was analysed alike; a NULL column is not)."""
    return f"({column} ~ '[^ -~]' OR {column} !~* '{_ENGLISH_WORD}')"


#: the migration of analyzer 3 (``KEYWORD_ANALYZER_3``)
_REINDEX_3 = f"UPDATE memlane_doc_pages SET terms = NULL, nterms = NULL WHERE {analyzer_3_changes('text')}"

MIGRATIONS: list[list[str]] = [
    # 1: memories (vector, keyword terms, metadata), history, raw messages, store metadata,
    # idempotency keys, token vectors, the side table of a resumable re-embedding
    [
        f"""CREATE TABLE memlane_meta (
            tenant text {_C} NOT NULL,
            key text {_C} NOT NULL,
            value text NOT NULL,
            PRIMARY KEY (tenant, key)
        )""",
        f"""CREATE TABLE memlane_memories (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            text text NOT NULL,
            hash text NOT NULL,
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            actor_id text {_C},
            role text {_C},
            metadata jsonb NOT NULL DEFAULT '{{}}',
            memory_type text {_C},
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            valid_to text {_C},
            invalid_reason text,
            superseded_by text {_C},
            source_message_ids text[] NOT NULL DEFAULT '{{}}',
            vector vector NOT NULL,
            dims integer GENERATED ALWAYS AS (vector_dims(vector)) STORED,
            terms tsvector NOT NULL,
            nterms integer NOT NULL,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE UNIQUE INDEX memlane_memories_seq ON memlane_memories (tenant, seq)",
        "CREATE INDEX memlane_memories_user ON memlane_memories (tenant, user_id, created_at) WHERE user_id IS NOT NULL",
        "CREATE INDEX memlane_memories_agent ON memlane_memories (tenant, agent_id, created_at) WHERE agent_id IS NOT NULL",
        "CREATE INDEX memlane_memories_run ON memlane_memories (tenant, run_id, created_at) WHERE run_id IS NOT NULL",
        "CREATE INDEX memlane_memories_created ON memlane_memories (tenant, created_at)",
        "CREATE INDEX memlane_memories_metadata ON memlane_memories USING gin (metadata)",
        "CREATE INDEX memlane_memories_terms ON memlane_memories USING gin (terms)",
        f"""CREATE TABLE memlane_history (
            tenant text {_C} NOT NULL,
            id bigint GENERATED ALWAYS AS IDENTITY,
            memory_id text {_C} NOT NULL,
            event text NOT NULL CHECK (event IN ('ADD', 'UPDATE', 'DELETE')),
            old_memory text,
            new_memory text,
            created_at text {_C} NOT NULL,
            actor_id text {_C},
            role text {_C},
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            reason text,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE INDEX memlane_history_memory ON memlane_history (tenant, memory_id, id)",
        "CREATE INDEX memlane_history_user ON memlane_history (tenant, user_id) WHERE user_id IS NOT NULL",
        "CREATE INDEX memlane_history_agent ON memlane_history (tenant, agent_id) WHERE agent_id IS NOT NULL",
        "CREATE INDEX memlane_history_run ON memlane_history (tenant, run_id) WHERE run_id IS NOT NULL",
        f"""CREATE TABLE memlane_messages (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            role text {_C} NOT NULL,
            name text {_C},
            content text NOT NULL,
            created_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE INDEX memlane_messages_seq ON memlane_messages (tenant, seq)",
        "CREATE INDEX memlane_messages_user ON memlane_messages (tenant, user_id, seq) WHERE user_id IS NOT NULL",
        "CREATE INDEX memlane_messages_agent ON memlane_messages (tenant, agent_id, seq) WHERE agent_id IS NOT NULL",
        "CREATE INDEX memlane_messages_run ON memlane_messages (tenant, run_id, seq) WHERE run_id IS NOT NULL",
        f"""CREATE TABLE memlane_applied_keys (
            tenant text {_C} NOT NULL,
            key text {_C} NOT NULL,
            created_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, key)
        )""",
        f"""CREATE TABLE memlane_memory_tokens (
            tenant text {_C} NOT NULL,
            memory_id text {_C} NOT NULL,
            count integer NOT NULL,
            vectors bytea NOT NULL,
            PRIMARY KEY (tenant, memory_id),
            FOREIGN KEY (tenant, memory_id) REFERENCES memlane_memories (tenant, id) ON DELETE CASCADE
        )""",
        f"""CREATE TABLE memlane_reembed (
            tenant text {_C} NOT NULL,
            memory_id text {_C} NOT NULL,
            hash text NOT NULL,
            embedder text NOT NULL,
            vector vector NOT NULL,
            PRIMARY KEY (tenant, memory_id)
        )""",
        # JSON containment as memlane defined it before the filters took jsonb's own @> / <@
        # (seed 003, literally; memlane.core.jsonmatch follows @>). No compiled filter calls it any more;
        # it stays so that schemas created at this version keep their history of migrations.
        """CREATE FUNCTION memlane_json_contains(a jsonb, b jsonb) RETURNS boolean
            LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
        DECLARE
            k text;
            v jsonb;
        BEGIN
            CASE jsonb_typeof(a)
            WHEN 'object' THEN
                IF jsonb_typeof(b) <> 'object' THEN
                    RETURN false;
                END IF;
                FOR k, v IN SELECT * FROM jsonb_each(b) LOOP
                    IF NOT (a ? k) OR NOT memlane_json_contains(a -> k, v) THEN
                        RETURN false;
                    END IF;
                END LOOP;
                RETURN true;
            WHEN 'array' THEN
                IF jsonb_typeof(b) = 'array' THEN
                    FOR v IN SELECT * FROM jsonb_array_elements(b) LOOP
                        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(a) AS x(e)
                                       WHERE memlane_json_contains(x.e, v)) THEN
                            RETURN false;
                        END IF;
                    END LOOP;
                    RETURN true;
                END IF;
                IF jsonb_typeof(b) = 'object' THEN
                    RETURN false;
                END IF;
                RETURN EXISTS (SELECT 1 FROM jsonb_array_elements(a) AS x(e) WHERE x.e = b);
            ELSE
                RETURN a = b;
            END CASE;
        END
        $$""",
    ],
    # graph memory: entities (with name vectors) and relations (with validity and provenance),
    # scoped like memories, led by the tenant, indexed for scoped lookups and by entity
    [
        f"""CREATE TABLE memlane_graph_entities (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            name text NOT NULL,
            key text NOT NULL,
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            vector bytea,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE INDEX memlane_graph_entities_user ON memlane_graph_entities (tenant, user_id) WHERE user_id IS NOT NULL",
        "CREATE INDEX memlane_graph_entities_agent ON memlane_graph_entities (tenant, agent_id) WHERE agent_id IS NOT NULL",
        "CREATE INDEX memlane_graph_entities_run ON memlane_graph_entities (tenant, run_id) WHERE run_id IS NOT NULL",
        f"""CREATE TABLE memlane_graph_relations (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            source_id text {_C} NOT NULL,
            relationship text {_C} NOT NULL,
            destination_id text {_C} NOT NULL,
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            valid_from text {_C} NOT NULL,
            valid_to text {_C},
            invalid_reason text,
            superseded_by text {_C},
            source_message_ids text[] NOT NULL DEFAULT '{{}}',
            vector bytea,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE INDEX memlane_graph_relations_user ON memlane_graph_relations (tenant, user_id, created_at)"
        " WHERE user_id IS NOT NULL",
        "CREATE INDEX memlane_graph_relations_agent ON memlane_graph_relations (tenant, agent_id, created_at)"
        " WHERE agent_id IS NOT NULL",
        "CREATE INDEX memlane_graph_relations_run ON memlane_graph_relations (tenant, run_id, created_at)"
        " WHERE run_id IS NOT NULL",
        "CREATE INDEX memlane_graph_relations_source ON memlane_graph_relations (tenant, source_id)",
        "CREATE INDEX memlane_graph_relations_destination ON memlane_graph_relations (tenant, destination_id)",
    ],
    # documents: collections, documents and pages with their late-interaction token vectors
    # (float16 in bytea, memlane.documents; MaxSim runs in the process over an in-memory index,
    # so a halfvec[] per page would only be converted back). doc_state counts writes per tenant,
    # so a process sees when another one changed the pages it holds in memory.
    [
        f"""CREATE TABLE memlane_doc_collections (
            tenant text {_C} NOT NULL,
            id text {_C} NOT NULL,
            name text {_C} NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, name)
        )""",
        f"""CREATE TABLE memlane_doc_documents (
            tenant text {_C} NOT NULL,
            id text {_C} NOT NULL,
            collection_id text {_C} NOT NULL,
            name text {_C} NOT NULL,
            metadata jsonb NOT NULL DEFAULT '{{}}',
            source text,
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, collection_id, name),
            FOREIGN KEY (tenant, collection_id) REFERENCES memlane_doc_collections (tenant, id) ON DELETE CASCADE
        )""",
        f"""CREATE TABLE memlane_doc_pages (
            tenant text {_C} NOT NULL,
            id text {_C} NOT NULL,
            document_id text {_C} NOT NULL,
            page_number integer NOT NULL,
            text text NOT NULL DEFAULT '',
            image bytea,
            encoder text NOT NULL,
            dims integer NOT NULL,
            n_tokens integer NOT NULL,
            vectors bytea NOT NULL,
            PRIMARY KEY (tenant, id),
            UNIQUE (tenant, document_id, page_number),
            FOREIGN KEY (tenant, document_id) REFERENCES memlane_doc_documents (tenant, id) ON DELETE CASCADE
        )""",
        "CREATE INDEX memlane_doc_documents_metadata ON memlane_doc_documents USING gin (metadata)",
        f"CREATE TABLE memlane_doc_state (tenant text {_C} PRIMARY KEY, version bigint NOT NULL)",
    ],
    # memory vectors stay in the row. pgvector's type defaults to EXTERNAL storage: once a row
    # passes ~2 kB (a 384-dim vector is 1.5 kB, so a memory of a few sentences does) the vector
    # moves to the TOAST table, and an exact scan of a scope then fetches every vector through
    # the TOAST index. MAIN compresses or moves the other columns (text, terms, metadata) first
    # and the vector only when the row cannot fit a page at all (e.g. 3,072 dims). Rows written
    # before this migration keep their layout until a rewrite (VACUUM FULL, CLUSTER).
    [
        "ALTER TABLE memlane_memories ALTER COLUMN vector SET STORAGE MAIN",
    ],
    # documents: each page's fast-path (MUVERA) encoding, float32 bytes, computed at upsert, with
    # the name of its parameters (PageIndex.encoding_id), so a process loading its page index
    # reads it instead of computing it. NULL for pages written before: encoded at load, written back.
    [
        "ALTER TABLE memlane_doc_pages ADD COLUMN fde bytea, ADD COLUMN fde_config text",
    ],
    # maintenance (seed 002): history records MERGE events
    [
        "ALTER TABLE memlane_history DROP CONSTRAINT memlane_history_event_check,"
        " ADD CONSTRAINT memlane_history_event_check CHECK (event IN ('ADD', 'UPDATE', 'DELETE', 'MERGE'))",
    ],
    # documents: keyword search over page text, BM25 by the memories' rule (store/bm25.py): each
    # page's analysed terms as a tsvector (the memories' analyser, written by the store) with a GIN
    # index, and its number of terms. NULL for pages written before: indexed when a document store
    # of the tenant opens (PostgresDocumentStore)
    [
        "ALTER TABLE memlane_doc_pages ADD COLUMN terms tsvector, ADD COLUMN nterms integer",
        "CREATE INDEX memlane_doc_pages_terms ON memlane_doc_pages USING gin (terms)",
        "CREATE INDEX memlane_doc_pages_unindexed ON memlane_doc_pages (tenant) WHERE nterms IS NULL",
    ],
    # keyword analyzer 2 (text/keywords.py): pages whose text is not all printable ASCII are indexed
    # again by the document store (nterms NULL); memories by ``PostgresDatabase`` right after this
    # migration (their terms are computed in Python: ``reindex_keywords``)
    [
        "UPDATE memlane_doc_pages SET terms = NULL, nterms = NULL WHERE text ~ '[^ -~]'",  # _REINDEX
    ],
    # past one machine (docs/deployment.md):
    # - background formation (core/jobs.py, store/sql_jobs.py): the queue of add(async_mode=True)
    #   calls, read with FOR UPDATE SKIP LOCKED, with state, result and lease; each provisional
    #   memory's event (what was sent, searchable until the event's formation replaces it);
    # - API keys in the database, so every server refuses a revoked key (hosting/keys.py);
    # - the tenant directory: tenants placed in another database (hosting/placement.py), and the
    #   change log of a tenant being moved there (store/tenant_move.py), filled by a trigger
    #   that ``memlane tenants move`` puts on the tenant tables while it runs
    # (each statement may run again: a test rolls the version back to before the keyword analyzer 2)
    [
        f"""CREATE TABLE IF NOT EXISTS memlane_jobs (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            kind text NOT NULL,
            order_key text {_C} NOT NULL,
            status text NOT NULL CHECK (status IN ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')),
            request jsonb NOT NULL,
            result jsonb,
            error text,
            attempts integer NOT NULL DEFAULT 0,
            worker text,
            lease_until double precision,
            not_before double precision,
            created_at text {_C} NOT NULL,
            started_at text {_C},
            finished_at text {_C},
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE INDEX IF NOT EXISTS memlane_jobs_queue ON memlane_jobs (seq) WHERE status IN ('PENDING', 'RUNNING')",
        "CREATE INDEX IF NOT EXISTS memlane_jobs_open ON memlane_jobs (tenant, order_key, seq) WHERE status IN ('PENDING', 'RUNNING')",
        "CREATE INDEX IF NOT EXISTS memlane_jobs_finished ON memlane_jobs (finished_at) WHERE finished_at IS NOT NULL",
        f"ALTER TABLE memlane_memories ADD COLUMN IF NOT EXISTS event_id text {_C}",
        "CREATE INDEX IF NOT EXISTS memlane_memories_event ON memlane_memories (tenant, event_id) WHERE event_id IS NOT NULL",
        f"""CREATE TABLE IF NOT EXISTS memlane_api_keys (
            id text {_C} PRIMARY KEY,
            prefix text {_C} NOT NULL,
            hash text NOT NULL UNIQUE,
            tenant text {_C} NOT NULL,
            admin boolean NOT NULL DEFAULT false,
            created_at text {_C} NOT NULL,
            revoked_at text {_C}
        )""",
        "CREATE INDEX IF NOT EXISTS memlane_api_keys_prefix ON memlane_api_keys (prefix)",
        f"""CREATE TABLE IF NOT EXISTS memlane_tenant_placement (
            tenant text {_C} PRIMARY KEY,
            location text NOT NULL,
            state text NOT NULL CHECK (state IN ('active', 'switching')),
            updated_at text {_C} NOT NULL
        )""",
        f"""CREATE TABLE IF NOT EXISTS memlane_move_log (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            tenant text {_C} NOT NULL,
            tbl text NOT NULL,
            key jsonb NOT NULL
        )""",
        # AFTER each row change of a tenant table, while a move of that tenant runs (its 'moving'
        # row in memlane_meta): the changed row's key (the trigger's arguments name its columns)
        """CREATE OR REPLACE FUNCTION memlane_log_move() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            t text;
            r jsonb;
            k jsonb := '{}';
            c text;
        BEGIN
            IF TG_OP = 'DELETE' THEN
                t := OLD.tenant;
            ELSE
                t := NEW.tenant;
            END IF;
            IF NOT EXISTS (SELECT 1 FROM memlane_meta WHERE tenant = t AND key = 'moving') THEN
                RETURN NULL;
            END IF;
            IF TG_OP = 'DELETE' THEN
                r := to_jsonb(OLD);
            ELSE
                r := to_jsonb(NEW);
            END IF;
            FOREACH c IN ARRAY TG_ARGV LOOP
                k := k || jsonb_build_object(c, r->c);
            END LOOP;
            INSERT INTO memlane_move_log (tenant, tbl, key) VALUES (t, TG_TABLE_NAME, k);
            RETURN NULL;
        END
        $$""",
    ],
    # the add journal (store/sql_adds.py): each add's request, messages, idempotency key and outcome,
    # pending between the transaction keeping its messages and the one writing what they formed
    [
        f"""CREATE TABLE IF NOT EXISTS memlane_adds (
            tenant text {_C} NOT NULL,
            id text {_C} NOT NULL,
            key text {_C},
            fingerprint text NOT NULL,
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            request jsonb NOT NULL,
            message_ids text[] NOT NULL,
            status text NOT NULL CHECK (status IN ('pending', 'done')),
            outcome jsonb,
            owner text,
            lease_until text {_C},
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE UNIQUE INDEX IF NOT EXISTS memlane_adds_key ON memlane_adds (tenant, key) WHERE key IS NOT NULL",
        "CREATE INDEX IF NOT EXISTS memlane_adds_pending ON memlane_adds (tenant, created_at) WHERE status = 'pending'",
        "CREATE INDEX IF NOT EXISTS memlane_adds_done ON memlane_adds (tenant, updated_at) WHERE status = 'done'",
    ],
    # a verbatim memory's context (what was said just before its message), kept with it and in its terms
    [
        "ALTER TABLE memlane_memories ADD COLUMN IF NOT EXISTS context text",
    ],
    # who said a memory (its actor_id) joins its keyword terms, as it is in its embedded text; the terms of
    # the memories with a speaker are computed again in Python (``reindex_keywords``)
    [
        _SPEAKER_TERMS,
    ],
    # keyword analyzer 3 (text/keywords.py): the stems of each detected language beside the English ones,
    # Korean syllable pairs, Japanese kanji as characters and pairs, ß ł ı folded. Pages whose terms may
    # change are indexed again by the document store (nterms NULL); memories by ``PostgresDatabase``
    # right after this migration (``reindex_keywords``)
    [
        _REINDEX_3,
    ],
    # the project of each tenant (mem0's platform; core/project.py, core/webhooks.py, store/sql_project.py): its
    # settings, its webhooks (deliveries are jobs), the feedback given on memories, memory exports
    [
        f"""CREATE TABLE IF NOT EXISTS memlane_project_settings (
            tenant text {_C} NOT NULL,
            key text {_C} NOT NULL,
            value jsonb NOT NULL,
            updated_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, key)
        )""",
        f"""CREATE TABLE IF NOT EXISTS memlane_webhooks (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            name text NOT NULL,
            url text NOT NULL,
            event_types text[] NOT NULL,
            secret text NOT NULL,
            is_active boolean NOT NULL DEFAULT true,
            created_at text {_C} NOT NULL,
            updated_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id)
        )""",
        f"""CREATE TABLE IF NOT EXISTS memlane_feedback (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            memory_id text {_C} NOT NULL,
            feedback text CHECK (feedback IN ('POSITIVE', 'NEGATIVE', 'VERY_NEGATIVE')),
            reason text,
            user_id text {_C},
            agent_id text {_C},
            run_id text {_C},
            created_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id)
        )""",
        "CREATE INDEX IF NOT EXISTS memlane_feedback_memory ON memlane_feedback (tenant, memory_id, seq)",
        f"""CREATE TABLE IF NOT EXISTS memlane_exports (
            tenant text {_C} NOT NULL,
            seq bigint GENERATED ALWAYS AS IDENTITY,
            id text {_C} NOT NULL,
            schema jsonb NOT NULL,
            filters jsonb NOT NULL,
            instructions text,
            status text NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
            method text NOT NULL,
            result jsonb,
            error text,
            created_at text {_C} NOT NULL,
            PRIMARY KEY (tenant, id)
        )""",
    ],
    # API keys trusted with less (hosting/keys.py): read-only, limited to some users (a JSON list; NULL: every
    # user), and when each was last used; the keys of before keep full access (each statement may run again)
    [
        "ALTER TABLE memlane_api_keys ADD COLUMN IF NOT EXISTS read_only boolean NOT NULL DEFAULT false",
        "ALTER TABLE memlane_api_keys ADD COLUMN IF NOT EXISTS users text",
        f"ALTER TABLE memlane_api_keys ADD COLUMN IF NOT EXISTS last_used_at text {_C}",
    ],
    # documents: each collection's encoder (the name recorded with its pages), chosen on its first write
    # (memlane.documents.encoder_choice) and kept for every later write and query; NULL: not chosen yet
    # (an empty collection) or a collection written before, whose pages' encoder stands for it
    [
        "ALTER TABLE memlane_doc_collections ADD COLUMN IF NOT EXISTS encoder text",
    ],
    # an async add's provisional memories are stored without a vector (NULL) and answered at once: found by
    # their keywords, by meaning once a worker has embedded them (background/formation.py)
    [
        "ALTER TABLE memlane_memories ALTER COLUMN vector DROP NOT NULL",
    ],
    # an async add queued by a version before embedding jobs (background/formation.py: ``EMBED``) gets its own,
    # so its provisional memories are found by meaning once a worker's quick lane embeds them, not only once
    # the add is formed (an add that has one, or holds no provisional memory, gets none; may run again)
    [
        """INSERT INTO memlane_jobs (tenant, id, kind, order_key, status, request, attempts, created_at)
        SELECT a.tenant, gen_random_uuid()::text, 'EMBED', 'embed:' || a.id, 'PENDING',
               jsonb_build_object('event_id', a.id), 0, a.created_at
        FROM memlane_jobs a
        WHERE a.kind = 'ADD' AND a.status IN ('PENDING', 'RUNNING')
          AND NOT EXISTS (SELECT 1 FROM memlane_jobs e
                          WHERE e.tenant = a.tenant AND e.kind = 'EMBED' AND e.order_key = 'embed:' || a.id)
          AND EXISTS (SELECT 1 FROM memlane_memories m WHERE m.tenant = a.tenant AND m.event_id = a.id)""",
    ],
]

_REINDEX = "UPDATE memlane_doc_pages SET terms = NULL, nterms = NULL WHERE text ~ '[^ -~]'"
#: the schema versions whose migrations changed what a memory's keyword terms hold (the analyzer, 2 and 3; its
#: speaker): a database brought past one has those memories' terms computed again (``postgres.upgrade_schema``)
KEYWORD_ANALYZER_2 = 1 + next(i for i, steps in enumerate(MIGRATIONS) if _REINDEX in steps)
KEYWORD_SPEAKERS = 1 + next(i for i, steps in enumerate(MIGRATIONS) if _SPEAKER_TERMS in steps)
KEYWORD_ANALYZER_3 = 1 + next(i for i, steps in enumerate(MIGRATIONS) if _REINDEX_3 in steps)

VERSION = len(MIGRATIONS)


def exists(con: psycopg.Connection, name: str) -> bool:
    """Whether the table or index ``name`` exists in the schema memlane works in (the first of the
    search path), not merely in another schema the search path names (``public``, where pgvector
    lives, may hold another store's tables)."""
    return con.execute("SELECT to_regclass(format('%%I.%%I', current_schema(), %s::text)) IS NOT NULL",
                       (name,)).fetchone()[0]


def current_version(con: psycopg.Connection) -> int:
    """The schema version of the database (0: memlane has never run there)."""
    if not exists(con, "memlane_schema_version"):
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM memlane_schema_version").fetchone()[0]


def migrate(con: psycopg.Connection, upto: int | None = None, *, transaction: bool = True) -> tuple[int, int]:
    """Bring the schema up to ``upto`` (default ``VERSION``); returns (version before, version after).

    Runs in its own transaction under the advisory lock (``con`` in autocommit mode), or in the
    caller's (``transaction=False``: ``memlane restore`` loads a backup at its version, then migrates)."""
    target = VERSION if upto is None else upto
    with con.transaction() if transaction else nullcontext():
        con.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        con.execute(
            "CREATE TABLE IF NOT EXISTS memlane_schema_version ("
            " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        before = current_version(con)
        if before > VERSION:
            raise StoreError(
                f"this store was written by a newer memlane (schema {before}, this one reads up to {VERSION}); "
                "upgrade memlane"
            )
        for version in range(before, target):
            for statement in MIGRATIONS[version]:
                con.execute(statement)
            con.execute("INSERT INTO memlane_schema_version(version) VALUES (%s)", (version + 1,))
    return before, max(before, target)


def index_type(dims: int) -> str | None:
    """The pgvector type an HNSW index of ``dims``-dimensional vectors can use (None: too many
    dimensions to index; searches are then exact)."""
    if dims <= 2000:
        return "vector"
    if dims <= 4000:
        return "halfvec"
    return None


def index_name(dims: int) -> str:
    return f"memlane_memories_hnsw_{dims}"


def ensure_vector_index(con: psycopg.Connection, dims: int, *, m: int, ef_construction: int,
                        maintenance_work_mem: str | None = None) -> bool:
    """Create the HNSW (cosine) index over the ``dims``-dimensional vectors if missing.

    Vectors of one database may differ in dimensions (tenants with different embedders),
    so the index is an expression index over a cast, partial on ``dims``; searches repeat
    that expression and predicate. ``maintenance_work_mem`` (e.g. '1GB'): memory for the build, which
    is several times faster when the graph fits in it. Returns True when it created the index."""
    kind = index_type(int(dims))
    if kind is None:
        return False
    name = index_name(int(dims))
    with con.transaction():
        con.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        if exists(con, name):
            return False
        if maintenance_work_mem:
            con.execute("SELECT set_config('maintenance_work_mem', %s, true)", (maintenance_work_mem,))
        # dims, m and ef_construction are integers validated by the caller; DDL takes no parameters
        con.execute(
            f"CREATE INDEX {name} ON memlane_memories USING hnsw ((vector::{kind}({int(dims)})) {kind}_cosine_ops)"
            f" WITH (m = {int(m)}, ef_construction = {int(ef_construction)}) WHERE dims = {int(dims)}"
        )
    return True
