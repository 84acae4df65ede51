"""What the dashboard needs from the server, over real HTTP: the page and its assets at ``/ui``
(no key, strict security headers), ``GET /scopes`` (admin keys, tenant-scoped) and ``as_of`` on
``GET /memories``. The page itself is driven in a browser in tests/test_dashboard_browser.py."""

from __future__ import annotations

import pytest

from support.server_fixtures import live  # noqa: F401  (the module's server)
from test_server_postgres import live_pg  # noqa: F401  (a server on PostgreSQL, for the last test)


@pytest.fixture(scope="module")
def keys(live):  # noqa: F811
    return {"admin": live.key("dash", admin=True), "member": live.key("dash"), "other": live.key("dash-other", admin=True)}


@pytest.mark.parametrize(("path", "content_type", "marker"), [
    ("/ui", "text/html", b'<script src="/ui/assets/app.js" defer></script>'),
    ("/ui/", "text/html", b"<title>memlane dashboard</title>"),
    ("/ui/assets/app.js", "javascript", b"sessionStorage"),
    ("/ui/assets/app.css", "text/css", b"--accent"),
])
def test_the_page_and_its_assets_need_no_key_and_forbid_foreign_scripts(live, path, content_type, marker):  # noqa: F811
    with live.client() as anonymous:
        answer = anonymous.get(path)
    assert answer.status_code == 200 and content_type in answer.headers["content-type"]
    assert marker in answer.content
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "frame-ancestors 'none'" in policy
    assert answer.headers["x-content-type-options"] == "nosniff" and answer.headers["referrer-policy"] == "no-referrer"
    assert answer.headers["x-request-id"]


@pytest.mark.parametrize("path", ["/ui/assets/nope.js", "/ui/assets/../dashboard.py", "/ui/assets/%2e%2e/dashboard.py",
                                  "/ui/nope"])
def test_nothing_else_is_served_under_ui(live, path):  # noqa: F811
    with live.client() as anonymous:
        answer = anonymous.get(path)
    assert answer.status_code == 404
    assert b"import" not in answer.content


def test_scopes_list_each_user_agent_and_run_of_the_tenant_with_counts(live, keys):  # noqa: F811
    with live.client(keys["admin"]) as admin, live.client(keys["other"]) as other:
        assert admin.post("/memories", json={"messages": "I love cheese pizza.", "user_id": "ana"}).status_code == 200
        assert admin.post("/memories", json={"messages": "I don't like cheese pizza anymore.",
                                             "user_id": "ana"}).status_code == 200
        assert admin.post("/memories", json={"messages": [{"role": "user", "content": "Keeps bees"}],
                                             "agent_id": "helper", "run_id": "night", "infer": False}).status_code == 200
        assert other.post("/memories", json={"messages": "I live in Oslo.", "user_id": "zed"}).status_code == 200

        answer = admin.get("/scopes")
        assert answer.status_code == 200, answer.text
        assert answer.json() == {
            "users": [{"id": "ana", "memories": 2, "valid": 1, "messages": 2}],
            "agents": [{"id": "helper", "memories": 1, "valid": 1, "messages": 1}],
            "runs": [{"id": "night", "memories": 1, "valid": 1, "messages": 1}],
        }
        assert other.get("/scopes").json() == {"users": [{"id": "zed", "memories": 1, "valid": 1, "messages": 1}],
                                              "agents": [], "runs": []}


@pytest.mark.parametrize(("who", "params", "status", "says"), [
    (None, {}, 401, "missing API key"),
    ("member", {}, 403, "admin API key"),
    ("admin", {"limit": 0}, 422, "limit"),
    ("admin", {"limit": "many"}, 422, "limit"),
])
def test_scopes_refusals_name_the_problem(live, keys, who, params, status, says):  # noqa: F811
    with live.client(keys[who] if who else None) as client:
        answer = client.get("/scopes", params=params)
    assert answer.status_code == status and says in answer.text


def test_scopes_are_documented(live):  # noqa: F811
    with live.client() as anonymous:
        schema = anonymous.get("/openapi.json").json()
    assert "/scopes" in schema["paths"] and "/ui" not in schema["paths"]
    assert set(schema["components"]["schemas"]["Scopes"]["properties"]) == {"users", "agents", "runs"}


def test_list_memories_as_of_shows_what_was_valid_then_as_it_read(live, keys):  # noqa: F811
    with live.client(keys["admin"]) as admin:
        made = admin.post("/memories", json={"messages": [{"role": "user", "content": "Drives a red car"}],
                                             "user_id": "ivo", "infer": False}).json()["results"][0]
        before = admin.get(f"/memories/{made['id']}").json()["updated_at"]
        assert admin.put(f"/memories/{made['id']}", json={"text": "Drives a blue car"}).status_code == 200
        then = admin.get("/memories", params={"user_id": "ivo", "as_of": before}).json()["results"]
        now = admin.get("/memories", params={"user_id": "ivo"}).json()["results"]
        assert [r["memory"] for r in then] == ["Drives a red car"] and [r["memory"] for r in now] == ["Drives a blue car"]
        assert admin.get("/memories", params={"user_id": "ivo", "as_of": "2001-01-01T00:00:00Z"}).json()["results"] == []
        bad = admin.get("/memories", params={"user_id": "ivo", "as_of": "yesterday-ish"})
        assert bad.status_code == 422 and bad.json()["field"] == "as_of"


def test_scopes_on_postgres_count_only_the_tenants_own_rows(live_pg):
    """On PostgreSQL the tenants share tables: the counts of one never include the other's rows."""
    live, _ = live_pg
    with live.client(live.key("pg-one", admin=True)) as one, live.client(live.key("pg-two", admin=True)) as two:
        for client, texts in ((one, ["Likes tea", "Plays go"]), (two, ["Likes coffee"])):
            messages = [{"role": "user", "content": text} for text in texts]
            assert client.post("/memories", json={"messages": messages, "user_id": "sam", "agent_id": "bot",
                                                  "infer": False}).status_code == 200
        assert two.post("/memories", json={"messages": "what time is it?", "user_id": "kim"}).status_code == 200
        assert one.get("/scopes").json() == {"users": [{"id": "sam", "memories": 2, "valid": 2, "messages": 2}],
                                             "agents": [{"id": "bot", "memories": 2, "valid": 2, "messages": 2}],
                                             "runs": []}
        assert two.get("/scopes").json()["users"] == [{"id": "kim", "memories": 0, "valid": 0, "messages": 1},
                                                      {"id": "sam", "memories": 1, "valid": 1, "messages": 1}]
