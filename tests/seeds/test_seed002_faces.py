"""Seed 002's maintenance and mem0's ``expiration_date`` on every face: REST (memlane's routes and
the mem0 platform add), MCP over HTTP with the official client, and ``memlane maintain``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import anyio
import pytest

from support.server_fixtures import call_tool as _call
from support.server_fixtures import live, mcp_client  # noqa: F401  (fixture)


def future(days: int = 3) -> str:
    return (datetime.now(timezone.utc) + timedelta(days=days)).isoformat()


def add(client, text, user, **extra):
    answer = client.post("/memories", json={"messages": text, "user_id": user, "infer": False, **extra})
    assert answer.status_code == 200, answer.text
    return answer.json()["results"][0]["id"]


def texts(client, user):
    return sorted(m["memory"] for m in client.get("/memories", params={"user_id": user}).json()["results"])


# -- REST ------------------------------------------------------------------------------------------


def test_rest_cleanup_and_merge_with_dry_runs_act_on_the_keys_tenant(live):
    mine, theirs = live.key("maint-a"), live.key("maint-b")
    with live.client(mine) as a, live.client(theirs) as b:
        first, _, _ = (add(a, text, "ann") for text in ("Ann likes tea", "Ann likes tea", "Ann keeps bees"))
        add(b, "Ann likes tea", "ann")
        add(b, "Ann likes tea", "ann")

        plan = a.post("/memories/merge", json={"user_id": "ann", "threshold": 0.99, "dry_run": True}).json()
        assert plan["dry_run"] is True and plan["results"][0]["id"] == first
        assert texts(a, "ann") == ["Ann keeps bees", "Ann likes tea", "Ann likes tea"]
        merged = a.post("/memories/merge", json={"user_id": "ann", "threshold": 0.99})
        assert merged.status_code == 200, merged.text
        assert [r["id"] for r in merged.json()["results"]] == [first]
        assert texts(a, "ann") == ["Ann keeps bees", "Ann likes tea"]
        assert [e["event"] for e in a.get(f"/memories/{first}/history").json()] == ["ADD", "MERGE"]

        plan = a.post("/memories/cleanup", json={"user_id": "ann", "keep_latest": 1, "dry_run": True}).json()
        assert [r["memory"] for r in plan["results"]] == ["Ann likes tea"] and texts(a, "ann") == [
            "Ann keeps bees", "Ann likes tea"]
        cleaned = a.post("/memories/cleanup", json={"user_id": "ann", "keep_latest": 1}).json()
        assert cleaned["kept"] == 1 and texts(a, "ann") == ["Ann keeps bees"]

        assert texts(b, "ann") == ["Ann likes tea", "Ann likes tea"]  # the other tenant's are untouched


BAD_BODIES = [  # (path, body, field)
    ("/memories/cleanup", {"user_id": "u", "keep_latest": "5"}, "keep_latest"),
    ("/memories/cleanup", {"user_id": "u", "keep_latest": -1}, "keep_latest"),
    ("/memories/cleanup", {"user_id": "u", "dry_run": "yes"}, "dry_run"),
    ("/memories/cleanup", {"user_id": "u", "keep": 5}, "keep"),
    ("/memories/merge", {"user_id": "u", "threshold": 1.5}, "threshold"),
    ("/memories/merge", {"user_id": "u", "threshold": "0.9"}, "threshold"),
    ("/memories/merge", {"user_id": "u", "threshold": 0}, "threshold"),
    ("/memories", {"messages": "x", "user_id": "u", "expiration_date": "2001-01-01"}, "expiration_date"),
    ("/memories", {"messages": "x", "user_id": "u", "expiration_date": "soon"}, "expiration_date"),
]


@pytest.mark.parametrize("path, body, field", BAD_BODIES)
def test_rest_bad_maintenance_input_is_422_naming_the_field(live, path, body, field):
    with live.client(live.key("maint-bad")) as client:
        answer = client.post(path, json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["field"] == field and "Traceback" not in answer.text
        assert client.get("/memories", params={"user_id": "u"}).json()["results"] == []


def test_rest_maintenance_needs_a_scope(live):
    with live.client(live.key("maint-scope")) as client:
        for path in ("/memories/cleanup", "/memories/merge"):
            answer = client.post(path, json={})
            assert answer.status_code == 400 and "user_id" in answer.json()["detail"], answer.text


def test_rest_and_mem0_platform_add_take_an_expiration_date(live):
    when = future()
    with live.client(live.key("maint-expiry")) as client:
        memory_id = add(client, "Bo is in Rome this week", "bo", expiration_date=when)
        item = client.get(f"/memories/{memory_id}").json()
        assert item["valid_to"][:19] == when[:19] and item["invalid_reason"] == "expired"
        platform = client.post("/v3/memories/add/", json={"messages": [{"role": "user", "content": "Bo rents a car"}],
                                                          "user_id": "bo", "infer": False, "expiration_date": when})
        assert platform.status_code == 200, platform.text
        assert client.get(f"/v1/memories/{platform.json()['results'][0]['id']}/").json()["valid_to"][:19] == when[:19]
        refused = client.post("/v3/memories/add/", json={"messages": "Bo left", "user_id": "bo",
                                                         "expiration_date": "2000-01-01"})
        assert refused.status_code == 422 and refused.json()["field"] == "expiration_date"


# -- MCP (official client over the server's /mcp) -------------------------------------------------


def test_mcp_maintenance_tools(live):
    key = live.key("maint-mcp")

    async def run():
        async with mcp_client(live, key) as client:
            for text in ("Cy plays chess", "Cy plays chess", "Cy bakes bread"):
                await _call(client, "add_memory", {"messages": text, "infer": False})  # the server's default user
            expiring = await _call(client, "add_memory", {"messages": "Cy is in Oslo", "infer": False,
                                                          "expiration_date": future()})
            past = await _call(client, "add_memory", {"messages": "Cy was in Oslo", "expiration_date": "2001-01-01"})
            plan = await _call(client, "merge_similar_memories", {"threshold": 0.99, "dry_run": True})
            merged = await _call(client, "merge_similar_memories", {"threshold": 0.99})
            bad = await _call(client, "merge_similar_memories", {"threshold": "high"})
            cleaned = await _call(client, "cleanup_old_memories", {"user_id": "default-user", "keep_latest": 2})
            listed = await _call(client, "list_memories", {})
            return expiring, past, plan, merged, bad, cleaned, listed

    expiring, past, plan, merged, bad, cleaned, listed = anyio.run(run)
    assert expiring["results"][0]["event"] == "ADD"
    assert "expiration_date" in past["error"]
    assert plan["dry_run"] is True and len(plan["results"]) == 1
    assert len(merged["results"]) == 1 and merged["results"][0]["merged"][0]["memory"] == "Cy plays chess"
    assert "error" in bad and "threshold" in bad["error"]
    assert [r["memory"] for r in cleaned["results"]] == ["Cy plays chess"] and cleaned["kept"] == 2
    assert sorted(m["memory"] for m in listed["results"]) == ["Cy bakes bread", "Cy is in Oslo"]


# -- CLI -------------------------------------------------------------------------------------------


@pytest.fixture
def hashing_cli(cli, tmp_path):
    config = tmp_path / "hashing.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))

    def run(*args, ok=True):
        return cli("--config", config, *args, ok=ok)

    return run


def test_cli_maintain_merge_and_cleanup(hashing_cli):
    for text in ("Dee runs marathons", "Dee runs marathons", "Dee speaks Welsh"):
        hashing_cli("add", text, "-u", "dee", "--no-infer")
    plan = json.loads(hashing_cli("maintain", "merge", "-u", "dee", "-t", "0.99", "--dry-run", "--json").stdout)
    assert plan["dry_run"] is True and plan["pairs"] == 1
    shown = hashing_cli("maintain", "merge", "-u", "dee", "-t", "0.99")
    assert "merged 1 of 3 memories into 1" in shown.stdout
    listed = json.loads(hashing_cli("list", "-u", "dee", "--json").stdout)
    assert sorted(m["memory"] for m in listed["results"]) == ["Dee runs marathons", "Dee speaks Welsh"]
    plan = json.loads(hashing_cli("maintain", "cleanup", "-u", "dee", "-k", "1", "--dry-run", "--json").stdout)
    assert [r["memory"] for r in plan["results"]] == ["Dee runs marathons"]
    done = hashing_cli("maintain", "cleanup", "-u", "dee", "--keep-latest", "1")
    assert "invalidated 1 memories, kept 1" in done.stdout
    listed = json.loads(hashing_cli("list", "-u", "dee", "--json").stdout)
    assert [m["memory"] for m in listed["results"]] == ["Dee speaks Welsh"]


@pytest.mark.parametrize("args, message", [
    (("maintain", "merge", "-t", "0.9"), "user_id"),
    (("maintain", "merge", "-u", "dee", "-t", "2"), "threshold"),
    (("maintain", "cleanup", "-u", "dee", "-k", "-1"), "keep-latest"),
])
def test_cli_maintain_refuses_bad_input_in_one_line(hashing_cli, args, message):
    result = hashing_cli(*args, ok=False)
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
