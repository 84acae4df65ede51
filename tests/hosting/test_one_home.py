"""One home: with default settings the server, the CLI and the SDK read and write the same
stores — the default tenant's ``<home>/memlane.db``, another tenant's ``<home>/tenants/<tenant>.db``
— and a home written by an older server (only ``tenants/default.db``) keeps working."""

from __future__ import annotations

import json
import warnings

import httpx
import pytest

from memlane import Memory
from memlane.core.errors import InvalidInputError
from memlane.store import DEFAULT_TENANT, SQLiteStoreConfig, sqlite_path
from support.server_fixtures import TIMEOUT, start


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("MEMLANE_HOME", str(home))
    monkeypatch.delenv("MEMLANE_DATABASE_URL", raising=False)
    return home


def texts(result):
    return sorted(r["memory"] for r in result["results"])


def test_a_memory_added_through_any_face_is_seen_through_every_other(home, embedder, cli):
    server, _ = start(home, embedder, auth=False)
    with server, httpx.Client(base_url=server.url, timeout=TIMEOUT) as api:
        added = api.post("/memories", json={"messages": "I live in Lisbon", "user_id": "alice", "infer": False})
        assert added.status_code == 200, added.text
        listed = cli("list", "--user", "alice", "--json")
        assert [m["memory"] for m in json.loads(listed.output)["results"]] == ["I live in Lisbon"]

        with Memory(embedder=embedder) as sdk:  # the SDK with default settings
            assert texts(sdk.get_all(user_id="alice")) == ["I live in Lisbon"]
            sdk.add("I drink green tea", user_id="alice", infer=False)
        found = api.get("/memories", params={"user_id": "alice"}).json()
        assert texts(found) == ["I drink green tea", "I live in Lisbon"]
    assert sorted(p.name for p in home.iterdir() if p.suffix == ".db") == ["memlane.db"]
    assert not (home / "tenants").exists()


def test_the_cli_and_the_sdk_name_a_tenant(home, embedder, cli):
    with Memory(embedder=embedder, tenant="acme") as acme:
        acme.add("Acme ships on Fridays", user_id="ops", infer=False)
    assert (home / "tenants" / "acme.db").exists()
    listed = json.loads(cli("--tenant", "acme", "list", "--user", "ops", "--json").output)
    assert [m["memory"] for m in listed["results"]] == ["Acme ships on Fridays"]
    with Memory(embedder=embedder) as default:  # tenants never mix
        assert default.get_all(user_id="ops")["results"] == []
    refused = cli("--tenant", "../escape", "list", "--user", "ops", ok=False)
    assert refused.exit_code == 1 and "tenant must be 1-64 characters" in refused.output
    with pytest.raises(InvalidInputError, match="tenant"):
        Memory(embedder=embedder, tenant="no/slashes")


def test_a_server_sees_the_tenant_the_sdk_wrote(home, embedder):
    with Memory(embedder=embedder, tenant="acme") as acme:
        acme.add("Acme ships on Fridays", user_id="ops", infer=False)
    server, app = start(home, embedder)
    with server:
        assert texts(app.state.tenants.memory("acme").get_all(user_id="ops")) == ["Acme ships on Fridays"]


def test_a_home_an_older_server_wrote_keeps_its_memories(home, embedder, cli):
    """Read in place: with no ``memlane.db`` the default tenant's store stays ``tenants/default.db``."""
    legacy = home / "tenants" / "default.db"
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(legacy)}}}, embedder=embedder) as old:
        old.add("written by an older server", user_id="alice", infer=False)
    listed = json.loads(cli("list", "--user", "alice", "--json").output)
    assert [m["memory"] for m in listed["results"]] == ["written by an older server"]
    server, _ = start(home, embedder, auth=False)
    with server, httpx.Client(base_url=server.url, timeout=TIMEOUT) as api:
        assert texts(api.get("/memories", params={"user_id": "alice"}).json()) == ["written by an older server"]
        assert api.post("/memories", json={"messages": "and a new one", "user_id": "alice",
                                           "infer": False}).status_code == 200
    with Memory(embedder=embedder) as sdk:
        assert texts(sdk.get_all(user_id="alice")) == ["and a new one", "written by an older server"]
    assert not (home / "memlane.db").exists()


@pytest.mark.parametrize("config, tenant, history_db_path, files, expected", [
    ({}, DEFAULT_TENANT, None, [], "memlane.db"),
    ({}, "acme", None, [], "tenants/acme.db"),
    ({}, DEFAULT_TENANT, None, ["tenants/default.db"], "tenants/default.db"),
    ({}, DEFAULT_TENANT, None, ["tenants/default.db", "memlane.db"], "memlane.db"),
    ({"collection_name": "work"}, DEFAULT_TENANT, None, [], "work.db"),
    ({"path": "{tmp}/data"}, DEFAULT_TENANT, None, [], "{tmp}/data/memlane.db"),
    ({"path": "{tmp}/data"}, "acme", None, [], "{tmp}/data/tenants/acme.db"),
    ({"path": "{tmp}/one.db"}, "acme", None, [], "{tmp}/tenants/acme.db"),
    ({}, DEFAULT_TENANT, "{tmp}/history.db", [], "{tmp}/history.db"),
])
def test_where_each_tenant_lives(tmp_path, config, tenant, history_db_path, files, expected):
    home = tmp_path / "home"
    for name in files:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(b"")
    fill = {k: v.format(tmp=tmp_path) for k, v in config.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = sqlite_path(SQLiteStoreConfig(**fill), history_db_path and history_db_path.format(tmp=tmp_path),
                           tenant, home)
    expected = expected.format(tmp=tmp_path)
    assert path == (home / expected if not expected.startswith(str(tmp_path)) else type(home)(expected))


def test_the_database_url_is_the_store_of_every_face(pg, embedder, tmp_path, monkeypatch):
    """``$MEMLANE_DATABASE_URL`` with a config that names no store: the SDK and the server both use it."""
    import uuid

    from memlane.hosting.tenancy import Tenants

    monkeypatch.setenv("MEMLANE_DATABASE_URL", pg.url)
    tenant = f"onehome-{uuid.uuid4().hex[:8]}"
    with Memory(embedder=embedder, tenant=tenant) as sdk:
        assert "postgresql://" in sdk.info()["store"] and tenant in sdk.info()["store"]
        sdk.add("stored through the SDK", user_id="alice", infer=False)
    tenants = Tenants(tmp_path / "home", None, embedder=embedder)
    try:
        assert texts(tenants.memory(tenant).get_all(user_id="alice")) == ["stored through the SDK"]
    finally:
        tenants.close()
        pg.clear_public()  # the store was made in public: later tests expect it as a fresh database has it
    assert not (tmp_path / "home").exists()  # no SQLite file was made
