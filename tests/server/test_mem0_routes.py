"""The routes tables of docs/mem0.md against the server: every route a mem0 client method calls (each row)
is served, none answers "no such route" (404 Not Found) or 405, and every route of memlane's mem0 routers
is in a row. The clients themselves run in test_server_mem0_client.py and test_mem0_js_client.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memlane.server import events_routes, platform, platform_batch, platform_entities, platform_profiles
from memlane.server import platform_refusals
from memlane.server.errors import _routes
from support.server_fixtures import live  # noqa: F401  (fixture)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mem0.md"
ROUTE = re.compile(r"^\|[^|]*\|[^|]*\| `(?P<methods>[A-Z\\|]+) (?P<path>/[^`]*)` \|", re.M)
SPLIT = "Project, webhooks, feedback, exports: see docs/webhooks.md"
OURS = (platform, platform_batch, platform_entities, platform_profiles, platform_refusals)


def rows(text: str) -> set[tuple[str, str]]:
    return {(method, m["path"]) for m in ROUTE.finditer(text) for method in m["methods"].replace("\\", "").split("|")}


def template(path: str) -> str:
    return re.sub(r"\{[^}]*\}", "{}", path)


TEXT = PAGE.read_text(encoding="utf-8")
assert SPLIT in TEXT, "docs/mem0.md must point to docs/webhooks.md for the project routes"
MEMLANE_ROWS = sorted(rows(TEXT[:TEXT.index(SPLIT)]))
PROJECT_ROWS = sorted(rows(TEXT[TEXT.index(SPLIT):]))


def served(app) -> set[tuple[str, str]]:
    return {(method, template(route.path_format)) for route in _routes(app) if hasattr(route, "path_format")
            for method in getattr(route, "methods", None) or ()}


def test_the_tables_are_read():
    assert len(MEMLANE_ROWS) >= 30 and ("GET", "/v1/entities/") in MEMLANE_ROWS
    assert ("POST", "/v1/feedback/") in PROJECT_ROWS


@pytest.mark.parametrize("method, path", MEMLANE_ROWS + PROJECT_ROWS, ids=lambda v: v)
def test_every_row_is_a_route_of_the_server(live, method, path):
    assert (method, template(path)) in served(live.app)


def test_every_route_of_the_mem0_routers_is_in_the_table():
    ours = {(method, route.path) for module in OURS for route in module.router.routes for method in route.methods}
    ours |= {("GET", route.path) for route in events_routes.router.routes if route.path.startswith("/v1/")}
    assert {(m, template(p)) for m, p in ours} == {(m, template(p)) for m, p in MEMLANE_ROWS}


@pytest.mark.parametrize("method, path", MEMLANE_ROWS + PROJECT_ROWS, ids=lambda v: v)
def test_no_row_answers_no_such_route(live, method, path):
    """Each route with made-up ids and an empty body: a 404 may say a memory or user is unknown, never
    that the route is; no 405."""
    filled = re.sub(r"\{[^}]*\}", "x1", path)
    with live.client(live.key("routes", admin=True)) as http:
        answer = http.request(method, filled, json={} if method in ("POST", "PUT", "PATCH", "DELETE") else None)
    assert answer.status_code != 405, answer.text
    assert not (answer.status_code == 404 and answer.json()["detail"] == "Not Found"), answer.text
    assert answer.status_code < 500, answer.text
