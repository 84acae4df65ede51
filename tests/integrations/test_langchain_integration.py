"""memlane under LangChain, with the real ``langchain`` installed: the retriever maps memories to
Documents faithfully, and the memory tools work in a real tool-calling agent (``create_agent`` with
``ChatOpenAI``) whose model is the scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_openai import ChatOpenAI
from pydantic import ValidationError

from memlane import AsyncMemory
from memlane.integrations.langchain import MemlaneRetriever, memory_tools
from support.openai_server import Reply, chat_completion


@pytest.fixture
def stocked(memory):
    """alice's and bob's memories (stored verbatim); returns alice's ids by text."""
    ids = {}
    for text, metadata in [("Alice is vegetarian", {"topic": "food"}), ("Alice lives in Porto", {"topic": "home"}),
                           ("Alice plays the cello", {"topic": "music"})]:
        ids[text] = memory.add(text, user_id="alice", metadata=metadata, infer=False)["results"][0]["id"]
    memory.add("Bob eats meat every day", user_id="bob", infer=False)
    return ids


def test_the_retriever_maps_memories_to_documents(memory, stocked):
    retriever = MemlaneRetriever(memory=memory, user_id="alice", k=2)
    documents = retriever.invoke("what does she eat?")
    expected = memory.search("what does she eat?", user_id="alice", limit=2)["results"]
    assert [d.id for d in documents] == [m["id"] for m in expected]
    first = documents[0]
    assert isinstance(first, Document) and first.page_content == "Alice is vegetarian"
    assert first.id == stocked["Alice is vegetarian"]
    assert first.metadata["score"] == pytest.approx(expected[0]["score"])
    assert first.metadata["user_id"] == "alice" and "agent_id" not in first.metadata
    assert first.metadata["metadata"] == {"topic": "food"}
    assert first.metadata["created_at"] == expected[0]["created_at"]
    assert all("Bob" not in d.page_content for d in retriever.invoke("who eats meat?"))  # the scope holds
    assert [d.id for d in asyncio.run(retriever.ainvoke("what does she eat?"))] == [d.id for d in documents]


def test_the_retriever_takes_filters_threshold_and_async_memory(memory, stocked):
    by_topic = MemlaneRetriever(memory=AsyncMemory(memory=memory), user_id="alice", filters={"topic": "music"})
    assert [d.page_content for d in by_topic.invoke("food")] == ["Alice plays the cello"]
    strict = MemlaneRetriever(memory=memory, user_id="alice", threshold=0.99)
    assert strict.invoke("what does she eat?") == []


@pytest.mark.parametrize("arguments, message", [
    ({}, "At least one of 'user_id', 'agent_id', or 'run_id'"),
    ({"user_id": "alice", "k": 0}, "greater than or equal to 1"),
    ({"user_id": "alice smith"}, "user_id must not contain whitespace"),
    ({"user_id": "alice", "memory": "not a memory"}, "memory must be a memlane Memory"),
])
def test_a_bad_retriever_is_refused(memory, arguments, message):
    with pytest.raises((ValidationError, TypeError), match=message):
        MemlaneRetriever(**{"memory": memory, **arguments})


def _call(name, arguments, call_id):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_memory_tools_in_a_tool_calling_agent(memory, openai_server, stocked):
    openai_server.script("/v1/chat/completions", [
        Reply(json=chat_completion(None, tool_calls=[
            _call("add_memory", {"messages": "Alice is learning Portuguese", "infer": False}, "call_1")])),
        Reply(json=chat_completion(None, tool_calls=[_call("search_memories", {"query": "what does alice eat?",
                                                                                "limit": 2}, "call_2")])),
        Reply(json=chat_completion(None, tool_calls=[_call("search_memories", {"query": "", "limit": 2}, "call_3")])),
        Reply(json=chat_completion("You are vegetarian.")),
    ])
    model = ChatOpenAI(model="test-chat", base_url=openai_server.base_url, api_key="sk-test", max_retries=0)
    agent = create_agent(model, tools=memory_tools(memory, user_id="alice"))
    final = agent.invoke({"messages": [{"role": "user", "content": "I'm learning Portuguese. What do I eat?"}]})

    assert final["messages"][-1].content == "You are vegetarian."
    requests = [r.json for r in openai_server.requests("/v1/chat/completions")]
    assert len(requests) == 4
    offered = {t["function"]["name"]: t["function"] for t in requests[0]["tools"]}
    assert set(offered) == {"add_memory", "search_memories"}
    assert set(offered["search_memories"]["parameters"]["properties"]) == {"query", "limit"}  # no scope for the model

    stored = [m for m in memory.get_all(user_id="alice")["results"] if m["memory"] == "Alice is learning Portuguese"]
    assert len(stored) == 1
    tool_answers = {m["tool_call_id"]: m["content"] for r in requests for m in r["messages"] if m["role"] == "tool"}
    assert stored[0]["id"] in tool_answers["call_1"]
    found = json.loads(tool_answers["call_2"])
    assert found["results"][0]["id"] == stocked["Alice is vegetarian"]
    assert found["results"][0]["user_id"] == "alice" and found["results"][0]["score"] > 0
    assert found["count"] == 2
    assert "query" in tool_answers["call_3"] and "at least 1 character" in tool_answers["call_3"]  # told, not crashed


def test_memory_tools_run_async_and_keep_to_their_scope(memory, stocked):
    add, search = memory_tools(memory, user_id="bob")
    asyncio.run(add.ainvoke({"text": "Bob moved to Lisbon", "infer": False}))
    found = asyncio.run(search.ainvoke({"query": "where does he live?"}))
    # the hashing embedder ranks by shared words, not meaning: what counts here is whose memories come back
    assert sorted(m["memory"] for m in found["results"]) == ["Bob eats meat every day", "Bob moved to Lisbon"]
    assert {m["user_id"] for m in found["results"]} == {"bob"}
    with pytest.raises(ValueError, match="At least one of 'user_id'"):
        memory_tools(memory)
