"""memlane's MCP server (official ``mcp`` SDK): memory, agent-context and document-search tools for agents.

``build_server(resolve)`` registers the tools; ``resolve(ctx)`` says which
``Memory`` a call acts on. Over stdio (``memlane mcp``) that is the local
store; mounted in the REST server at ``/mcp`` it is the tenant of the API key
that made the HTTP request. The tool bodies are in ``tools.py``.

A tool that fails returns an MCP tool error (``isError``) with a readable
message; the server keeps running.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional, Union

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field

from memlane import __version__
from memlane.mcp_server import tools
from memlane.memory import Memory
from memlane.core.models import MEMORY_TYPES

log = logging.getLogger("memlane.mcp")

Resolver = Callable[[Optional[Context]], tools.Caller]

INSTRUCTIONS = """memlane is a long-term memory for this conversation's user (and agent).
Call search_memories before answering questions that may depend on what you know about the user;
call add_memory with the user's messages when they share lasting facts, preferences or changes.
With a whole conversation at hand, should_search_memory says (cheaply) whether memory may help, and
search_memory_with_context finds the memories it calls for, grouped as agent/user x profile/event.
Memories belong to a scope: user_id, agent_id and/or run_id. When the server has a default user,
calls that name no scope use it."""

UserId = Annotated[Optional[str], Field(description="the user the memories belong to (default: the server's user)")]
AgentId = Annotated[Optional[str], Field(description="the agent the memories belong to")]
RunId = Annotated[Optional[str], Field(description="the run / session the memories belong to")]
Filters = Annotated[Optional[dict[str, Any]], Field(
    description='memlane filter: {"category": "food"}, {"level": {"gte": 3}}, {"OR": [...]}, '
                '{"NOT": [...]}, {"created_at": {"gte": "2026-01-01"}}; scope keys (user_id, ...) may go here too')]
MemoryId = Annotated[str, Field(description="the memory's id (from search_memories or list_memories)",
                                min_length=1, max_length=256)]
# any JSON value: seed 001's rule (validation.lenient_limit) decides, not pydantic (which would read "7" as 7)
Limit = Annotated[Any, Field(
    description="how many to return, a positive integer; anything else (\"7\", 2.0, null) falls back to the "
                "default with a warning")]


Message = Annotated[dict[str, Any], Field(description='{"role": "user" | "assistant" | "system" | "tool", '
                                                      '"content": "...", "name"?: "...", "created_at"?: when it was '
                                                      'said (Unix seconds or ISO-8601)}')]
Conversation = Annotated[Optional[Union[str, list[Message]]], Field(
    description="the conversation so far: a list of messages, oldest first (or one string, a user message); "
                "empty or missing: no search")]
DryRun = Annotated[bool, Field(description="return the plan without changing anything")]
SystemPrompt = Annotated[Optional[str], Field(description="the agent's system prompt, if any")]


def build_server(resolve: Resolver, *, name: str = "memlane") -> MCPServer:
    server = MCPServer(name, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")

    def call(tool: Callable[..., Any], ctx: Context, *args: Any, **kwargs: Any) -> Any:
        """``tool`` (of ``tools.py``) for the caller ``ctx`` stands for; its failure is the MCP tool error."""
        caller = resolve(ctx)
        try:
            return tool(caller, *args, **kwargs)
        except tools.ToolFailure as exc:
            raise ToolError(str(exc)) from None

    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
    destructive = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False))
    def add_memory(
        ctx: Context,
        messages: Annotated[Union[str, list[Message]], Field(
            description="what to remember: the user's message as text, or a conversation as a list of messages")],
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        metadata: Annotated[Optional[dict[str, Any]], Field(description="JSON object stored with the memories")] = None,
        infer: Annotated[bool, Field(description="true: extract and reconcile facts (ADD / UPDATE / DELETE); "
                                                 "false: store each message verbatim")] = True,
        memory_type: Annotated[Optional[Literal[MEMORY_TYPES]], Field(  # type: ignore[valid-type]
            description="fact, preference, event, profile or procedural (procedural needs agent_id)")] = None,
        expiration_date: Annotated[Optional[str], Field(
            description="ISO-8601 date or datetime in the future: the memories added expire then")] = None,
        timestamp: Annotated[Optional[Union[int, float, str]], Field(
            description="when the conversation was said: Unix seconds or ISO-8601, not in the future (default: now); "
                        "a message may carry its own created_at")] = None,
        async_mode: Annotated[bool, Field(
            description="answer at once (status PENDING, an event_id for get_event) and form the memories in "
                        "the background; what was sent is searchable at once")] = False,
    ) -> dict[str, Any]:
        """Remember a conversation: extract lasting facts and reconcile them with what is already known
        (new facts are added, changed ones updated, contradicted ones invalidated). The messages are also
        kept verbatim. Returns the changes made (results: id, memory, event), the facts extracted, each
        message that stored nothing with why (skipped: message_id, reason) and a one-line summary (message).
        A note that states nothing to remember is reported, never stored silently: pass infer=false to
        keep it exactly as written."""
        return call(tools.add_memory, ctx, messages, user_id=user_id, agent_id=agent_id, run_id=run_id,
                    metadata=metadata, infer=infer, memory_type=memory_type, expiration_date=expiration_date,
                    timestamp=timestamp, async_mode=async_mode)

    @server.tool(annotations=read_only)
    def get_event(ctx: Context, event_id: Annotated[str, Field(
            description="the event_id add_memory answered with (async_mode)")]) -> dict[str, Any]:
        """The outcome of an add_memory made with async_mode: status PENDING, RUNNING, SUCCEEDED (result:
        what add_memory would have answered) or FAILED (error: why; the messages stay kept)."""
        return call(tools.get_event, ctx, event_id)

    @server.tool(annotations=read_only)
    def search_memories(
        ctx: Context,
        query: Annotated[str, Field(description="what to look for, in natural language")],
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        filters: Filters = None,
        limit: Limit = tools.DEFAULT_SEARCH_LIMIT,
        threshold: Annotated[Optional[float], Field(
            description="minimum similarity score (cosine, -1..1; 0.2-0.3 keeps only related memories)")] = None,
        keyword_search: Annotated[Optional[bool], Field(
            description="also rank by matching keywords (BM25 fused with meaning); default from the server config")] = None,
        rerank: Annotated[Optional[bool], Field(
            description="re-order the top candidates with the configured reranker")] = None,
        filter_memories: Annotated[Optional[bool], Field(
            description="drop results that do not answer the query")] = None,
    ) -> dict[str, Any]:
        """Find the memories most related to a query, best first, each with a score.
        The result's metadata says which retrieval stages were requested, ran and failed (stages_failed:
        the search went on without them), whether the advanced search fell back to a standard one
        (fallback_used, original_error), warnings and timings in ms. If even the standard search fails,
        the answer is {"memories": [], "status": "error", "message": ...} with metadata.fallback_failed."""
        return call(tools.search_memories, ctx, query, user_id=user_id, agent_id=agent_id, run_id=run_id,
                    filters=filters, limit=limit, threshold=threshold, keyword_search=keyword_search, rerank=rerank,
                    filter_memories=filter_memories)

    @server.tool(annotations=read_only)
    def search_documents(
        ctx: Context,
        query: Annotated[str, Field(description="what to look for in the document collections")],
        collection_name: Annotated[str, Field(description="a collection's name, or 'all' for every one")] = "all",
        top_k: Limit = 3,
        query_filter: Annotated[Optional[dict[str, Any]], Field(
            description='metadata lookup: {"on": "document" | "collection", "key": "year", "value": 2024, '
                        '"lookup": "key_lookup" | "contains" | "contained_by" | "has_key" | "has_keys" | '
                        '"has_any_keys"}')] = None,
        keyword_search: Annotated[Optional[bool], Field(
            description="also match the query's words in the pages' text (BM25 fused with MaxSim): "
                        "names, codes, rare terms")] = None,
    ) -> dict[str, Any]:
        """Find the document pages most related to a query (late-interaction MaxSim), best first, with
        their text, page number, document and collection, raw_score and normalized_score (0..1); with
        keyword_search also keyword_score and the hybrid_score they are ranked by."""
        return call(tools.search_documents, ctx, query, collection_name=collection_name, top_k=top_k,
                    query_filter=query_filter, keyword_search=keyword_search)

    @server.tool(annotations=read_only)
    def get_memory(ctx: Context, memory_id: MemoryId) -> dict[str, Any]:
        """One memory by id: its text, scope, metadata and timestamps."""
        return call(tools.get_memory, ctx, memory_id)

    @server.tool(annotations=read_only)
    def list_memories(
        ctx: Context,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        filters: Filters = None,
        limit: Limit = tools.DEFAULT_LIST_LIMIT,
        include_invalid: Annotated[bool, Field(description="also list memories that were invalidated "
                                                           "(contradicted or retracted)")] = False,
    ) -> dict[str, Any]:
        """Every memory of a scope, newest first (optionally filtered by metadata or fields)."""
        return call(tools.list_memories, ctx, user_id=user_id, agent_id=agent_id, run_id=run_id, filters=filters,
                    limit=limit, include_invalid=include_invalid)

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                                             open_world_hint=False))
    def update_memory(
        ctx: Context,
        memory_id: MemoryId,
        text: Annotated[Optional[str], Field(description="the new text of the memory")] = None,
        metadata: Annotated[Optional[dict[str, Any]], Field(description="new metadata (replaces the old)")] = None,
    ) -> dict[str, Any]:
        """Change a memory's text and/or metadata. The old text stays in its history. Returns the memory."""
        return call(tools.update_memory, ctx, memory_id, text=text, metadata=metadata)

    @server.tool(annotations=destructive)
    def delete_memory(ctx: Context, memory_id: MemoryId) -> dict[str, Any]:
        """Delete one memory (its history is kept)."""
        return call(tools.delete_memory, ctx, memory_id)

    @server.tool(annotations=destructive)
    def delete_all_memories(
        ctx: Context,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        filters: Filters = None,
    ) -> dict[str, Any]:
        """Delete every memory of a scope (the server's default user when no scope is given), or only
        those matching filters. History is kept. Returns how many were deleted."""
        return call(tools.delete_all_memories, ctx, user_id=user_id, agent_id=agent_id, run_id=run_id,
                    filters=filters)

    @server.tool(annotations=read_only)
    def memory_history(ctx: Context, memory_id: MemoryId) -> dict[str, Any]:
        """Every change of a memory, oldest first: ADD, UPDATE (old and new text), DELETE."""
        return call(tools.memory_history, ctx, memory_id)

    @server.tool(annotations=read_only)
    def should_search_memory(
        ctx: Context,
        conversation: Conversation = None,
        system_prompt: SystemPrompt = "",
        explain: Annotated[bool, Field(description="also return the score of each signal")] = False,
        user_id: UserId = None,
        agent_id: AgentId = None,
    ) -> dict[str, Any]:
        """Whether the next reply needs long-term memory, from the conversation's recent user turns:
        memory words (remember, last time, 记得, 上次), questions, relationship pronouns (my, our, 我的,
        我们), references to earlier turns, requests to choose for the user (recommend, 推荐); never for
        small talk. With user_id / agent_id it also weighs what that scope holds (no memories: no
        search). Ask it before search_memory_with_context."""
        return call(tools.should_search_memory, ctx, conversation, system_prompt=system_prompt, explain=explain,
                    user_id=user_id, agent_id=agent_id)

    @server.tool(annotations=read_only)
    def search_memory_with_context(
        ctx: Context,
        conversation: Conversation = None,
        system_prompt: SystemPrompt = "",
        user_id: Annotated[Any, Field(description="the user (default: the server's user); an invalid id is "
                                                  "ignored; with no user or agent: every memory")] = None,
        agent_id: Annotated[Optional[str], Field(
            description="the agent; without user_id: its own memories and those of every user recorded with it")] = None,
        max_results: Annotated[Any, Field(description="matches per category, a positive integer (default 10; "
                                                      "anything else: 10 with a warning)")] = 10,
    ) -> dict[str, Any]:
        """The memories a whole conversation calls for: terms from the conversation (later turns first) and the
        meaning of its recent turns, so paraphrases are found. Returns search_terms and matches grouped as
        agent_profile_matches, agent_event_matches, user_profile_matches, user_event_matches (each with
        content, match_score, matched_terms), and total_matches."""
        return call(tools.search_memory_with_context, ctx, conversation, system_prompt=system_prompt, user_id=user_id,
                    agent_id=agent_id, max_results=max_results)

    # -- maintenance (seed 002) ----------------------------------------------------------------

    @server.tool(annotations=destructive)
    def cleanup_old_memories(
        ctx: Context,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        keep_latest: Annotated[int, Field(strict=True, ge=0, description="how many of the newest memories to keep")
                               ] = 1000,
        dry_run: DryRun = False,
    ) -> dict[str, Any]:
        """Keep the newest keep_latest valid memories of a scope and invalidate the older ones (their
        text stays in history; list_memories with include_invalid shows them). Returns each memory
        invalidated (results) and how many were kept."""
        return call(tools.cleanup_old_memories, ctx, user_id=user_id, agent_id=agent_id, run_id=run_id,
                    keep_latest=keep_latest, dry_run=dry_run)

    @server.tool(annotations=destructive)
    def merge_similar_memories(
        ctx: Context,
        user_id: UserId = None,
        agent_id: AgentId = None,
        run_id: RunId = None,
        threshold: Annotated[float, Field(strict=True, gt=0, le=1, description=(
            "cosine similarity at which two memories are the same (0.95: near-duplicates only)"))] = 0.95,
        dry_run: DryRun = False,
    ) -> dict[str, Any]:
        """Merge a scope's near-duplicate memories: each group becomes its oldest memory with one text
        (the more specific one, or the configured LLM's merge); the others are invalidated and their
        texts kept in history. Memories that contradict each other are never merged (kept_apart).
        Returns each merge (results: id, memory, previous_memory, merged), kept_apart and failed."""
        return call(tools.merge_similar_memories, ctx, user_id=user_id, agent_id=agent_id, run_id=run_id,
                    threshold=threshold, dry_run=dry_run)

    return server


def local_server(memory: Memory, *, default_user_id: str | None = None) -> MCPServer:
    """The stdio server of ``memlane mcp``: every call acts on one local ``Memory``."""
    caller = tools.Caller(memory=memory, admin=True, default_user_id=default_user_id)
    return build_server(lambda ctx: caller)


def run_stdio(memory: Memory, *, default_user_id: str | None = None) -> None:
    local_server(memory, default_user_id=default_user_id).run("stdio")
