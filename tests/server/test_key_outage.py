"""API keys are checked off the event loop, and keys the server verified keep working while their store
does not answer (``keys.db`` locked by another connection's exclusive lock, whose lookups wait for SQLite's
busy timeout; PostgreSQL behind tests/support/tcp_proxy.py, cut): ``/health`` and a known key's request
answer; an unknown key is 503 (it cannot be told from a valid one), not 401; once the store answers again,
a revoked key stops again.

``DEADLINE`` only bounds how long a request may take, generously, and stays below the time a lookup waits
for the store (SQLite's 30 s busy timeout; the pool's ``connect_timeout``, set long)."""

from __future__ import annotations

import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from support.server_fixtures import Live, serving, start
from support.tcp_proxy import TcpProxy

#: how long a lookup of the key store waits for the database (the pool's connect_timeout)
STORE_WAIT = 90
#: the most a request may take while the key store is away (the key check gives up on it after 2 s)
DEADLINE = 20


@pytest.fixture
def outage(tmp_path, pg):
    from memlane.embeddings.hashing import HashingEmbedder

    proxy = TcpProxy(pg.url)
    config = {"vector_store": {"provider": "postgres",
                               "config": {"dsn": proxy.url, "schema": pg.fresh_schema(), "connect_timeout": STORE_WAIT}}}
    server, app = start(tmp_path / "home", HashingEmbedder(), config=config)
    try:
        with server:
            yield proxy, Live(url=server.url, home=tmp_path / "home", app=app, server=server)
    finally:
        proxy.close()


def _get(url: str, key: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.get(url, headers=headers, timeout=STORE_WAIT * 2)


def test_known_keys_keep_working_and_the_server_answers_while_the_key_store_does_not(outage):
    proxy, live = outage
    known, unused = live.key("acme"), live.key("acme")
    revoked_later = live.key("acme")
    for key in (known, revoked_later):
        assert _get(live.url + "/v1/ping/", key).status_code == 200  # verified, so remembered
    live.app.state.key_check.refresh_seconds = 0  # every request reads the key store, as on SQLite
    proxy.down()
    try:
        with ThreadPoolExecutor(4) as pool:
            first = pool.submit(_get, live.url + "/v1/ping/", known)  # its lookup waits for the database
            health = pool.submit(_get, live.url + "/health")
            unknown = pool.submit(_get, live.url + "/v1/ping/", unused)  # a valid key never seen: can't be told
            again = pool.submit(_get, live.url + "/v1/ping/", known)
            answers = {name: future.result(timeout=DEADLINE) for name, future in
                       (("first", first), ("health", health), ("unknown", unknown), ("again", again))}
        assert answers["health"].status_code == 200
        assert answers["first"].status_code == 200 and answers["again"].status_code == 200
        assert answers["first"].json()["project_id"] == "acme"
        assert answers["unknown"].status_code == 503, answers["unknown"].text
        assert answers["unknown"].headers["retry-after"].isdigit()
        assert "cannot be checked now" in answers["unknown"].json()["detail"] or \
            "unreachable" in answers["unknown"].json()["detail"]
        assert live.app.state.key_check.unreachable_since is not None
    finally:
        proxy.up()
    # the database is back: the key never seen is checked, and a revocation counts again
    deadline = time.monotonic() + STORE_WAIT * 2
    while _get(live.url + "/v1/ping/", unused).status_code != 200:
        assert time.monotonic() < deadline, "the key store was never read again"
        time.sleep(0.1)
    live.app.state.key_store.revoke(next(k.id for k in live.app.state.key_store.list()
                                         if _is(k, revoked_later)))
    assert live.app.state.key_check.unreachable_since is None
    assert _get(live.url + "/v1/ping/", revoked_later).status_code == 401


def _is(info, key: str) -> bool:
    return key.startswith(info.prefix)


def test_a_locked_key_file_stalls_no_request(tmp_path, hashing_embedder):
    with serving(tmp_path / "home", hashing_embedder, warm_up=False) as live:
        known, unused = live.key("acme"), live.key("acme")
        assert _get(live.url + "/v1/ping/", known).status_code == 200  # read every request on SQLite
        live.app.state.key_store.close()  # its connections reopen on the next lookup, after the lock below
        locker = sqlite3.connect(live.home / "keys.db", isolation_level=None)
        locker.execute("PRAGMA locking_mode=EXCLUSIVE")
        locker.execute("BEGIN EXCLUSIVE")  # every other connection's read now waits (SQLite's busy timeout)
        try:
            with ThreadPoolExecutor(4) as pool:
                futures = {"known": pool.submit(_get, live.url + "/v1/ping/", known),
                           "health": pool.submit(_get, live.url + "/health"),
                           "unknown": pool.submit(_get, live.url + "/v1/ping/", unused),
                           "docs": pool.submit(_get, live.url + "/openapi.json")}
                answers = {name: future.result(timeout=DEADLINE) for name, future in futures.items()}
            assert answers["health"].status_code == 200 and answers["docs"].status_code == 200
            assert answers["known"].status_code == 200, answers["known"].text
            assert answers["unknown"].status_code == 503 and answers["unknown"].headers["retry-after"].isdigit()
            assert "this key cannot be checked now" in answers["unknown"].json()["detail"]
        finally:
            locker.execute("COMMIT")
            locker.close()
        deadline = time.monotonic() + STORE_WAIT
        while _get(live.url + "/v1/ping/", unused).status_code != 200:  # the store answers again
            assert time.monotonic() < deadline, "the key store was never read again"
            time.sleep(0.1)
        info = next(k for k in live.app.state.key_store.list() if _is(k, known))
        live.app.state.key_store.revoke(info.id)
        assert _get(live.url + "/v1/ping/", known).status_code == 401  # at the next request, as promised
