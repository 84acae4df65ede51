"""``memlane migrate``: a real SQLite store copied into a real PostgreSQL (tests/support/postgres.py)."""

from __future__ import annotations

import json
import sqlite3

import psycopg
import pytest

from memlane import Memory, migration
from memlane.errors import EmbedderMismatchError, InvalidInputError, StoreError
from memlane.memory import NewMemory
from memlane.store import postgres_schema

QUERIES = ("what does she drink", "travel plans", "pets at home", "work schedule")
FACTS = ["Drinks green tea every morning", "Is planning a trip to Lisbon in May", "Has two cats named Miso and Tofu",
         "Works night shifts at the hospital", "Prefers trains to planes", "Is learning to play the cello",
         "Allergic to peanuts", "Her sister lives in Rome", "Runs 10 km on Saturdays", "Reads science fiction"]


def url(path) -> str:
    return f"sqlite:///{path}"  # an absolute path gives sqlite:////abs/path, as SQLAlchemy writes it


@pytest.fixture(scope="module")
def source(tmp_path_factory, embedder):
    """A SQLite store with every kind of row: messages, memories with token vectors in several
    scopes, updates, an invalidation, a deletion, and idempotency keys. Shared by the tests of
    this module: migrating only reads it (test_source_is_opened_read_only)."""
    path = tmp_path_factory.mktemp("migrate") / "source.db"
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(path)}},
              "retrieval": {"store_token_vectors": True}}
    with Memory(config, embedder=embedder) as memory:
        for i, fact in enumerate(FACTS):
            memory.add([{"role": "user", "content": fact}], user_id=f"u{i % 3}", infer=False)
        memory.insert([NewMemory(text=f"Imported note {i}", agent_id="helper", metadata={"n": i}) for i in range(25)],
                      idempotency_keys=[f"import:{i}" for i in range(5)])
        ids = [r["id"] for r in memory.get_all(user_id="u0")["results"]]
        memory.update(ids[0], "Drinks black coffee every morning now")
        memory.delete(ids[1])
        memory.store.apply(_invalidation(memory, user_id="u1"))
    return path


def _invalidation(memory, user_id):
    from memlane.store.base import ChangeSet, Invalidate

    victim = memory.get_all(user_id=user_id)["results"][0]["id"]
    return ChangeSet(invalidations=[Invalidate(id=victim, reason="contradicted")])


def _snapshot(memory: Memory, history_ids: list[str]) -> dict:
    """Everything a user can read back from a store (``history_ids``: deleted memories' too)."""
    every = {"user_id": "*"}
    items = sorted(memory.get_all(filters=every, limit=1000)["results"] +
                   memory.get_all(agent_id="helper", limit=1000)["results"], key=lambda r: r["id"])
    ids = [r["id"] for r in items]
    return {
        "items": items,
        "history": {i: [(e.event, e.old_memory, e.new_memory, e.created_at) for e in memory.store.history(i)]
                    for i in history_ids},
        "messages": [m.to_dict() for m in memory.store.messages(_wide(), 1000)],
        "search": {q: [(r["id"], round(r["score"], 5)) for r in memory.search(q, filters=every, limit=5)["results"]]
                   for q in QUERIES},
        "scoped": {q: [r["id"] for r in memory.search(q, user_id="u0", limit=3)["results"]] for q in QUERIES},
        "keyword": [r["id"] for r in memory.search("tea cats", filters=every, keyword_search=True)["results"]],
        "tokens": {i: v.shape for i, v in memory.store.token_vectors(ids).items()},
        "keys": sorted(memory.store.known_keys([f"import:{i}" for i in range(10)])),
    }


def _wide():
    from memlane.filters import MATCH_ALL

    return MATCH_ALL


def _history_ids(path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute("SELECT DISTINCT memory_id FROM history ORDER BY memory_id")]
    finally:
        con.close()


def _sqlite_counts(path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("messages", "memories", "history", "applied_keys", "memory_tokens")}
    finally:
        con.close()


def test_migrate_copies_everything_and_reads_back_the_same(source, pg, embedder, cli):
    schema = pg.fresh_schema()
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(source)}}}, embedder=embedder) as m:
        before = _snapshot(m, _history_ids(source))
    result = cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, "--json")
    report = json.loads(result.stdout)
    counts = _sqlite_counts(source)
    assert report["counts"] == {t: [n, n] for t, n in counts.items()}
    assert counts["memory_tokens"] > 30 and counts["history"] > counts["memories"] > 30 and counts["applied_keys"] == 5
    assert report["index"] == "built after the load" and report["resumed"] is False
    with Memory(pg.config(schema), embedder=embedder) as target:
        after = _snapshot(target, _history_ids(source))
    for key in before:
        assert after[key] == before[key], key
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        assert con.execute("SELECT to_regclass(%s) IS NOT NULL", (postgres_schema.index_name(384),)).fetchone()[0]
    again = json.loads(cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, "--json").stdout)
    assert again["resumed"] is True and set(again["copied"].values()) == {0}
    assert again["counts"] == report["counts"]


def test_an_interrupted_migration_resumes_without_duplicates(source, pg, embedder):
    schema = pg.fresh_schema()
    calls = []

    def crash(table, done, total):
        calls.append((table, done))
        if table == "memories" and done >= 10:  # after two committed batches of memories
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migration.migrate(url(source), pg.url, schema_name=schema, batch_size=5, progress=crash)
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        partial = con.execute("SELECT count(*) FROM memlane_memories").fetchone()[0]
        assert partial == 10
    seen = []
    report = migration.migrate(url(source), pg.url, schema_name=schema, batch_size=5,
                               progress=lambda table, done, total: seen.append((table, done, total)))
    counts = _sqlite_counts(source)
    assert report.resumed and report.counts == {t: (n, n) for t, n in counts.items()}
    assert report.copied["memories"] == counts["memories"] - 10 and report.copied["messages"] == 0
    assert ("memories", 10, counts["memories"]) in seen  # progress starts where the first run stopped
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(source)}}}, embedder=embedder) as m:
        before = _snapshot(m, _history_ids(source))
    with Memory(pg.config(schema), embedder=embedder) as target:
        after = _snapshot(target, _history_ids(source))
    assert after == before


def test_target_with_another_embedder_or_foreign_data_is_refused(source, pg, embedder):
    schema = pg.fresh_schema()
    from memlane.store.postgres import PostgresDatabase, PostgresStore

    store = PostgresStore(PostgresDatabase(pg.url, schema_name=schema), "other-model", owns_database=True)
    store.bind_embedder("some-other-model", 768)
    store.close()
    with pytest.raises(EmbedderMismatchError, match="some-other-model"):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="other-model")
    with Memory(pg.config(schema, tenant="busy"), embedder=embedder) as busy:
        busy.add("already here", user_id="u", infer=False)
    with pytest.raises(StoreError, match="already holds"):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="busy")
    with Memory(pg.config(schema, tenant="busy"), embedder=embedder) as busy:
        assert [r["memory"] for r in busy.get_all(user_id="u")["results"]] == ["already here"]


def test_the_index_is_built_after_the_first_load_and_kept_for_the_next(source, pg):
    schema = pg.fresh_schema()
    first = migration.migrate(url(source), pg.url, schema_name=schema, tenant="one")
    second = migration.migrate(url(source), pg.url, schema_name=schema, tenant="two")
    assert first.index == "built after the load" and second.index == "kept (rows inserted into it)"
    assert first.counts == second.counts


@pytest.mark.parametrize("source_url, target_url, message", [
    ("mysql://x/y.db", "postgresql://u@h/db", "expected a sqlite:///path/to/file.db URL"),
    ("sqlite:///{tmp}/missing.db", "postgresql://u@h/db", "the file does not exist"),
    ("sqlite:///{tmp}/notes.txt", "postgresql://u@h/db", "is not a SQLite database"),
    ("sqlite:///{tmp}/other.db", "postgresql://u@h/db", "is not a memlane store"),
    ("sqlite:///{source}", "mysql://u@h/db", "--to: expected a postgresql://"),
    ("sqlite:///{source}", "postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=1",
     "cannot connect to PostgreSQL at postgresql://nobody@127.0.0.1:1/none"),
])
def test_bad_source_or_target_is_a_clear_error(source, tmp_path, cli, source_url, target_url, message):
    (tmp_path / "notes.txt").write_text("not a database, " * 400)
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE t (x)").connection.close()
    args = [a.format(tmp=tmp_path, source=source) for a in (source_url, target_url)]
    result = cli("migrate", "--from", args[0], "--to", args[1], ok=False)
    assert result.exit_code == 1
    output = " ".join(result.output.split())  # the console wraps long lines
    assert message in output and "secret" not in output and "Traceback" not in output


def test_source_is_opened_read_only(source, pg):
    before = source.read_bytes()
    migration.migrate(url(source), pg.url, schema_name=pg.fresh_schema())
    assert source.read_bytes() == before


def test_source_path_forms(source):
    assert migration.sqlite_source(url(source)) == source
    assert migration.sqlite_source(str(source)) == source  # a plain path
    with pytest.raises(InvalidInputError, match="does not exist"):
        migration.sqlite_source("sqlite:///relative/missing.db")
    assert migration.postgres_target("postgres://h/db") == "postgres://h/db"


def test_a_count_mismatch_fails_the_run_and_names_the_table(source, pg, embedder, cli):
    schema = pg.fresh_schema()
    cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema)
    with Memory(pg.config(schema), embedder=embedder) as target:  # someone writes into the tenant meanwhile
        target.add("written by a server during the migration", user_id="u0", infer=False)
    result = cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, ok=False)
    output = " ".join(result.output.split())
    counts = _sqlite_counts(source)
    assert result.exit_code == 1
    assert f"memories: {counts['memories']} in the source, {counts['memories'] + 1} in the target" in output
    assert f"messages: {counts['messages']} in the source, {counts['messages'] + 1} in the target" in output
