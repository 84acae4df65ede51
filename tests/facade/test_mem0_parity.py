"""Code written for mem0's library runs on memlane: add(prompt=), update's {"message": ...} (beside the
memory memlane returns, so both kinds of callers work), history rows with is_deleted, and the add_memory
tools of MCP and the framework adapters taking the same argument names."""

from __future__ import annotations

import pytest

from memlane import InvalidInputError
from memlane.integrations.agent_tools import TOOLS as ADAPTER_TOOLS


def test_add_takes_mem0s_prompt(memory):
    steps = [{"role": "user", "content": "book a flight"}, {"role": "assistant", "content": "booked the 9:00"}]
    done = memory.add(steps, agent_id="bot", memory_type="procedural", prompt="Summarise the steps.")
    assert [r["event"] for r in done["results"]] == ["ADD"]  # offline: no instructions to replace, no error
    assert memory.add("I like tea", user_id="u", prompt="ignored by a non-procedural add")["status"] == "ok"
    for bad in ("", "  ", 7):
        with pytest.raises(InvalidInputError) as caught:
            memory.add("I like tea", user_id="u", prompt=bad)
        assert caught.value.field == "prompt"


def test_update_answers_like_mem0_and_like_memlane(memory):
    memory_id = memory.add("I live in Porto", user_id="u", infer=False)["results"][0]["id"]
    result = memory.update(memory_id, data="I live in Braga")
    assert result["message"] == "Memory updated successfully!"  # mem0's answer
    assert result["id"] == memory_id and result["memory"] == "I live in Braga"  # memlane's, as before
    assert memory.get(memory_id)["memory"] == "I live in Braga" and "message" not in memory.get(memory_id)


def test_history_rows_say_is_deleted(memory):
    memory_id = memory.add("I live in Porto", user_id="u", infer=False)["results"][0]["id"]
    memory.update(memory_id, text="I live in Braga")
    memory.delete(memory_id)
    rows = memory.history(memory_id)
    assert [(r["event"], r["is_deleted"]) for r in rows] == [("ADD", False), ("UPDATE", False), ("DELETE", True)]


def test_add_memory_takes_the_same_argument_names_everywhere(memory):
    import asyncio

    from memlane.mcp_server.server import local_server

    [mcp_add] = [t for t in asyncio.run(local_server(memory).list_tools()) if t.name == "add_memory"]
    adapter = ADAPTER_TOOLS["add_memory"].model_json_schema()["properties"]
    assert set(adapter) == {"messages", "infer"} and set(adapter) <= set(mcp_add.input_schema["properties"])
    assert ADAPTER_TOOLS["add_memory"].model_validate({"text": "an older caller"}).messages == "an older caller"
