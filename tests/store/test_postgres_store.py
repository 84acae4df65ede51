"""What only the PostgreSQL store has: tenants sharing tables, schema versions, the HNSW
path, connection loss, configuration errors. Shared behaviour is in test_store_conformance.py."""

from __future__ import annotations

import psycopg
import pytest

from memlane import ConfigError, Memory
from memlane.core.errors import StoreError
from memlane.core.models import NewMemory
from memlane.store import postgres_schema
from support.counting import sent_statements


def test_tenants_share_tables_but_never_rows(pg, embedder):
    schema = pg.fresh_schema()
    with Memory(pg.config(schema, tenant="acme"), embedder=embedder) as acme, \
            Memory(pg.config(schema, tenant="globex"), embedder=embedder) as globex:
        a = acme.add("acme's secret plan", user_id="u", infer=False)["results"][0]["id"]
        globex.add("globex's roadmap", user_id="u", infer=False)
        assert [r["memory"] for r in globex.search("secret plan", filters={"user_id": "*"})["results"]] == [
            "globex's roadmap"]
        assert globex.get(a) is None and globex.history(a) == []
        assert [r["memory"] for r in globex.search("secret", user_id="u", keyword_search=True)["results"]] == [
            "globex's roadmap"]
        globex.reset()
        assert acme.info()["memories"] == 1 and globex.info()["memories"] == 0
        assert "tenant=acme" in acme.info()["store"]


def test_migrations_are_recorded_and_idempotent(pg, embedder):
    schema = pg.fresh_schema()
    with Memory(pg.config(schema), embedder=embedder):
        pass
    with Memory(pg.config(schema), embedder=embedder):  # a second start changes nothing
        pass
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        assert postgres_schema.current_version(con) == postgres_schema.VERSION
        versions = [r[0] for r in con.execute("SELECT version FROM memlane_schema_version ORDER BY version")]
        assert versions == list(range(1, postgres_schema.VERSION + 1))
        assert postgres_schema.migrate(con) == (postgres_schema.VERSION, postgres_schema.VERSION)
        indexes = {r[0] for r in con.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,))}
        assert "memlane_memories_hnsw_384" in indexes


def test_a_store_in_its_own_schema_never_uses_the_tables_of_public(pg, hashing_embedder):
    """``public`` is on the search path (pgvector lives there); memlane tables already there (a store
    configured without a schema) must not stand in for the configured schema's own."""
    public = {"vector_store": {"provider": "postgres", "config": {"dsn": pg.url}}}
    with Memory(public, embedder=hashing_embedder, tenant="in-public") as memory:
        memory.add("a row in public", user_id="alice", infer=False)
    schema = pg.fresh_schema()
    with Memory(pg.config(schema), embedder=hashing_embedder) as memory:
        assert memory.store.count() == 0
        memory.add("a row in the schema", user_id="alice", infer=False)
    with psycopg.connect(pg.url, autocommit=True) as con:
        homes = {row[0] for row in con.execute(
            "SELECT schemaname FROM pg_tables WHERE tablename = 'memlane_memories'").fetchall()}
        assert {"public", schema} <= homes
        assert con.execute(f'SELECT text FROM "{schema}".memlane_memories').fetchall() == [("a row in the schema",)]
        assert ("a row in the schema",) not in con.execute("SELECT text FROM public.memlane_memories").fetchall()
    pg.clear_public()


def test_auto_migrate_off_refuses_an_old_schema(pg, embedder):
    with pytest.raises(StoreError, match="memlane db upgrade"):
        Memory(pg.config(auto_migrate=False), embedder=embedder)


def test_unscoped_search_uses_the_hnsw_index_and_agrees_with_exact(pg, embedder):
    schema = pg.fresh_schema()
    texts = [f"Note {i}: {topic}" for i, topic in enumerate(
        ["tennis on Sundays", "a sister in Rome", "allergic to cats", "pasta for dinner", "night shifts",
         "learning Japanese", "a red bicycle", "jazz records", "hiking in the Alps", "a fear of spiders"] * 3)]
    with Memory(pg.config(schema), embedder=embedder) as exact, \
            Memory(pg.config(schema, exact_search_limit=0), embedder=embedder) as ann:
        exact.insert([NewMemory(text=t, user_id=f"u{i % 5}") for i, t in enumerate(texts)])
        for query in ("sports", "family abroad", "music"):
            wide = {"user_id": "*"}
            assert [r["id"] for r in ann.search(query, filters=wide, limit=5)["results"]] == [
                r["id"] for r in exact.search(query, filters=wide, limit=5)["results"]]
        with psycopg.connect(pg.url, autocommit=True) as con:  # the plan of the ANN query uses the index
            con.execute(f'SET search_path TO "{schema}", public')
            con.execute("SET enable_seqscan = off")
            plan = "\n".join(r[0] for r in con.execute(
                "EXPLAIN SELECT id FROM memlane_memories m WHERE m.tenant = 'default' AND m.dims = 384"
                " ORDER BY (m.vector::vector(384)) <=> (SELECT vector FROM memlane_memories LIMIT 1)::vector(384)"
                " LIMIT 5"))
            assert "memlane_memories_hnsw_384" in plan


def test_without_the_vector_index_every_search_is_exact(pg, hashing_embedder):
    schema = pg.fresh_schema()
    texts = [f"note {i} about {topic}" for i, topic in enumerate(["tennis", "Rome", "cats", "pasta", "jazz"] * 4)]
    with Memory(pg.config(schema, vector_index=False, exact_search_limit=0), embedder=hashing_embedder) as plain:
        plain.insert([NewMemory(text=t, user_id=f"u{i % 4}") for i, t in enumerate(texts)])
        with psycopg.connect(pg.url, autocommit=True) as con:
            con.execute(f'SET search_path TO "{schema}", public')
            assert con.execute("SELECT to_regclass(%s)", (postgres_schema.index_name(hashing_embedder.dims),)
                               ).fetchone()[0] is None
        found = plain.search("note about jazz", filters={"user_id": "*"}, limit=20)["results"]
        scores = [r["score"] for r in found]
        assert len(found) == 20 and scores == sorted(scores, reverse=True)
        assert found[0]["memory"].endswith("jazz")


def test_vectors_of_long_memories_stay_in_the_row(pg, embedder):
    """pgvector's default storage moves a vector to the TOAST table once a row passes ~2 kB; an
    exact scan of a scope would then read every vector through the TOAST index. The schema keeps
    vectors in the row and lets the text and terms be compressed instead."""
    schema = pg.fresh_schema()
    words = ("the team reviewed quarterly budget forecasts for the northern region while planning a"
             " migration of billing services to the new cluster before the holiday freeze").split()
    texts = [" ".join(words[(i + j) % len(words)] for j in range(120)) + f" note {i}" for i in range(20)]
    with Memory(pg.config(schema), embedder=embedder) as memory:
        memory.insert([NewMemory(text=t, user_id="u") for t in texts])
        with psycopg.connect(pg.url, autocommit=True) as con:
            con.execute(f'SET search_path TO "{schema}", public')
            row_bytes, = con.execute("SELECT min(pg_column_size(m.*)) FROM memlane_memories m").fetchone()
            assert row_bytes > 2100  # long enough that the default storage would have moved the vector
            toasted_chunks, = con.execute(
                "SELECT count(*) FROM memlane_memories m WHERE pg_column_toast_chunk_id(m.vector) IS NOT NULL").fetchone()
            assert toasted_chunks == 0
        assert memory.search(texts[3], user_id="u", limit=1)["results"][0]["memory"] == texts[3]


def test_repeated_searches_are_planned_for_their_own_scope(pg, embedder):
    """psycopg prepares a statement after five runs, and PostgreSQL may then plan it once for any
    parameters; a scope's size is a parameter, so the store asks for a plan per execution."""
    schema = pg.fresh_schema()
    texts = ["plays tennis on Sundays", "has a sister in Rome", "is allergic to cats", "cooks pasta", "works nights"]
    with Memory(pg.config(schema, max_connections=1, exact_search_limit=0), embedder=embedder) as memory:
        memory.insert([NewMemory(text=t, user_id=f"u{i % 3}") for i, t in enumerate(texts * 4)])
        for _ in range(4):  # 12 runs of each statement: prepared from the 6th
            for user in ("u0", "u1", "u2"):
                assert memory.search("sports", user_id=user, limit=3)["results"]
                memory.get_all(user_id=user)
        with memory.store.db.pool.connection() as con:  # the pool's only connection: the one that searched
            plans = con.execute("SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements").fetchall()
    assert any("ORDER BY" in statement and custom >= 5 for statement, _, custom in plans)
    assert [(statement, generic) for statement, generic, _ in plans if generic] == []


def test_a_dropped_connection_is_retried_once(pg, embedder):
    with Memory(pg.config(min_connections=2), embedder=embedder) as memory:
        memory.add("survives a restart", user_id="u", infer=False)
        store = memory.store
        with psycopg.connect(pg.url, autocommit=True) as admin:  # what a server restart does to our connections
            killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                   " WHERE application_name = '' AND pid <> pg_backend_pid()"
                                   " AND datname = current_database()").fetchone()[0]
        assert killed >= 1
        assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["survives a restart"]
        memory.add("and writes again", user_id="u", infer=False)
        assert store.count() == 2


def test_configuration_errors_are_helpful(pg, embedder, monkeypatch):
    monkeypatch.delenv("MEMLANE_DATABASE_URL", raising=False)
    with pytest.raises(ConfigError, match="dsn is missing"):
        Memory({"vector_store": {"provider": "postgres"}}, embedder=embedder)
    with pytest.raises(ConfigError, match="vector_store.config.schema"):
        Memory({"vector_store": {"provider": "postgres", "config": {"dsn": pg.url, "schema": "no-dashes"}}},
               embedder=embedder)
    with pytest.raises(ConfigError, match="vector_store.config.ann_candidates"):
        Memory({"vector_store": {"provider": "postgres", "config": {"dsn": pg.url, "ann_candidates": 0}}},
               embedder=embedder)
    with pytest.raises(ConfigError, match="unknown setting"):
        Memory({"vector_store": {"provider": "postgres", "config": {"dsn": pg.url, "colour": "red"}}},
               embedder=embedder)
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        Memory({"vector_store": {"provider": "postgres", "config": {
            "dsn": "postgresql://nobody:secret@127.0.0.1:1/none", "connect_timeout": 1}}}, embedder=embedder)


def test_the_database_url_environment_variable_is_the_default_dsn(pg, embedder, monkeypatch):
    monkeypatch.setenv("MEMLANE_DATABASE_URL", pg.url)
    schema = pg.fresh_schema()
    with Memory({"vector_store": {"provider": "postgres", "config": {"schema": schema}}}, embedder=embedder) as m:
        m.add("from the environment", user_id="u", infer=False)
        assert "secret" not in m.info()["store"] and m.info()["memories"] == 1


def test_db_commands_upgrade_and_report(pg, cli):
    schema = pg.fresh_schema()
    first = cli("db", "upgrade", "--dsn", pg.url, "--schema", schema)
    assert f"version 0 -> {postgres_schema.VERSION}" in first.output
    again = cli("db", "upgrade", "--dsn", pg.url, "--schema", schema)
    assert "already current" in again.output
    import json

    reported = json.loads(cli("db", "upgrade", "--dsn", pg.url, "--schema", schema, "--json").output)
    assert (reported["schema"], reported["before"], reported["after"]) == (schema, postgres_schema.VERSION,
                                                                           postgres_schema.VERSION)

    status = json.loads(cli("db", "status", "--dsn", pg.url, "--schema", schema, "--json").output)
    assert status["schema_version"] == postgres_schema.VERSION and status["memories_per_tenant"] == {}
    failed = cli("db", "status", "--dsn", "postgresql://x:y@127.0.0.1:1/z", ok=False)
    assert failed.exit_code == 1 and "cannot connect to PostgreSQL" in failed.output and ":y@" not in failed.output


def test_keyword_terms_are_sent_in_binary_and_read_back_as_postgres_parses_them(pg, embedder):
    """The store builds each tsvector in PostgreSQL's binary format; the server must read it as the
    equivalent text: positions per term, scope and tenant tokens at the end, capped positions,
    lexemes too long for PostgreSQL left out."""
    from memlane.text import keywords

    schema = pg.fresh_schema()
    long_word = "x" * 3000
    with Memory(pg.config(schema, tenant="t1"), embedder=embedder) as memory:
        memory.add(f"tea tea coffee {long_word}", user_id="u1", infer=False)
        memory.add("工程师", user_id="u1", infer=False)
        memory.add("tea " * 300, user_id="u1", infer=False)  # a lexeme keeps 256 positions, as in text input
        with psycopg.connect(pg.url, autocommit=True) as con:
            con.execute(f'SET search_path TO "{schema}", public')
            rows = {r[0]: r[1] for r in con.execute("SELECT text, terms::text FROM memlane_memories")}
    user, tenant = keywords.scope_token("user_id", "u1"), keywords.scope_token("tenant", "t1")
    expected = sorted([f"'tea':1,2", "'coffe':3", f"'{user}':5", f"'{tenant}':5"])
    assert sorted(rows[f"tea tea coffee {long_word}"].split(" ")) == expected
    # Chinese as words in search mode: the long word and the words inside it
    assert sorted(rows["工程师"].split(" ")) == sorted(["'工程':1", "'工程师':2", f"'{user}':3", f"'{tenant}':3"])
    assert sorted(rows["tea " * 300].split(" ")) == sorted(
        ["'tea':" + ",".join(map(str, range(1, 257))), f"'{user}':301", f"'{tenant}':301"])
    with psycopg.connect(pg.url, autocommit=True) as con:  # the same as the server's own parse of the text form
        same = con.execute("SELECT %s::tsvector::text", ("'tea':" + ",".join(map(str, range(1, 301))),)).fetchone()[0]
    assert same == "'tea':" + ",".join(map(str, range(1, 257)))


def test_a_token_write_back_waits_for_an_update_in_progress_and_then_keeps_nothing(pg, hashing_embedder):
    """Rows are locked while the write-back checks them: a search that read a memory just before
    another process updates it must not store token vectors of the old text next to the new one."""
    import threading

    import numpy as np

    schema = pg.fresh_schema()
    with Memory(pg.config(schema), embedder=hashing_embedder) as memory:
        mid = memory.add("green tea in the morning", user_id="u", infer=False)["results"][0]["id"]
        read = memory.store.get(mid)
        tokens = np.ones((3, 384), dtype=np.float32) / np.sqrt(384)
        kept: list[int] = []
        with psycopg.connect(pg.url) as con:  # another writer: updated, not committed yet
            con.execute(f'SET search_path TO "{schema}", public')
            con.execute("SELECT 1 FROM memlane_memories WHERE id = %s FOR UPDATE", (mid,))
            con.execute("UPDATE memlane_memories SET text = 'black coffee', updated_at = '2099-01-01' WHERE id = %s",
                        (mid,))
            writer = threading.Thread(target=lambda: kept.append(memory.store.keep_token_vectors([(read, tokens)])))
            writer.start()
            writer.join(0.5)
            assert writer.is_alive()  # waiting for the update's lock
            con.commit()
        writer.join()
        assert kept == [0] and memory.store.token_vectors([mid]) == {}


def test_a_keyword_search_is_one_statement_with_the_scope_statistics_and_cosines(pg, hashing_embedder, monkeypatch):
    """The keyword search sends one statement for its matches, their BM25 scores (computed in SQL), their
    cosines, the scope's statistics and the records (before: a second for the records the search had not
    read yet, and four before that); its answer is the one those statements gave."""
    from memlane.core import filters as flt
    from memlane.store import SearchReads

    schema = pg.fresh_schema()
    with Memory(pg.config(schema), embedder=hashing_embedder) as memory:
        memory.insert([NewMemory(text=f"note {i} about tennis" + " and jazz" * (i % 3), user_id="u") for i in range(12)]
                      + [NewMemory(text="tennis and jazz elsewhere", user_id="other")])
        store, vector = memory.store, hashing_embedder.embed(["tennis jazz"], "query")[0]
        where = flt.Compare(flt.Field(column="user_id"), "eq", "u")
        sent = sent_statements(monkeypatch)
        reads = SearchReads()
        first = store.keyword_search("tennis jazz", vector, where, 5, reads)
        cold, sent[:] = list(sent), []
        again = store.keyword_search("tennis jazz", vector, where, 5, reads)
        warm = list(sent)
        monkeypatch.undo()
    assert len(cold) == 1 and len(warm) == 1
    assert [(r.id, s, c) for r, s, c in again] == [(r.id, s, c) for r, s, c in first]
    assert [r.text for r, _, _ in first][:4] == ["note 2 about tennis and jazz and jazz",
                                                 "note 5 about tennis and jazz and jazz",
                                                 "note 8 about tennis and jazz and jazz",
                                                 "note 11 about tennis and jazz and jazz"]
    assert all(r.user_id == "u" for r, _, _ in first) and all(-1 <= c <= 1 for _, _, c in first)


@pytest.mark.parametrize("exact_search_limit", [10_000, 0])
def test_a_warm_search_is_one_round_trip(pg, hashing_embedder, monkeypatch, exact_search_limit):
    """The scope's size class (score it exactly, or ask the HNSW index) is counted once and reused:
    the first vector search of a scope sends the bounded count and the search, the next ones the
    search only; an insert by this store counts again."""
    schema = pg.fresh_schema()
    with Memory(pg.config(schema, exact_search_limit=exact_search_limit), embedder=hashing_embedder) as memory:
        memory.insert([NewMemory(text=f"note {i} about tennis and jazz", user_id="u") for i in range(30)])
        def statements(search) -> list[str]:
            sent.clear()
            assert len(search()["results"]) == 5
            return list(sent)

        sent = sent_statements(monkeypatch)
        first = statements(lambda: memory.search("tennis", user_id="u", limit=5, keyword_search=False))
        warm = statements(lambda: memory.search("jazz", user_id="u", limit=5, keyword_search=False))
        memory.add("another note about tennis", user_id="u", infer=False)
        after_insert = statements(lambda: memory.search("tennis", user_id="u", limit=5, keyword_search=False))
        monkeypatch.undo()
    assert len(first) == 2 and "count(*)" in first[0]
    assert len(warm) == 1 and "count(*)" not in warm[0]
    assert len(after_insert) == 2 and "count(*)" in after_insert[0]
    assert ("::vector(384)" in warm[0]) == (exact_search_limit == 0)  # the index path casts for the HNSW index
