"""Arguments that do not fit a tool's schema, through the official MCP client on ``/mcp`` of a real
server: one line naming the argument (as REST's 422 does), never pydantic's multi-line text with its
documentation links. Every tool the server serves has a row."""

from __future__ import annotations

import anyio
import pytest

from support.server_fixtures import call_tool, live, mcp_client  # noqa: F401  (fixture)

# (tool, arguments, the argument named, what the line says about it)
CASES = [
    ("add_memory", {"messages": 42}, "messages", "Input should be a valid string or a valid list"),
    ("add_memory", {"messages": [42]}, "messages.0", "Input should be a valid dictionary"),
    ("add_memory", {}, "messages", "Field required"),
    ("add_memory", {"messages": "I like tea", "infer": "maybe"}, "infer", "valid boolean"),
    ("get_event", {"event_id": 7}, "event_id", "Input should be a valid string"),
    ("search_memories", {"query": ["tea"]}, "query", "Input should be a valid string"),
    ("search_memories", {"query": "tea", "filters": "food"}, "filters", "Input should be a valid dictionary"),
    ("search_documents", {"query": "tea", "keyword_search": "often"}, "keyword_search", "valid boolean"),
    ("get_memory", {}, "memory_id", "Field required"),
    ("list_memories", {"include_invalid": "sometimes"}, "include_invalid", "valid boolean"),
    ("update_memory", {"memory_id": "m1", "metadata": "new"}, "metadata", "Input should be a valid dictionary"),
    ("delete_memory", {"memory_id": ""}, "memory_id", "at least 1 character"),
    ("delete_all_memories", {"filters": "everything"}, "filters", "Input should be a valid dictionary"),
    ("memory_history", {"memory_id": 5}, "memory_id", "Input should be a valid string"),
    ("should_search_memory", {"conversation": "hi", "explain": "please"}, "explain", "valid boolean"),
    ("search_memory_with_context", {"conversation": 42}, "conversation", "Input should be a valid string or"),
    ("cleanup_old_memories", {"keep_latest": "many"}, "keep_latest", "valid integer"),
    ("merge_similar_memories", {"threshold": "high"}, "threshold", "valid number"),
]


@pytest.fixture(scope="module")
def answers(live):
    """Every case's tool error (one MCP session), and the tools the server lists."""
    key = live.key("mcp-arguments")

    async def run():
        async with mcp_client(live, key) as client:
            served = {tool.name for tool in (await client.list_tools()).tools}
            return served, [await call_tool(client, tool, arguments) for tool, arguments, _, _ in CASES]

    return anyio.run(run)


def test_every_served_tool_has_a_case(answers):
    served, _ = answers
    assert {tool for tool, *_ in CASES} == served


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_a_bad_argument_is_one_line_naming_it(answers, index):
    tool, _, field, says = CASES[index]
    answer = answers[1][index]
    assert set(answer) == {"error"}, answer
    text = answer["error"]
    assert text.startswith(f"Error executing tool {tool}: invalid {field}: ") and says in text, text
    assert "\n" not in text and "pydantic" not in text and "validation error" not in text, text
