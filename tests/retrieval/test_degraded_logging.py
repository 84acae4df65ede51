"""A degraded search stage (here an LLM reranker whose endpoint refuses connections) logs one line
naming the stage, the error class, its message and the request id; the traceback only at debug."""

from __future__ import annotations

import logging

import httpx
import pytest

from memlane.server import ServerSettings, create_app
from support.live_server import LiveServer, free_port


@pytest.fixture(scope="module")
def server(tmp_path_factory, embedder):
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there: connection refused
    config = {"llm": {"provider": "openai", "config": {"model": "judge", "api_key": "sk-test", "base_url": closed,
                                                       "max_retries": 0, "timeout": 5.0}},
              "retrieval": {"reranker": {"provider": "llm"}}}
    app = create_app(ServerSettings(home=tmp_path_factory.mktemp("degraded"), auth=False, config=config),
                     embedder=embedder)
    with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=120) as client:
        added = client.post("/memories", json={"messages": "I play the cello", "user_id": "u", "infer": False})
        assert added.status_code == 200, added.text
        yield client


def test_a_degraded_stage_is_one_line_with_the_request_id(server, caplog):
    with caplog.at_level(logging.INFO, logger="memlane"):
        response = server.post("/search", json={"query": "cello", "user_id": "u", "rerank": True},
                               headers={"X-Request-ID": "req-degraded-1"})
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["memory"] == "I play the cello"  # the search still answers
    lines = [r for r in caplog.records if r.name.startswith("memlane") and r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    line = lines[0].getMessage()
    assert "\n" not in line and lines[0].exc_info is None
    for part in ("search stage rerank", "LLMError", "Connection error", "req-degraded-1"):
        assert part in line, line


def test_the_traceback_is_logged_at_debug_level(server, caplog):
    with caplog.at_level(logging.DEBUG, logger="memlane"):
        server.post("/search", json={"query": "cello", "user_id": "u", "rerank": True},
                    headers={"X-Request-ID": "req-degraded-2"})
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and r.exc_info and "req-degraded-2" in r.getMessage()]
    assert len(debug) == 1 and "rerank" in debug[0].getMessage()
