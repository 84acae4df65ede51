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
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memlane.core import timeutil
from memlane.core.errors import InvalidInputError
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




def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class KeyInfo:
    """A stored key, without the key itself."""

    id: str
    prefix: str
    tenant: str
    admin: bool
    created_at: str
    revoked_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a tenant, with or without admin rights."""

    tenant: str
    admin: bool = False
    key_id: str | None = None


class KeyStore:
    """The keys in ``<home>/keys.db`` (SQLite; a server on the embedded store). The SQL is written
    once for both places keys live (``%s`` placeholders); ``PostgresKeyStore`` keeps them in the
    database every server of a PostgreSQL deployment shares."""

    TABLE = "api_keys"
    #: seconds a verified key is taken as valid without reading it again (0: read every request)
    CACHE_SECONDS = 0.0

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._ready = False
        self._verified: dict[str, tuple[Principal, float]] = {}

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            with self._lock:
                if not self._ready:
                    con.execute("PRAGMA journal_mode=WAL")
                    con.executescript(_SCHEMA)
                    self._ready = True
                self._connections.append(con)
            self._local.con = con
        return con

    def _rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Run one statement (``%s`` placeholders, ``{table}``); its rows (none for a write)."""
        return self._con().execute(sql.format(table=self.TABLE).replace("%s", "?"), params).fetchall()

    def create(self, tenant: str, *, admin: bool = False) -> tuple[str, KeyInfo]:
        """Make a new key; returns (the key, shown only now, and its stored record)."""
        tenant = tenant_name(tenant)
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        info = KeyInfo(id="key_" + secrets.token_hex(6), prefix=key[:SHOWN_CHARS], tenant=tenant, admin=admin,
                       created_at=timeutil.now_iso())
        self._add(info, digest(key))
        return key, info

    def _add(self, info: KeyInfo, hashed: str) -> None:
        self._rows("INSERT INTO {table}(id, prefix, hash, tenant, admin, created_at, revoked_at)"
                   " VALUES (%s,%s,%s,%s,%s,%s,%s)",
                   (info.id, info.prefix, hashed, info.tenant, self._flag(info.admin), info.created_at, info.revoked_at))

    def _flag(self, admin: bool) -> Any:
        return int(admin)

    def list(self, *, include_revoked: bool = True) -> list[KeyInfo]:
        sql = "SELECT id, prefix, tenant, admin, created_at, revoked_at FROM {table}"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        return [KeyInfo(id=r[0], prefix=r[1], tenant=r[2], admin=bool(r[3]), created_at=r[4], revoked_at=r[5])
                for r in self._rows(sql + " ORDER BY created_at, id")]

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke a key by id (idempotent); raises ``InvalidInputError`` for an unknown id."""
        self._rows("UPDATE {table} SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                   (timeutil.now_iso(), key_id))
        rows = self._rows("SELECT id, prefix, tenant, admin, created_at, revoked_at FROM {table} WHERE id = %s",
                          (key_id,))
        if not rows:
            raise InvalidInputError(f"no API key with id {key_id!r} (see `memlane keys list`)", field="id")
        row = rows[0]
        return KeyInfo(id=row[0], prefix=row[1], tenant=row[2], admin=bool(row[3]), created_at=row[4],
                       revoked_at=row[5])

    def verify(self, key: str) -> Principal | None:
        """The principal of a valid, unrevoked key; ``None`` for anything else. A key verified less
        than ``CACHE_SECONDS`` ago is not read again (a revocation counts from then on)."""
        if not key.startswith(KEY_PREFIX) or len(key) > 256:
            return None
        wanted = digest(key)
        if self.CACHE_SECONDS:
            known = self._verified.get(wanted)
            if known is not None and time.monotonic() - known[1] < self.CACHE_SECONDS:
                return known[0]
        rows = self._rows("SELECT id, hash, tenant, admin FROM {table} WHERE prefix = %s AND revoked_at IS NULL",
                          (key[:SHOWN_CHARS],))
        for key_id, stored, tenant, admin in rows:
            if hmac.compare_digest(stored, wanted):
                principal = Principal(tenant=tenant, admin=bool(admin), key_id=key_id)
                if self.CACHE_SECONDS:
                    if len(self._verified) >= 10_000:
                        self._verified.clear()
                    self._verified[wanted] = (principal, time.monotonic())
                return principal
        self._verified.pop(wanted, None)
        return None

    def count(self) -> int:
        return self._rows("SELECT COUNT(*) FROM {table} WHERE revoked_at IS NULL")[0][0]

    def hashed(self) -> list[tuple[KeyInfo, str]]:
        """Every key's record with its stored hash (for moving keys to another store)."""
        return [(KeyInfo(id=r[0], prefix=r[1], tenant=r[2], admin=bool(r[3]), created_at=r[4], revoked_at=r[5]), r[6])
                for r in self._rows("SELECT id, prefix, tenant, admin, created_at, revoked_at, hash FROM {table}"
                                    " ORDER BY created_at, id")]

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
        self._verified = {}

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
