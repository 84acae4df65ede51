"""The memory tools every framework adapter offers, once: their arguments, descriptions and bodies.

``ScopedTools`` binds a ``Memory`` to one scope (the user / agent / run the
agent works for: the model never picks whose memories it reads) and runs the
same tool bodies as memlane's MCP server (``memlane.mcp_server.tools``): an
add reports what it stored or why nothing, a search returns each memory with
its id, score, metadata and scope. The LangChain and OpenAI Agents adapters
only wrap these in their framework's tool type.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from memlane.core import scope
from memlane.mcp_server import tools
from memlane.async_memory import AsyncMemory
from memlane.memory import Memory

#: the framework-neutral failure the adapters turn into their framework's tool error
ToolFailure = tools.ToolFailure


class AddMemoryArgs(BaseModel):
    """Remember what the user shared: lasting facts, preferences and changes (old facts are updated, not
    duplicated). Returns what was stored, or why nothing was."""

    model_config = ConfigDict(extra="forbid")

    # MCP's add_memory calls it messages too; "text" (this tool's earlier name) is still read
    messages: str = Field(min_length=1, validation_alias=AliasChoices("messages", "text"),
                          description="what to remember, in the user's words or as a short note")
    infer: bool = Field(True, description="true: extract facts and reconcile them with what is known; "
                                          "false: store the text exactly as written")


class SearchMemoriesArgs(BaseModel):
    """Find what is known about the user that relates to a question, best match first, each with a score."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, description="what to look for, in natural language")
    limit: int = Field(tools.DEFAULT_SEARCH_LIMIT, ge=1, le=100, description="how many memories to return")


#: tool name -> its argument model (the ScopedTools method of the same name runs it)
TOOLS: dict[str, type[BaseModel]] = {"add_memory": AddMemoryArgs, "search_memories": SearchMemoriesArgs}


def description(name: str) -> str:
    """A tool's description: its argument model's docstring, on one line."""
    return " ".join((TOOLS[name].__doc__ or "").split())


class ScopedTools:
    """The memory tools of one scope. ``call(name, arguments)`` runs a tool from its (validated) arguments."""

    def __init__(self, memory: Memory | AsyncMemory | None = None, *, user_id: str | None = None,
                 agent_id: str | None = None, run_id: str | None = None):
        ids = scope.scope_ids(user_id, agent_id, run_id)
        scope.require_ids(ids)
        self.scope = ids
        self.caller = tools.Caller(memory.sync if isinstance(memory, AsyncMemory) else (memory or Memory()),
                                   admin=False)

    def add_memory(self, args: AddMemoryArgs) -> dict[str, Any]:
        return tools.add_memory(self.caller, args.messages, infer=args.infer, **self.scope)

    def search_memories(self, args: SearchMemoriesArgs) -> dict[str, Any]:
        return tools.search_memories(self.caller, args.query, limit=args.limit, **self.scope)

    def call(self, name: str, arguments: dict[str, Any] | BaseModel) -> dict[str, Any]:
        model = TOOLS[name]
        args = arguments if isinstance(arguments, model) else model.model_validate(arguments)
        return getattr(self, name)(args)
