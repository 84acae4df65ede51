"""While it serves, the server's garbage collector is set for its heap (``server/garbage.py``): what existed at
start-up frozen out of collections, young collections every ``YOUNG_THRESHOLD`` objects; as it was after."""

from __future__ import annotations

import gc

import httpx
import pytest

from memlane.server import ServerSettings, create_app
from memlane.server.garbage import YOUNG_THRESHOLD, long_lived_heap
from support.live_server import LiveServer


@pytest.fixture(autouse=True)
def python_defaults():
    """CPython's own thresholds before each test, and the session's after it."""
    session = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*session)


def test_the_server_sets_the_collector_while_it_serves(tmp_path, embedder):
    before = gc.get_threshold()
    app = create_app(ServerSettings(home=tmp_path, auth=False, warm_up=False), embedder=embedder)
    with LiveServer(app) as live, httpx.Client(base_url=live.url, timeout=60) as client:
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
        added = client.post("/memories", json={"messages": "I play the cello", "user_id": "u", "infer": False})
        assert added.status_code == 200, added.text
        found = client.post("/search", json={"query": "cello", "user_id": "u"})
        assert found.status_code == 200 and found.json()["results"][0]["memory"] == "I play the cello"
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_heap_setting_is_undone_when_serving_fails():
    before = gc.get_threshold()
    try:
        with long_lived_heap():
            assert gc.get_threshold()[0] == YOUNG_THRESHOLD
            raise RuntimeError("the server stopped")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
