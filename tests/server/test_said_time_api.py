"""``timestamp`` and a message's ``created_at`` over REST, on memlane's routes and the mem0 platform's."""

from __future__ import annotations

import pytest

from support.server_fixtures import live  # noqa: F401  (fixture)


@pytest.fixture(scope="module")
def api(live):
    with live.client(live.key("said-time")) as client:
        yield client


@pytest.mark.parametrize("path", ["/memories", "/v3/memories/add/", "/v1/memories/"])
def test_a_conversation_keeps_when_it_was_said(api, path):
    user = "said-" + path.strip("/").replace("/", "-")
    body = {"messages": [{"role": "user", "content": "I restore old bicycles", "created_at": "2023-01-02T10:00:00Z"},
                         {"role": "user", "content": "My workshop is in the garage"}],
            "user_id": user, "infer": False, "timestamp": 1683554160}
    response = api.post(path, json=body)
    assert response.status_code == 200, response.text
    listed = api.get("/memories", params={"user_id": user}).json()["results"]
    assert sorted(i["created_at"][:16] for i in listed) == ["2023-01-02T10:00", "2023-05-08T13:56"]


@pytest.mark.parametrize("path", ["/memories", "/v3/memories/add/"])
@pytest.mark.parametrize("change, field", [
    ({"timestamp": "2999-01-01T00:00:00Z"}, "timestamp"),
    ({"timestamp": "last tuesday"}, "timestamp"),
    ({"messages": [{"role": "user", "content": "hi", "created_at": "2999-01-01"}]}, "messages[0].created_at"),
])
def test_a_time_ahead_or_unreadable_is_a_4xx_naming_the_field(api, path, change, field):
    user = "said-bad-" + path.strip("/").replace("/", "-")
    body = {"messages": "I restore old bicycles", "user_id": user, "infer": False, **change}
    response = api.post(path, json=body)
    assert 400 <= response.status_code < 500, response.text
    assert field in response.text
    assert api.get("/memories", params={"user_id": user}).json()["results"] == []
