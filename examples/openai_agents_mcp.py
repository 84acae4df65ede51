"""An OpenAI Agents SDK agent with memlane's MCP server as its memory (``memlane mcp`` over stdio).

    OPENAI_API_KEY=... python examples/openai_agents_mcp.py "What do you know about my diet?"

The agent starts ``memlane mcp --user-id alice`` as a child process and sees
every memlane memory tool (add_memory, search_memories, list_memories,
memory_history, ...). Calls that name no scope act for alice. The same server
configuration works in any MCP client; for one that reads a JSON config
(Claude Desktop, Cursor) it is ``MCP_CONFIG`` below.

Function tools are the other way in, without a child process:
``memlane.integrations.openai_agents.memory_tools(Memory(), user_id="alice")``.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from agents import Agent, Model, RunConfig, Runner
from agents.mcp import MCPServerStdio

#: the server as an MCP client configuration file names it
MCP_CONFIG = {"mcpServers": {"memlane": {"command": "memlane", "args": ["mcp", "--user-id", "alice"]}}}

INSTRUCTIONS = ("You are a helpful assistant with a long-term memory. Before answering a question about the user, "
                "call search_memories; when the user shares something lasting about themselves, call add_memory.")


def server(command: Sequence[str] = ("memlane",), *, home: str | None = None, user_id: str = "alice",
           env: dict[str, str] | None = None) -> MCPServerStdio:
    """``memlane [--home HOME] mcp --user-id USER`` as an Agents SDK MCP server (stdio)."""
    args = [*command[1:], *(["--home", home] if home else []), "mcp", "--user-id", user_id]
    # the child loads the embedding model on its first call: allow it time
    return MCPServerStdio(name="memlane", params={"command": command[0], "args": args, **({"env": env} if env else {})},
                          client_session_timeout_seconds=180, cache_tools_list=True)


async def ask(question: str, memory_server: MCPServerStdio, *, model: str | Model = "gpt-4.1-mini",
              run_config: RunConfig | None = None) -> Any:
    async with memory_server:
        agent = Agent(name="assistant", instructions=INSTRUCTIONS, mcp_servers=[memory_server], model=model)
        result = await Runner.run(agent, question, run_config=run_config)
        return result.final_output


if __name__ == "__main__":
    print(asyncio.run(ask(" ".join(sys.argv[1:]) or "What do you know about me?", server())))
