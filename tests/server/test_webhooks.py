"""Webhooks over a real server: the official mem0 client manages them, memory events reach a real HTTP
receiver on 127.0.0.1, signed (verified here as docs/webhooks.md shows), retried with backoff up to a bound,
and never in the way of the add that caused them."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time

import pytest

from support.openai_server import OpenAIServer, Reply
from support.server_fixtures import serving

DEADLINE = 60.0  # generous: nothing here asserts on time


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    from memlane.embeddings.hashing import HashingEmbedder

    config = {"background": {"poll_seconds": 0.05, "retry_seconds": 0.05, "max_attempts": 3}}
    with serving(tmp_path_factory.mktemp("webhooks-home"), HashingEmbedder(), config=config) as server:
        yield server


@pytest.fixture(scope="module")
def receiver():
    with OpenAIServer() as server:
        yield server


def verify(secret: str, body: bytes, timestamp: str, signature: str, tolerance: float = 300) -> bool:
    """The receiver's check, as docs/webhooks.md writes it."""
    expected = "sha256=" + hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature) and abs(time.time() - int(timestamp)) <= tolerance


def wait_for(condition, what: str):
    deadline = time.monotonic() + DEADLINE
    while not (found := condition()):
        assert time.monotonic() < deadline, f"still waiting for {what}"
        time.sleep(0.05)
    return found


def settled(http, webhook_id: str, count: int) -> list[dict]:
    def done():
        found = http.get(f"/api/v1/webhooks/{webhook_id}/deliveries/").json()["results"]
        return found if len(found) >= count and all(d["status"] in ("SUCCEEDED", "FAILED") for d in found) else None

    return wait_for(done, f"{count} deliveries of {webhook_id} to end")


def test_the_mem0_client_creates_lists_updates_and_deletes_webhooks(mem0, live, receiver):
    key = live.key("wh-crud", admin=True)
    client = mem0.MemoryClient(api_key=key, host=live.url)
    project = client.project.config.project_id
    assert project == "wh-crud"
    created = client.create_webhook(url=receiver.url + "/crud", name="Memory Logger", project_id=project,
                                    event_types=["memory_add"])
    assert created["webhook_id"].startswith("wh_") and created["is_active"] is True
    assert created["secret"].startswith("whsec_") and created["project"] == project
    assert [w["name"] for w in client.get_webhooks(project_id=project)] == ["Memory Logger"]
    updated = client.update_webhook(webhook_id=created["webhook_id"], name="Updated Logger",
                                    event_types=["memory_update", "memory_add"])
    assert updated["message"] == "Webhook updated successfully"
    [listed] = client.get_webhooks(project_id=project)
    assert (listed["name"], listed["event_types"], listed["secret"]) == (
        "Updated Logger", ["memory_update", "memory_add"], created["secret"])
    assert client.delete_webhook(webhook_id=created["webhook_id"]) == {"message": "Webhook deleted successfully"}
    assert client.get_webhooks(project_id=project) == []


@pytest.mark.parametrize("method, path, body, status, field", [
    ("post", "/api/v1/webhooks/projects/wh-bad/", {"url": "ftp://x.org/h", "name": "n", "event_types": ["memory_add"]},
     422, "url"),
    ("post", "/api/v1/webhooks/projects/wh-bad/", {"url": "http://x.org/h", "name": "n", "event_types": ["memory_eat"]},
     422, "event_types"),
    ("post", "/api/v1/webhooks/projects/wh-bad/", {"url": "http://x.org/h", "name": " ", "event_types": ["memory_add"]},
     422, "name"),
    ("post", "/api/v1/webhooks/projects/another-project/",
     {"url": "http://x.org/h", "name": "n", "event_types": ["memory_add"]}, 404, "project_id"),
    ("put", "/api/v1/webhooks/wh_nope/", {"name": "n"}, 404, "webhook_id"),
    ("delete", "/api/v1/webhooks/wh_nope/", None, 404, "webhook_id"),
])
def test_bad_webhook_requests_are_clear_4xx(live, method, path, body, status, field):
    with live.client(live.key("wh-bad", admin=True)) as http:
        answer = http.request(method.upper(), path, json=body)
    assert answer.status_code == status and answer.json()["field"] == field, answer.json()


def test_webhooks_need_an_admin_key(live):
    with live.client(live.key("wh-admin")) as http:
        answer = http.post("/api/v1/webhooks/projects/wh-admin/",
                           json={"url": "http://x.org/h", "name": "n", "event_types": ["memory_add"]})
        assert answer.status_code == 403 and "admin" in answer.json()["detail"]
        assert http.get("/api/v1/webhooks/projects/wh-admin/").status_code == 403


def test_memory_events_are_posted_signed_to_the_receiver(mem0, live, receiver):
    receiver.route("/events", Reply(json={"ok": True}))
    key = live.key("wh-events", admin=True)
    client = mem0.MemoryClient(api_key=key, host=live.url)
    hook = client.create_webhook(url=receiver.url + "/events", name="all", project_id="wh-events",
                                 event_types=["memory_add", "memory_update", "memory_delete"])
    added = client.add("I love Thai curry", user_id="alice", infer=False)["results"][0]
    client.update(added["id"], text="I love green curry")
    client.delete(added["id"])
    posts = wait_for(lambda: (r := receiver.requests("/events")) and len(r) >= 3 and r, "three deliveries")
    assert len(posts) == 3
    for post in posts:
        assert verify(hook["secret"], post.body, post.header("x-memlane-timestamp"), post.header("x-memlane-signature"))
        assert not verify("whsec_another", post.body, post.header("x-memlane-timestamp"),
                          post.header("x-memlane-signature"))
        assert post.header("x-memlane-webhook") == hook["webhook_id"]
        assert post.header("x-memlane-delivery") == post.json["delivery_id"]
        assert post.header("content-type") == "application/json"
        assert post.header("host") == receiver.url.removeprefix("http://")  # the URL's host, port included
    assert [(p.json["event_type"], p.json["event_details"]) for p in posts] == [
        ("memory_add", {"id": added["id"], "data": {"memory": "I love Thai curry"}, "event": "ADD"}),
        ("memory_update", {"id": added["id"], "data": {"memory": "I love green curry"}, "event": "UPDATE",
                           "previous_memory": "I love Thai curry"}),
        ("memory_delete", {"id": added["id"], "data": {"memory": "I love green curry"}, "event": "DELETE"}),
    ]
    assert {(p.json["project_id"], p.json["user_id"], p.header("x-memlane-event")) for p in posts} == {
        ("wh-events", "alice", "memory_add"), ("wh-events", "alice", "memory_update"),
        ("wh-events", "alice", "memory_delete")}
    tampered = posts[0].body.replace(b"Thai", b"Lao")
    assert not verify(hook["secret"], tampered, posts[0].header("x-memlane-timestamp"),
                      posts[0].header("x-memlane-signature"))
    with live.client(key) as http:
        deliveries = settled(http, hook["webhook_id"], 3)
    assert {(d["status"], d["attempts"]) for d in deliveries} == {("SUCCEEDED", 1)}


def test_only_the_subscribed_events_of_active_webhooks_are_sent(live, receiver):
    receiver.route("/deletes", Reply(json={}))
    receiver.route("/paused", Reply(json={}))
    key = live.key("wh-subscribed", admin=True)
    with live.client(key) as http:
        deletes = http.post("/api/v1/webhooks/projects/wh-subscribed/", json={
            "url": receiver.url + "/deletes", "name": "deletes", "event_types": ["memory_delete"]}).json()
        paused = http.post("/api/v1/webhooks/projects/wh-subscribed/", json={
            "url": receiver.url + "/paused", "name": "paused", "event_types": ["memory_add", "memory_delete"]}).json()
        assert http.put(f"/api/v1/webhooks/{paused['webhook_id']}/", json={"is_active": False}).json()["is_active"] is False
        memory_id = http.post("/v3/memories/add/", json={"messages": "I have a dog", "user_id": "bob",
                                                         "infer": False}).json()["results"][0]["id"]
        assert http.get(f"/api/v1/webhooks/{deletes['webhook_id']}/deliveries/").json()["count"] == 0
        assert http.delete(f"/v1/memories/{memory_id}/").status_code == 200
        [delivery] = settled(http, deletes["webhook_id"], 1)
        assert delivery["status"] == "SUCCEEDED" and delivery["event_type"] == "memory_delete"
        assert http.get(f"/api/v1/webhooks/{paused['webhook_id']}/deliveries/").json()["count"] == 0
    assert [r.json["event_type"] for r in receiver.requests("/deletes")] == ["memory_delete"]
    assert receiver.requests("/paused") == []


def test_a_failed_delivery_is_tried_again_and_then_succeeds(live, receiver):
    receiver.script("/flaky", [Reply.error(500, "down for a moment")])
    receiver.route("/flaky", Reply(json={}))
    key = live.key("wh-flaky", admin=True)
    with live.client(key) as http:
        hook = http.post("/api/v1/webhooks/projects/wh-flaky/", json={
            "url": receiver.url + "/flaky", "name": "flaky", "event_types": ["memory_add"]}).json()
        http.post("/v3/memories/add/", json={"messages": "I like jazz", "user_id": "carol", "infer": False})
        [delivery] = settled(http, hook["webhook_id"], 1)
    assert (delivery["status"], delivery["attempts"]) == ("SUCCEEDED", 2)
    first, second = receiver.requests("/flaky")
    assert first.json["delivery_id"] == second.json["delivery_id"] == delivery["delivery_id"]
    assert first.body == second.body  # the same event, signed again at its own time


def test_retries_are_bounded_and_the_failure_is_kept(live, receiver):
    receiver.route("/down", Reply.error(503, "always down"))
    key = live.key("wh-down", admin=True)
    with live.client(key) as http:
        hook = http.post("/api/v1/webhooks/projects/wh-down/", json={
            "url": receiver.url + "/down", "name": "down", "event_types": ["memory_add"]}).json()
        http.post("/v3/memories/add/", json={"messages": "I like blues", "user_id": "dan", "infer": False})
        [delivery] = settled(http, hook["webhook_id"], 1)
    assert (delivery["status"], delivery["attempts"]) == ("FAILED", 3)  # background.max_attempts
    assert "answered 503" in delivery["error"]
    assert len(receiver.requests("/down")) == 3


def test_the_add_answers_without_waiting_for_the_receiver(live, receiver):
    release, answered = threading.Event(), []

    def slow(request):
        release.wait(DEADLINE)
        answered.append(request)
        return Reply(json={})

    receiver.route("/slow", slow)
    key = live.key("wh-slow", admin=True)
    with live.client(key) as http:
        hook = http.post("/api/v1/webhooks/projects/wh-slow/", json={
            "url": receiver.url + "/slow", "name": "slow", "event_types": ["memory_add"]}).json()
        added = http.post("/v3/memories/add/", json={"messages": "I like folk", "user_id": "eve", "infer": False})
        assert added.status_code == 200 and added.json()["status"] == "SUCCEEDED"
        assert answered == []  # the add has its answer; the receiver has not given one yet
        release.set()
        [delivery] = settled(http, hook["webhook_id"], 1)
    assert delivery["status"] == "SUCCEEDED" and len(answered) == 1
    assert json.loads(answered[0].body)["event_details"]["data"] == {"memory": "I like folk"}
