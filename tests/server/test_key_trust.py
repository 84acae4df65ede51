"""Keys trusted with less than their tenant (``memlane keys create --read-only``, ``--user ID``) on a live
server: table-driven over (key kind x route) on REST and mem0's platform routes, then the MCP tools,
mem0's Python client, a key's last use, and a key store of an older memlane."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
import uuid

import pytest

from memlane.hosting.keys import KeyStore
from support.server_fixtures import call_tool, live, mcp_client  # noqa: F401  (fixture)

TENANT = "trust"
#: the kinds of key, as ``KeyStore.create`` takes them
KINDS = {"full": {}, "read_only": {"read_only": True}, "alice": {"users": ["alice", "ann"]},
         "alice_read_only": {"users": ["alice"], "read_only": True}}


@pytest.fixture(scope="module")
def keys(live):
    return {kind: live.app.state.key_store.create(TENANT, **options)[0] for kind, options in KINDS.items()}


@pytest.fixture
def mine(live):
    """A fresh memory of alice's and one of bob's (stored directly: the key under test changes nothing first)."""
    memory = live.memory(TENANT)
    tag = uuid.uuid4().hex[:8]
    alice = memory.add(f"alice likes tea {tag}", user_id="alice", infer=False)["results"][0]["id"]
    bob = memory.add(f"bob likes coffee {tag}", user_id="bob", infer=False)["results"][0]["id"]
    return {"alice": alice, "bob": bob, "tag": tag}


OK, WRITE, USER, TENANT_WIDE, ADMIN, GONE = "ok", "write", "user", "tenant", "admin", 404

# (name, method, path, request) -> what each kind of key gets: full, read_only, alice, alice_read_only
ROUTES = [
    ("add for alice", "POST", "/memories", {"json": {"messages": "alice plays chess", "user_id": "alice",
                                                     "infer": False}}, (OK, WRITE, OK, WRITE)),
    ("add for bob", "POST", "/memories", {"json": {"messages": "bob plays go", "user_id": "bob", "infer": False}},
     (OK, WRITE, USER, WRITE)),
    ("add for an agent only", "POST", "/memories", {"json": {"messages": "x", "agent_id": "bot", "infer": False}},
     (OK, WRITE, USER, WRITE)),
    ("search alice", "POST", "/search", {"json": {"query": "tea", "user_id": "alice"}}, (OK, OK, OK, OK)),
    ("search bob", "POST", "/search", {"json": {"query": "tea", "user_id": "bob"}}, (OK, OK, USER, USER)),
    ("search bob in filters", "POST", "/search", {"json": {"query": "tea", "filters": {"user_id": "bob"}}},
     (OK, OK, USER, USER)),
    ("search alice in filters", "POST", "/search", {"json": {"query": "tea", "filters": {"user_id": "alice"}}},
     (OK, OK, OK, OK)),
    ("search alice or an agent", "POST", "/search",
     {"json": {"query": "tea", "filters": {"OR": [{"user_id": "alice"}, {"agent_id": "bot"}]}}}, (OK, OK, USER, USER)),
    ("search alice and not bob", "POST", "/search",
     {"json": {"query": "tea", "user_id": "alice", "filters": {"NOT": [{"user_id": "bob"}]}}}, (OK, OK, USER, USER)),
    ("search users by ne", "POST", "/search",
     {"json": {"query": "tea", "user_id": "alice", "filters": {"user_id": {"ne": "bob"}}}}, (OK, OK, USER, USER)),
    ("search an agent", "POST", "/search", {"json": {"query": "tea", "agent_id": "bot"}}, (OK, OK, USER, USER)),
    ("search every user", "POST", "/search", {"json": {"query": "tea", "filters": {"user_id": "*"}}},
     (ADMIN, ADMIN, ADMIN, ADMIN)),
    ("list alice", "GET", "/memories", {"params": {"user_id": "alice"}}, (OK, OK, OK, OK)),
    ("list bob", "GET", "/memories", {"params": {"user_id": "bob"}}, (OK, OK, USER, USER)),
    ("get alice's", "GET", "/memories/{alice}", {}, (OK, OK, OK, OK)),
    ("get bob's", "GET", "/memories/{bob}", {}, (OK, OK, GONE, GONE)),
    ("history of bob's", "GET", "/memories/{bob}/history", {}, (OK, OK, GONE, GONE)),
    ("update alice's", "PUT", "/memories/{alice}", {"json": {"text": "alice likes green tea"}},
     (OK, WRITE, OK, WRITE)),
    ("update bob's", "PUT", "/memories/{bob}", {"json": {"text": "bob likes tea"}}, (OK, WRITE, GONE, WRITE)),
    ("delete bob's", "DELETE", "/memories/{bob}", {}, (OK, WRITE, GONE, WRITE)),
    ("delete alice's", "DELETE", "/memories/{alice}", {}, (OK, WRITE, OK, WRITE)),
    ("delete all of bob", "DELETE", "/memories", {"params": {"user_id": "bob"}}, (OK, WRITE, USER, WRITE)),
    ("messages of bob", "GET", "/messages", {"params": {"user_id": "bob"}}, (OK, OK, USER, USER)),
    ("cleanup alice", "POST", "/memories/cleanup", {"json": {"user_id": "alice", "keep_latest": 50, "dry_run": True}},
     (OK, WRITE, OK, WRITE)),
    ("context search bob", "POST", "/context/search", {"json": {"conversation": "what do I drink?", "user_id": "bob"}},
     (OK, OK, USER, USER)),
    ("context search alice", "POST", "/context/search",
     {"json": {"conversation": "what do I drink?", "user_id": "alice"}}, (OK, OK, OK, OK)),
    ("should search, no scope", "POST", "/context/should-search", {"json": {"conversation": "do you remember me?"}},
     (OK, OK, OK, OK)),
    ("events of the tenant", "GET", "/events", {}, (OK, OK, TENANT_WIDE, TENANT_WIDE)),
    ("documents", "GET", "/documents", {}, (OK, OK, TENANT_WIDE, TENANT_WIDE)),
    ("a new collection", "POST", "/collections", {"json": {"name": "c{tag}"}}, (OK, WRITE, TENANT_WIDE, WRITE)),
    ("re-encode a collection", "POST", "/collections/none/reencode", {"json": {"encoder": "english"}},
     (GONE, WRITE, TENANT_WIDE, WRITE)),
    ("reset", "POST", "/reset", {}, (ADMIN, WRITE, TENANT_WIDE, WRITE)),
    # mem0's platform routes
    ("mem0 add for alice", "POST", "/v3/memories/add/",
     {"json": {"messages": [{"role": "user", "content": "I swim"}], "user_id": "alice", "infer": False}},
     (OK, WRITE, OK, WRITE)),
    ("mem0 add for bob in filters", "POST", "/v3/memories/add/",
     {"json": {"messages": [{"role": "user", "content": "I run"}], "filters": {"user_id": "bob"}, "infer": False}},
     (OK, WRITE, USER, WRITE)),
    ("mem0 search alice", "POST", "/v3/memories/search/",
     {"json": {"query": "tea", "filters": {"AND": [{"user_id": "alice"}]}}}, (OK, OK, OK, OK)),
    ("mem0 search alice or bob", "POST", "/v3/memories/search/",
     {"json": {"query": "tea", "filters": {"OR": [{"user_id": "alice"}, {"user_id": "bob"}]}}}, (OK, OK, USER, USER)),
    ("mem0 list bob", "POST", "/v3/memories/", {"json": {"filters": {"user_id": "bob"}}}, (OK, OK, USER, USER)),
    ("mem0 v1 list bob", "GET", "/v1/memories/", {"params": {"user_id": "bob"}}, (OK, OK, USER, USER)),
    ("mem0 get bob's", "GET", "/v1/memories/{bob}/", {}, (OK, OK, GONE, GONE)),
    ("mem0 batch update bob's", "PUT", "/v1/batch/",
     {"json": {"memories": [{"memory_id": "{bob}", "text": "bob likes water"}]}}, (OK, WRITE, GONE, WRITE)),
    ("mem0 delete all of alice", "DELETE", "/v1/memories/", {"params": {"user_id": "alice"}}, (OK, WRITE, OK, WRITE)),
    ("mem0 profile of bob", "GET", "/v2/entities/user/bob/profile/", {}, (OK, OK, TENANT_WIDE, TENANT_WIDE)),
    ("mem0 feedback", "POST", "/v1/feedback/", {"json": {"memory_id": "{alice}", "feedback": "POSITIVE"}},
     (OK, WRITE, TENANT_WIDE, WRITE)),
    ("mem0 ping", "GET", "/v1/ping/", {}, (OK, OK, OK, OK)),
]


def _fill(value, ids):
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, dict):
        return {k: _fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, ids) for v in value]
    return value


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name, method, path, request_, expected", ROUTES, ids=[r[0] for r in ROUTES])
def test_each_kind_of_key_on_each_route(live, keys, mine, kind, name, method, path, request_, expected):
    want = expected[list(KINDS).index(kind)]
    with live.client(keys[kind]) as http:
        answer = http.request(method, _fill(path, mine), **_fill(request_, mine))
    body = answer.json()
    if want == OK:
        assert answer.status_code < 300, body
    elif want == GONE:
        assert answer.status_code == 404, body
    elif want == ADMIN:
        assert answer.status_code == 403 and "admin" in body["detail"], body
    else:
        assert answer.status_code == 403 and body["permission"] == want, body
        named = {WRITE: "read-only", USER: "limited to users", TENANT_WIDE: "the whole tenant"}[want]
        assert named in body["detail"], body


@pytest.mark.parametrize("kind", ["alice", "alice_read_only"])
def test_a_user_limited_key_never_sees_another_users_memories(live, keys, mine, kind):
    with live.client(keys[kind]) as http:
        found = http.post("/search", json={"query": f"likes {mine['tag']}", "user_id": "alice", "limit": 100}).json()
        listed = http.get("/memories", params={"user_id": "alice", "limit": 1000}).json()
        mem0 = http.post("/v3/memories/search/", json={"query": "likes", "filters": {"user_id": "alice"}}).json()
    every = found["results"] + listed["results"] + mem0["results"]
    assert every and {item["user_id"] for item in every} == {"alice"}
    assert mine["alice"] in {item["id"] for item in listed["results"]}


def test_every_route_of_the_app_is_in_the_table_of_what_it_needs(live):
    from fastapi.routing import APIRoute, iter_route_contexts

    from memlane.server.grants import ROUTES as NEEDS
    from memlane.server.middleware import PUBLIC_PATHS, PUBLIC_PREFIXES

    served = {(method, route.path) for route in iter_route_contexts(live.app.router.routes)
              if isinstance(getattr(route, "original_route", route), APIRoute) for method in route.methods
              if route.path not in PUBLIC_PATHS and not route.path.startswith(PUBLIC_PREFIXES)}  # no key: nothing held
    assert served - set(NEEDS) == set(), "say in server/grants.py whether the route reads or writes, and whose data"
    assert set(NEEDS) - served == set(), "the table names a route the app does not serve"


def test_mcp_tools_enforce_the_same(live, keys, mine):
    async def calls(kind):
        async with mcp_client(live, keys[kind]) as client:
            return {
                "add": await call_tool(client, "add_memory", {"messages": "I like rain", "user_id": "alice",
                                                              "infer": False}),
                "search bob": await call_tool(client, "search_memories", {"query": "coffee", "user_id": "bob"}),
                "search alice": await call_tool(client, "search_memories", {"query": "tea", "user_id": "alice"}),
                "no scope": await call_tool(client, "list_memories", {}),
                "get bob's": await call_tool(client, "get_memory", {"memory_id": mine["bob"]}),
                "delete alice's": await call_tool(client, "delete_memory", {"memory_id": mine["alice"]}),
                "documents": await call_tool(client, "search_documents", {"query": "tea"}),
            }

    read_only = asyncio.run(calls("read_only"))
    assert "read-only" in read_only["add"]["error"] and "read-only" in read_only["delete alice's"]["error"]
    assert "error" not in read_only["search bob"] and "error" not in read_only["documents"]
    limited = asyncio.run(calls("alice"))
    assert "error" not in limited["add"] and "error" not in limited["search alice"]
    assert {m["user_id"] for m in limited["search alice"]["results"]} == {"alice"}
    assert "may not reach user 'bob'" in limited["search bob"]["error"]
    # no scope: the server's default user ("default-user"), not one of the key's
    assert "may not reach user 'default-user'" in limited["no scope"]["error"]
    assert "no memory with id" in limited["get bob's"]["error"]
    assert "whole tenant" in limited["documents"]["error"]
    assert "error" not in limited["delete alice's"]


def test_mem0_python_client_gets_its_permission_error(mem0, live, keys, mine):
    read_only = mem0.MemoryClient(api_key=keys["read_only"], host=live.url)
    assert read_only.search("tea", filters={"user_id": "alice"})["results"] is not None
    with pytest.raises(mem0.exceptions.AuthenticationError, match="read-only"):
        read_only.add([{"role": "user", "content": "I sing"}], user_id="alice", infer=False)
    limited = mem0.MemoryClient(api_key=keys["alice"], host=live.url)
    assert {m["user_id"] for m in limited.get_all(filters={"user_id": "alice"})["results"]} == {"alice"}
    with pytest.raises(mem0.exceptions.AuthenticationError, match="may not reach user 'bob'"):
        limited.search("coffee", filters={"user_id": "bob"})
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        limited.get(mine["bob"])


def test_a_keys_last_use_is_recorded_and_listed(live, cli):
    store = live.app.state.key_store
    key, info = store.create(TENANT, users=["alice"])
    assert next(k for k in store.list() if k.id == info.id).last_used_at is None
    with live.client(key) as http:
        assert http.get("/memories", params={"user_id": "alice"}).status_code == 200
    deadline = time.monotonic() + 60  # written off the request path: wait for it, without timing it
    while next(k for k in store.list() if k.id == info.id).last_used_at is None:
        assert time.monotonic() < deadline, "the key's last use was never written"
        time.sleep(0.05)


@pytest.mark.parametrize("options, problem", [
    ({"users": []}, "at least one user"),
    ({"users": ["alice"], "admin": True}, "not both"),
    ({"users": ["two words"]}, "user_id"),
])
def test_a_limited_key_that_makes_no_sense_is_refused(tmp_path, options, problem):
    from memlane.core.errors import InvalidInputError

    store = KeyStore(tmp_path / "keys.db")
    with pytest.raises(InvalidInputError, match=problem):
        store.create("acme", **options)
    store.close()


def test_keys_commands_create_and_list_limited_keys(cli, tmp_path):
    made = json.loads(cli("keys", "create", "--tenant", "acme", "--user", "alice", "--user", "bob", "--read-only",
                          "--json").stdout)
    assert made["read_only"] is True and made["users"] == ["alice", "bob"] and made["last_used_at"] is None
    table = cli("keys", "list").stdout
    assert made["id"] in table and "alice" in table and "last" in table
    listed = json.loads(cli("keys", "list", "--json").stdout)
    assert listed[0]["users"] == ["alice", "bob"]
    refused = cli("keys", "create", "--tenant", "acme", "--user", "alice", "--admin", ok=False)
    assert refused.exit_code == 1 and "not both" in refused.stderr


def test_a_key_store_of_an_older_memlane_keeps_its_keys_with_full_access(tmp_path):
    """keys.db as memlane wrote it before keys could be trusted with less: no columns for it."""
    path = tmp_path / "keys.db"
    with sqlite3.connect(path) as con:
        con.executescript("""CREATE TABLE api_keys (id TEXT PRIMARY KEY, prefix TEXT NOT NULL, hash TEXT NOT NULL UNIQUE,
            tenant TEXT NOT NULL, admin INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, revoked_at TEXT);
            CREATE INDEX api_keys_prefix ON api_keys(prefix);""")
        key = "ml_" + "k" * 43
        from memlane.hosting.keys import digest

        con.execute("INSERT INTO api_keys VALUES ('key_old', ?, ?, 'acme', 0, '2025-01-01T00:00:00Z', NULL)",
                    (key[:12], digest(key)))
    store = KeyStore(path)
    principal = store.verify(key)
    assert principal.tenant == "acme" and not principal.limited and principal.users is None
    assert store.list()[0].read_only is False and store.list()[0].users is None
    store.close()
    with sqlite3.connect(path) as con:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 1
        con.execute("PRAGMA user_version = 7")
    newer = KeyStore(path)
    with pytest.raises(Exception, match=r"newer memlane \(schema 7, this one reads up to 1\); upgrade memlane"):
        newer.list()
    newer.close()
