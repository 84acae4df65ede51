"""Backups of a memlane home, online: ``memlane backup FILE`` and ``memlane restore FILE``.

A backup is one file (a gzipped tar) holding every tenant's memories, history, messages, the add
journal, graph memory and document collections, the API keys, and ``manifest.json`` (format,
backend, schema version, per tenant counts, a SHA-256 of every member).

- **SQLite** (the embedded default): each tenant's file (``memlane.db``, ``tenants/<tenant>.db``) and
  ``keys.db`` copied with SQLite's online backup API, each in one read transaction: a consistent
  copy while a server keeps writing (WAL mode lets writers go on meanwhile).
- **PostgreSQL**: every memlane table of the configured schema (all tenants) read in one
  ``REPEATABLE READ, READ ONLY`` transaction, so the tables are one snapshot of the database,
  written with ``COPY ... TO STDOUT``; writers are never blocked.

``restore`` needs an empty target (no store file, no rows in the memlane tables, no keys) and the
backend the backup came from (to move a SQLite home to PostgreSQL, restore it, then ``memlane
migrate``). It verifies every checksum before writing anything. SQLite files are written beside
their place and renamed into it; PostgreSQL tables are loaded in one transaction at the backup's
schema version and migrated after, so a failed restore leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import tarfile
import tempfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlane import __version__
from memlane.core import config as config_mod
from memlane.core import timeutil
from memlane.core.config import memlane_home
from memlane.core.errors import InvalidInputError, StoreError
from memlane.core.validation import TENANT_PATTERN
from memlane.store import DEFAULT_TENANT, SQLiteStoreConfig, postgres_config, sqlite_path

FORMAT = "memlane-backup"
FORMAT_VERSION = 1
KEYS_FILE = "keys.db"
MANIFEST = "manifest.json"
#: what a SQLite store's manifest counts (table -> label)
_COUNTED = {"memories": "memories", "history": "history_events", "messages": "messages",
            "graph_relations": "relations", "doc_documents": "documents", "adds": "journaled_adds"}
#: PostgreSQL tables in load order (foreign keys: collections before documents before pages, memories
#: before their token vectors); any other memlane table of the schema follows
_PG_ORDER = ("memlane_meta", "memlane_messages", "memlane_memories", "memlane_memory_tokens", "memlane_history",
             "memlane_applied_keys", "memlane_adds", "memlane_reembed", "memlane_graph_entities",
             "memlane_graph_relations", "memlane_doc_collections", "memlane_doc_documents", "memlane_doc_pages",
             "memlane_doc_state")
#: adds cut between their two transactions when the backup was taken belong to no process of the
#: restored home: released, so the restored store completes them when it opens (``ingest/adds.py``)
_RELEASE_PENDING = "UPDATE {adds} SET owner = NULL, lease_until = NULL WHERE status = 'pending'"


@dataclass
class BackupReport:
    file: str
    backend: str
    created_at: str
    schema_version: int
    #: tenant -> what its store holds (SQLite), or table -> rows (PostgreSQL, under "tables")
    tenants: dict[str, dict[str, int]] = field(default_factory=dict)
    tables: dict[str, int] = field(default_factory=dict)
    #: PostgreSQL: table -> the columns copied (what restore loads, in this order)
    columns: dict[str, list[str]] = field(default_factory=dict)
    keys: bool = False
    bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def backup(file: str | Path, *, home: str | Path | None = None,
           config: config_mod.MemoryConfig | Mapping[str, Any] | None = None) -> BackupReport:
    """Write a backup of the home (its stores and keys) to ``file``, replacing it atomically."""
    settings = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
    home = Path(home).expanduser() if home is not None else memlane_home()
    target = Path(file).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="memlane-backup-", dir=target.parent) as work:
        staged = Path(work)
        pg = postgres_config(settings)
        if pg is None:
            report, members = _sqlite_backup(settings, home, staged)
        else:
            report, members = _postgres_backup(pg, staged)
        keys = home / KEYS_FILE
        if keys.is_file():
            _sqlite_copy(keys, staged / KEYS_FILE)
            members.append(KEYS_FILE)
            report.keys = True
        report.file = str(target)
        manifest = {"format": FORMAT, "version": FORMAT_VERSION, "memlane": __version__, **report.to_dict(),
                    "files": {m: _sha256(staged / m) for m in members}}
        del manifest["file"], manifest["bytes"]
        (staged / MANIFEST).write_text(json.dumps(manifest, indent=1))
        partial = staged / "backup.tar.gz"
        with tarfile.open(partial, "w:gz", compresslevel=3) as tar:
            tar.add(staged / MANIFEST, MANIFEST)
            for member in members:
                tar.add(staged / member, member)
        os.replace(partial, target)
    report.bytes = target.stat().st_size
    return report


def restore(file: str | Path, *, home: str | Path | None = None,
            config: config_mod.MemoryConfig | Mapping[str, Any] | None = None) -> BackupReport:
    """Restore the backup ``file`` into an empty home (or empty PostgreSQL schema)."""
    settings = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
    home = Path(home).expanduser() if home is not None else memlane_home()
    source = Path(file).expanduser()
    read_manifest(source)  # not a backup: said before anything else is looked at
    with tempfile.TemporaryDirectory(prefix="memlane-restore-") as work:
        staged = Path(work)
        manifest = _unpack(source, staged)
        pg = postgres_config(settings)
        backend = "sqlite" if pg is None else "postgres"
        if manifest["backend"] != backend:
            hint = (" Restore it into a home on SQLite, then copy that into PostgreSQL with `memlane migrate`."
                    if manifest["backend"] == "sqlite" else " Restore it into the home's bundled PostgreSQL "
                    "(memlane restore --postgres FILE) or into the database $MEMLANE_DATABASE_URL names.")
            raise InvalidInputError(f"the backup {source} is of a {manifest['backend']} store and this home is "
                                    f"configured for {backend}.{hint}", field="file")
        keys = home / KEYS_FILE
        if manifest.get("keys") and keys.exists() and _has_rows(keys, "api_keys"):
            raise InvalidInputError(f"{keys} already holds API keys; restore into an empty home", field="home")
        if pg is None:
            _sqlite_restore(manifest, settings, home, staged)
        else:
            _postgres_restore(manifest, pg, staged)
        if manifest.get("keys"):
            home.mkdir(parents=True, exist_ok=True)
            _place(staged / KEYS_FILE, keys)
    return BackupReport(file=str(source), backend=manifest["backend"], created_at=manifest["created_at"],
                        schema_version=manifest["schema_version"], tenants=manifest.get("tenants", {}),
                        tables=manifest.get("tables", {}), keys=bool(manifest.get("keys")), bytes=source.stat().st_size)


# -- SQLite ----------------------------------------------------------------------------------------


def _sqlite_files(settings: config_mod.MemoryConfig, home: Path) -> dict[str, Path]:
    """Tenant -> its store file, for the tenants whose file exists."""
    store = config_mod.validate(SQLiteStoreConfig, settings.vector_store.config, "vector_store.config")
    files = {DEFAULT_TENANT: sqlite_path(store, settings.history_db_path, DEFAULT_TENANT, home)}
    tenants_dir = sqlite_path(store, settings.history_db_path, "x", home).parent
    if tenants_dir.is_dir():
        for path in sorted(tenants_dir.glob("*.db")):
            if TENANT_PATTERN.match(path.stem) and path.stem != DEFAULT_TENANT:
                files[path.stem] = path
    return {tenant: path for tenant, path in files.items() if path.is_file()}


def _sqlite_copy(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite file in use (the online backup API: one read transaction)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=60)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _sqlite_backup(settings: config_mod.MemoryConfig, home: Path, staged: Path) -> tuple[BackupReport, list[str]]:
    from memlane.store import sqlite_schema

    report = BackupReport(file="", backend="sqlite", created_at=timeutil.now_iso(),
                          schema_version=sqlite_schema.VERSION)
    members = []
    for tenant, path in _sqlite_files(settings, home).items():
        member = f"stores/{tenant}.db"
        _sqlite_copy(path, staged / member)
        report.tenants[tenant] = _sqlite_counts(staged / member)
        members.append(member)
    return report, members


def _sqlite_counts(path: Path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        present = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        counts = {label: con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # table: a fixed name
                  for table, label in _COUNTED.items() if table in present}
        if "adds" in present:  # adds cut between their two transactions: completed when the restored store opens
            counts["pending_adds"] = con.execute("SELECT count(*) FROM adds WHERE status = 'pending'").fetchone()[0]
        counts["schema_version"] = con.execute("PRAGMA user_version").fetchone()[0]
        return counts
    finally:
        con.close()


def _sqlite_restore(manifest: dict[str, Any], settings: config_mod.MemoryConfig, home: Path, staged: Path) -> None:
    store = config_mod.validate(SQLiteStoreConfig, settings.vector_store.config, "vector_store.config")
    places = {tenant: sqlite_path(store, settings.history_db_path, tenant, home) for tenant in manifest["tenants"]}
    for tenant, path in places.items():
        if path.exists() and _has_rows(path, "memories", "messages", "doc_collections"):
            raise InvalidInputError(f"{path} (tenant {tenant!r}) already holds data; restore into an empty home",
                                    field="home")
    for tenant, path in places.items():
        copy = staged / f"stores/{tenant}.db"
        con = sqlite3.connect(copy)
        try:
            if con.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise StoreError(f"the backup's store of tenant {tenant!r} is damaged")
            if con.execute("SELECT 1 FROM sqlite_master WHERE name = 'adds'").fetchone():
                with con:
                    con.execute(_RELEASE_PENDING.format(adds="adds"))
        finally:
            con.close()
    for tenant, path in places.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in (Path(f"{path}-wal"), Path(f"{path}-shm")):  # an empty store's leftovers
            stale.unlink(missing_ok=True)
        _place(staged / f"stores/{tenant}.db", path)


def _has_rows(path: Path, *tables: str) -> bool:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        present = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return any(con.execute(f"SELECT EXISTS (SELECT 1 FROM {t})").fetchone()[0] for t in tables if t in present)
    finally:
        con.close()


def _place(source: Path, target: Path) -> None:
    """Move ``source`` to ``target`` atomically (a copy beside the target, then a rename)."""
    partial = target.with_name(f".{target.name}.restoring")
    shutil.copyfile(source, partial)
    os.replace(partial, target)


# -- PostgreSQL ------------------------------------------------------------------------------------


def _pg_connect(pg: Any) -> Any:
    from memlane.store.postgres import PostgresDatabase

    # prepares the schema and pgvector (restore) without migrating: versions are handled here
    database = PostgresDatabase(pg.resolved_dsn(), schema_name=pg.schema_name, min_size=1, max_size=1,
                                connect_timeout=pg.connect_timeout, migrate=False, check=False)
    return database


def _pg_tables(con: Any) -> dict[str, list[str]]:
    """memlane's tables in the current schema, in load order, with their stored (not generated) columns."""
    rows = con.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema ="
                       " current_schema() AND table_name LIKE 'memlane%%' AND table_name <> 'memlane_schema_version'"
                       " AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position").fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(table, []).append(column)
    order = [t for t in _PG_ORDER if t in columns] + sorted(t for t in columns if t not in _PG_ORDER)
    return {t: columns[t] for t in order}


def _postgres_backup(pg: Any, staged: Path) -> tuple[BackupReport, list[str]]:
    from psycopg import sql

    from memlane.store import postgres_schema

    database = _pg_connect(pg)
    members = []
    try:
        with database.pool.connection() as con, con.transaction():
            con.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            version = postgres_schema.current_version(con)
            report = BackupReport(file="", backend="postgres", created_at=timeutil.now_iso(), schema_version=version)
            tables = _pg_tables(con)
            (staged / "tables").mkdir()
            for table, columns in tables.items():
                member = f"tables/{table}.copy"
                statement = sql.SQL("COPY {} ({}) TO STDOUT").format(
                    sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in columns))
                rows = 0
                with open(staged / member, "wb") as out, con.cursor().copy(statement) as copy:
                    for chunk in copy:
                        out.write(chunk)
                        rows += bytes(chunk).count(b"\n")
                report.tables[table] = rows
                members.append(member)
            report.tenants = {tenant: {"memories": n} for tenant, n in con.execute(
                "SELECT tenant, count(*) FROM memlane_memories GROUP BY tenant ORDER BY tenant").fetchall()} \
                if "memlane_memories" in tables else {}
            report.columns = tables
    finally:
        database.close()
    return report, members


def _postgres_restore(manifest: dict[str, Any], pg: Any, staged: Path) -> None:
    from psycopg import sql

    from memlane.store import postgres_schema
    from memlane.store.postgres import upgrade_schema

    version = manifest["schema_version"]
    if version > postgres_schema.VERSION:
        raise InvalidInputError(f"the backup has memlane schema version {version}, newer than this memlane "
                                f"({postgres_schema.VERSION}); upgrade memlane", field="file")
    database = _pg_connect(pg)
    try:
        with database.pool.connection() as con:
            present = _pg_tables(con) if postgres_schema.current_version(con) else {}
            full = [t for t in present if con.execute(
                sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(t))).fetchone()[0]]
            if full:
                raise InvalidInputError(f"the schema {pg.schema_name!r} of {database.location} already holds "
                                        f"memlane data ({', '.join(full)}); restore into an empty schema", field="home")
            with con.transaction():
                postgres_schema.migrate(con, upto=version, transaction=False)
                for table, columns in manifest["columns"].items():
                    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
                        sql.Identifier(table), sql.SQL(", ").join(sql.Identifier(c) for c in columns))
                    with open(staged / f"tables/{table}.copy", "rb") as source, con.cursor().copy(statement) as copy:
                        while chunk := source.read(1 << 20):
                            copy.write(chunk)
                for table, column in con.execute(
                        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema ="
                        " current_schema() AND table_name LIKE 'memlane%%' AND is_identity = 'YES'").fetchall():
                    con.execute(sql.SQL("SELECT setval(pg_get_serial_sequence({}, {}), coalesce(max({}), 0) + 1,"
                                        " false) FROM {}").format(sql.Literal(table), sql.Literal(column),
                                                                  sql.Identifier(column), sql.Identifier(table)))
                upgrade_schema(con, transaction=False)  # a backup of an older memlane: its migrations and reindexing
                con.execute(_RELEASE_PENDING.format(adds="memlane_adds"))
    finally:
        database.close()


# -- the archive -----------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def read_manifest(file: str | Path) -> dict[str, Any]:
    """The manifest of the backup ``file`` (read without unpacking the rest: it is the first member), or an
    ``InvalidInputError`` saying "FILE is not a memlane backup (why)": a missing or empty file, a file that is
    not a tar archive, an archive without memlane's manifest."""
    source = Path(file).expanduser()

    def refused(why: str) -> InvalidInputError:
        return InvalidInputError(f"{source} is not a memlane backup ({why})", field="file")

    if not source.exists():
        raise refused("no such file")
    if not source.is_file():
        raise refused("not a file")
    if source.stat().st_size == 0:
        raise refused("an empty file")
    try:
        with tarfile.open(source, "r:*") as tar:
            member = next((m for m in tar if m.name == MANIFEST), None)
            if member is None or not member.isfile():
                raise refused(f"a tar archive without {MANIFEST}")
            data = tar.extractfile(member).read()
    except tarfile.ReadError:
        raise refused("not a tar archive, gzipped or not") from None
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise refused(f"a damaged archive: {exc}") from None
    try:
        manifest = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise refused(f"its {MANIFEST} is not a memlane backup's")
    if manifest.get("version") != FORMAT_VERSION:
        raise refused(f"format version {manifest.get('version')!r}; this memlane reads version {FORMAT_VERSION}")
    return manifest


def _unpack(source: Path, staged: Path) -> dict[str, Any]:
    """Extract the backup into ``staged`` and check it: its manifest, and every member's checksum."""
    manifest = read_manifest(source)
    try:
        with tarfile.open(source, "r:*") as tar:
            tar.extractall(staged, filter="data")
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise InvalidInputError(f"the backup {source} is damaged: {exc}", field="file") from None
    for member, checksum in manifest["files"].items():
        path = staged / member
        if not path.is_file() or _sha256(path) != checksum:
            raise InvalidInputError(f"the backup {source} is damaged: {member} does not match its checksum",
                                    field="file")
    return manifest
