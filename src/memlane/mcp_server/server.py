"""memlane's MCP server (official ``mcp`` SDK): memory, agent-context and document-collection tools for agents.

``build_server(resolve)`` registers the tools; ``resolve(ctx)`` says which
``Memory`` a call acts on. Over stdio (``memlane mcp``) that is the local
store; mounted in the REST server at ``/mcp`` it is the tenant of the API key
that made the HTTP request. The tools are the functions of ``tools.py``: each
one's parameters after ``caller`` and its docstring are the tool's schema and
description (``document_tools.py``'s, for document collections, likewise); ``TOOLS`` lists them with what
they promise (MCP annotations).

A tool that fails returns an MCP tool error (``isError``) with a readable
message; the server keeps running. Arguments that do not fit a tool's schema get one line naming
each argument at fault, as REST's 422 does (``invalid messages: Input should be a valid string or a
valid list``), not pydantic's multi-line text. An argument the tool does not have (``qeury``, ``user``) is
refused the same way, naming the tool's arguments (``unknown argument qeury (did you mean query?); ...``):
run as if it were not given, a misspelt scope or query would quietly widen or change the call. The listed
input schemas say so (``additionalProperties: false``).
"""

from __future__ import annotations

import difflib
import inspect
import json
import logging
from collections.abc import Callable
from typing import Any, Optional

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import ValidationError

from memlane import __version__
from memlane.core import field_errors
from memlane.mcp_server import document_tools, tools
from memlane.memory import Memory

log = logging.getLogger("memlane.mcp")

Resolver = Callable[[Optional[Context]], tools.Caller]

INSTRUCTIONS = """memlane is a long-term memory for this conversation's user (and agent).
Call search_memories before answering questions that may depend on what you know about the user;
call add_memory with the user's messages when they share lasting facts, preferences or changes.
With a whole conversation at hand, should_search_memory says (cheaply) whether memory may help, and
search_memory_with_context finds the memories it calls for, grouped as agent/user x profile/event.
Documents (notes, manuals, PDFs) go in collections: create_collection, then upsert_document; search_documents
finds their pages, list_documents and get_document read them back.
Memories belong to a scope: user_id, agent_id and/or run_id. When the server has a default user,
calls that name no scope use it."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
#: adds, never changes what is there
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
#: replaces what is there with what the call gives: calling it again changes nothing more
REPLACES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

#: the tools in the order they are listed, each with its annotations
TOOLS: tuple[tuple[Callable[..., dict[str, Any]], ToolAnnotations], ...] = (
    (tools.add_memory, WRITES),
    (tools.get_event, READ_ONLY),
    (tools.search_memories, READ_ONLY),
    (document_tools.search_documents, READ_ONLY),
    (tools.get_memory, READ_ONLY),
    (tools.list_memories, READ_ONLY),
    (tools.update_memory, REPLACES),
    (tools.delete_memory, DESTRUCTIVE),
    (tools.delete_all_memories, DESTRUCTIVE),
    (tools.memory_history, READ_ONLY),
    (tools.should_search_memory, READ_ONLY),
    (tools.search_memory_with_context, READ_ONLY),
    (tools.cleanup_old_memories, DESTRUCTIVE),  # maintenance (seed 002)
    (tools.merge_similar_memories, DESTRUCTIVE),
    # document collections (document_tools.py; docs/documents.md)
    (document_tools.create_collection, WRITES),
    (document_tools.list_collections, READ_ONLY),
    (document_tools.get_collection, READ_ONLY),
    (document_tools.update_collection, REPLACES),
    (document_tools.delete_collection, DESTRUCTIVE),
    (document_tools.upsert_document, REPLACES),
    (document_tools.list_documents, READ_ONLY),
    (document_tools.get_document, READ_ONLY),
    (document_tools.update_document, REPLACES),
    (document_tools.delete_document, DESTRUCTIVE),
)


class MemlaneMCP(MCPServer):
    """The SDK's server, with the tools' argument errors in one line (``argument_error``) and arguments a
    tool does not have refused (``unknown_arguments``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: tool -> the names of its arguments, in its schema's order
        self.arguments: dict[str, tuple[str, ...]] = {}

    async def list_tools(self) -> Any:
        listed = await super().list_tools()
        for tool in listed:
            if tool.name in self.arguments:
                tool.input_schema = {**tool.input_schema, "additionalProperties": False}
        return listed

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        known = self.arguments.get(name)
        unknown = [a for a in arguments if a not in known] if known is not None else []
        if unknown:
            raise ToolError(unknown_arguments(name, unknown, known or ()))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):  # the SDK's check of the arguments against the schema
                raise ToolError(argument_error(name, exc.__cause__)) from exc.__cause__
            raise


def argument_error(tool: str, error: ValidationError) -> str:
    """``Error executing tool add_memory: invalid messages: Input should be a valid string or a valid list``
    (the SDK's prefix, the tools' own wording of an invalid argument)."""
    entries = field_errors.field_errors(error.errors(), whole="arguments")
    return f"Error executing tool {tool}: " + "; ".join(f"invalid {e['field']}: {e['message']}" for e in entries)


#: unknown arguments named in one error (a call with hundreds says how many more)
_NAMED = 5


def unknown_arguments(tool: str, unknown: list[str], known: tuple[str, ...]) -> str:
    """``Error executing tool search_memories: unknown argument qeury (did you mean query?); search_memories
    takes query, user_id, ...``: one line, as ``argument_error``."""
    named = []
    for argument in unknown[:_NAMED]:
        close = difflib.get_close_matches(argument, known, n=1)
        shown = argument if argument.isidentifier() and len(argument) <= 64 else json.dumps(argument[:64])
        named.append(f"{shown} (did you mean {close[0]}?)" if close else shown)
    if len(unknown) > _NAMED:
        named.append(f"and {len(unknown) - _NAMED} more")
    takes = ", ".join(known) if known else "no arguments"
    return (f"Error executing tool {tool}: unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(named)}; "
            f"{tool} takes {takes}")


def build_server(resolve: Resolver, *, name: str = "memlane") -> MCPServer:
    server = MemlaneMCP(name, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    for tool, annotations in TOOLS:
        server.add_tool(serving(tool, resolve), annotations=annotations)
        server.arguments[tool.__name__] = tuple(inspect.signature(tool).parameters)[1:]  # after ``caller``
    return server


def serving(tool: Callable[..., dict[str, Any]], resolve: Resolver) -> Callable[..., dict[str, Any]]:
    """``tool`` (of ``tools.py``) as the SDK registers it: the caller that ``ctx`` stands for in place of
    ``caller``, the rest of its signature and its docstring as they are; its failure is the MCP tool error."""

    def call(ctx: Context, **arguments: Any) -> dict[str, Any]:
        caller = resolve(ctx)
        try:
            return tool(caller, **arguments)
        except tools.ToolFailure as exc:
            raise ToolError(str(exc)) from None

    signature = inspect.signature(tool, eval_str=True)
    _caller, *parameters = signature.parameters.values()
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    call.__signature__ = signature.replace(parameters=[context, *parameters])  # type: ignore[attr-defined]
    call.__name__ = call.__qualname__ = tool.__name__
    call.__doc__ = inspect.cleandoc(tool.__doc__ or "")
    return call


def local_server(memory: Memory, *, default_user_id: str | None = None) -> MCPServer:
    """The stdio server of ``memlane mcp``: every call acts on one local ``Memory``."""
    caller = tools.Caller(memory=memory, admin=True, default_user_id=default_user_id)
    return build_server(lambda ctx: caller)


def run_stdio(memory: Memory, *, default_user_id: str | None = None) -> None:
    local_server(memory, default_user_id=default_user_id).run("stdio")
