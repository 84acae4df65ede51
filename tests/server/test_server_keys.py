"""API keys (stored hashed, listed without secrets, revocable) and the server's commands:
``memlane keys create|list|revoke``, ``memlane serve`` (what it prints, --no-auth refusal)."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from memlane.core.errors import InvalidInputError
from memlane.hosting.keys import KeyStore, Principal
from memlane.server.app import ServerSettings, is_loopback
from support.live_server import free_port


@pytest.fixture
def keys(tmp_path):
    store = KeyStore(tmp_path / "keys.db")
    yield store
    store.close()


def test_a_key_is_random_shown_once_and_stored_only_as_a_hash(keys, tmp_path):
    key, info = keys.create("acme")
    other, _ = keys.create("acme")
    assert key.startswith("ml_") and len(key) >= 40 and key != other
    assert info.prefix == key[:12] and info.tenant == "acme" and not info.admin and info.revoked_at is None
    raw = (tmp_path / "keys.db").read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("keys.db-*"))
    assert key.encode() not in raw and key[12:].encode() not in raw
    with sqlite3.connect(tmp_path / "keys.db") as con:
        stored = con.execute("SELECT hash FROM api_keys WHERE id = ?", (info.id,)).fetchone()[0]
    assert stored == hashlib.sha256(key.encode()).hexdigest()


def test_verify_revoke_and_list(keys):
    key, info = keys.create("acme", admin=True)
    assert keys.verify(key) == Principal(tenant="acme", admin=True, key_id=info.id)
    for wrong in (key[:-1] + ("A" if key[-1] != "A" else "B"), key + "x", "ml_", "", key[3:], "ml_" + "a" * 400):
        assert keys.verify(wrong) is None
    listed = keys.list()
    assert [k.id for k in listed] == [info.id] and key not in json.dumps([k.to_dict() for k in listed])
    revoked = keys.revoke(info.id)
    assert revoked.revoked_at and keys.verify(key) is None
    assert keys.revoke(info.id).revoked_at == revoked.revoked_at  # idempotent
    assert keys.list(include_revoked=False) == [] and keys.count() == 0
    with pytest.raises(InvalidInputError, match="no API key"):
        keys.revoke("key_unknown")


@pytest.mark.parametrize("tenant", ["", "two words", "../up", "a/b", "x" * 65])
def test_tenant_names_are_checked(keys, tenant):
    with pytest.raises(InvalidInputError, match="tenant"):
        keys.create(tenant)


def test_keys_commands(cli, tmp_path):
    created = json.loads(cli("keys", "create", "--tenant", "acme", "--admin", "--json").stdout)
    assert created["key"].startswith("ml_") and created["tenant"] == "acme" and created["admin"] is True
    plain = cli("keys", "create", "-t", "beta")
    key = plain.stdout.strip()
    assert key.startswith("ml_") and "cannot be shown" in plain.stderr
    # where the key's memories are: another tenant's file, and how to see them; default's is the CLI's own
    home = tmp_path / "home"
    assert created["store"] == str(home / "tenants" / "acme.db")
    said = " ".join(plain.stderr.split())
    assert f"its memories: {home / 'tenants' / 'beta.db'}" in said and "memlane --tenant beta list" in said
    default = cli("keys", "create", "--tenant", "default")
    assert f"its memories: {home / 'memlane.db'}, the ones Memory(), the memlane command" in " ".join(default.stderr.split())

    listed = json.loads(cli("keys", "list", "--json").stdout)
    assert [k["tenant"] for k in listed] == ["acme", "beta", "default"]
    assert created["key"] not in json.dumps(listed) and key not in json.dumps(listed)
    table = cli("keys", "list").stdout
    assert created["id"] in table and created["key"] not in table

    revoked = json.loads(cli("keys", "revoke", created["id"], "--json").stdout)
    assert revoked["revoked_at"]
    store = KeyStore(tmp_path / "home" / "keys.db")
    assert store.verify(created["key"]) is None and store.verify(key).tenant == "beta"
    store.close()

    bad = cli("keys", "create", "--tenant", "no spaces", ok=False)
    assert bad.exit_code == 1 and "tenant" in bad.stderr and "Traceback" not in bad.output
    unknown = cli("keys", "revoke", "key_nope", ok=False)
    assert unknown.exit_code == 1 and "no API key" in unknown.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com", "::"])
def test_no_auth_is_refused_with_a_non_loopback_host(cli, host, monkeypatch):
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: pytest.fail("the server must not start"))
    result = cli("serve", "--no-auth", "--host", host, ok=False)
    assert result.exit_code != 0 and "--no-auth" in result.stderr and "loopback" in result.stderr


def test_serve_prints_url_docs_and_how_to_create_a_key(cli, monkeypatch, embedder):
    import uvicorn

    from memlane.server import app as server_app

    for name in ServerSettings(auth=False, config={}, mcp_user_id="u", threads=2).to_env():
        monkeypatch.setenv(name, "")  # `serve --workers` exports its settings; put them back afterwards
        monkeypatch.delenv(name)
    started = {}

    def serve_on(server, sockets=None):  # one worker: uvicorn serves on the socket `serve` bound first
        [sock] = sockets
        started.update(host=server.config.host, port=server.config.port, bound=sock.getsockname())
        server.started = True

    monkeypatch.setattr(uvicorn.Server, "run", serve_on)
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: started.update(app=app, **kwargs))
    monkeypatch.setattr(server_app, "Tenants", lambda home, config, embedder=None: _FakeTenants())
    port = free_port()
    out = cli("serve", "--port", port).stdout
    assert f"http://127.0.0.1:{port}" in out and f"http://127.0.0.1:{port}/docs" in out
    assert f"http://127.0.0.1:{port}/ui" in out
    assert "memlane keys create --tenant NAME" in out and "/mcp" in out
    assert started == {"host": "127.0.0.1", "port": port, "bound": ("127.0.0.1", port)}

    started.clear()
    out = cli("serve", "--no-auth", "--host", "localhost", "--port", free_port(), "--workers", "2").stdout
    assert "off (--no-auth)" in out
    assert started["app"] == "memlane.server.app:app_from_env" and started["factory"] and started["workers"] == 2
    settings = ServerSettings.from_env()
    assert settings.auth is False and settings.host == "localhost"


class _FakeTenants:
    """Stands in for the tenants in the command test (no model needed to build the app)."""

    embedder = None

    def close(self):
        pass


def test_settings_round_trip_through_the_environment(tmp_path, monkeypatch):
    settings = ServerSettings(home=tmp_path, auth=False, max_body_bytes=1234, config={"formation": {"top_k": 3}},
                              mcp_user_id="alice", host="::1", threads=6)
    for name, value in settings.to_env().items():
        monkeypatch.setenv(name, value)
    again = ServerSettings.from_env()
    assert (again.home, again.auth, again.max_body_bytes, again.config, again.mcp_user_id, again.host,
            again.threads) == (tmp_path, False, 1234, {"formation": {"top_k": 3}}, "alice", "::1", 6)


@pytest.mark.parametrize("host,loopback", [("127.0.0.1", True), ("127.8.9.1", True), ("localhost", True),
                                           ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                           ("10.0.0.1", False), ("example.com", False)])
def test_is_loopback(host, loopback):
    assert is_loopback(host) is loopback
