"""API keys of the REST / MCP server: created once, stored hashed, revocable.

A key is ``ml_`` followed by 43 URL-safe characters (256 random bits). Only its
SHA-256 is stored, with a short prefix so ``keys list`` can tell keys apart and
so a lookup finds the candidate row without a table scan; the hashes are then
compared with ``hmac.compare_digest``. A random 256-bit key needs no slow
password hash: nothing about it can be guessed from its digest.

The keys live in a small SQLite file (``<home>/keys.db``) beside the tenants'
stores, or, when the server stores in PostgreSQL, in the database (``memlane_api_keys``),
so that every server of a deployment shares them. The SQLite file is read on every
request (``memlane keys revoke`` takes effect at the next request); the database at most
once a second per key and process (a revoked key is refused everywhere within a second).
The server reads them off its event loop, through ``hosting.key_check``.

A key may be trusted with less than its tenant: ``read_only`` (reads, no writes) and ``users`` (only
those users' memories; ``hosting.key_limits``). A key store of an older memlane (no such columns) gains
them when it opens, its keys keeping full access. ``last_used_at`` is when the key last made a request
(written at most once a minute per key and server).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from collections.abc import Mapping, Sequence
from typing import Any

from memlane.core import timeutil, validation
from memlane.core.errors import InvalidInputError, StoreError
from memlane.core.validation import tenant_name

KEY_PREFIX = "ml_"
#: characters of the key kept in clear for listing and lookup ("ml_" + 9 random characters)
SHOWN_CHARS = 12

_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    prefix TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_prefix ON api_keys(prefix);
"""
#: the changes of ``keys.db`` since the table above (``PRAGMA user_version`` counts those applied); the
#: PostgreSQL table gains the same columns in the store's migration 15 (``store/postgres_schema.py``)
_MIGRATIONS: list[list[str]] = [
    # 1: keys trusted with less (read-only; limited to some users, a JSON list) and when each was last used
    ["ALTER TABLE api_keys ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0",
     "ALTER TABLE api_keys ADD COLUMN users TEXT",
     "ALTER TABLE api_keys ADD COLUMN last_used_at TEXT"],
]
_COLUMNS = "id, prefix, tenant, admin, created_at, revoked_at, read_only, users, last_used_at"


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def well_formed(key: str) -> bool:
    """Whether ``key`` can be a key at all (a lookup is worth making)."""
    return key.startswith(KEY_PREFIX) and len(key) <= 256


@dataclass(frozen=True)
class KeyInfo:
    """A stored key, without the key itself."""

    id: str
    prefix: str
    tenant: str
    admin: bool
    created_at: str
    revoked_at: str | None = None
    #: reads only: search, get, list, history, should-search, context (no add, update, delete, reset)
    read_only: bool = False
    #: the only users whose memories the key reaches (None: every user of the tenant)
    users: tuple[str, ...] | None = None
    #: when the key last made a request (written at most once a minute per key and server)
    last_used_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["users"] = list(self.users) if self.users is not None else None
        return out

    @classmethod
    def from_row(cls, row: tuple) -> "KeyInfo":
        """A row of ``_COLUMNS``."""
        users = json.loads(row[7]) if row[7] is not None else None
        return cls(id=row[0], prefix=row[1], tenant=row[2], admin=bool(row[3]), created_at=row[4], revoked_at=row[5],
                   read_only=bool(row[6]), users=tuple(users) if users is not None else None, last_used_at=row[8])

    def principal(self) -> "Principal":
        return Principal(tenant=self.tenant, admin=self.admin, key_id=self.id, read_only=self.read_only,
                         users=frozenset(self.users) if self.users is not None else None)


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a tenant, with or without admin rights."""

    tenant: str
    admin: bool = False
    key_id: str | None = None
    read_only: bool = False
    #: the only users the key reaches (None: every user)
    users: frozenset[str] | None = None

    @property
    def limited(self) -> bool:
        """Whether the key is trusted with less than its whole tenant (read-only, or some users only)."""
        return self.read_only or self.users is not None


class KeyStore:
    """The keys in ``<home>/keys.db`` (SQLite; a server on the embedded store). The SQL is written
    once for both places keys live (``%s`` placeholders); ``PostgresKeyStore`` keeps them in the
    database every server of a PostgreSQL deployment shares."""

    TABLE = "api_keys"
    #: seconds a verified key is taken as valid without reading it again (0: read every request);
    #: the server's cache (``hosting.key_check``) keeps to it while the store answers
    CACHE_SECONDS = 0.0

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._ready = False

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            with self._lock:
                if not self._ready:
                    con.execute("PRAGMA journal_mode=WAL")
                    self._migrate(con)
                    self._ready = True
                self._connections.append(con)
            self._local.con = con
        return con

    @staticmethod
    def _migrate(con: sqlite3.Connection) -> None:
        """Create the table, or bring a key store of an older memlane up to date (its keys keep full access)."""
        con.execute("BEGIN IMMEDIATE")
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version > len(_MIGRATIONS):
                raise StoreError(f"this key store was written by a newer memlane (schema {version}, this one reads up "
                                 f"to {len(_MIGRATIONS)}); upgrade memlane")
            if version < len(_MIGRATIONS):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        con.execute(statement)
                for steps in _MIGRATIONS[version:]:
                    for statement in steps:
                        con.execute(statement)
                con.execute(f"PRAGMA user_version = {len(_MIGRATIONS)}")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run one statement (``%s`` placeholders, ``{table}``); its rows (none for a write)."""
        return self._con().execute(sql.format(table=self.TABLE).replace("%s", "?"), params).fetchall()

    def create(self, tenant: str, *, admin: bool = False, read_only: bool = False,
               users: Sequence[str] | None = None) -> tuple[str, KeyInfo]:
        """Make a new key; returns (the key, shown only now, and its stored record). ``read_only``: reads
        only; ``users``: only these users' memories (an admin key reaches every user, so not both)."""
        tenant = tenant_name(tenant)
        if users is not None:
            if not users:
                raise InvalidInputError("a key limited to users needs at least one user id", field="users")
            if admin:
                raise InvalidInputError("an admin key reaches every user of its tenant; give --admin or --user, "
                                        "not both", field="users")
            users = tuple(dict.fromkeys(validation.identifier(user, "user_id", required=True) for user in users))
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        info = KeyInfo(id="key_" + secrets.token_hex(6), prefix=key[:SHOWN_CHARS], tenant=tenant, admin=admin,
                       created_at=timeutil.now_iso(), read_only=read_only, users=users)
        self._add(info, digest(key))
        return key, info

    def _add(self, info: KeyInfo, hashed: str) -> None:
        self._rows("INSERT INTO {table}(id, prefix, hash, tenant, admin, created_at, revoked_at, read_only, users,"
                   " last_used_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                   (info.id, info.prefix, hashed, info.tenant, self._flag(info.admin), info.created_at, info.revoked_at,
                    self._flag(info.read_only), json.dumps(list(info.users)) if info.users is not None else None,
                    info.last_used_at))

    def _flag(self, admin: bool) -> Any:
        return int(admin)

    def list(self, *, include_revoked: bool = True) -> list[KeyInfo]:
        sql = f"SELECT {_COLUMNS} FROM {{table}}"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        return [KeyInfo.from_row(r) for r in self._rows(sql + " ORDER BY created_at, id")]

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke a key by id (idempotent); raises ``InvalidInputError`` for an unknown id."""
        self._rows("UPDATE {table} SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                   (timeutil.now_iso(), key_id))
        rows = self._rows(f"SELECT {_COLUMNS} FROM {{table}} WHERE id = %s", (key_id,))
        if not rows:
            raise InvalidInputError(f"no API key with id {key_id!r} (see `memlane keys list`)", field="id")
        return KeyInfo.from_row(rows[0])

    def verify(self, key: str) -> Principal | None:
        """The principal of a valid, unrevoked key; ``None`` for anything else. Reads the store every
        call (blocking: the server calls it off its event loop, ``hosting.key_check``, which caches)."""
        if not well_formed(key):
            return None
        wanted = digest(key)
        rows = self._rows(f"SELECT {_COLUMNS}, hash FROM {{table}} WHERE prefix = %s AND revoked_at IS NULL",
                          (key[:SHOWN_CHARS],))
        for row in rows:
            if hmac.compare_digest(row[-1], wanted):
                return KeyInfo.from_row(row).principal()
        return None

    def touch(self, used: Mapping[str, str]) -> None:
        """Record when keys were last used (``used``: key id -> ISO time; never moves a time back)."""
        for key_id, when in used.items():
            self._rows("UPDATE {table} SET last_used_at = %s WHERE id = %s"
                       " AND (last_used_at IS NULL OR last_used_at < %s)", (when, key_id, when))

    def count(self) -> int:
        return self._rows("SELECT COUNT(*) FROM {table} WHERE revoked_at IS NULL")[0][0]

    def hashed(self) -> list[tuple[KeyInfo, str]]:
        """Every key's record with its stored hash (for moving keys to another store)."""
        return [(KeyInfo.from_row(r), r[-1])
                for r in self._rows(f"SELECT {_COLUMNS}, hash FROM {{table}} ORDER BY created_at, id")]

    def close(self) -> None:
        with self._lock:
            for con in self._connections:
                con.close()
            self._connections.clear()
        self._local = threading.local()


class PostgresKeyStore(KeyStore):
    """The keys in the ``memlane_api_keys`` table of a deployment's PostgreSQL database: every
    ``memlane serve`` on it accepts the same keys, and refuses a revoked one within
    ``CACHE_SECONDS`` (a verified key is re-read at most once a second)."""

    TABLE = "memlane_api_keys"
    CACHE_SECONDS = 1.0

    def __init__(self, database: Any, *, owns_database: bool = False):
        self.database = database
        self.owns_database = owns_database
        self.location = database.location

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.database.pool.connection() as con:
            cursor = con.execute(sql.format(table=self.TABLE), params)
            return cursor.fetchall() if cursor.description else []

    def _flag(self, admin: bool) -> Any:
        return bool(admin)

    def import_keys(self, other: KeyStore) -> int:
        """Copy the keys of another store (``<home>/keys.db`` of a server that used it) that this one
        does not have (by id); returns how many."""
        copied = 0
        known = {info.id for info in self.list()}
        for info, hashed in other.hashed():
            if info.id not in known:
                self._add(info, hashed)
                copied += 1
        return copied

    def close(self) -> None:
        if self.owns_database:
            self.database.close()


def open_key_store(config: Any, home: str | Path, *, database: Any = None) -> KeyStore:
    """Where the keys of a server with this configuration live: the PostgreSQL database its
    store names (``database``: an open ``PostgresDatabase`` of it to share), else
    ``<home>/keys.db``. A PostgreSQL deployment takes over the keys a ``<home>/keys.db`` holds
    (once: those the database does not have, by id)."""
    from memlane.core import config as config_mod
    from memlane.store import postgres_config, postgres_database

    settings = postgres_config(config_mod.load(config))
    file = Path(home).expanduser() / "keys.db"
    if settings is None:
        return KeyStore(file)
    keys = PostgresKeyStore(database or postgres_database(settings), owns_database=database is None)
    if file.exists():
        local = KeyStore(file)
        try:
            keys.import_keys(local)
        finally:
            local.close()
    return keys
