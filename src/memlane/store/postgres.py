"""The PostgreSQL store: pgvector for vectors, jsonb for metadata, tsvector for keywords.

- ``PostgresDatabase`` is one connection pool and the schema; ``PostgresStore`` is one
  tenant's view of it. Every statement names the tenant, so tenants sharing the
  tables never see each other's rows (the server opens one store per tenant over one pool).
- Every public write is one transaction with its history. Updates, invalidations and
  deletions lock their rows (``SELECT ... FOR UPDATE``), so concurrent writers of one
  memory from any number of processes serialise instead of losing a write.
- A dropped connection (server restart, failover) is retried once, except when it broke
  during COMMIT (the outcome is unknown then, and the error says so); then the call fails
  with ``StoreError``. A database that no longer answers at all is ``StoreUnavailableError``,
  at once and for every call until it is back (``store/postgres_pool.py``).
- Search chooses per query: when the rows the scope ids (or the tenant) admit are few
  (``exact_search_limit``), it scores all of them exactly; otherwise it asks the HNSW
  index with pgvector's iterative scans, which keep scanning until enough rows pass the
  filter, and falls back to the exact scan if the index still came back short.
- Keyword search ranks with BM25 over terms from ``memlane.text.keywords`` (the embedded
  store's analyzer), stored as a tsvector (a GIN index finds the rows holding a term);
  the statistics (N, average length, document frequencies) are those of the searched scope,
  and the scores are ``store/bm25.py``'s formula (the one the SQLite store uses), computed in SQL
  from its own constants (``bm25.sql_idf``, ``bm25.sql_term``): only the best matches come back.
"""

from __future__ import annotations

import json
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
import psycopg_pool
from psycopg import sql as pgsql
from psycopg.adapt import Dumper
from psycopg.pq import Format
from psycopg.conninfo import conninfo_to_dict
from psycopg.types.json import Jsonb

from memlane.text import keywords
from memlane.core.errors import ConfigError, MaintenanceBusyError, StorageFullError, StoreError, StoreUnavailableError
from memlane.core.filters import INTERNAL_MEMORY_COLUMNS, MEMORY_COLUMNS, MESSAGE_COLUMNS, SCOPE_COLUMNS, Node, scope_ids
from memlane.core.models import MemoryRecord, MessageRecord
from memlane.store import bm25
from memlane.store import postgres_schema as schema
from memlane.store.base import SearchReads
from memlane.store.placement import MOVE_LOCK, Placement, TenantMovedError
from memlane.store.postgres_filters import NOW_SQL, PostgresFilterCompiler, casefold_sql
from memlane.store.postgres_pool import GuardedPool, Reachability
from memlane.store.sql import RECORD_COLUMNS, RECORD_WIDTH, SqlMemoryStore, added_history, unique
from memlane.store.sql_dialect import T

#: Binary COPY: pgvector's binary dumper sends a vector as 4 bytes per float, where its text
#: form cost ~400 us of Python per 384-dim vector (85% of a bulk insert; benchmarks/RESULTS.md).
_MEMORY_COPY = (
    "COPY memlane_memories (tenant, id, text, hash, created_at, updated_at, user_id, agent_id, run_id, actor_id,"
    " role, metadata, memory_type, source_message_ids, valid_to, invalid_reason, superseded_by, event_id, vector, terms,"
    " nterms, context)"
    " FROM STDIN (FORMAT BINARY)"
)
_MEMORY_TYPES = ["text"] * 11 + ["jsonb", "text", "text[]", "text", "text", "text", "text", "vector", "tsvector", "int4", "text"]
_HISTORY_COPY = (
    "COPY memlane_history (tenant, memory_id, event, old_memory, new_memory, created_at, actor_id, role, user_id,"
    " agent_id, run_id, reason) FROM STDIN (FORMAT BINARY)"
)
_HISTORY_TYPES = ["text"] * 12
_MESSAGE_COPY = (
    "COPY memlane_messages (tenant, id, role, content, created_at, name, user_id, agent_id, run_id)"
    " FROM STDIN (FORMAT BINARY)"
)
_MESSAGE_TYPES = ["text"] * 9
#: tsvector positions stop at 16383, a lexeme keeps at most 256 of them and has at most 2047 bytes
_MAX_POSITION = 16383
_MAX_POSITIONS = 256
_MAX_LEXEME = 2047
#: ``json.dumps(..., ensure_ascii=False)`` without building an encoder per call
_metadata_json = json.JSONEncoder(ensure_ascii=False).encode


def lexeme(term: str) -> str:
    """A term as a tsquery operand."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def _terms(text: str, user_id: str | None, agent_id: str | None, run_id: str | None,
           tenant_token: str, context: str | None = None, actor: str | None = None) -> tuple[Tsvector, int]:
    """The tsvector of a memory, in PostgreSQL's binary wire format (what ``tsvectorsend`` writes;
    ``TsvectorDumper`` sends it as is): its analyzed terms with their positions (term frequency
    matters to BM25), then its scope tokens, so a scoped keyword search intersects posting lists.
    Returns (tsvector, number of terms: the text's, its ``context``'s and its speaker's,
    ``keywords.memory_terms``)."""
    positions: dict[str, list[int]] = {}
    terms = keywords.memory_terms(text, context, actor)
    for i, term in enumerate(terms, 1):
        positions.setdefault(term, []).append(i)
    last = min(len(terms) + 1, _MAX_POSITION)
    for key, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
        if value:
            positions.setdefault(keywords.scope_token(key, value), []).append(last)
    positions.setdefault(tenant_token, []).append(last)
    parts = []
    for term, where in positions.items():
        lexeme = term.encode()
        if len(lexeme) > _MAX_LEXEME:  # PostgreSQL refuses longer lexemes; such a "word" is no search term
            continue
        if len(where) > _MAX_POSITIONS or where[-1] > _MAX_POSITION:
            # as PostgreSQL's text input does: positions stop at 16383, and at 256 per lexeme
            where = list(dict.fromkeys(min(p, _MAX_POSITION) for p in where))[:_MAX_POSITIONS]
        parts.append(lexeme + _NUL + (_one(1, where[0]) if len(where) == 1 else _uint16s(len(where), *where)))
    return Tsvector(_int32(len(parts)) + b"".join(parts)), len(terms)


def page_terms(text: str, tenant: str) -> tuple[Tsvector, int]:
    """A document page's tsvector (its analysed terms and the tenant's token) and number of terms."""
    return _terms(text, None, None, None, keywords.scope_token("tenant", tenant))


_NUL = b"\0"
_int32 = struct.Struct("!i").pack
_one = struct.Struct("!HH").pack  # one position: most terms of a short memory


def _uint16s(*values: int) -> bytes:
    return struct.pack(f"!{len(values)}H", *values)


class Tsvector(bytes):
    """A tsvector in binary wire format (``_terms``)."""


class TsvectorDumper(Dumper):
    """Sends a ``Tsvector`` unchanged, as a tsvector (registered on every pooled connection)."""

    format = Format.BINARY
    oid = 3614  # tsvector, a built-in type

    def dump(self, obj: bytes) -> bytes:
        return obj


def copy_memories(cur: psycopg.Cursor, tenant: str, records: Sequence[MemoryRecord]) -> None:
    """COPY memories (vectors, keyword terms, token vectors) into ``tenant``: the one way rows enter
    ``memlane_memories``, for inserts and for ``memlane migrate``. No history is written here."""
    token = keywords.scope_token("tenant", tenant)
    json_text = _metadata_json
    with cur.copy(_MEMORY_COPY) as copy:
        copy.set_types(_MEMORY_TYPES)
        for r in records:
            terms, nterms = _terms(r.text, r.user_id, r.agent_id, r.run_id, token, r.context, r.actor_id)
            copy.write_row((
                tenant, r.id, r.text, r.hash, r.created_at, r.updated_at, r.user_id, r.agent_id, r.run_id,
                r.actor_id, r.role, Jsonb(r.metadata, json_text), r.memory_type, unique(r.source_message_ids), r.valid_to,
                r.invalid_reason, r.superseded_by, r.event_id, r.vector, terms, nterms, r.context))
    store_tokens(cur, tenant, [(r.id, r.token_vectors) for r in records if r.token_vectors is not None])


def copy_history(cur: psycopg.Cursor, tenant: str, rows: Iterable[Sequence[Any]]) -> None:
    """COPY history events: (memory_id, event, old_memory, new_memory, created_at, actor_id, role,
    user_id, agent_id, run_id, reason) rows."""
    with cur.copy(_HISTORY_COPY) as copy:
        copy.set_types(_HISTORY_TYPES)
        for row in rows:
            copy.write_row((tenant, *row))


def copy_messages(cur: psycopg.Cursor, tenant: str, messages: Iterable[MessageRecord]) -> None:
    with cur.copy(_MESSAGE_COPY) as copy:
        copy.set_types(_MESSAGE_TYPES)
        for m in messages:
            copy.write_row((tenant, m.id, m.role, m.content, m.created_at, m.name, m.user_id, m.agent_id, m.run_id))


def store_tokens(cur: psycopg.Cursor, tenant: str, items: list[tuple[str, np.ndarray]]) -> None:
    """Late-interaction token vectors of memories (float16, replacing any stored)."""
    if items:
        cur.executemany(
            "INSERT INTO memlane_memory_tokens (tenant, memory_id, count, vectors) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (tenant, memory_id) DO UPDATE SET count = excluded.count, vectors = excluded.vectors",
            [(tenant, memory_id, len(t), np.asarray(t, dtype="<f2").tobytes()) for memory_id, t in items])


def redact(dsn: str) -> str:
    """The DSN without its password (for messages and ``info``)."""
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<unparseable DSN>"
    params.pop("password", None)
    host = params.get("host") or "localhost"
    user = params.get("user") or ""
    port = f":{params['port']}" if params.get("port") else ""
    return f"postgresql://{user + '@' if user else ''}{host}{port}/{params.get('dbname') or ''}"


#: the first key of the advisory locks of maintenance (cleanup, merge) per tenant and scope
MAINTENANCE_LOCK = 0x6D6C6D61  # "mlma"

#: seconds a scope's size class (exact scan or the HNSW index) is reused without counting again
SIZE_CLASS_SECONDS = 30.0
#: scopes whose class is remembered (the table is emptied when full)
SIZE_CLASS_ENTRIES = 10_000

#: The keyword search's statement: the rows holding a query term (``%(expression)s``: narrowed in the GIN
#: index by the scope's tokens), each with its query terms and their counts (its tsvector cut down to the
#: query's lexemes before unnest); the scope's statistics (an uncorrelated aggregate, computed once, in the
#: statement's snapshot: N counts every match, so ``bm25.rank``'s raise of N to the matches is never needed); each
#: term's document frequency among the matches; and the BM25 of ``store/bm25.py`` (its SQL form, the same
#: constants) summed per memory, the best ``%(limit)s`` (score descending, seq ascending, as ``bm25.rank``)
#: with ``whole``, the query's ideal score (``bm25.ideal``), their cosines and records.
_KEYWORD_SQL = (
    "WITH hits AS MATERIALIZED (SELECT m.seq, m.nterms::float8 AS length, u.lexeme, cardinality(u.positions)::float8 AS tf"
    " FROM memlane_memories m CROSS JOIN LATERAL unnest(ts_delete(m.terms,"
    " tsvector_to_array(ts_delete(m.terms, %(terms)s::text[])))) AS u"
    " WHERE m.tenant = %(tenant)s AND m.terms @@ %(expression)s::tsquery AND {sql}),"
    " stats AS (SELECT s.n, CASE WHEN s.avgdl > 0 THEN s.avgdl ELSE 1.0 END AS avgdl"
    " FROM (SELECT count(*)::float8 AS n, coalesce(avg(m.nterms), 0)::float8 AS avgdl"
    " FROM memlane_memories m WHERE m.tenant = %(tenant)s AND {sql}) AS s),"
    " df AS (SELECT lexeme, count(*)::float8 AS df FROM hits GROUP BY lexeme),"
    " idf AS (SELECT df.lexeme, df.df, " + bm25.sql_idf("stats.n", "df.df") + " AS idf FROM df CROSS JOIN stats),"
    " best AS (SELECT h.seq, sum(" + bm25.sql_term("idf.idf", "h.tf", "h.length", "stats.avgdl") + ") AS score"
    " FROM hits h JOIN idf ON idf.lexeme = h.lexeme CROSS JOIN stats"
    " GROUP BY h.seq ORDER BY score DESC, h.seq LIMIT %(limit)s),"
    " whole AS (SELECT sum(" + bm25.sql_idf("stats.n", "coalesce(idf.df, 0)") + ") AS whole"
    " FROM unnest(%(terms)s::text[]) AS t(term) LEFT JOIN idf ON idf.lexeme = t.term CROSS JOIN stats)"
    " SELECT b.seq, b.score, whole.whole, 1 - (m.vector <=> %(q)s), {records}"
    " FROM best b JOIN memlane_memories m ON m.tenant = %(tenant)s AND m.seq = b.seq CROSS JOIN whole ORDER BY b.score DESC, b.seq"
)

#: ``focused_search``'s statement over a scope scored exactly: each admitted memory's distance once, the best
#: ``%(limit)s`` of them and of those the focus admits (both ordered as ``search``: distance, then seq; each a
#: top-N sort), and the records of those in either (seq, top, in focus, cosine, record), best first.
_FOCUSED_SQL = (
    "WITH near AS MATERIALIZED (SELECT m.seq, m.vector <=> %(q)s AS d, coalesce({focus}, false) AS focus"
    " FROM memlane_memories m WHERE m.tenant = %(tenant)s AND {sql} AND {has_vector}),"
    " best AS ((SELECT seq, d, true AS top, false AS focused FROM near ORDER BY d, seq LIMIT %(limit)s)"
    " UNION ALL (SELECT seq, d, false, true FROM near WHERE focus ORDER BY d, seq LIMIT %(limit)s)),"
    " chosen AS (SELECT seq, min(d) AS d, bool_or(top) AS top, bool_or(focused) AS focused FROM best GROUP BY seq)"
    " SELECT k.seq, k.top, k.focused, 1 - k.d, {records}"
    " FROM chosen k JOIN memlane_memories m ON m.tenant = %(tenant)s AND m.seq = k.seq ORDER BY k.d, k.seq"
)

#: the memories whose keyword terms a migration past each version changed: the analyzer's second version
#: (text not all printable ASCII), who said a memory joining its terms (memories with a speaker), the
#: analyzer's third version (a text, context or speaker beyond ASCII or not English by its own words)
_REINDEXED = ((schema.KEYWORD_ANALYZER_2, "text ~ '[^ -~]' OR context ~ '[^ -~]'"),
              (schema.KEYWORD_SPEAKERS, "actor_id IS NOT NULL"),
              (schema.KEYWORD_ANALYZER_3, " OR ".join(schema.analyzer_3_changes(c) for c in ("text", "context", "actor_id"))))


def upgrade_schema(con: psycopg.Connection, *, transaction: bool = True) -> tuple[int, int]:
    """Apply the missing migrations (``postgres_schema.migrate``), then compute again the keyword terms
    of the memories whose terms the migrations applied changed (``reindex_keywords``); (version
    before, version after). Every way a database is upgraded (opening it, ``memlane db upgrade``, a
    restore) comes here."""
    before, after = schema.migrate(con, transaction=transaction)
    changed = [condition for version, condition in _REINDEXED if before < version <= after]
    if before and changed:  # a new database (version 0) has no memories to index again
        reindex_keywords(con, " OR ".join(f"({c})" for c in changed))
    return before, after


def reindex_keywords(con: psycopg.Connection, condition: str, batch: int = 2000) -> int:
    """Compute the keyword terms of every memory matching ``condition`` (SQL over ``memlane_memories``)
    again; returns how many. Each batch is its own transaction (a savepoint inside a caller's)."""
    con.adapters.register_dumper(Tsvector, TsvectorDumper)
    done, last = 0, 0
    while True:
        rows = con.execute("SELECT seq, tenant, text, user_id, agent_id, run_id, context, actor_id"
                           f" FROM memlane_memories WHERE seq > %s AND ({condition}) ORDER BY seq LIMIT %s",
                           (last, batch)).fetchall()
        if not rows:
            return done
        with con.transaction():
            cur = con.cursor()
            cur.executemany("UPDATE memlane_memories SET terms = %s, nterms = %s WHERE seq = %s",
                            [(*_terms(text, user, agent, run, keywords.scope_token("tenant", tenant), context,
                                      actor), seq)
                             for seq, tenant, text, user, agent, run, context, actor in rows])
        done += len(rows)
        last = rows[-1][0]


#: libpq's TCP settings for a network that silently drops packets (a black-holed route, a dead peer): a
#: connection waiting on it is declared dead within about half a minute — keepalive probes after 10 s idle,
#: 3 unanswered 5 s apart; data unacknowledged for 30 s — instead of the operating system's ~15 minutes.
#: Unix-socket connections (the bundled PostgreSQL) ignore them.
TCP_LIVENESS = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3,
                "tcp_user_timeout": 30_000}


def tcp_liveness(dsn: str) -> dict[str, int]:
    """``TCP_LIVENESS`` but for what the DSN sets itself (the operator's values win)."""
    given = conninfo_to_dict(dsn)
    return {name: value for name, value in TCP_LIVENESS.items() if name not in given}


class PostgresDatabase:
    """A connection pool to one database (and schema), with the memlane schema brought up to date.

    ``migrate=False`` refuses to start on an older schema instead of upgrading it (``memlane db upgrade``);
    ``check=False`` leaves the schema version alone (the ``memlane db`` commands)."""

    def __init__(self, dsn: str, *, schema_name: str = "public", min_size: int = 1, max_size: int = 10,
                 connect_timeout: float = 10.0, migrate: bool = True, check: bool = True, hnsw_m: int = 16,
                 hnsw_ef_construction: int = 128, ef_search: int = 100, max_scan_tuples: int = 20_000,
                 vector_index: bool = True, synchronous_commit: str | None = None):
        self.dsn = dsn
        #: PostgreSQL's synchronous_commit for the pool's sessions (None: the server's setting)
        self.synchronous_commit = synchronous_commit
        self.location = redact(dsn)
        self.schema = schema_name
        self.hnsw_m, self.hnsw_ef_construction = hnsw_m, hnsw_ef_construction
        #: False: no HNSW index is made, searches are exact (every insert is then a plain row insert)
        self.vector_index = vector_index
        self.ef_search, self.max_scan_tuples = ef_search, max_scan_tuples
        self.connect_timeout = connect_timeout
        with self._connect() as con:
            self.server_version = con.info.server_version
            self._prepare(con)
            version = schema.current_version(con) if check else schema.VERSION
            if version != schema.VERSION:
                if not migrate and version < schema.VERSION:
                    raise StoreError(
                        f"the memlane schema in {self.location} is at version {version}, this memlane needs "
                        f"{schema.VERSION}; run `memlane db upgrade` (or enable automatic migrations)"
                    )
                upgrade_schema(con)
        self.casefold = casefold_sql(self.server_version)
        # a pool that fails at once while the database is away, and refills as soon as it is back
        self.pool = GuardedPool(
            dsn, location=self.location, min_size=min_size, max_size=max_size, timeout=connect_timeout, open=False,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout)), **tcp_liveness(dsn)},
            configure=self._configure,
            name="memlane",
        )
        try:
            self.pool.open(wait=True, timeout=connect_timeout)
        except psycopg_pool.PoolTimeout:
            self.pool.close()
            raise StoreError(f"could not connect to PostgreSQL at {self.location} within {connect_timeout:g} s") from None
        self._indexed: set[int] = set()
        self._lock = threading.Lock()

    def _connect(self) -> psycopg.Connection:
        try:
            return psycopg.connect(self.dsn, autocommit=True, connect_timeout=max(1, int(self.connect_timeout)))
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL at {self.location}: {str(exc).strip()}") from None

    def _prepare(self, con: psycopg.Connection) -> None:
        """The schema and the pgvector extension exist, and the search path finds both."""
        try:
            if self.schema != "public":
                try:
                    con.execute(pgsql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(pgsql.Identifier(self.schema)))
                except psycopg.errors.UniqueViolation:  # another process created it at the same moment
                    pass
            row = con.execute("SELECT n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n"
                              " ON n.oid = e.extnamespace WHERE e.extname = 'vector'").fetchone()
            if row is None:
                try:
                    con.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
                except psycopg.errors.UniqueViolation:  # another process created it at the same moment
                    pass
                row = con.execute("SELECT n.nspname, e.extversion FROM pg_extension e JOIN pg_namespace n"
                                  " ON n.oid = e.extnamespace WHERE e.extname = 'vector'").fetchone()
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"memlane needs the pgvector extension in {self.location} and may not create it ({exc}); "
                "ask an administrator to run: CREATE EXTENSION vector;"
            ) from None
        except psycopg.errors.FeatureNotSupported as exc:
            raise StoreError(f"the PostgreSQL server at {self.location} has no pgvector extension: {exc}. "
                             "Install pgvector (https://github.com/pgvector/pgvector), or run `memlane serve "
                             "--postgres` for a bundled server") from None
        self.extension_schema, self.pgvector_version = row
        self.search_path = list(dict.fromkeys((self.schema, self.extension_schema)))
        version = tuple(int(p) for p in self.pgvector_version.split(".")[:2])
        if version < (0, 8):
            raise StoreError(f"memlane needs pgvector 0.8 or newer (iterative index scans); {self.location} has "
                             f"{self.pgvector_version}: ALTER EXTENSION vector UPDATE;")
        self._set_path(con)

    def _set_path(self, con: psycopg.Connection) -> None:
        con.execute(pgsql.SQL("SET search_path TO {}").format(
            pgsql.SQL(", ").join(pgsql.Identifier(s) for s in self.search_path)))

    def _configure(self, con: psycopg.Connection) -> None:
        from pgvector.psycopg import register_vector

        self._set_path(con)
        # plan_cache_mode: psycopg prepares a statement run five times, and PostgreSQL may then
        # plan it once for any parameters. A scope's size is a parameter (a user of 100 memories,
        # an agent of 50,000), and the best plan depends on it: a generic plan scanned a 50,000-row
        # scope through the user btree instead of the HNSW index, 75 ms instead of 2.6 ms
        # (benchmarks/RESULTS.md). Planning each execution costs ~0.2 ms.
        con.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', false),"
                    " set_config('hnsw.ef_search', %s, false), set_config('hnsw.max_scan_tuples', %s, false),"
                    " set_config('plan_cache_mode', 'force_custom_plan', false)",
                    (str(self.ef_search), str(self.max_scan_tuples)))
        if self.synchronous_commit is not None:
            con.execute("SELECT set_config('synchronous_commit', %s, false)", (self.synchronous_commit,))
        register_vector(con)
        con.adapters.register_dumper(Tsvector, TsvectorDumper)

    @property
    def reachability(self) -> Reachability:
        """Whether the database answers, as this process last saw it (``store/postgres_pool.py``)."""
        return self.pool.reach

    def ensure_index(self, dims: int) -> None:
        if dims in self._indexed or not self.vector_index:
            return
        with self._lock, self.pool.connection() as con:
            schema.ensure_vector_index(con, dims, m=self.hnsw_m, ef_construction=self.hnsw_ef_construction)
            self._indexed.add(dims)

    def prepare_bulk_load(self, dims: int) -> str:
        """Before loading many rows of ``dims`` dimensions: pgvector inserts into an HNSW graph one
        row at a time (~100x slower than COPY into the bare table), so when no vector of these
        dimensions is stored yet the index is dropped and ``finish_bulk_load`` builds it once.
        Returns 'build' (index absent during the load), 'keep' (other rows of these dimensions are
        indexed and may be searched meanwhile: the index stays) or 'none' (too many dimensions to index)."""
        if schema.index_type(dims) is None or not self.vector_index:
            return "none"
        name = schema.index_name(dims)
        with self._lock, self.pool.connection() as con, con.transaction():
            con.execute("SELECT pg_advisory_xact_lock(%s)", (schema.LOCK_KEY,))
            if schema.exists(con, name):
                if con.execute("SELECT EXISTS (SELECT 1 FROM memlane_memories WHERE dims = %s)", (dims,)).fetchone()[0]:
                    return "keep"
                con.execute(f"DROP INDEX {name}")  # name: made of an integer
            self._indexed.discard(dims)
        return "build"

    def finish_bulk_load(self, dims: int, *, maintenance_work_mem: str = "1GB") -> None:
        """Refresh the planner's statistics and build the HNSW index a bulk load went without."""
        with self._lock, self.pool.connection() as con:
            con.execute("ANALYZE memlane_memories")
            if not self.vector_index:
                return
            schema.ensure_vector_index(con, dims, m=self.hnsw_m, ef_construction=self.hnsw_ef_construction,
                                       maintenance_work_mem=maintenance_work_mem)
            self._indexed.add(dims)

    def has_index(self, dims: int) -> bool:
        return dims in self._indexed

    def upgrade(self) -> tuple[int, int]:
        """Apply the missing migrations; (version before, version after)."""
        with self.pool.connection() as con:
            return upgrade_schema(con)

    def status(self) -> dict[str, Any]:
        with self.pool.connection() as con:
            version = schema.current_version(con)
            tenants = {}
            if version:
                tenants = dict(con.execute("SELECT tenant, count(*) FROM memlane_memories GROUP BY tenant"
                                           " ORDER BY tenant").fetchall())
        return {"database": self.location, "schema": self.schema, "schema_version": version,
                "current_version": schema.VERSION, "pgvector": self.pgvector_version,
                "server": self.server_version, "memories_per_tenant": tenants}

    def close(self) -> None:
        self.pool.close()


class PostgresStore(SqlMemoryStore):
    """One tenant's memories in a ``PostgresDatabase``. ``owns_database``: ``close`` closes the pool too."""

    #: ``vector_store.provider`` (``SharedDatabase``: the document store beside it is found by it)
    provider = "postgres"
    TABLES = {"memories": "memlane_memories", "history": "memlane_history", "messages": "memlane_messages",
              "applied_keys": "memlane_applied_keys", "memory_tokens": "memlane_memory_tokens", "meta": "memlane_meta",
              "reembed": "memlane_reembed", "graph_entities": "memlane_graph_entities",
              "graph_relations": "memlane_graph_relations", "jobs": "memlane_jobs", "adds": "memlane_adds",
              "project_settings": "memlane_project_settings", "webhooks": "memlane_webhooks",
              "feedback": "memlane_feedback", "exports": "memlane_exports"}
    TENANTED = True
    SEQ = "seq"
    LOCK = " FOR UPDATE"
    NOW = NOW_SQL
    EPOCH = "extract(epoch FROM clock_timestamp())::float8"
    CLAIM_LOCK = " FOR UPDATE OF j SKIP LOCKED"
    INTEGRITY_ERRORS = (psycopg.errors.UniqueViolation,)
    TOKENS_FROM = ("{memory_tokens} t", "t.memory_id")
    REEMBED_PENDING = (
        "SELECT m.id, m.hash, m.text, m.metadata, m.actor_id, m.context FROM memlane_memories m LEFT JOIN memlane_reembed r"
        " ON r.tenant = m.tenant AND r.memory_id = m.id WHERE m.tenant = %s"
        " AND (r.memory_id IS NULL OR r.hash <> m.hash OR r.embedder <> %s) ORDER BY m.seq LIMIT %s"
    )
    REEMBED_SAVE = (
        "INSERT INTO memlane_reembed (tenant, memory_id, hash, embedder, vector) VALUES (%s, %s, %s, %s, %s)"
        " ON CONFLICT (tenant, memory_id) DO UPDATE SET hash = excluded.hash, embedder = excluded.embedder,"
        " vector = excluded.vector"
    )
    REEMBED_SWAP = ("UPDATE memlane_memories m SET vector = r.vector FROM memlane_reembed r"
                    " WHERE m.tenant = %s AND r.tenant = m.tenant AND r.memory_id = m.id")

    def __init__(self, database: PostgresDatabase, tenant: str = "default", *, owns_database: bool = False,
                 exact_search_limit: int = 10_000, ann_candidates: int = 40, placement: Placement | None = None):
        """``placement``: the deployment's tenant directory (store/placement.py): the store then works
        in the database its tenant is placed in, follows it when it moves, and guards its writes."""
        if not isinstance(tenant, str) or not tenant:
            raise ConfigError("the tenant of a PostgreSQL store must be a non-empty string")
        casefold = database.casefold
        super().__init__(
            tenant,
            PostgresFilterCompiler(columns={"memory": "m.text", **{c: f"m.{c}" for c in (*MEMORY_COLUMNS, *INTERNAL_MEMORY_COLUMNS)
                                      if c != "memory"}},
                                   documents={"metadata": "m.metadata"}, casefold=casefold),
            PostgresFilterCompiler(columns={c: c for c in SCOPE_COLUMNS}, documents={}, casefold=casefold),
            PostgresFilterCompiler(columns={c: c for c in MESSAGE_COLUMNS}, documents={}, casefold=casefold))
        self.db = database
        self.owns_database = owns_database
        self.exact_search_limit = exact_search_limit
        #: each scope's size class (few enough rows to score exactly?) and when it was counted: a warm
        #: search of the scope then sends one statement (the count is reused for SIZE_CLASS_SECONDS)
        self._size_class: dict[tuple, tuple[bool, float]] = {}
        # the index path asks for at least this many rows and keeps the best ``limit``: an
        # iterative scan in relaxed order under a filter returns good rows, not the best ones first
        self.ann_candidates = ann_candidates
        self.tenant_token = keywords.scope_token("tenant", tenant)
        self.placement = placement
        self._closed = False

    # -- connections and transactions ---------------------------------------

    def _run(self, work: Callable[[psycopg.Connection], T], *, write: bool = False) -> T:
        """Run ``work`` on a pooled connection (in one transaction when ``write``).

        A connection that breaks, or a transaction the server rolled back to resolve a
        deadlock or serialization conflict, is retried once: nothing of it was committed.
        A connection that breaks while committing is not retried (the outcome is unknown)."""
        if self._closed:
            raise StoreError("the store is closed")
        if self.placement is None:
            return self._attempt(work, write)
        for moves in range(3):
            self._follow(write)
            try:
                return self._attempt(work, write)
            except TenantMovedError:
                if moves == 2:
                    raise
                self.placement.where(self.tenant, fresh=True)
        raise AssertionError("unreachable")

    def _follow(self, write: bool) -> None:
        """Work in the database the tenant is placed in now (a write waits while its move switches)."""
        assert self.placement is not None
        database = self.placement.wait_active(self.tenant) if write else self.placement.where(self.tenant)[0]
        if database is not self.db:
            self.db = database
            self._size_class.clear()

    def _guard(self, con: psycopg.Connection) -> None:
        """First in a write transaction of a placed store: wait for a move of the tenant that is
        switching (its lock), then make sure the tenant still lives here."""
        con.execute("SELECT pg_advisory_xact_lock_shared(%s::int4, hashtext(%s))", (MOVE_LOCK, self.tenant))
        if con.execute("SELECT 1 FROM memlane_meta WHERE tenant = %s AND key = 'moved_to'", (self.tenant,)).fetchone():
            raise TenantMovedError(f"tenant {self.tenant!r} has moved out of {self.db.location}")

    def _attempt(self, work: Callable[[psycopg.Connection], T], write: bool) -> T:
        for attempt in (1, 2):
            con: psycopg.Connection | None = None
            committing = False
            try:
                with self.db.pool.connection() as con:
                    if not write:
                        return work(con)
                    with con.transaction():
                        if self.placement is not None:
                            self._guard(con)
                        result = work(con)
                        committing = True
                    return result
            except psycopg_pool.PoolTimeout:  # the database answers (GuardedPool checked): every connection is busy
                raise StoreUnavailableError(
                    f"no connection to PostgreSQL at {self.db.location} became free within "
                    f"{self.db.connect_timeout:g} s: every connection of the pool ({self.db.pool.max_size}) stayed "
                    "busy; retry in a moment, or raise vector_store.config.max_connections",
                    location=self.db.location) from None
            except psycopg.errors.DiskFull as exc:  # the server rolled the transaction back
                raise StorageFullError(self.db.location, str(exc).strip()) from None
            except psycopg.errors.TransactionRollback as exc:
                if attempt == 2:
                    raise StoreError(f"PostgreSQL rolled back the transaction twice ({exc.sqlstate}): "
                                     f"{str(exc).strip()}") from None
            except psycopg.OperationalError as exc:
                lost = con is None or con.closed or con.broken
                if lost and not self.db.pool.lost():  # the database is away (a probe says so): 503, no retry
                    error = self.db.pool.reach.unavailable()
                    if committing:
                        error.args = (f"{error} (the write being committed may or may not have been applied: "
                                      "retry an add with the same idempotency key)",)
                    raise error from None
                if lost and committing:
                    raise StoreError(
                        f"the connection to PostgreSQL at {self.db.location} was lost while committing; the "
                        f"write may or may not have been applied ({str(exc).strip()})") from None
                if not lost or attempt == 2:
                    raise StoreError(f"PostgreSQL at {self.db.location} failed: {str(exc).strip()}") from None
                # a restart or failover breaks every pooled connection at once: test the idle ones
                # (replacing the dead) so the one retry gets a live connection
                self.db.pool.check()
            except psycopg.errors.UniqueViolation as exc:
                raise StoreError(f"could not write: {exc.diag.message_detail or str(exc).strip()}") from None
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL error: {str(exc).strip()}") from None
        raise AssertionError("unreachable")

    # -- the dialect --------------------------------------------------------

    def _json_in(self, value: dict[str, Any]) -> Jsonb:
        return Jsonb(value, _metadata_json)

    def _json_out(self, value: Any) -> dict[str, Any]:
        return value

    def _list_in(self, values: Sequence[str]) -> list[str]:
        return list(values)

    def _list_out(self, value: Any) -> list[str]:
        return list(value)

    def _in(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        params.append(list(values))
        return f"{column} = ANY(%s)"

    def _vector_in(self, vector: np.ndarray) -> np.ndarray:
        return np.asarray(vector, dtype=np.float32)

    def _vectors_out(self, stored: list[Any]) -> np.ndarray:
        return np.stack([_array(vector) for vector in stored])

    def _keyword_columns(self, text: str, context: str | None, actor: str | None,
                         scope: Sequence[str | None]) -> dict[str, Any]:
        terms, nterms = _terms(text, *scope, self.tenant_token, context, actor)
        return {"terms": terms, "nterms": nterms}

    def _store_tokens(self, con: psycopg.Connection, items: list[tuple[str, np.ndarray]]) -> None:
        store_tokens(con.cursor(), self.tenant, items)

    def _drop_tokens(self, con: psycopg.Connection, memory_id: str) -> None:
        con.execute("DELETE FROM memlane_memory_tokens WHERE tenant = %s AND memory_id = %s", (self.tenant, memory_id))

    def _lock_binding(self, con: psycopg.Connection) -> None:
        con.execute("INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, 'binding', '') ON CONFLICT DO NOTHING",
                    (self.tenant,))
        con.execute("SELECT 1 FROM memlane_meta WHERE tenant = %s AND key = 'binding' FOR UPDATE", (self.tenant,))

    def _bound(self, dims: int) -> None:
        self.db.ensure_index(dims)

    @contextmanager
    def maintenance_lock(self, key: str) -> Iterator[None]:
        """A session advisory lock of the tenant's scope ``key``, on a connection held while the
        block runs: one maintenance call per scope across every server of the database."""
        with self.db.pool.connection() as con:
            if not con.execute("SELECT pg_try_advisory_lock(%s::int4, hashtext(%s))",
                               (MAINTENANCE_LOCK, f"{self.tenant}/{key}")).fetchone()[0]:
                raise MaintenanceBusyError(f"maintenance of {key} is running already (on this or another server); "
                                           "try again when it has finished")
            try:
                yield
            finally:
                con.execute("SELECT pg_advisory_unlock(%s::int4, hashtext(%s))",
                            (MAINTENANCE_LOCK, f"{self.tenant}/{key}"))

    def _housekeeping_turn(self, con: psycopg.Connection) -> bool:
        return con.execute("SELECT pg_try_advisory_xact_lock(%s::int4, 1)", (schema.LOCK_KEY >> 32,)).fetchone()[0]

    def _reembed_lock(self, con: psycopg.Connection) -> None:
        con.execute("LOCK TABLE memlane_memories IN SHARE ROW EXCLUSIVE MODE")

    # -- the insert path ------------------------------------------------------

    def _insert(self, con: psycopg.Connection, records: list[MemoryRecord]) -> None:
        self._size_class.clear()  # a scope this store fills may change class
        """COPY the rows in (the fastest way in), then their history."""
        cur = con.cursor()
        copy_memories(cur, self.tenant, records)
        events = added_history(records)
        copy_history(cur, self.tenant, events)
        self._announce(con, events)

    # -- search -------------------------------------------------------------

    def _exact_is_small(self, con: psycopg.Connection, where: Node) -> bool:
        """Whether the rows the scope ids (or, without them, the tenant) admit are few enough to
        score them all: a bounded count over the scope's index, reused for ``SIZE_CLASS_SECONDS``
        (and until this store inserts). A class gone stale by other processes' writes only picks the
        slower strategy for a while, never a wrong answer: an exact scan of a scope that grew, or the
        index for one that shrank (which falls back to exact when it finds too few rows)."""
        scope = scope_ids(where)
        key = tuple(sorted((column, tuple(sorted(map(str, values)))) for column, values in scope.items()))
        known = self._size_class.get(key)
        now = time.monotonic()
        if known is not None and now - known[1] < SIZE_CLASS_SECONDS:
            return known[0]
        small = self._count_is_small(con, scope)
        if len(self._size_class) >= SIZE_CLASS_ENTRIES:
            self._size_class.clear()
        self._size_class[key] = (small, now)
        return small

    def _count_is_small(self, con: psycopg.Connection, scope: dict[str, Any]) -> bool:
        conditions = "".join(f" AND {key} = ANY(%s)" for key in scope)
        n = con.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM memlane_memories WHERE tenant = %s{conditions} LIMIT %s) AS s",
            (self.tenant, *scope.values(), self.exact_search_limit + 1)).fetchone()[0]
        return n <= self.exact_search_limit

    def search(self, query: np.ndarray, where: Node, limit: int, threshold: float | None,
               reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float]]:
        """Without ``reads``, the records come with their scores in one statement; with them, the
        statement returns (seq, score) and the records the search has not read follow in a second
        (a search's stages overlap: 100 records cost 3.4–4.1 ms in the ordering statement, 1.2 ms without)."""
        dims = self._dims()
        sql, params = self.compiler.compile(where)
        query = np.asarray(query, dtype=np.float32)
        columns = "m.seq" if reads is not None else RECORD_COLUMNS

        def exact(con: psycopg.Connection) -> list[tuple]:
            cut = "" if threshold is None else " AND (m.vector <=> %(q)s) <= %(cut)s"
            return con.execute(
                _named(f"SELECT {columns}, 1 - (m.vector <=> %(q)s) FROM memlane_memories m"
                       f" WHERE m.tenant = %(tenant)s AND {sql} AND {self.HAS_VECTOR}{cut}"
                       " ORDER BY m.vector <=> %(q)s, m.seq"
                       " LIMIT %(limit)s", len(params)),
                {"q": query, "tenant": self.tenant, "limit": limit, "cut": None if threshold is None else 1 - threshold,
                 **_positional(params)}).fetchall()

        def approximate(con: psycopg.Connection) -> list[tuple] | None:
            kind = schema.index_type(dims)
            cast = f"{kind}({int(dims)})"
            rows = con.execute(
                _named(f"SELECT {columns}, 1 - ((m.vector::{cast}) <=> %(q)s::{cast}), m.seq"
                       f" FROM memlane_memories m WHERE m.tenant = %(tenant)s AND m.dims = {int(dims)} AND {sql}"
                       f" ORDER BY (m.vector::{cast}) <=> %(q)s::{cast} LIMIT %(limit)s", len(params)),
                {"q": query, "tenant": self.tenant, "limit": max(limit, self.ann_candidates),
                 **_positional(params)}).fetchall()
            if len(rows) < limit:  # the index gave up early (a very selective filter): score exactly
                return None
            rows.sort(key=lambda r: (-r[-2], r[-1]))  # iterative scans return rows in relaxed order
            return [r[:-1] for r in rows[:limit] if threshold is None or r[-1 - 1] >= threshold]

        def run(con: psycopg.Connection) -> list[tuple[MemoryRecord, float]]:
            if schema.index_type(dims) is None or not self.db.vector_index or self._exact_is_small(con, where):
                rows = exact(con)
            else:
                if not self.db.has_index(dims):
                    self.db.ensure_index(dims)
                rows = approximate(con)
                rows = exact(con) if rows is None else rows
            if reads is None:
                return [(self._record(r), float(r[RECORD_WIDTH])) for r in rows]
            records = self._records_by_seq(con, [r[0] for r in rows], reads)
            return [(records[seq], float(score)) for seq, score in rows if seq in records]

        return self._run(run)

    def focused_search(self, query: np.ndarray, where: Node, focus: Node, limit: int, reads: SearchReads | None = None
                       ) -> tuple[list[tuple[MemoryRecord, float]], list[tuple[MemoryRecord, float]] | None]:
        """A scope scored exactly (``search``) gives both rankings in one statement: each admitted memory's
        distance computed once, ranked twice (all of them; those ``focus`` admits), and the records of the
        two ``limit`` best read in the same statement (before: two searches of two statements each; a
        1,451-memory scope among 51k rows: 3.0 -> 2.6 ms of server CPU, and half the client's work). The HNSW
        index answers the search alone (None for the focus: the caller searches it)."""
        dims = self._dims()
        sql, params = self.compiler.compile(where)
        focus_sql, focus_params = self.compiler.compile(focus)
        query = np.asarray(query, dtype=np.float32)

        def both(con: psycopg.Connection) -> tuple[list, list] | None:
            if not (schema.index_type(dims) is None or not self.db.vector_index or self._exact_is_small(con, where)):
                return None
            rows = con.execute(_named(_FOCUSED_SQL.format(sql=sql, focus=focus_sql, has_vector=self.HAS_VECTOR,
                                                          records=RECORD_COLUMNS), len(focus_params) + len(params)),
                               {"q": query, "tenant": self.tenant, "limit": limit,
                                **_positional(focus_params + params)}).fetchall()
            known = reads.records if reads is not None else {}
            near: list[tuple[MemoryRecord, float]] = []
            focused: list[tuple[MemoryRecord, float]] = []
            for seq, top, in_focus, score, *record in rows:
                if seq not in known:
                    known[seq] = self._record(record)
                if top:
                    near.append((known[seq], float(score)))
                if in_focus:
                    focused.append((known[seq], float(score)))
            return near, focused  # both in rank order (the rows come by overall rank)

        found = self._run(both)
        return (self.search(query, where, limit, None, reads), None) if found is None else found

    def _records_by_seq(self, con: psycopg.Connection, seqs: list[int], reads: SearchReads) -> dict[int, MemoryRecord]:
        """The records of ``seqs`` that exist, read once per search (``SearchReads.of``)."""
        def read(missing: list[int]) -> dict[int, MemoryRecord]:
            rows = con.execute(f"SELECT m.seq, {RECORD_COLUMNS} FROM memlane_memories m"
                               " WHERE m.tenant = %s AND m.seq = ANY(%s)", (self.tenant, missing)).fetchall()
            return {r[0]: self._record(r[1:]) for r in rows}

        return reads.of(seqs, read)

    def keyword_search(self, query: str, vector: np.ndarray, where: Node, limit: int,
                       reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float, float]]:
        terms = keywords.query_terms(query)
        if not terms:
            return []
        # the rows holding a query term, narrowed in the index by the scope's tokens; by the tenant's only
        # when the search has no scope ids (the tenant's token is in every row of the tenant, and the statement
        # names the tenant anyway: a 1,451-memory scope among 51k rows, 3.9 -> 2.9 ms of server CPU)
        scope = scope_ids(where)
        expression = "(" + " | ".join(lexeme(t) for t in terms) + ")"
        for key, values in scope.items():
            expression += " & (" + " | ".join(lexeme(keywords.scope_token(key, v)) for v in values) + ")"
        if not scope:
            expression += " & " + lexeme(self.tenant_token)
        sql, params = self.compiler.compile(where)
        vector = np.asarray(vector, dtype=np.float32)

        def read(con: psycopg.Connection) -> list[tuple[MemoryRecord, float, float]]:
            # one statement, the BM25 computed where the rows are (``_KEYWORD_SQL``): the best ``limit`` matches
            # with their shares, cosines and records (a conversation's scope: ~470 matches, ~1,000 (memory, term)
            # pairs no longer sent to Python and ranked there, and no second statement for the records)
            rows = con.execute(_named(_KEYWORD_SQL.format(sql=sql, records=RECORD_COLUMNS), 2 * len(params)),
                               {"q": vector, "terms": unique(terms), "tenant": self.tenant, "expression": expression,
                                "limit": limit, **_positional(params + params)}).fetchall()
            known = reads.records if reads is not None else {}
            found = []
            for seq, score, whole, cosine, *record in rows:
                if seq not in known:
                    known[seq] = self._record(record)
                # the share of the query's ideal score (``bm25.rank(terms=...)``); no cosine: no vector yet
                found.append((known[seq], score / whole if whole > 0 else score, None if cosine is None else float(cosine)))
            return found

        return self._run(read)

    def similar(self, queries: np.ndarray, where: Node, k: int) -> tuple[list[MemoryRecord], np.ndarray]:
        sql, params = self.compiler.compile(where)
        queries = np.asarray(queries, dtype=np.float32)
        if not len(queries):
            return [], np.zeros((0, 0), dtype=np.float32)

        def read(con: psycopg.Connection) -> tuple[list[MemoryRecord], np.ndarray]:
            chosen: dict[int, None] = {}
            for q in queries:  # each query's k nearest, exactly (formation works inside one scope)
                rows = con.execute(
                    f"SELECT m.seq FROM memlane_memories m WHERE m.tenant = %s AND {sql} AND {self.HAS_VECTOR}"
                    " ORDER BY m.vector <=> %s, m.seq LIMIT %s", (self.tenant, *params, q, k)).fetchall()
                chosen.update(dict.fromkeys(r[0] for r in rows))
            if not chosen:
                return [], np.zeros((len(queries), 0), dtype=np.float32)
            rows = con.execute(f"SELECT m.seq, {RECORD_COLUMNS}, m.vector FROM memlane_memories m"
                               " WHERE m.tenant = %s AND m.seq = ANY(%s)", (self.tenant, list(chosen))).fetchall()
            found = {r[0]: r for r in rows}
            order = [seq for seq in chosen if seq in found]
            matrix = np.stack([_array(found[seq][-1]) for seq in order])
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            scores = queries @ (matrix / np.where(norms == 0, 1, norms)).T
            return [self._record(found[seq][1:]) for seq in order], scores.astype(np.float32)

        return self._run(read)

    @property
    def location(self) -> str:
        where = f"?schema={self.db.schema}" if self.db.schema != "public" else ""
        return f"{self.db.location}{where}#tenant={self.tenant}"

    def _durability(self, con: psycopg.Connection) -> str:
        return "synchronous_commit=" + con.execute("SHOW synchronous_commit").fetchone()[0]

    def transaction(self, work: Callable[[psycopg.Connection], T], *, write: bool) -> T:
        """``work`` on a pooled connection for tables kept in this database (``SharedDatabase``), with
        the store's transaction and retry rules (``_run``)."""
        return self._run(work, write=write)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.owns_database:
            if self.placement is not None:  # the placement's pools, the home database's among them
                self.placement.close()
                self.placement.home.close()
            else:
                self.db.close()


def _named(sql: str, positional: int) -> str:
    """Turn the filter's ``%s`` placeholders (the first ``positional`` of them) into named ones
    (``%(p0)s`` …), so a statement can also bind named values more than once."""
    parts = sql.split("%s")
    if len(parts) - 1 != positional:
        raise AssertionError("placeholder count mismatch")
    out = parts[0]
    for i, part in enumerate(parts[1:]):
        out += f"%(p{i})s" + part
    return out


def _positional(params: list[Any]) -> dict[str, Any]:
    return {f"p{i}": value for i, value in enumerate(params)}


def _array(value: Any) -> np.ndarray:
    """A vector as the pgvector loader gives it (``Vector`` or a numpy array), as float32."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)
