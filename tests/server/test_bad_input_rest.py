"""Bad input over REST, on both backends: every case a 4xx JSON answer naming the field, nothing
stored, and the server keeps serving. The cases are what a fuzzing session found answering 500 (lone
surrogates in 11 places, NUL bytes, deep and wide filters, unreadable bodies and query strings) and
where the server and its OpenAPI schema disagreed (integer ids, ``top_k: true``, ``Allow`` headers,
URLs past the HTTP parser's limit)."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from memlane.embeddings.hashing import HashingEmbedder
from support.server_fixtures import Live, start

U = "\\ud800"  # as JSON text: a lone surrogate once decoded
N = "\\u0000"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request, tmp_path_factory):
    home = tmp_path_factory.mktemp(f"bad-input-{request.param}")
    config = None
    if request.param == "postgres":
        config = request.getfixturevalue("pg").config()
    live, app = start(home, HashingEmbedder(), config=config, auth=False, mcp=False, warm_up=False)
    with live:
        with httpx.Client(base_url=live.url, timeout=120) as client:
            yield Live(url=live.url, home=home, app=app, server=live), client


def nested(levels: int, kind: str) -> dict:
    node: dict = {"a": 1}
    for _ in range(levels):
        node = {kind: [node]} if kind == "NOT" else {kind: [node, {"b": 2}]}
    return node


def raw(text: str) -> dict:
    return {"content": text, "headers": {"content-type": "application/json"}}


# (id, method, path, request keyword arguments, status, field)
CASES = [
    # lone surrogates: the 11 places of the report
    ("metadata value /memories", "POST", "/memories",
     raw('{"messages":"hi","user_id":"u","infer":false,"metadata":{"k":"%s"}}' % U), 422, "metadata.k"),
    ("metadata key /memories", "POST", "/memories",
     raw('{"messages":"hi","user_id":"u","infer":false,"metadata":{"k%s":1}}' % U), 422, "metadata"),
    ("metadata value mem0 add", "POST", "/v3/memories/add/",
     raw('{"messages":"hi","user_id":"u","infer":false,"metadata":{"k":"%s"}}' % U), 422, "metadata.k"),
    ("metadata key mem0 add", "POST", "/v3/memories/add/",
     raw('{"messages":"hi","user_id":"u","metadata":{"%s":1}}' % U), 422, "metadata"),
    ("content mem0 add", "POST", "/v3/memories/add/",
     raw('{"messages":[{"role":"user","content":"a%s"}],"user_id":"u"}' % U), 422, "messages[0].content"),
    ("metadata update", "PUT", "/memories/{id}", raw('{"metadata":{"k":"%s"}}' % U), 422, "metadata.k"),
    ("metadata collection", "POST", "/collections", raw('{"name":"c1","metadata":{"k%s":1}}' % U), 422,
     "metadata"),
    ("filter key /search", "POST", "/search", raw('{"query":"q","user_id":"u","filters":{"k%s":"x"}}' % U), 422,
     "filters"),
    ("filter in-list /search", "POST", "/search",
     raw('{"query":"q","user_id":"u","filters":{"k":{"in":["x","%s"]}}}' % U), 422, "filters"),
    ("filter value mem0 search", "POST", "/v3/memories/search/",
     raw('{"query":"q","filters":{"user_id":"u","k":"%s"}}' % U), 422, "filters"),
    ("context user_id", "POST", "/context/search",
     raw('{"conversation":"do you remember my tea?","user_id":"u","agent_id":"a%s"}' % U), 422, "agent_id"),
    # NUL: the same answer on both backends, and nothing stored
    ("NUL content", "POST", "/memories", raw('{"messages":"hi%s","user_id":"u","infer":false}' % N), 422,
     "messages[0].content"),
    ("NUL user_id", "POST", "/memories", raw('{"messages":"hi","user_id":"u%s","infer":false}' % N), 422,
     "user_id"),
    ("NUL metadata key", "POST", "/memories", raw('{"messages":"hi","user_id":"u","metadata":{"k%s":1}}' % N), 422,
     "metadata"),
    ("NUL in a path", "GET", "/memories/abc%00", {}, 422, "memory_id"),
    ("NUL in a query", "GET", "/memories", {"params": {"user_id": "u\x00"}}, 422, "user_id"),
    # deep and wide filters
    ("NOT 200 deep", "POST", "/search", {"json": {"query": "q", "user_id": "u", "filters": nested(200, "NOT")}},
     422, "filters"),
    ("AND 450 deep", "POST", "/search", {"json": {"query": "q", "user_id": "u", "filters": nested(450, "AND")}},
     422, "filters"),
    ("OR of 1,000", "POST", "/search",
     {"json": {"query": "q", "user_id": "u", "filters": {"OR": [{"a": i} for i in range(1000)]}}}, 422, "filters"),
    ("2,000 [ in GET filters", "GET", "/memories", {"params": {"user_id": "u", "filters": "[" * 2000}}, 422,
     "filters"),
    ("2,000 [ in DELETE filters", "DELETE", "/memories", {"params": {"user_id": "u", "filters": "[" * 2000}}, 422,
     "filters"),
    ("body nested 100,000 deep", "POST", "/search", raw("[" * 100_000), 422, "body"),
    ("body not UTF-8", "POST", "/memories",
     {"content": b'{"messages":"hi \xed\xa0\x80","user_id":"u"}', "headers": {"content-type": "application/json"}},
     422, "messages"),
    # schema and server agree
    ("top_k true", "POST", "/v3/memories/", {"json": {"filters": {"user_id": "u"}, "top_k": True}}, 422, "top_k"),
    ("threshold as text", "POST", "/search", {"json": {"query": "q", "user_id": "u", "threshold": "0.5"}}, 422,
     "threshold"),
    ("OPTIONS", "OPTIONS", "/memories", {}, 405, "method"),
    ("PATCH", "PATCH", "/memories/{id}", {}, 405, "method"),
    # collection names: one rule
    ("name with backslashes", "POST", "/collections", {"json": {"name": "..\\..\\x"}}, 422, "name"),
    ("name with %2F", "POST", "/collections", {"json": {"name": "..%2F..%2Fetc"}}, 422, "name"),
    ("name ..", "POST", "/collections", {"json": {"name": ".."}}, 422, "name"),
    ("name with /", "POST", "/collections", {"json": {"name": "a/b"}}, 422, "name"),
]


def _state(client) -> tuple:
    memories = client.get("/memories", params={"user_id": "u"}).json()["results"]
    messages = client.get("/messages", params={"user_id": "u"}).json()
    collections = client.get("/collections").json()
    return sorted((m["id"], m["memory"], json.dumps(m["metadata"])) for m in memories), len(messages), collections


@pytest.mark.parametrize("method, path, kwargs, status, field", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_a_4xx_naming_the_field_and_stores_nothing(server, method, path, kwargs, status, field):
    _, client = server
    added = client.post("/memories", json={"messages": "I like tea", "user_id": "u", "infer": False,
                                           "metadata": {"k": "v"}}).json()
    before = _state(client)
    response = client.request(method, path.replace("{id}", added["results"][0]["id"]), **kwargs)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["field"] == field, body
    assert "Traceback" not in response.text
    assert _state(client) == before
    assert client.get("/health").status_code == 200


def test_405_lists_every_method_of_the_path(server):
    _, client = server
    for path, allowed in (("/memories", "DELETE, GET, POST"), ("/memories/x", "DELETE, GET, PUT"),
                          ("/memories/cleanup", "POST"), ("/v1/memories/", "DELETE, GET, POST")):
        response = client.request("OPTIONS", path)
        assert response.status_code == 405 and response.headers["allow"] == allowed, (path, response.headers)


def test_integer_ids_are_documented_and_accepted(server):
    live, client = server
    schema = client.get("/openapi.json").json()
    user_id = schema["components"]["schemas"]["MemoryCreate"]["properties"]["user_id"]
    assert {"type": "integer"} in user_id["anyOf"]
    added = client.post("/memories", json={"messages": "I like tea", "user_id": 42, "infer": False}).json()
    assert added["results"] and client.get("/memories", params={"user_id": "42"}).json()["results"]


def test_a_url_past_the_parser_limit_is_a_json_414(server):
    live, _ = server
    port = int(live.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"GET /memories?user_id=u&filters=" + b"x" * 70_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while b"}" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 414") and b"content-type: application/json" in head.lower(), head
    assert json.loads(body)["field"] == "url"


def test_a_long_filter_in_a_query_string_is_a_422(server):
    _, client = server
    response = client.get("/memories", params={"user_id": "u", "filters": "x" * 16_385})
    assert response.status_code == 422 and response.json()["field"] == "filters"
