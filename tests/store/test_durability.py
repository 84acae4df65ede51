"""What an acknowledged write survives is a setting (docs/storage.md, Durability): SQLite's
``vector_store.config.synchronous`` ("normal", the default, or "full") is applied as ``PRAGMA synchronous``
on every connection of the store, PostgreSQL's ``synchronous_commit`` (unset: the server's) on every pooled
session; both are validated by the config model and shown by ``Memory.info()`` / ``memlane info``. (What the
stricter setting costs is measured by benchmarks/bench_durability.py, not asserted here.)"""

from __future__ import annotations

import json
import threading

import pytest

from memlane import ConfigError, Memory


def _sqlite(tmp_path, **settings) -> dict:
    return {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "memlane.db"), **settings}},
            "embedder": {"provider": "hashing"}}


def _in_a_new_thread(store, sql: str):
    """``sql`` read on a connection the store opens for another thread (as a server's threads do)."""
    seen = []
    thread = threading.Thread(target=lambda: seen.append(store._run(lambda con: con.execute(sql).fetchone()[0])))
    thread.start()
    thread.join()
    return seen[0]


@pytest.mark.parametrize("setting, pragma, shown", [
    ({}, 1, "synchronous=normal"),
    ({"synchronous": "normal"}, 1, "synchronous=normal"),
    ({"synchronous": "full"}, 2, "synchronous=full"),
    ({"synchronous": "FULL"}, 2, "synchronous=full"),
])
def test_sqlite_synchronous_is_applied_and_shown(tmp_path, setting, pragma, shown):
    with Memory(_sqlite(tmp_path, **setting)) as memory:
        assert memory.store._run(lambda con: con.execute("PRAGMA synchronous").fetchone()[0]) == pragma
        assert _in_a_new_thread(memory.store, "PRAGMA synchronous") == pragma
        assert memory.info()["durability"] == shown


@pytest.mark.parametrize("value", ["fast", "extra", "off", 2, "", None])
def test_sqlite_synchronous_refuses_what_it_does_not_know(tmp_path, value):
    with pytest.raises(ConfigError) as refused:
        Memory(_sqlite(tmp_path, synchronous=value))
    assert "vector_store.config.synchronous" in str(refused.value)
    assert "'normal' or 'full'" in str(refused.value)


def test_memlane_info_shows_the_durability(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(_sqlite(tmp_path, synchronous="full")))
    assert json.loads(cli("--config", config, "info", "--json").stdout)["durability"] == "synchronous=full"


@pytest.mark.postgres
@pytest.mark.parametrize("setting, shown", [
    ({}, "synchronous_commit=on"),  # the server's default
    ({"synchronous_commit": "off"}, "synchronous_commit=off"),
    ({"synchronous_commit": False}, "synchronous_commit=off"),  # YAML's reading of off
    ({"synchronous_commit": "remote_apply"}, "synchronous_commit=remote_apply"),
])
def test_postgres_synchronous_commit_is_applied_and_shown(pg, setting, shown):
    with Memory({**pg.config(**setting), "embedder": {"provider": "hashing"}}) as memory:
        assert memory.info()["durability"] == shown
        with memory.store.db.pool.connection() as con:
            assert "synchronous_commit=" + con.execute("SHOW synchronous_commit").fetchone()[0] == shown


@pytest.mark.postgres
@pytest.mark.parametrize("value", ["maybe", 0, "full"])
def test_postgres_synchronous_commit_refuses_what_it_does_not_know(pg, value):
    with pytest.raises(ConfigError) as refused:
        Memory({**pg.config(synchronous_commit=value), "embedder": {"provider": "hashing"}})
    assert "vector_store.config.synchronous_commit" in str(refused.value)
    assert "'on', 'off', 'local', 'remote_write' or 'remote_apply'" in str(refused.value)  # what it takes
