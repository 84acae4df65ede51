"""Tenant isolation, property-style: two tenants with their own keys do random operations
(seeded, so a failure replays) over the REST API and the mem0 platform paths, with the
same user ids. Neither ever sees, updates, deletes, searches or reads the history of
the other's data, even when it uses the other's memory ids."""

from __future__ import annotations

import json
import random
import uuid

import pytest

from memlane.hosting.keys import tenant_name
from memlane.core.errors import InvalidInputError
from support.server_fixtures import live  # noqa: F401  (fixture)

USERS = ("shared", "alice", "bob")
WORDS = ("pizza", "hiking", "Lisbon", "cello", "sushi", "chess", "Berlin", "tea")


class Tenant:
    def __init__(self, name, client, admin_client):
        self.name = name
        self.client = client
        self.admin = admin_client
        self.memories: dict[str, tuple[str, str]] = {}  # id -> (user, text)  (the expected state)
        self.counter = 0

    def text(self, rng):
        self.counter += 1
        return f"{self.name} note {self.counter} about {rng.choice(WORDS)}"


def _visible(tenant, user=None):
    filters = json.dumps({"user_id": "*"}) if user is None else None
    params = {"filters": filters, "limit": 10000} if user is None else {"user_id": user, "limit": 10000}
    answer = tenant.admin.get("/memories", params=params)
    assert answer.status_code == 200, answer.text
    return {m["id"]: (m["user_id"], m["memory"]) for m in answer.json()["results"]}


def _check_results(tenant, other, items):
    for item in items:
        assert item["id"] not in other.memories, f"{tenant.name} saw {other.name}'s memory"
        assert not item["memory"].startswith(other.name), f"{tenant.name} saw {other.name}'s text"


def _step(rng, me, other):
    own = list(me.memories)
    foreign = list(other.memories)
    op = rng.choice(["add", "add", "add_platform", "search", "search_platform", "list", "get", "update", "delete",
                     "history", "delete_all", "guess"])
    c = me.client
    if op == "add" or (op in ("get", "update", "delete", "history") and not own):
        user, text = rng.choice(USERS), me.text(rng)
        answer = c.post("/memories", json={"messages": text, "user_id": user, "infer": False})
        assert answer.status_code == 200, answer.text
        me.memories[answer.json()["results"][0]["id"]] = (user, text)
    elif op == "add_platform":
        user, text = rng.choice(USERS), me.text(rng)
        answer = c.post("/v3/memories/add/", json={"messages": [{"role": "user", "content": text}],
                                                   "filters": {"user_id": user}, "infer": False})
        assert answer.status_code == 200, answer.text
        me.memories[answer.json()["results"][0]["id"]] = (user, text)
    elif op == "search":
        answer = c.post("/search", json={"query": f"{other.name} note about {rng.choice(WORDS)}",
                                         "user_id": rng.choice(USERS), "limit": 50})
        assert answer.status_code == 200
        _check_results(me, other, answer.json()["results"])
    elif op == "search_platform":
        answer = c.post("/v3/memories/search/", json={"query": f"{other.name} {rng.choice(WORDS)}",
                                                      "filters": {"user_id": rng.choice(USERS)}, "threshold": 0})
        assert answer.status_code == 200
        _check_results(me, other, answer.json()["results"])
    elif op == "list":
        user = rng.choice(USERS)
        answer = c.get("/memories", params={"user_id": user, "limit": 10000})
        assert answer.status_code == 200
        _check_results(me, other, answer.json()["results"])
        assert {m["id"] for m in answer.json()["results"]} == {i for i, (u, _) in me.memories.items() if u == user}
    elif op == "get":
        memory_id = rng.choice(own)
        assert c.get(f"/memories/{memory_id}").json()["memory"] == me.memories[memory_id][1]
    elif op == "update":
        memory_id = rng.choice(own)
        text = me.text(rng)
        assert c.put(f"/memories/{memory_id}", json={"text": text}).status_code == 200
        me.memories[memory_id] = (me.memories[memory_id][0], text)
    elif op == "delete":
        memory_id = rng.choice(own)
        assert c.delete(f"/memories/{memory_id}").status_code == 200
        del me.memories[memory_id]
    elif op == "history":
        memory_id = rng.choice(own)
        events = c.get(f"/memories/{memory_id}/history").json()
        assert events[-1]["new_memory"] == me.memories[memory_id][1]
    elif op == "delete_all":
        user = rng.choice(USERS)
        if rng.random() < 0.5:
            answer = c.delete("/memories", params={"user_id": user})
        else:  # the mem0 client's repr-encoded filters
            answer = c.delete("/v1/memories/", params={"filters": str({"user_id": user})})
        assert answer.status_code == 200, answer.text
        gone = [i for i, (u, _) in me.memories.items() if u == user]
        assert answer.json()["deleted"] == len(gone)
        for memory_id in gone:
            del me.memories[memory_id]
    elif op == "guess":
        # every way of reaching the other tenant's memories by id, plus made-up ids
        targets = rng.sample(foreign, min(3, len(foreign))) + [str(uuid.uuid4())]
        for memory_id in targets:
            for answer in (c.get(f"/memories/{memory_id}"), c.get(f"/v1/memories/{memory_id}/"),
                           c.put(f"/memories/{memory_id}", json={"text": "hijacked"}),
                           c.put(f"/v1/memories/{memory_id}/", json={"text": "hijacked"}),
                           c.get(f"/memories/{memory_id}/history"), c.get(f"/v1/memories/{memory_id}/history/"),
                           c.delete(f"/memories/{memory_id}"), c.delete(f"/v1/memories/{memory_id}/")):
                assert answer.status_code == 404, (answer.request.method, answer.request.url, answer.text)


@pytest.mark.parametrize("seed", [7, 2024])
def test_two_tenants_never_see_each_other(live, seed):
    rng = random.Random(seed)
    tenants = []
    for name in (f"red{seed}", f"blue{seed}"):
        tenants.append(Tenant(name, live.client(live.key(name)), live.client(live.key(name, admin=True))))
    try:
        for _ in range(90):
            me = rng.choice(tenants)
            other = tenants[1] if me is tenants[0] else tenants[0]
            _step(rng, me, other)
        for me, other in (tenants, tenants[::-1]):
            assert _visible(me) == me.memories  # exactly its own memories, with the texts it last wrote
            for user in USERS:
                assert _visible(me, user) == {i: v for i, v in me.memories.items() if v[0] == user}
            # the admin's unscoped listing and search are still confined to its tenant
            hits = me.admin.post("/search", json={"query": f"{other.name} note", "filters": {"user_id": "*"},
                                                  "limit": 10000}).json()["results"]
            _check_results(me, other, hits)
        assert tenants[0].memories and tenants[1].memories
    finally:
        for t in tenants:
            t.client.close()
            t.admin.close()
    stores = sorted(p.name for p in (live.home / "tenants").glob(f"*{seed}.db"))
    assert stores == [f"blue{seed}.db", f"red{seed}.db"]


@pytest.mark.parametrize("name", ["", "a b", "../etc", "x" * 65, "tenant/1", "é", None, 5])
def test_tenant_names_cannot_escape_the_tenants_directory(name):
    with pytest.raises(InvalidInputError):
        tenant_name(name)


def test_tenant_names_that_are_fine():
    for name in ("a", "Acme_Corp-2", "x" * 64):
        assert tenant_name(name) == name
