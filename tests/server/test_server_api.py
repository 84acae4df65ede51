"""The REST API (mem0 open-source server shapes) against a real uvicorn on 127.0.0.1.

Covers every endpoint, the three ways to send a key, 401 / 403 / 404 / 400 / 422 /
413 / 500 answers (JSON bodies, no stack traces, X-Request-ID on every response)
and many clients at once.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from support.server_fixtures import TIMEOUT, live, start  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def key(live):
    return live.key("api")


@pytest.fixture(scope="module")
def admin_key(live):
    return live.key("api", admin=True)


@pytest.fixture
def api(live, key):
    with live.client(key) as client:
        yield client


def _add(api, text, user="alice", **extra):
    response = api.post("/memories", json={"messages": [{"role": "user", "content": text}], "user_id": user,
                                           "infer": False, **extra})
    assert response.status_code == 200, response.text
    return response.json()["results"][0]["id"]


def test_health_and_docs_need_no_key(live):
    with live.client() as anonymous:
        health = anonymous.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
        assert health.headers["x-request-id"]
        assert anonymous.get("/docs").status_code == 200
        spec = anonymous.get("/openapi.json").json()
    for path in ("/memories", "/memories/{memory_id}", "/memories/{memory_id}/history", "/search", "/reset",
                 "/health", "/messages", "/v1/ping/", "/v3/memories/add/", "/v3/memories/search/"):
        assert path in spec["paths"], path


def test_full_memory_lifecycle(api):
    added = api.post("/memories", json={
        "messages": [{"role": "user", "content": "I'm vegetarian and I live in Lisbon."}],
        "user_id": "life", "metadata": {"source": "chat"}})
    assert added.status_code == 200, added.text
    body = added.json()
    # Memory.add's result is passed through unchanged
    assert set(body) >= {"results", "status", "facts", "unchanged", "message_ids"} and body["status"] == "ok"
    assert {r["event"] for r in body["results"]} == {"ADD"} and body["results"]

    memory_id = _add(api, "My favourite fruit is mango", user="life", metadata={"category": "food"})
    got = api.get(f"/memories/{memory_id}").json()
    assert got["memory"] == "My favourite fruit is mango" and got["metadata"] == {"category": "food"}
    assert got["user_id"] == "life"

    listed = api.get("/memories", params={"user_id": "life"}).json()["results"]
    assert memory_id in [m["id"] for m in listed] and len(listed) == 1 + len(body["results"])
    filtered = api.get("/memories", params={"user_id": "life", "filters": json.dumps({"category": "food"})})
    assert [m["id"] for m in filtered.json()["results"]] == [memory_id]
    assert len(api.get("/memories", params={"user_id": "life", "limit": 1}).json()["results"]) == 1

    hits = api.post("/search", json={"query": "which fruit do I like?", "user_id": "life", "limit": 1}).json()
    assert [h["id"] for h in hits["results"]] == [memory_id] and 0 < hits["results"][0]["score"] <= 1
    assert api.post("/search", json={"query": "which fruit?", "user_id": "life", "top_k": 2}).json()["results"]
    none = api.post("/search", json={"query": "which fruit?", "user_id": "life", "threshold": 0.99}).json()
    assert none == {"results": []}
    hybrid = {"query": "which fruit?", "user_id": "life", "threshold": 0.99, "keyword_search": True}
    assert api.post("/search", json=hybrid).json()["results"] == []

    updated = api.put(f"/memories/{memory_id}", json={"text": "My favourite fruit is papaya"})
    assert updated.status_code == 200 and updated.json()["memory"] == "My favourite fruit is papaya"
    assert api.put(f"/memories/{memory_id}", json={"metadata": {"category": "fruit"}}).json()["metadata"] == {
        "category": "fruit"}
    history = api.get(f"/memories/{memory_id}/history").json()
    assert [e["event"] for e in history] == ["ADD", "UPDATE", "UPDATE"]
    assert history[1]["old_memory"] == "My favourite fruit is mango"

    messages = api.get("/messages", params={"user_id": "life"}).json()
    assert messages[0]["content"] == "I'm vegetarian and I live in Lisbon."

    assert api.delete(f"/memories/{memory_id}").json() == {"message": "Memory deleted successfully!"}
    assert api.get(f"/memories/{memory_id}").status_code == 404
    assert [e["event"] for e in api.get(f"/memories/{memory_id}/history").json()][-1] == "DELETE"

    deleted = api.delete("/memories", params={"user_id": "life"}).json()
    assert deleted["deleted"] == len(body["results"])
    assert api.get("/memories", params={"user_id": "life"}).json() == {"results": []}


def test_search_runs_the_requested_retrieval_stages(api):
    for text in ("Order XJ-9000 shipped on Monday", "I like quiet mornings", "The router model is RT-77"):
        _add(api, text, user="stages")
    query = {"query": "where is XJ-9000?", "user_id": "stages", "limit": 2}
    plain = api.post("/search", json=query).json()
    assert "metadata" not in plain
    staged = api.post("/search", json={**query, "keyword_search": True, "rerank": True, "filter_memories": True})
    assert staged.status_code == 200, staged.text
    body = staged.json()
    assert body["results"][0]["memory"] == "Order XJ-9000 shipped on Monday"
    assert body["results"][0]["scores"]["keyword"] > 0 and "rerank" not in body["results"][0]["scores"]
    # no reranker chosen (retrieval.reranker): the rerank asked for is skipped and the answer says why
    assert {name for name, stage in body["metadata"]["stages"].items() if stage["ran"]} == {
        "vector", "keyword", "filter"}
    assert "retrieval.reranker" in body["metadata"]["stages"]["rerank"]["skipped"]
    assert body["metadata"]["warnings"][0].startswith("rerank skipped: no reranker is configured")
    assert body["metadata"]["fallback_used"] is False and body["metadata"]["stages_failed"] == {}
    bad = api.post("/search", json={**query, "rerank": "yes"})
    assert bad.status_code == 422 and "rerank" in bad.text


def test_delete_all_purge_and_filters(api):
    _add(api, "keep me", user="purge", metadata={"k": 1})
    _add(api, "drop me", user="purge", metadata={"k": 2})
    dropped = api.delete("/memories", params={"user_id": "purge", "filters": json.dumps({"k": 2})}).json()
    assert dropped["deleted"] == 1
    assert [m["memory"] for m in api.get("/memories", params={"user_id": "purge"}).json()["results"]] == ["keep me"]
    purged = api.delete("/memories", params={"user_id": "purge", "purge": "true"}).json()
    assert purged["deleted"] == 1 and api.get("/messages", params={"user_id": "purge"}).json() == []


@pytest.mark.parametrize("scheme", ["Bearer", "Token", "X-API-Key"])
def test_each_key_header_style_is_accepted(live, key, scheme):
    with live.client(key, scheme=scheme) as client:
        assert client.get("/memories", params={"user_id": "nobody"}).status_code == 200


def test_missing_invalid_and_revoked_keys_are_401(live):
    from memlane.hosting.keys import KeyStore

    with live.client() as anonymous:
        missing = anonymous.get("/memories", params={"user_id": "a"})
        assert missing.status_code == 401 and "API key" in missing.json()["detail"]
        assert missing.headers["www-authenticate"].startswith("Bearer") and missing.headers["x-request-id"]
    for bad in ("ml_not-a-real-key", "garbage", "Bearer", "ml_" + "x" * 300):
        with httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {bad}"}, timeout=TIMEOUT) as c:
            assert c.post("/search", json={"query": "x", "user_id": "a"}).status_code == 401
    with httpx.Client(base_url=live.url, headers={"Authorization": "Basic dXNlcjpwYXNz"}, timeout=TIMEOUT) as c:
        assert c.get("/memories", params={"user_id": "a"}).status_code == 401

    keys = KeyStore(live.home / "keys.db")
    secret, info = keys.create("revoked-tenant")
    with live.client(secret) as client:
        assert client.get("/memories", params={"user_id": "a"}).status_code == 200
        keys.revoke(info.id)  # another connection, as `memlane keys revoke` in another process would
        refused = client.get("/memories", params={"user_id": "a"})
        assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    keys.close()


def test_admin_only_routes_are_403_for_ordinary_keys(live, api, admin_key):
    _add(api, "admin test", user="wild")
    assert api.post("/reset").status_code == 403
    assert api.get("/info").status_code == 403
    for call in (lambda c: c.post("/search", json={"query": "x", "filters": {"user_id": "*"}}),
                 lambda c: c.get("/memories", params={"filters": json.dumps({"user_id": "*"})}),
                 lambda c: c.get("/memories", params={"filters": json.dumps({"OR": [{"user_id": "*"}]})}),
                 lambda c: c.delete("/memories", params={"filters": json.dumps({"user_id": "*"})})):
        refused = call(api)
        assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    with live.client(admin_key) as admin:
        everyone = admin.get("/memories", params={"filters": json.dumps({"user_id": "*"})}).json()["results"]
        assert "wild" in {m["user_id"] for m in everyone}
        assert admin.post("/search", json={"query": "admin", "filters": {"user_id": "*"}}).status_code == 200
        assert admin.get("/info").json()["memories"] >= 1


def test_reset_erases_only_the_callers_tenant(live):
    mine, other = live.key("reset-a", admin=True), live.key("reset-b")
    with live.client(mine) as a, live.client(other) as b:
        _add(a, "tenant a memory", user="u")
        kept = _add(b, "tenant b memory", user="u")
        assert a.post("/reset").json() == {"message": "All memories reset"}
        assert a.get("/memories", params={"user_id": "u"}).json() == {"results": []}
        assert b.get(f"/memories/{kept}").status_code == 200


def test_scope_errors_are_400(api):
    for call in (lambda: api.post("/search", json={"query": "x"}),
                 lambda: api.get("/memories"),
                 lambda: api.delete("/memories"),
                 lambda: api.get("/messages"),
                 lambda: api.post("/memories", json={"messages": "hello"})):
        answer = call()
        assert answer.status_code == 400, answer.text
        assert "user_id" in answer.json()["detail"] and answer.json()["field"] == "user_id"


def test_unknown_ids_are_404(api):
    for call in (lambda: api.get("/memories/does-not-exist"),
                 lambda: api.put("/memories/does-not-exist", json={"text": "x"}),
                 lambda: api.delete("/memories/does-not-exist"),
                 lambda: api.get("/memories/does-not-exist/history")):
        answer = call()
        assert answer.status_code == 404 and "does-not-exist" in answer.json()["detail"]


@pytest.mark.parametrize("method,path,payload,field", [
    ("post", "/memories", {"messages": [{"role": "robot", "content": "x"}], "user_id": "a"}, "messages.0.role"),
    ("post", "/memories", {"messages": [], "user_id": "a"}, "messages"),
    ("post", "/memories", {"user_id": "a"}, "messages"),
    ("post", "/memories", {"messages": "x", "user_id": "a", "infer": "maybe"}, "infer"),
    ("post", "/memories", {"messages": "x", "user_id": "a", "memory_type": "dream"}, "memory_type"),
    ("post", "/memories", {"messages": "x", "user_id": "a", "metadata": {"user_id": "b"}}, "metadata"),
    ("post", "/memories", {"messages": "x", "user_id": "has space"}, "user_id"),
    ("post", "/memories", {"messages": "x", "user_id": "a", "userid": "typo"}, "userid"),
    ("post", "/search", {"query": "x", "user_id": "a", "limit": 3, "top_k": 4}, "top_k"),
    ("post", "/search", {"query": "x", "user_id": "a", "threshold": 2}, "threshold"),
    ("post", "/search", {"query": "   ", "user_id": "a"}, "query"),
    ("post", "/search", {"user_id": "a"}, "query"),
    ("post", "/search", {"query": "x", "user_id": "a", "filters": {"k": {"between": 1}}}, "filters"),
    ("post", "/search", {"query": "x", "user_id": "a", "as_of": "yesterday"}, "as_of"),
    ("put", "/memories/some-id", {}, "text"),
    ("put", "/memories/some-id", {"text": 5}, "text"),
])
def test_bad_input_is_422_naming_the_field(api, method, path, payload, field):
    answer = getattr(api, method)(path, json=payload)
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["field"] == field, body
    assert isinstance(body["detail"], str) and "Traceback" not in answer.text


def test_bad_query_parameters_are_422(api):
    for params, field in (({"user_id": "a", "limit": "many"}, "limit"),
                          ({"user_id": "a", "filters": "{not json"}, "filters"),
                          ({"user_id": "a", "filters": "[1, 2]"}, "filters"),
                          ({"user_id": "a", "filters": json.dumps({"x": {"regex": "."}})}, "filters")):
        answer = api.get("/memories", params=params)
        assert answer.status_code == 422 and answer.json()["field"] == field, answer.text
    broken = api.post("/search", content=b"{not json", headers={"content-type": "application/json"})
    assert broken.status_code == 422 and broken.json()["field"] == "body"


def test_oversized_bodies_are_413(api):
    big = {"messages": "x" * (300 * 1024), "user_id": "a"}
    answer = api.post("/memories", json=big)
    assert answer.status_code == 413 and "limit" in answer.json()["detail"] and answer.headers["x-request-id"]

    def chunks():  # no Content-Length: the limit is enforced while reading
        for _ in range(10):
            yield b"x" * (64 * 1024)

    streamed = api.post("/memories", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413 and "limit" in streamed.json()["detail"]
    # under the limit the same route works
    assert api.post("/memories", json={"messages": "x" * 1000, "user_id": "a", "infer": False}).status_code == 200


def test_request_id_on_every_response_and_echoed_when_given(api):
    ids = set()
    for answer in (api.get("/memories", params={"user_id": "a"}), api.get("/memories/none"),
                   api.post("/search", json={}), api.post("/reset")):
        ids.add(answer.headers["x-request-id"])
    assert len(ids) == 4
    assert api.get("/health", headers={"X-Request-ID": "trace-123"}).headers["x-request-id"] == "trace-123"
    unsafe = api.get("/health", headers={"X-Request-ID": "bad id\twith tab"}).headers["x-request-id"]
    assert unsafe != "bad id\twith tab"


def test_a_real_fault_is_500_with_request_id_and_no_stack_trace(live, key, api, monkeypatch, caplog):
    memory = live.memory("api")

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire: secret internals")

    monkeypatch.setattr(memory, "search", broken)
    with caplog.at_level("ERROR", logger="memlane.server"):
        answer = api.post("/search", json={"query": "x", "user_id": "a"})
    assert answer.status_code == 500
    request_id = answer.headers["x-request-id"]
    assert request_id in answer.json()["detail"] and answer.json()["request_id"] == request_id
    assert "secret internals" not in answer.text and "Traceback" not in answer.text
    assert any(request_id in record.getMessage() for record in caplog.records)
    monkeypatch.undo()
    assert api.post("/search", json={"query": "x", "user_id": "a"}).status_code == 200  # still serving


def test_many_clients_at_once(live, key):
    """32 clients add and search concurrently; every request succeeds and nothing is lost."""
    errors = []
    lock = threading.Lock()

    def client_run(n: int) -> int:
        with live.client(key) as client:
            ok = 0
            for i in range(5):
                added = client.post("/memories", json={"messages": f"client {n} fact {i}", "user_id": f"c{n}",
                                                        "infer": False})
                found = client.post("/search", json={"query": f"fact {i}", "user_id": f"c{n}", "limit": 10})
                if added.status_code != 200 or found.status_code != 200:
                    with lock:
                        errors.append((added.status_code, found.status_code))
                ok += 1
            return ok

    with ThreadPoolExecutor(max_workers=32) as pool:
        assert sum(pool.map(client_run, range(32))) == 160
    assert errors == []
    with live.client(key) as client:
        for n in range(32):
            assert len(client.get("/memories", params={"user_id": f"c{n}"}).json()["results"]) == 5


def test_no_auth_mode_acts_as_admin_of_the_default_tenant(tmp_path, embedder):
    server, app = start(tmp_path, embedder, auth=False)
    with server, httpx.Client(base_url=server.url, timeout=TIMEOUT) as client:
        added = client.post("/memories", json={"messages": "no key needed", "user_id": "dev", "infer": False})
        assert added.status_code == 200
        assert client.get("/memories", params={"filters": json.dumps({"user_id": "*"})}).status_code == 200
        assert client.post("/reset").status_code == 200
    assert (tmp_path / "memlane.db").exists()  # the default tenant: the file of the CLI and the SDK
    assert not (tmp_path / "keys.db").exists()
