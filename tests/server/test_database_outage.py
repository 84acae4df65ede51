"""The database goes away under a real server (tests/support/tcp_proxy.py between memlane and a real
PostgreSQL: every connection cut, new ones refused, then the same port back):

- every request answers 503 with ``Retry-After``, a body naming the cause and the request id: the
  memlane routes, mem0's, the API-key check (it reads the database), the MCP tools (a tool error), the
  Python client of a running server (``StoreUnavailableError``);
- ``/health`` answers 200 saying ``degraded`` / ``database: unreachable``; ``/ready`` answers 503;
- once the database is back the server serves again by itself;
- an add the outage broke, retried with its ``Idempotency-Key``, keeps its message once.

Nothing here asserts on time (benchmarks/bench_faults.py measures it); ``RECOVERY`` only bounds how
long a broken server is waited for.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime
from contextlib import ExitStack

import httpx
import pytest

from memlane.core import filters as flt
from memlane.core.errors import StoreUnavailableError

from support.server_fixtures import Live, call_tool, mcp_client, start
from support.tcp_proxy import TcpProxy

RECOVERY = 120.0


@pytest.fixture(scope="module")
def outage(tmp_path_factory, pg):
    """Two servers (API keys on; none, for MCP and the routes behind the key check) on one schema, reaching
    PostgreSQL through one proxy the tests take down and bring back."""
    from memlane.embeddings.hashing import HashingEmbedder

    proxy = TcpProxy(pg.url)
    config = {"vector_store": {"provider": "postgres", "config": {"dsn": proxy.url, "schema": pg.fresh_schema()}}}
    with ExitStack() as stack:
        stack.callback(proxy.close)
        lives = []
        for auth in (True, False):
            home = tmp_path_factory.mktemp("outage-home")
            server, app = start(home, HashingEmbedder(), config=config, auth=auth, mcp_user_id="default-user")
            stack.enter_context(server)
            lives.append(Live(url=server.url, home=home, app=app, server=server))
        yield proxy, *lives


def wait_ready(live: Live) -> None:
    deadline = time.monotonic() + RECOVERY
    while httpx.get(live.url + "/ready", timeout=RECOVERY).status_code != 200:
        assert time.monotonic() < deadline, "the server did not serve again after the database came back"
        time.sleep(0.1)


def assert_unavailable(answer: httpx.Response) -> None:
    assert answer.status_code == 503, answer.text
    assert answer.headers["retry-after"].isdigit() and int(answer.headers["retry-after"]) >= 1
    body = answer.json()
    assert body["detail"].startswith("the database is unreachable: PostgreSQL at postgresql://")
    assert body["request_id"] == answer.headers["x-request-id"] and body["request_id"] in body["detail"]


def test_an_outage_answers_503_with_retry_after_health_says_so_and_the_server_recovers(outage):
    proxy, keyed, open_ = outage
    key = keyed.key("acme")
    with keyed.client(key) as api, open_.client() as anon:
        assert api.post("/memories", json={"messages": "I live in Porto", "user_id": "ana", "infer": False}
                        ).status_code == 200
        assert api.get("/health").json()["database"] == "ok" and api.get("/ready").status_code == 200
        proxy.down()
        try:
            requests = [
                lambda: api.get("/memories", params={"user_id": "ana"}),  # the API-key check reads the database
                lambda: anon.get("/memories", params={"user_id": "ana"}),  # a memlane route
                lambda: anon.post("/search", json={"query": "where do I live", "user_id": "ana"}),
                lambda: anon.post("/memories", json={"messages": "I like tea", "user_id": "ana", "infer": False},
                                  headers={"Idempotency-Key": "tea"}),
                lambda: anon.get("/v1/memories/", params={"user_id": "ana"}),  # mem0's routes
                lambda: anon.post("/v2/memories/search/", json={"query": "home", "filters": {"user_id": "ana"}}),
            ]
            for request in requests:
                assert_unavailable(request())
            health = anon.get("/health")
            assert health.status_code == 200
            assert health.json()["status"] == "degraded" and health.json()["database"] == "unreachable"
            assert datetime.fromisoformat(health.json()["since"]).tzinfo is not None
            ready = anon.get("/ready")
            assert ready.status_code == 503 and ready.headers["retry-after"].isdigit()
            assert ready.json()["database"] == "unreachable"
        finally:
            proxy.up()
        wait_ready(open_)
        wait_ready(keyed)
        assert anon.get("/health").json() == {**anon.get("/health").json(), "status": "ok", "database": "ok"}
        assert [m["memory"] for m in api.get("/memories", params={"user_id": "ana"}).json()["results"]] == [
            "I live in Porto"]
        assert api.post("/memories", json={"messages": "I like tea", "user_id": "ana", "infer": False},
                        headers={"Idempotency-Key": "tea"}).status_code == 200


def test_an_add_broken_by_the_outage_and_retried_with_its_key_keeps_its_message_once(outage, monkeypatch):
    """The messages are written, then the database goes away while the add forms: 503. The retry with the
    same Idempotency-Key once it is back stores the message once and forms it once."""
    proxy, _, open_ = outage
    memory = open_.memory("default")
    decide = memory.formation.decide

    def database_goes_away(*args, **kwargs):
        monkeypatch.setattr(memory.formation, "decide", decide)  # once
        proxy.down()
        return decide(*args, **kwargs)

    monkeypatch.setattr(memory.formation, "decide", database_goes_away)
    add = {"messages": [{"role": "user", "content": "My bike is green"}], "user_id": "bo", "infer": False}
    with open_.client() as anon:
        try:
            assert_unavailable(anon.post("/memories", json=add, headers={"Idempotency-Key": "bike"}))
        finally:
            proxy.up()
        wait_ready(open_)
        first = anon.post("/memories", json=add, headers={"Idempotency-Key": "bike"})
        assert first.status_code == 200 and [r["memory"] for r in first.json()["results"]] == ["My bike is green"]
        again = anon.post("/memories", json=add, headers={"Idempotency-Key": "bike"})
        assert again.json() == first.json()
    messages = memory.store.messages(flt.parse({"user_id": "bo"}), 100)
    assert [m.content for m in messages] == ["My bike is green"]
    assert [r["memory"] for r in memory.get_all(user_id="bo")["results"]] == ["My bike is green"]


def test_mcp_tools_and_the_python_client_name_the_cause(outage):
    from memlane.cli.remote import RemoteMemory
    from memlane.hosting.local_server import ServerAddress

    proxy, _, open_ = outage
    remote = RemoteMemory(ServerAddress(url=open_.url, key=None, pid=0))

    async def search_tool() -> dict:
        async with mcp_client(open_, "no-key-needed") as client:
            return await call_tool(client, "search_memories", {"query": "bike", "user_id": "bo"})

    proxy.down()
    try:
        error = asyncio.run(search_tool())["error"]
        assert "StoreUnavailableError: the database is unreachable: PostgreSQL at postgresql://" in error
        with pytest.raises(StoreUnavailableError, match="the database is unreachable") as raised:
            remote.search("bike", user_id="bo")
        assert raised.value.retry_after >= 1
    finally:
        proxy.up()
    wait_ready(open_)
    assert remote.search("bike", user_id="bo")["results"] is not None
