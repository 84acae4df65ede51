"""docs/mcp.md's tool table is the server's: every tool it serves (through an MCP client session), no
other, each with exactly its arguments, the required ones starred."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
from mcp import Client

from memlane.mcp_server.server import local_server

PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"
ROW = re.compile(r"^\| `(?P<tool>\w+)` \| (?P<arguments>[^|]*) \|", re.M)


def documented() -> dict[str, dict[str, bool]]:
    """{tool: {argument: required}} from the page's table."""
    tools = {}
    for row in ROW.finditer(PAGE.read_text(encoding="utf-8").split("## Tools", 1)[1].split("\n## ", 1)[0]):
        names = re.findall(r"`(\w+)`(\*?)", row["arguments"])
        tools[row["tool"]] = {name: star == "*" for name, star in names}
    return tools


def served(memory) -> dict[str, dict[str, bool]]:
    async def listed():
        async with Client(local_server(memory, default_user_id="alice")) as client:
            return (await client.list_tools()).tools

    return {tool.name: {name: name in (tool.input_schema.get("required") or [])
                        for name in tool.input_schema["properties"]}
            for tool in anyio.run(listed)}


def test_the_page_lists_every_tool_with_its_arguments(memory):
    on_page, on_server = documented(), served(memory)
    assert sorted(on_page) == sorted(on_server)
    for tool, arguments in on_server.items():
        assert on_page[tool] == arguments, tool
