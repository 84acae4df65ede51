"""When a conversation was said: ``add(timestamp=)`` and a message's ``created_at`` date its messages, the
memories formed, their history and what they end (SDK on both backends, MCP, CLI; REST in
tests/server/test_said_time_api.py)."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta, timezone

import pytest

from memlane import InvalidInputError, Memory
from memlane.mcp_server import tools
from memlane.mcp_server.tools import Caller

MAY = "2023-05-08T13:56:00.000000+00:00"


@pytest.fixture
def m(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        yield memory


@pytest.mark.parametrize("given", [
    1683554160, 1683554160.0, "1683554160", "2023-05-08T13:56:00Z", "2023-05-08T15:56:00+02:00",
    "2023-05-08 13:56:00", datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc), datetime(2023, 5, 8, 13, 56),
])
def test_every_form_of_a_time_dates_messages_and_memories(m, given):
    m.add("I keep bees on my roof", user_id="u", infer=False, timestamp=given)
    assert m.get_all(user_id="u")["results"][0]["created_at"] == MAY
    assert m.get_messages(user_id="u")[0]["created_at"] == MAY


def test_a_date_is_its_midnight(m):
    m.add("I keep bees on my roof", user_id="u", infer=False, timestamp=date(2023, 5, 8))
    assert m.get_all(user_id="u")["results"][0]["created_at"].startswith("2023-05-08T00:00:00")


@pytest.mark.parametrize("call, field", [
    ({"timestamp": "yesterday"}, "timestamp"),
    ({"timestamp": True}, "timestamp"),
    ({"timestamp": 10 ** 15}, "timestamp"),
    ({"timestamp": (datetime.now(timezone.utc) + timedelta(days=1)).isoformat()}, "timestamp"),
    ({"messages": [{"role": "user", "content": "hi there", "created_at": "2999-01-01"}]}, "messages[0].created_at"),
    ({"messages": ["fine", {"role": "user", "content": "hi", "created_at": [2023]}]}, "messages[1].created_at"),
])
def test_a_time_that_is_not_one_or_is_ahead_is_refused_and_nothing_is_stored(m, call, field):
    call = dict(call)
    with pytest.raises(InvalidInputError) as raised:
        m.add(call.pop("messages", "I keep bees"), user_id="u", infer=False, **call)
    assert raised.value.field == field and field in str(raised.value)
    assert m.get_messages(user_id="u") == [] and m.get_all(user_id="u")["results"] == []


def test_a_message_time_wins_over_the_call_time(m):
    m.add([{"role": "user", "content": "I started pottery classes", "created_at": "2023-01-02T10:00:00Z"},
           {"role": "user", "content": "I adopted a cat named Miso"}], user_id="u", infer=False, timestamp=MAY)
    times = {i["memory"]: i["created_at"][:10] for i in m.get_all(user_id="u")["results"]}
    assert times == {"I started pottery classes": "2023-01-02", "I adopted a cat named Miso": "2023-05-08"}


def test_a_change_said_later_ends_the_memory_then_and_as_of_shows_what_was_true(m):
    first = m.add("I live in Lisbon.", user_id="u", timestamp="2023-05-08T10:00:00Z")["results"][0]
    changed = m.add("I moved from Lisbon to Porto.", user_id="u", timestamp="2023-11-14T10:00:00Z")["results"]
    assert changed and changed[0]["id"] == first["id"]
    now = m.get(first["id"])
    assert now["updated_at"].startswith("2023-11-14") and "Porto" in now["memory"]
    events = m.history(first["id"])
    assert [e["created_at"][:10] for e in events] == ["2023-05-08", "2023-11-14"]
    then = m.get_all(user_id="u", as_of="2023-08-01T00:00:00Z")["results"]
    assert [i["memory"] for i in then] == ["User lives in Lisbon"]


def test_a_contradiction_said_at_a_past_time_invalidates_then(m):
    m.add("I eat meat.", user_id="u", timestamp="2023-05-08T10:00:00Z")
    m.add("I don't eat meat anymore.", user_id="u", timestamp="2024-02-01T10:00:00Z")
    ended = [i for i in m.get_all(user_id="u", include_invalid=True)["results"] if i.get("valid_to")]
    assert ended and ended[0]["valid_to"].startswith("2024-02-01")


def test_an_old_conversation_imported_late_is_kept_as_the_past_not_as_the_present(m):
    current = m.add("I live in Porto.", user_id="u", timestamp="2024-03-01T10:00:00Z")["results"][0]
    old = m.add("I live in Faro.", user_id="u", timestamp="2021-06-01T10:00:00Z")["results"]
    assert [r["memory"] for r in m.get_all(user_id="u")["results"]] == [current["memory"]]  # the present unchanged
    assert old and old[0]["event"] == "ADD" and old[0]["superseded_by"] == current["id"]
    past = m.get(old[0]["id"])
    assert past["valid_to"].startswith("2024-03-01") and past["invalid_reason"] == "superseded"
    assert [i["memory"] for i in m.get_all(user_id="u", as_of="2022-01-01T00:00:00Z")["results"]] == [
        past["memory"]]


def test_mcp_add_memory_takes_a_timestamp(memory):
    caller = Caller(memory=memory, default_user_id="alice")
    tools.add_memory(caller, [{"role": "user", "content": "My flat has a green door", "created_at": 1683554160}],
                     infer=False)
    tools.add_memory(caller, "I play the oboe", infer=False, timestamp="2022-02-02T02:02:02Z")
    times = sorted(i["created_at"][:10] for i in memory.get_all(user_id="alice")["results"])
    assert times == ["2022-02-02", "2023-05-08"]
    with pytest.raises(tools.ToolFailure, match="timestamp"):
        tools.add_memory(caller, "later", infer=False, timestamp="2999-01-01")


def test_cli_add_timestamp(cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    out = json.loads(cli("--config", config, "add", "I sail on weekends", "-u", "u", "--no-infer",
                         "--timestamp", "2023-05-08T13:56:00Z", "--json").stdout)
    assert out["results"]
    listed = json.loads(cli("--config", config, "list", "-u", "u", "--json").stdout)
    assert listed["results"][0]["created_at"].startswith("2023-05-08T13:56")
    refused = cli("--config", config, "add", "x", "-u", "u", "--timestamp", "tomorrow", ok=False)
    assert refused.exit_code != 0 and "timestamp" in refused.output
