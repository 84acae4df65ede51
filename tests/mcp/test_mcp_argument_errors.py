"""Arguments that do not fit a tool's schema, through the official MCP client on ``/mcp`` of a real
server: one line naming the argument (as REST's 422 does), never pydantic's multi-line text with its
documentation links; an argument a tool does not have (a typo) refused, naming the tool's arguments, and
the call not run. Every tool the server serves has a row in both tables."""

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
    ("create_collection", {"name": 7}, "name", "Input should be a valid string"),
    ("list_collections", {"query_filter": "year"}, "query_filter", "Input should be a valid dictionary"),
    ("get_collection", {}, "collection_name", "Field required"),
    ("update_collection", {"collection_name": "c", "metadata": ["x"]}, "metadata", "Input should be a valid dictionary"),
    ("delete_collection", {"collection_name": None}, "collection_name", "Input should be a valid string"),
    ("upsert_document", {"name": "d", "collection_name": "c", "text": 42}, "text", "Input should be a valid string"),
    ("upsert_document", {"text": "hi", "collection_name": "c"}, "name", "Field required"),
    ("list_documents", {"expand_pages": "all of them"}, "expand_pages", "valid boolean"),
    ("get_document", {"document_name": "d"}, "collection_name", "Field required"),
    ("update_document", {"document_name": "d", "collection_name": "c", "name": 3}, "name",
     "Input should be a valid string"),
    ("delete_document", {"collection_name": "c"}, "document_name", "Field required"),
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


# (tool, arguments, the unknown arguments as the line names them): a typo of an argument is refused, not
# run as if it were not given (a delete_all_memories whose ``user`` was dropped would empty the server's
# default user)
UNKNOWN = [
    ("add_memory", {"messages": "I like coffee", "user": "alice", "infer": False}, "argument user (did you mean user_id?)"),
    ("get_event", {"event_id": "e1", "id": "e1"}, "argument id"),
    ("search_memories", {"qeury": "tea"}, "argument qeury (did you mean query?)"),
    ("search_memories", {"query": "tea", "user": "alice", "k": 3}, "arguments user (did you mean user_id?), k"),
    ("search_documents", {"query": "tea", "collection": "notes"}, "argument collection (did you mean collection_name?)"),
    ("get_memory", {"id": "m1"}, "argument id"),
    ("list_memories", {"user": "alice"}, "argument user (did you mean user_id?)"),
    ("update_memory", {"memory_id": "m1", "txt": "new"}, "argument txt (did you mean text?)"),
    ("delete_memory", {"memory_id": "m1", "force": True}, "argument force"),
    ("delete_all_memories", {"user": "alice"}, "argument user (did you mean user_id?)"),
    ("memory_history", {"memory": "m1"}, "argument memory (did you mean memory_id?)"),
    ("should_search_memory", {"conversation": "hi", "explian": True}, "argument explian (did you mean explain?)"),
    ("search_memory_with_context", {"conversation": "hi", "limit": 3}, "argument limit"),
    ("cleanup_old_memories", {"keep_last": 1}, "argument keep_last (did you mean keep_latest?)"),
    ("merge_similar_memories", {"threshhold": 0.5}, "argument threshhold (did you mean threshold?)"),
    ("create_collection", {"name": "c", "meta": {}}, "argument meta (did you mean metadata?)"),
    ("list_collections", {"filter": {}}, "argument filter (did you mean query_filter?)"),
    ("get_collection", {"name": "c"}, "argument name"),
    ("update_collection", {"collection_name": "c", "new_name": "d"}, "argument new_name (did you mean name?)"),
    ("delete_collection", {"collection": "c"}, "argument collection (did you mean collection_name?)"),
    ("upsert_document", {"name": "d", "collection_name": "c", "path": "/etc/passwd"}, "argument path"),
    ("list_documents", {"expand": "pages"}, "argument expand (did you mean expand_pages?)"),
    ("get_document", {"name": "d", "collection_name": "c"}, "argument name"),
    ("update_document", {"document_name": "d", "collection_name": "c", "metadta": {}},
     "argument metadta (did you mean metadata?)"),
    ("delete_document", {"document": "d", "collection_name": "c"}, "argument document (did you mean document_name?)"),
    ("list_memories", {"a\nb": 1}, 'argument "a\\nb"'),  # a name that is no identifier, quoted: still one line
]


@pytest.fixture(scope="module")
def unknown_answers(live):
    """Every UNKNOWN case's answer, the tools' listed arguments, and the default user's memories before and
    after (one MCP session)."""
    key = live.key("mcp-unknown-arguments")

    async def run():
        async with mcp_client(live, key) as client:
            listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
            await call_tool(client, "add_memory", {"messages": "I like green tea", "infer": False})
            kept = await call_tool(client, "list_memories", {})
            answers = [await call_tool(client, tool, arguments) for tool, arguments, _ in UNKNOWN]
            return listed, answers, kept, await call_tool(client, "list_memories", {})

    return anyio.run(run)


def test_every_served_tool_has_an_unknown_argument_case(unknown_answers):
    listed, *_ = unknown_answers
    assert {tool for tool, *_ in UNKNOWN} == set(listed)
    assert all(schema.get("additionalProperties") is False for schema in listed.values())  # the schemas say so


@pytest.mark.parametrize("index", range(len(UNKNOWN)), ids=[f"{c[0]}:{','.join(c[1])}" for c in UNKNOWN])
def test_an_unknown_argument_is_one_line_naming_it_and_the_tools_arguments(unknown_answers, index):
    listed, answers, _, _ = unknown_answers
    tool, _, named = UNKNOWN[index]
    assert answers[index] == {"error": f"Error executing tool {tool}: unknown {named}; "
                                       f"{tool} takes {', '.join(listed[tool]['properties'])}"}


def test_a_call_with_an_unknown_argument_does_nothing(unknown_answers):
    *_, kept, after = unknown_answers
    assert [m["memory"] for m in kept["results"]] == ["I like green tea"]
    assert after["results"] == kept["results"]  # neither added to nor emptied by the refused calls
