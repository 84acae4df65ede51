"""Stores from every version: a store at each schema version since the first (built from the migrations'
own history, with rows written in the first version's columns) opens migrated to the current schema,
exactly as a new store has it (tables, columns, indexes, constraints, triggers, functions), with its rows
kept; on SQLite and on PostgreSQL. A store written by a newer memlane is refused with a message."""

from __future__ import annotations

import re
import sqlite3

import pytest

from memlane.core.errors import StoreError
from memlane.store import sqlite_schema
from memlane.store.sqlite import SQLiteStore, register_functions

VECTOR = bytes(range(12))  # three float32s: the store reads no vector here
NEWER = "this store was written by a newer memlane (schema {newer}, this one reads up to {current}); upgrade memlane"


# -- SQLite ------------------------------------------------------------------------------------------


def _sqlite_at(path, version: int) -> None:
    """A store file at schema ``version``, with a memory, its history, a message and metadata written in
    the first version's columns."""
    con = sqlite3.connect(path, isolation_level=None)
    register_functions(con)
    con.execute("BEGIN")
    for steps in sqlite_schema.MIGRATIONS[:version]:
        for statement in steps:
            con.execute(statement)
    con.execute(f"PRAGMA user_version = {version}")
    con.execute("INSERT INTO meta(key, value) VALUES ('marker', 'kept')")
    con.execute("INSERT INTO memories(id, text, hash, user_id, metadata, created_at, updated_at, vector)"
                " VALUES ('m1', 'alice drinks green tea', 'h1', 'alice', '{\"topic\": \"food\"}',"
                " '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z', ?)", (VECTOR,))
    con.execute("INSERT INTO history(memory_id, event, new_memory, created_at, user_id)"
                " VALUES ('m1', 'ADD', 'alice drinks green tea', '2025-01-01T00:00:00Z', 'alice')")
    con.execute("COMMIT")
    con.close()


def _sqlite_schema(path) -> dict:
    with sqlite3.connect(path) as con:
        objects = sorted((kind, name, table, " ".join((sql or "").split()))
                         for kind, name, table, sql in con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"))
        version = con.execute("PRAGMA user_version").fetchone()[0]
        columns = {name: con.execute(f"PRAGMA table_xinfo('{name}')").fetchall()
                   for kind, name, *_ in objects if kind == "table"}
    return {"objects": objects, "columns": columns, "version": version}


def _open(path) -> None:
    store = SQLiteStore(path)
    try:
        store.count()  # the first statement opens the file and migrates it
    finally:
        store.close()


@pytest.mark.parametrize("version", range(1, sqlite_schema.VERSION + 1))
def test_a_sqlite_store_of_every_version_migrates_to_the_current_schema_with_its_rows(tmp_path, version):
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    _sqlite_at(old, version)
    _open(old)
    _open(new)
    assert _sqlite_schema(old) == _sqlite_schema(new)
    assert _sqlite_schema(old)["version"] == sqlite_schema.VERSION
    with sqlite3.connect(old) as con:
        assert con.execute("SELECT id, text, user_id, metadata, created_at FROM memories").fetchall() == [
            ("m1", "alice drinks green tea", "alice", '{"topic": "food"}', "2025-01-01T00:00:00Z")]
        assert con.execute("SELECT memory_id, event, new_memory, user_id FROM history").fetchall() == [
            ("m1", "ADD", "alice drinks green tea", "alice")]
        assert con.execute("SELECT value FROM meta WHERE key = 'marker'").fetchone() == ("kept",)


def test_a_sqlite_store_of_a_newer_memlane_is_refused(tmp_path):
    path = tmp_path / "newer.db"
    _open(path)
    with sqlite3.connect(path) as con:
        con.execute(f"PRAGMA user_version = {sqlite_schema.VERSION + 1}")
    with pytest.raises(StoreError) as refused:
        _open(path)
    assert NEWER.format(newer=sqlite_schema.VERSION + 1, current=sqlite_schema.VERSION) in str(refused.value)


# -- PostgreSQL --------------------------------------------------------------------------------------

KEY = "ml_" + "v" * 43


def _postgres_at(url: str, schema: str, version: int) -> None:
    import psycopg

    from memlane.hosting.keys import digest
    from memlane.store import postgres_schema
    from memlane.store.postgres import PostgresDatabase

    database = PostgresDatabase(url, schema_name=schema, check=False, vector_index=False)  # no migration here
    try:
        with database.pool.connection() as con:
            postgres_schema.migrate(con, upto=version)
            with con.transaction():
                con.execute("INSERT INTO memlane_meta(tenant, key, value) VALUES ('acme', 'marker', 'kept')")
                con.execute("INSERT INTO memlane_memories(tenant, id, text, hash, user_id, metadata, created_at,"
                            " updated_at, vector, terms, nterms) VALUES ('acme', 'm1', 'alice drinks green tea', 'h1',"
                            " 'alice', '{\"topic\": \"food\"}', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z',"
                            " '[1,0,0]', to_tsvector('simple', 'alice drinks green tea'), 4)")
                con.execute("INSERT INTO memlane_history(tenant, memory_id, event, new_memory, created_at, user_id)"
                            " VALUES ('acme', 'm1', 'ADD', 'alice drinks green tea', '2025-01-01T00:00:00Z', 'alice')")
                con.execute("INSERT INTO memlane_messages(tenant, id, user_id, role, content, created_at)"
                            " VALUES ('acme', 'msg1', 'alice', 'user', 'I drink green tea', '2025-01-01T00:00:00Z')")
                if postgres_schema.exists(con, "memlane_api_keys"):  # a key as the version of its table kept it
                    con.execute("INSERT INTO memlane_api_keys(id, prefix, hash, tenant, admin, created_at)"
                                " VALUES ('key_old', %s, %s, 'acme', false, '2025-01-01T00:00:00Z')",
                                (KEY[:12], digest(KEY)))
    except psycopg.Error:
        database.close()
        raise
    database.close()


#: the catalog of a schema, with the schema's name written as S
_CATALOG = {
    "columns": "SELECT table_name, column_name, data_type, udt_name, is_nullable, column_default, collation_name,"
               " is_identity, is_generated, generation_expression FROM information_schema.columns"
               " WHERE table_schema = %(s)s",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %(s)s",
    "constraints": "SELECT c.relname, k.conname, k.contype, pg_get_constraintdef(k.oid) FROM pg_constraint k"
                   " JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                   " WHERE n.nspname = %(s)s",
    "triggers": "SELECT c.relname, t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c"
                " ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %(s)s AND NOT t.tgisinternal",
    "functions": "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n"
                 " ON n.oid = p.pronamespace WHERE n.nspname = %(s)s",
    "comments": "SELECT c.relname, a.attname, col_description(c.oid, a.attnum) FROM pg_attribute a"
                " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %(s)s AND col_description(c.oid, a.attnum) IS NOT NULL",
    "storage": "SELECT c.relname, a.attname, a.attstorage FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
               " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %(s)s AND c.relkind = 'r'"
               " AND a.attnum > 0 AND NOT a.attisdropped",
    "versions": "SELECT version FROM {schema}.memlane_schema_version",
}


def _postgres_catalog(url: str, schema: str) -> dict:
    import psycopg

    named = re.compile(re.escape(f'"{schema}"') + "|" + re.escape(schema))
    with psycopg.connect(url, autocommit=True) as con:
        return {part: sorted(tuple(named.sub("S", v) if isinstance(v, str) else v for v in row)
                             for row in con.execute(sql.replace("{schema}", f'"{schema}"'), {"s": schema}))
                for part, sql in _CATALOG.items()}


def _postgres_versions():
    from memlane.store import postgres_schema

    return range(1, postgres_schema.VERSION + 1)


@pytest.mark.postgres
@pytest.mark.parametrize("version", _postgres_versions())
def test_a_postgres_store_of_every_version_migrates_to_the_current_schema_with_its_rows(pg, version):
    import psycopg

    from memlane.hosting.keys import PostgresKeyStore
    from memlane.store.postgres import PostgresDatabase

    old, new = pg.fresh_schema(), pg.fresh_schema()
    _postgres_at(pg.url, old, version)
    migrated = PostgresDatabase(pg.url, schema_name=old, vector_index=False)  # opening migrates
    PostgresDatabase(pg.url, schema_name=new, vector_index=False).close()
    try:
        assert _postgres_catalog(pg.url, old) == _postgres_catalog(pg.url, new)
        with psycopg.connect(pg.url, autocommit=True) as con:
            con.execute(f'SET search_path TO "{old}", public')
            assert con.execute("SELECT tenant, id, text, user_id, metadata, created_at FROM memlane_memories"
                               ).fetchall() == [("acme", "m1", "alice drinks green tea", "alice", {"topic": "food"},
                                                 "2025-01-01T00:00:00Z")]
            assert con.execute("SELECT memory_id, event, new_memory, user_id FROM memlane_history").fetchall() == [
                ("m1", "ADD", "alice drinks green tea", "alice")]
            assert con.execute("SELECT id, content FROM memlane_messages").fetchall() == [("msg1", "I drink green tea")]
            assert con.execute("SELECT value FROM memlane_meta WHERE key = 'marker'").fetchone() == ("kept",)
            keys = PostgresKeyStore(migrated)
            if con.execute("SELECT count(*) FROM memlane_api_keys").fetchone()[0]:  # a key kept: full access
                principal = keys.verify(KEY)
                assert principal.tenant == "acme" and not principal.limited
    finally:
        migrated.close()


@pytest.mark.postgres
def test_a_postgres_store_of_a_newer_memlane_is_refused(pg):
    import psycopg

    from memlane.store import postgres_schema
    from memlane.store.postgres import PostgresDatabase

    schema = pg.fresh_schema()
    PostgresDatabase(pg.url, schema_name=schema, vector_index=False).close()
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'INSERT INTO "{schema}".memlane_schema_version(version) VALUES (%s)',
                    (postgres_schema.VERSION + 1,))
    with pytest.raises(StoreError) as refused:
        PostgresDatabase(pg.url, schema_name=schema, vector_index=False)
    assert NEWER.format(newer=postgres_schema.VERSION + 1, current=postgres_schema.VERSION) in str(refused.value)
