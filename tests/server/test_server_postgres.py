"""The REST server on PostgreSQL: every tenant's store is bound to its tenant over one
shared pool; the tenant-isolation walk of test_server_tenancy.py runs against it."""

from __future__ import annotations

import random

import psycopg
import pytest

from memlane.hosting.tenancy import Tenants
from support.server_fixtures import Live, start
from test_server_tenancy import USERS, Tenant, _check_results, _step, _visible


@pytest.fixture(scope="module")
def live_pg(tmp_path_factory, embedder, pg):
    home = tmp_path_factory.mktemp("server-pg-home")
    schema = pg.fresh_schema()
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("MEMLANE_DATABASE_URL", pg.url)  # the DSN comes from the environment
    server, app = start(home, embedder, config={"vector_store": {"provider": "postgres", "config": {"schema": schema}}})
    try:
        with server:
            yield Live(url=server.url, home=home, app=app, server=server), schema
    finally:
        monkeypatch.undo()


def test_two_tenants_never_see_each_other_on_postgres(live_pg, pg):
    live, schema = live_pg
    rng = random.Random(11)
    tenants = [Tenant(name, live.client(live.key(name)), live.client(live.key(name, admin=True)))
               for name in ("redpg", "bluepg")]
    try:
        for _ in range(60):
            me = rng.choice(tenants)
            other = tenants[1] if me is tenants[0] else tenants[0]
            _step(rng, me, other)
        for me, other in (tenants, tenants[::-1]):
            assert _visible(me) == me.memories
            for user in USERS:
                assert _visible(me, user) == {i: v for i, v in me.memories.items() if v[0] == user}
            hits = me.admin.post("/search", json={"query": f"{other.name} note", "filters": {"user_id": "*"},
                                                  "limit": 10000}).json()["results"]
            _check_results(me, other, hits)
    finally:
        for t in tenants:
            t.client.close()
            t.admin.close()
    assert not (live.home / "tenants").exists()  # no SQLite file was made
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        rows = dict(con.execute("SELECT tenant, count(*) FROM memlane_memories GROUP BY tenant").fetchall())
    assert rows == {t.name: len(t.memories) for t in tenants if t.memories}


def test_the_database_url_selects_postgres_when_the_config_names_no_store(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("MEMLANE_DATABASE_URL", "postgresql://u:secret@db.example:5432/mem")
    tenants = Tenants(tmp_path, None, embedder=embedder)
    assert tenants.postgres is not None and tenants.location == "postgresql://u@db.example:5432/mem (tenant column)"
    chosen = Tenants(tmp_path, {"vector_store": {"provider": "sqlite"}}, embedder=embedder)
    assert chosen.postgres is None  # a store the config names wins
    monkeypatch.delenv("MEMLANE_DATABASE_URL")
    assert Tenants(tmp_path, None, embedder=embedder).postgres is None
