"""API keys of the REST / MCP server: created once, stored hashed, revocable.

A key is ``ml_`` followed by 43 URL-safe characters (256 random bits). Only its
SHA-256 is stored, with a short prefix so ``keys list`` can tell keys apart and
so a lookup finds the candidate row without a table scan; the hashes are then
compared with ``hmac.compare_digest``. A random 256-bit key needs no slow
password hash: nothing about it can be guessed from its digest.

The keys live in a small SQLite file (``<home>/keys.db``) beside the tenants'
stores. The server reads it on every request, so ``memlane keys revoke`` in
another process takes effect at the next request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3
import threading
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
                    con.executescript(_SCHEMA)
                    self._ready = True
                self._connections.append(con)
            self._local.con = con
        return con

    def create(self, tenant: str, *, admin: bool = False) -> tuple[str, KeyInfo]:
        """Make a new key; returns (the key, shown only now, and its stored record)."""
        tenant = tenant_name(tenant)
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        info = KeyInfo(id="key_" + secrets.token_hex(6), prefix=key[:SHOWN_CHARS], tenant=tenant, admin=admin,
                       created_at=timeutil.now_iso())
        self._con().execute(
            "INSERT INTO api_keys(id, prefix, hash, tenant, admin, created_at) VALUES (?,?,?,?,?,?)",
            (info.id, info.prefix, digest(key), info.tenant, int(info.admin), info.created_at),
        )
        return key, info

    def list(self, *, include_revoked: bool = True) -> list[KeyInfo]:
        sql = "SELECT id, prefix, tenant, admin, created_at, revoked_at FROM api_keys"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        rows = self._con().execute(sql + " ORDER BY created_at, id").fetchall()
        return [KeyInfo(id=r[0], prefix=r[1], tenant=r[2], admin=bool(r[3]), created_at=r[4], revoked_at=r[5])
                for r in rows]

    def revoke(self, key_id: str) -> KeyInfo:
        """Revoke a key by id (idempotent); raises ``InvalidInputError`` for an unknown id."""
        con = self._con()
        con.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    (timeutil.now_iso(), key_id))
        row = con.execute("SELECT id, prefix, tenant, admin, created_at, revoked_at FROM api_keys WHERE id = ?",
                          (key_id,)).fetchone()
        if row is None:
            raise InvalidInputError(f"no API key with id {key_id!r} (see `memlane keys list`)", field="id")
        return KeyInfo(id=row[0], prefix=row[1], tenant=row[2], admin=bool(row[3]), created_at=row[4],
                       revoked_at=row[5])

    def verify(self, key: str) -> Principal | None:
        """The principal of a valid, unrevoked key; ``None`` for anything else."""
        if not key.startswith(KEY_PREFIX) or len(key) > 256:
            return None
        wanted = digest(key)
        rows = self._con().execute(
            "SELECT id, hash, tenant, admin FROM api_keys WHERE prefix = ? AND revoked_at IS NULL",
            (key[:SHOWN_CHARS],),
        ).fetchall()
        for key_id, stored, tenant, admin in rows:
            if hmac.compare_digest(stored, wanted):
                return Principal(tenant=tenant, admin=bool(admin), key_id=key_id)
        return None

    def count(self) -> int:
        return self._con().execute("SELECT COUNT(*) FROM api_keys WHERE revoked_at IS NULL").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            for con in self._connections:
                con.close()
            self._connections.clear()
        self._local = threading.local()
