"""A tenant's project in the store (store/sql_project.py), on SQLite and PostgreSQL: settings, webhooks and
the deliveries a write queues with its history, feedback, exports; and a store of the schema version before
them gaining their tables when it opens."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from memlane import Memory
from memlane.core.jobs import WEBHOOK
from memlane.store import postgres_schema, sqlite_schema

PROJECT_TABLES = ("project_settings", "webhooks", "feedback", "exports")


def _version_before_project(migrations) -> int:
    """The schema version before the migration that made the project tables (later ones may follow it)."""
    return next(n for n, statements in enumerate(migrations) if any("webhooks" in s for s in statements))


def _deliveries(memory, webhook_id):
    return [(d["event_type"], d["payload"]["event_details"]["event"], d["payload"]["event_details"]["data"]["memory"])
            for d in reversed(memory.webhook_deliveries(webhook_id))]


def test_project_features_on_each_backend(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder, background=False) as memory:
        assert memory.get_project()["custom_instructions"] is None
        memory.update_project(custom_instructions="Keep food only", custom_categories=["food", {"travel": "trips"}],
                              multilingual=True)
        memory.update_project(multilingual=None)  # a None clears one setting, the others stay
        assert memory.get_project(["custom_instructions", "custom_categories", "multilingual"]) == {
            "custom_instructions": "Keep food only", "custom_categories": ["food", {"travel": "trips"}],
            "multilingual": None}

        adds = memory.create_webhook("http://127.0.0.1:9/adds", "adds", ["memory_add"])
        changes = memory.create_webhook("https://example.org/changes", "changes", ["memory_update", "memory_delete"])
        paused = memory.create_webhook("http://127.0.0.1:9/paused", "paused", ["memory_add"])
        memory.update_webhook(paused["webhook_id"], is_active=False)
        assert [h["name"] for h in memory.get_webhooks()] == ["adds", "changes", "paused"]

        first = memory.add("I like green tea", user_id="u1", infer=False)["results"][0]["id"]
        memory.update(first, "I like black tea")
        other = memory.add("I have a cat", user_id="u2", infer=False)["results"][0]["id"]
        memory.delete(other)
        memory.delete_all(user_id="u1")
        assert _deliveries(memory, adds["webhook_id"]) == [("memory_add", "ADD", "I like green tea"),
                                                           ("memory_add", "ADD", "I have a cat")]
        assert _deliveries(memory, changes["webhook_id"]) == [("memory_update", "UPDATE", "I like black tea"),
                                                              ("memory_delete", "DELETE", "I have a cat"),
                                                              ("memory_delete", "DELETE", "I like black tea")]
        assert memory.webhook_deliveries(paused["webhook_id"]) == []
        update = memory.webhook_deliveries(changes["webhook_id"])[-1]["payload"]
        assert update["event_details"]["previous_memory"] == "I like green tea" and update["user_id"] == "u1"
        assert all(job.kind == WEBHOOK for job in memory.store.jobs(limit=100))
        assert memory.events() == []  # deliveries are not the events of async adds

        kept = memory.add("I live in Lisbon", user_id="u3", infer=False)["results"][0]["id"]
        memory.feedback(kept, "very_negative", "wrong city")
        memory.feedback(kept, None)
        assert [(f["feedback"], f["feedback_reason"]) for f in memory.get_feedback(kept)] == [
            ("VERY_NEGATIVE", "wrong city"), (None, None)]
        schema = {"type": "object", "properties": {"memories": {"type": "array", "items": {
            "type": "object", "properties": {"memory": {"type": "string"}}}}}}
        made = memory.create_memory_export(schema, filters={"user_id": "u3"})
        assert made["status"] == "SUCCEEDED"
        assert memory.get_memory_export(filters={"user_id": "u3"}) == {"memories": [{"memory": "I live in Lisbon"}]}
        assert memory.store.export(made["id"]).schema == schema

        memory.delete_all(user_id="u3", purge=True)  # the right to be forgotten erases its feedback too
        assert memory.get_feedback(kept) == []
        memory.delete_webhook(adds["webhook_id"])
        assert [h["name"] for h in memory.get_webhooks()] == ["changes", "paused"]


def test_a_sqlite_store_of_the_previous_version_gains_the_project_tables(tmp_path, hashing_embedder):
    path = tmp_path / "old.db"
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(path)}}}
    with Memory(config, embedder=hashing_embedder, background=False) as memory:
        kept = memory.add("I drink coffee", user_id="u", infer=False)["results"][0]["id"]
    con = sqlite3.connect(path, isolation_level=None)
    for table in PROJECT_TABLES:
        con.execute(f"DROP TABLE {table}")
    con.execute("ALTER TABLE doc_collections DROP COLUMN encoder")  # a later migration's column
    con.execute(f"PRAGMA user_version = {_version_before_project(sqlite_schema.MIGRATIONS)}")
    con.close()
    with Memory(config, embedder=hashing_embedder, background=False) as memory:
        memory.update_project(custom_instructions="coffee matters")
        memory.feedback(kept, "POSITIVE")
        assert memory.get_project(["custom_instructions"]) == {"custom_instructions": "coffee matters"}
        assert memory.get(kept)["memory"] == "I drink coffee"
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == sqlite_schema.VERSION
    tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert set(PROJECT_TABLES) <= tables
    con.close()


def test_a_postgres_schema_of_the_previous_version_is_migrated(pg, hashing_embedder):
    schema = pg.fresh_schema()
    with Memory(pg.config(schema), embedder=hashing_embedder, background=False) as memory:
        kept = memory.add("I drink coffee", user_id="u", infer=False)["results"][0]["id"]
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        for table in PROJECT_TABLES:
            con.execute(f"DROP TABLE memlane_{table}")
        before = _version_before_project(postgres_schema.MIGRATIONS)
        con.execute("DELETE FROM memlane_schema_version WHERE version > %s", (before,))
        assert postgres_schema.current_version(con) == before
    with Memory(pg.config(schema), embedder=hashing_embedder, background=False) as memory:
        memory.update_project(custom_instructions="coffee matters")
        memory.feedback(kept, "POSITIVE")
        assert memory.get_project(["custom_instructions"]) == {"custom_instructions": "coffee matters"}
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        assert postgres_schema.current_version(con) == postgres_schema.VERSION
        for table in PROJECT_TABLES:
            assert postgres_schema.exists(con, f"memlane_{table}")


@pytest.mark.parametrize("url, problem", [
    ("ftp://example.org/hook", "must start with http:// or https://"),
    ("http:///nohost", "names no host"),
    ("https://user:secret@example.org/hook", "user name or password"),
    ("http://127.0.0.1:8080/hook", "non-public address (127.0.0.1)"),
    ("http://10.1.2.3/hook", "non-public address (10.1.2.3)"),
    ("http://[::1]/hook", "non-public address (::1)"),
])
def test_webhook_urls_a_server_restricted_to_public_addresses_refuses(tmp_path, hashing_embedder, url, problem):
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}},
              "webhooks": {"private_networks": False}}
    with Memory(config, embedder=hashing_embedder, background=False) as memory:
        with pytest.raises(ValueError, match=problem.replace("(", r"\(").replace(")", r"\)")) as raised:
            memory.create_webhook(url, "hook", ["memory_add"])
        assert raised.value.field == "url"
        assert memory.get_webhooks() == []
