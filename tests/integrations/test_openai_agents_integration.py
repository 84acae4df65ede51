"""memlane under the OpenAI Agents SDK, with the real ``openai-agents`` installed: the function
tools in a real agent run, and memlane's MCP server (``memlane mcp``, a real child process) as
the agent's MCP server (examples/openai_agents_mcp.py). The model is the scripted
OpenAI-compatible server on 127.0.0.1; tracing is off, so nothing leaves the machine."""

from __future__ import annotations

import asyncio
import json
import os
import runpy
import sys
from pathlib import Path

import pytest
from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
from openai import AsyncOpenAI

from memlane import Memory
from memlane.integrations.openai_agents import memory_tools
from support.openai_server import Reply, chat_completion

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OFFLINE = RunConfig(tracing_disabled=True)


def _model(server) -> OpenAIChatCompletionsModel:
    client = AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)
    return OpenAIChatCompletionsModel(model="test-chat", openai_client=client)


def _call(name, arguments, call_id):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def _text(content) -> str:
    """A chat message's content: a string, or a list of text parts."""
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def _tool_answers(server) -> dict[str, str]:
    return {m["tool_call_id"]: _text(m["content"]) for r in server.requests("/v1/chat/completions")
            for m in r.json["messages"] if m["role"] == "tool"}


def test_function_tools_in_an_agent_run(memory, openai_server):
    vegetarian = memory.add("Alice is vegetarian", user_id="alice", metadata={"topic": "food"},
                            infer=False)["results"][0]["id"]
    memory.add("Bob eats meat every day", user_id="bob", infer=False)
    openai_server.script("/v1/chat/completions", [
        Reply(json=chat_completion(None, tool_calls=[
            _call("add_memory", {"messages": "Alice is learning Portuguese", "infer": False}, "call_1")])),
        Reply(json=chat_completion(None, tool_calls=[_call("search_memories", {"query": "what does she eat?",
                                                                                "limit": 3}, "call_2")])),
        Reply(json=chat_completion(None, tool_calls=[_call("search_memories", {"query": "food", "limit": 0},
                                                           "call_3")])),
        Reply(json=chat_completion("You are vegetarian.")),
    ])
    agent = Agent(name="assistant", instructions="Use your memory.", model=_model(openai_server),
                  tools=memory_tools(memory, user_id="alice"))
    result = asyncio.run(Runner.run(agent, "I'm learning Portuguese. What do I eat?", run_config=OFFLINE))

    assert result.final_output == "You are vegetarian."
    offered = {t["function"]["name"]: t["function"] for t in openai_server.requests("/v1/chat/completions")[0].json["tools"]}
    assert set(offered) == {"add_memory", "search_memories"}
    assert offered["add_memory"]["parameters"]["required"] == ["messages", "infer"]  # a strict schema, no scope in it
    assert offered["add_memory"]["strict"] is True
    answers = _tool_answers(openai_server)
    added = json.loads(answers["call_1"])
    assert added["message"] == "stored: 1 ADD"
    assert memory.get(added["results"][0]["id"])["user_id"] == "alice"
    found = json.loads(answers["call_2"])["results"]
    assert found[0]["id"] == vegetarian and found[0]["metadata"] == {"topic": "food"}
    assert found[0]["score"] == pytest.approx(memory.search("what does she eat?", user_id="alice",
                                                            limit=1)["results"][0]["score"])
    assert {m["user_id"] for m in found} == {"alice"}
    assert "invalid arguments for search_memories" in json.loads(answers["call_3"])["error"]


def test_function_tools_need_a_scope(memory):
    with pytest.raises(ValueError, match="At least one of 'user_id'"):
        memory_tools(memory)


def test_memlane_mcp_server_as_the_agents_mcp_server(tmp_path, embedder, openai_server, monkeypatch):
    """examples/openai_agents_mcp.py: the agent starts ``memlane mcp`` and calls its tools; the child
    reads and writes the same home as ``Memory()`` (its default store)."""
    example = runpy.run_path(str(EXAMPLES / "openai_agents_mcp.py"))
    home = tmp_path / "home"
    monkeypatch.setenv("MEMLANE_HOME", str(home))
    with Memory(embedder=embedder) as memory:
        memory.add("Alice is vegetarian", user_id="alice", infer=False)
    openai_server.script("/v1/chat/completions", [
        Reply(json=chat_completion(None, tool_calls=[_call("search_memories", {"query": "what does alice eat?"},
                                                           "call_1")])),
        Reply(json=chat_completion(None, tool_calls=[_call("add_memory", {"messages": "I started running",
                                                                          "infer": False}, "call_2")])),
        Reply(json=chat_completion("You are vegetarian.")),
    ])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    server = example["server"]((sys.executable, "-m", "memlane.cli"), home=str(home), user_id="alice", env=env)
    answer = asyncio.run(example["ask"]("What do I eat?", server, model=_model(openai_server), run_config=OFFLINE))

    assert answer == "You are vegetarian."
    offered = {t["function"]["name"] for t in openai_server.requests("/v1/chat/completions")[0].json["tools"]}
    assert {"add_memory", "search_memories", "list_memories", "memory_history"} <= offered
    answers = _tool_answers(openai_server)
    assert json.loads(answers["call_1"])["results"][0]["memory"] == "Alice is vegetarian"
    assert json.loads(answers["call_2"])["results"][0]["event"] == "ADD"
    with Memory(embedder=embedder) as memory:
        assert sorted(m["memory"] for m in memory.get_all(user_id="alice")["results"]) == \
            ["Alice is vegetarian", "I started running"]  # the server's default user is alice
