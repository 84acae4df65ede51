"""memlane for the OpenAI Agents SDK: function tools (``pip install memlane[openai-agents]``).

    from agents import Agent
    from memlane import Memory
    from memlane.integrations.openai_agents import memory_tools

    agent = Agent(name="assistant", tools=memory_tools(Memory(), user_id="alice"))

The tools are ``add_memory`` and ``search_memories`` of one scope (the model
never chooses whose memories it reads); they answer JSON, a search with each
memory's id, score, metadata and scope. memlane's MCP server is the other way
in (every memory tool, any scope): ``MCPServerStdio(params={"command": "memlane",
"args": ["mcp", "--user-id", "alice"]})``, see ``examples/openai_agents_mcp.py``.
"""

from __future__ import annotations

import asyncio
import json

from agents import FunctionTool, RunContextWrapper
from agents.strict_schema import ensure_strict_json_schema
from pydantic import ValidationError

from memlane.integrations.agent_tools import TOOLS, ScopedTools, ToolFailure, description
from memlane.async_memory import AsyncMemory
from memlane.memory import Memory


def memory_tools(memory: Memory | AsyncMemory | None = None, *, user_id: str | None = None,
                 agent_id: str | None = None, run_id: str | None = None) -> list[FunctionTool]:
    """``add_memory`` and ``search_memories`` for the scope, as Agents SDK function tools.

    Arguments the model got wrong, or a failure it can fix, come back to it as
    the tool's answer (``{"error": ...}``) so it can correct itself."""
    scoped = ScopedTools(memory, user_id=user_id, agent_id=agent_id, run_id=run_id)

    def tool(name: str) -> FunctionTool:
        model = TOOLS[name]

        async def invoke(context: RunContextWrapper, arguments: str) -> str:
            try:
                args = model.model_validate_json(arguments or "{}")
                result = await asyncio.to_thread(scoped.call, name, args)
            except ValidationError as exc:
                result = {"error": f"invalid arguments for {name}: {exc.errors(include_url=False)}"}
            except ToolFailure as exc:
                result = {"error": str(exc)}
            return json.dumps(result, ensure_ascii=False, default=str)

        return FunctionTool(name=name, description=description(name), on_invoke_tool=invoke,
                            params_json_schema=ensure_strict_json_schema(model.model_json_schema()))

    return [tool(name) for name in TOOLS]
