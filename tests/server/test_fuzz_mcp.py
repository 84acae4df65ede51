"""Random arguments for every MCP tool, through the official ``mcp`` client against the server's
``/mcp`` endpoint on loopback, with the keys of two tenants (hypothesis; ``MEMLANE_FUZZ_EXAMPLES``
per tool and tenant, many in ``make fuzz``).

Arguments come from each tool's own input schema, through schemathesis's generator (the tools'
schemas become the request bodies of a small OpenAPI document): arguments that fit the schema, and
arguments that do not (wrong types, missing or unknown names). Every call must end in a result or a tool error whose text says what was
wrong: never a protocol failure, never a stack trace, and no unexpected exception in the server log."""

from __future__ import annotations

import json
import logging
import os

import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from schemathesis import GenerationMode, openapi
from mcp.client.streamable_http import streamable_http_client

from memlane.mcp_server.tools import TOOL_NAMES
from support.server_fixtures import TIMEOUT, live  # noqa: F401  (fixture)

EXAMPLES = int(os.environ.get("MEMLANE_FUZZ_EXAMPLES", "8"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

def argument_strategies(tools) -> dict[str, st.SearchStrategy[dict]]:
    """Per tool: arguments that fit its input schema or do not (both of schemathesis's modes)."""
    doc = {"openapi": "3.1.0", "info": {"title": "memlane MCP tools", "version": "1"}, "paths": {},
           "components": {"schemas": {}}}
    for tool in tools:
        schema = json.loads(json.dumps(tool.input_schema).replace('"#/$defs/', '"#/components/schemas/'))
        doc["components"]["schemas"].update(schema.pop("$defs", {}))
        doc["paths"]["/" + tool.name] = {"post": {
            "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
            "responses": {"200": {"description": "the tool's result"}}}}
    strategies = {}
    for result in openapi.from_dict(doc).get_all_operations():
        operation = result.ok()
        cases = operation.as_strategy(GenerationMode.POSITIVE) | operation.as_strategy(GenerationMode.NEGATIVE)
        strategies[operation.path.lstrip("/")] = cases.map(lambda case: case.body).filter(
            lambda body: isinstance(body, dict))  # call_tool takes an object of arguments
    return strategies


def _client(url: str, key: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
    return Client(streamable_http_client(url + "/mcp", http_client=http), read_timeout_seconds=TIMEOUT)


def check(name: str, arguments: dict, result) -> bool:
    """Whether the call succeeded; fails the test on an answer no client should see."""
    text = " ".join(getattr(block, "text", "") for block in result.content)
    assert "Traceback (most recent call last)" not in text and 'File "/' not in text, (name, arguments, text)
    if result.is_error:
        assert text.strip(), f"{name}({arguments}) failed without saying why"
    else:
        assert result.structured_content is not None or text, f"{name}({arguments}) returned nothing"
    return not result.is_error


def test_every_tool_with_random_arguments(live, caplog):  # noqa: F811
    keys = [live.key("mcp-fuzz-a", admin=True), live.key("mcp-fuzz-b")]
    outcomes = {True: 0, False: 0}
    with caplog.at_level(logging.ERROR, logger="memlane"), start_blocking_portal() as portal:
        for key in keys:
            with portal.wrap_async_context_manager(_client(live.url, key)) as client:
                tools = portal.call(client.list_tools).tools
                assert {tool.name for tool in tools} == set(TOOL_NAMES)
                strategies = argument_strategies(tools)
                for tool in tools:
                    @given(args=strategies[tool.name])
                    @SETTINGS
                    def fuzz(args):
                        outcomes[check(tool.name, args, portal.call(client.call_tool, tool.name, args))] += 1

                    fuzz()
    # both kinds of arguments reached the tools: some calls succeeded, some were refused
    assert outcomes[True] > 0 and outcomes[False] > 0 and sum(outcomes.values()) >= len(TOOL_NAMES) * len(keys)
    unexpected = [r.getMessage() for r in caplog.records if r.name.startswith("memlane") and r.levelno >= logging.ERROR]
    assert not unexpected, unexpected


@pytest.mark.parametrize("name, arguments, field", [
    ("add_memory", {"messages": "I like tea\x00", "user_id": "mcp-text"}, "messages[0].content"),
    ("add_memory", {"messages": "I like tea", "user_id": "mcp-text", "metadata": {"k\x00": 1}}, "metadata"),
    ("search_memories", {"query": "tea", "user_id": "mcp-text", "filters": {"k": {"in": ["\x00"]}}}, "filters"),
    ("get_memory", {"memory_id": "abc\x00"}, "memory_id"),
])
def test_unstorable_text_is_a_tool_error_naming_the_field(live, name, arguments, field):  # noqa: F811
    """The MCP face refuses what the SDK and REST refuse (a NUL here: the client cannot send a lone
    surrogate, tests/mcp has those), stores nothing and keeps serving."""
    key = live.key("mcp-text", admin=True)
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_client(live.url, key)) as client:
        result = portal.call(client.call_tool, name, arguments)
        text = " ".join(getattr(block, "text", "") for block in result.content)
        assert result.is_error and field in text and ("NUL" in text or "surrogate" in text), text
        listed = portal.call(client.call_tool, "list_memories", {"user_id": "mcp-text"})
        assert not listed.is_error and listed.structured_content["results"] == []
