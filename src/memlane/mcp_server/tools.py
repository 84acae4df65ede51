"""What the MCP tools do, as plain functions over a ``Memory`` (testable without MCP).

Each tool is declared here once: its parameters after ``caller`` (types, defaults, descriptions) and its
docstring are the MCP tool's input schema and description, which ``server.py`` registers as they stand.

Every tool calls the same ``Memory`` method the SDK offers; this module only
adds what an agent-facing face needs:

* a default ``user_id`` per server, used when a call names no scope at all;
* seed 001's rule for ``limit`` (and ``max_results``, ``top_k``): a value that
  is not an integer (``"7"``, ``2.0``, ``None``) or is <= 0 falls back to the
  default with a warning instead of failing;
* defensive result handling: memories may come as ``results`` or
  ``memories``, as dicts or bare strings; malformed items are skipped with a
  warning;
* a search report: the engine runs the optional stages (``keyword_search``,
  ``rerank``, ``filter_memories``; defaults from the ``retrieval`` config) and
  skips one that fails (``stages_failed``); if the advanced search itself fails
  a standard search answers (``fallback_used``, ``original_error``), and if that
  fails too the tool answers ``{"memories": [], "status": "error", "message"}``
  with ``fallback_failed``. The tool's ``metadata`` also has timings in ms and
  warnings.

Failures the caller can fix raise ``ToolFailure`` with a readable message.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field

from memlane.core import filters as flt
from memlane.core.scope import pins_scope
from memlane.core import validation
from memlane.core.errors import (AddInProgress, EventNotFoundError, FilterError, InvalidInputError,
                                 MaintenanceBusyError, MemlaneError, MemoryNotFoundError, PermissionDeniedError,
                                 ScopeError,
                                 StorageFullError, StoreUnavailableError)
from memlane.core.models import MEMORY_TYPES
from memlane.memory import Memory
from memlane.retrieval.candidates import STAGE_NAMES
from memlane.hosting.tenancy import widens_scope

log = logging.getLogger("memlane.mcp")

DEFAULT_SEARCH_LIMIT = 5
DEFAULT_LIST_LIMIT = 100
#: The engine's optional search stages and the flags that ask for them.
STAGE_FLAGS = STAGE_NAMES


class ToolFailure(Exception):
    """A tool call that failed for a reason the caller can read and fix."""


@dataclass
class Caller:
    """What one tool call acts on: a ``Memory``, the caller's rights, the default scope."""

    memory: Memory
    admin: bool = True
    default_user_id: str | None = None
    #: how whoever runs this server sets the default user (named in the error of a call without a scope)
    default_user_flag: str = "memlane mcp --user-id NAME"


# -- arguments, as the tools' schemas describe them to an agent ---------------------------------

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


# -- argument handling ---------------------------------------------------------


def coerce_limit(value: Any, default: int, maximum: int, warnings: list[str], name: str = "limit") -> int:
    """Seed 001's rule (``validation.lenient_limit``): not an integer or <= 0 gives ``default``, above
    ``maximum`` gives the maximum; either way with a warning in ``warnings``."""
    value, warning = validation.lenient_limit(value, default, maximum, name)
    if warning:
        warnings.append(warning)
    return value


def has_scope(filters: Mapping[str, Any] | None) -> bool:
    """Whether the filters name a user / agent / run themselves (mem0 v2 style; an OR each of whose
    branches names one does too)."""
    if not filters:
        return False
    try:
        node = flt.parse(filters)
    except (FilterError, InvalidInputError):
        return any(key in flt.SCOPE_COLUMNS for key in filters)
    return (any(isinstance(c, flt.Compare) and c.field.column in flt.SCOPE_COLUMNS for c in flt.conjuncts(node))
            or pins_scope(node))


def scope_of(caller: Caller, user_id: Any, agent_id: Any, run_id: Any,
             filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The scope arguments of a call: as given, or the server's default user when none is named."""
    if user_id is None and agent_id is None and run_id is None and not has_scope(filters):
        user_id = caller.default_user_id
    if not caller.admin and widens_scope(filters):
        raise ToolFailure('a wildcard scope (e.g. filters {"user_id": "*"}) needs an admin API key')
    return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}


def run(action: Callable[[], Any], caller: Caller | None = None) -> Any:
    """Call ``Memory``; turn memlane's errors into readable tool failures."""
    try:
        return action()
    except MemoryNotFoundError as exc:
        raise ToolFailure(f"{exc}; check the id (search_memories or list_memories show ids)") from None
    except EventNotFoundError as exc:
        raise ToolFailure(f"{exc}; add_memory with async_mode answers with the event_id") from None
    except (MaintenanceBusyError, AddInProgress) as exc:  # their messages say what to do (wait, retry)
        raise ToolFailure(str(exc)) from None
    except ScopeError as exc:
        flag = caller.default_user_flag if caller is not None else Caller.default_user_flag
        raise ToolFailure(f"{exc} (a server can set a default user: {flag})") from None
    except InvalidInputError as exc:
        raise ToolFailure(f"invalid {exc.field or 'argument'}: {exc}") from None
    except PermissionDeniedError as exc:  # a read-only or user-limited key (hosting/key_limits.py)
        raise ToolFailure(str(exc)) from None
    except StorageFullError as exc:  # the server's disk, not a fault of memlane's: one line in the log
        log.error("the disk holding the store %s is full: %s", exc.location, " ".join(exc.cause.split()))
        raise ToolFailure(f"StorageFullError: {exc}") from None
    except StoreUnavailableError as exc:  # the database is away (the store logged it once): the cause, and to retry
        raise ToolFailure(f"StoreUnavailableError: {exc}") from None
    except MemlaneError as exc:
        log.exception("memlane failed in a tool call")
        raise ToolFailure(f"memlane failed: {type(exc).__name__}: {exc}") from None


# -- result handling -----------------------------------------------------------


def normalize_memory(item: Any) -> dict[str, Any] | None:
    """One memory as a dict with a ``memory`` text, from a dict or a bare string; ``None`` if unusable."""
    if isinstance(item, str):
        return {"memory": item}
    if isinstance(item, Mapping):
        out = dict(item)
        if not isinstance(out.get("memory"), str):
            text = next((out[k] for k in ("content", "text", "data") if isinstance(out.get(k), str)), None)
            if text is None and isinstance(out.get("data"), Mapping) and isinstance(out["data"].get("memory"), str):
                text = out["data"]["memory"]
            if text is None:
                return None
            out["memory"] = text
        return out
    return None


def extract_memories(result: Any, warnings: list[str]) -> list[dict[str, Any]]:
    """The memories of a search-like result: ``{"results": [...]}`` or ``{"memories": [...]}``
    (older mem0 shapes) or a bare list; items may be dicts or strings."""
    if isinstance(result, Mapping):
        items = result.get("results")
        if items is None:
            items = result.get("memories")
        if items is None:
            warnings.append("result holds neither 'results' nor 'memories'; no memories taken from it")
            return []
    elif isinstance(result, list):
        items = result
    else:
        warnings.append(f"expected a dict or list of memories, got {type(result).__name__}")
        return []
    if not isinstance(items, list):
        warnings.append(f"expected a list of memories, got {type(items).__name__}")
        return []
    memories = []
    for item in items:
        normalized = normalize_memory(item)
        if normalized is None:
            warnings.append(f"skipped a memory item that is neither text nor a memory dict ({type(item).__name__})")
            continue
        memories.append(normalized)
    return memories


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


# -- tools (each one's signature after ``caller`` and docstring: the MCP tool's schema and description) --------


def add_memory(
    caller: Caller,
    messages: Annotated[Union[str, list[Message]], Field(
        description="what to remember: the user's message as text, or a conversation as a list of messages")],
    *,
    user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None,
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
    idempotency_key: Annotated[Optional[str], Field(
        description="a unique key for this add (e.g. a UUID): calling again with it returns the first "
                    "call's result instead of storing anything twice")] = None,
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
    scope = scope_of(caller, user_id, agent_id, run_id, None)
    outcome = run(lambda: caller.memory.add(messages, metadata=metadata, infer=infer, memory_type=memory_type,
                                            expiration_date=expiration_date, timestamp=timestamp,
                                            async_mode=async_mode, idempotency_key=idempotency_key, **scope), caller)
    outcome["message"] = add_summary(outcome)
    return outcome


def get_event(caller: Caller, event_id: Annotated[str, Field(
        description="the event_id add_memory answered with (async_mode)")]) -> dict[str, Any]:
    """The outcome of an add_memory made with async_mode: status PENDING, RUNNING, SUCCEEDED (result:
    what add_memory would have answered) or FAILED (error: why; the messages stay kept)."""
    return run(lambda: caller.memory.event(event_id), caller)


def add_summary(outcome: Mapping[str, Any]) -> str:
    """One line an agent reads: what the add stored, or why it stored nothing (never an empty success)."""
    if outcome.get("status") == "PENDING":
        return (f"queued (event {outcome['event_id']}): searchable at once as sent, formed in the background; "
                "get_event tells the outcome")
    if outcome.get("status") == "failed":
        return (f"memory formation failed: {outcome.get('reason', '')}; the messages are kept verbatim "
                "(call add_memory with infer=false to store the note as written)")
    events: dict[str, int] = {}
    for item in outcome.get("results", []):
        events[item["event"]] = events.get(item["event"], 0) + 1
    if events:
        return "stored: " + ", ".join(f"{n} {event}" for event, n in events.items())
    reasons = sorted({item["reason"] for item in outcome.get("skipped", [])})
    if outcome.get("unchanged") and reasons == ["already known"]:
        return "nothing new: already known (see unchanged)"
    return ("nothing stored: " + ("; ".join(reasons) or "no fact found")
            + ". To keep a note exactly as written, call add_memory with infer=false.")


def search_memories(
    caller: Caller,
    query: Annotated[str, Field(description="what to look for, in natural language")],
    *,
    user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None, filters: Filters = None,
    limit: Limit = DEFAULT_SEARCH_LIMIT,
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
    # ``Memory.search`` with its optional stages; the result's ``metadata`` says what ran (see module docstring)
    started = time.perf_counter()
    if not isinstance(query, str) or not query.strip():
        raise ToolFailure("query must be a non-empty string")
    warnings: list[str] = []
    limit = coerce_limit(limit, DEFAULT_SEARCH_LIMIT, caller.memory.limits.max_results, warnings)
    scope = scope_of(caller, user_id, agent_id, run_id, filters)
    found = run(lambda: caller.memory.search(query, filters=filters, limit=limit, threshold=threshold,
                                             keyword_search=keyword_search, rerank=rerank,
                                             filter_memories=filter_memories, **scope), caller)
    if isinstance(found, Mapping) and found.get("status") == "error":  # seed 001: both searches failed
        metadata = stage_report(found.get("metadata"), warnings)
        metadata["timings_ms"]["total"] = _ms(started)
        return {"memories": [], "results": [], "count": 0, "status": "error", "message": found.get("message"),
                "metadata": {"limit": limit, **metadata}}
    memories = extract_memories(found, warnings)[:limit]
    engine = (found.get("metadata") or getattr(found, "trace", None)) if isinstance(found, Mapping) else None
    metadata = stage_report(engine, warnings)  # the default stages' trace when none was asked for
    metadata["timings_ms"]["total"] = _ms(started)
    answer = {"results": memories, "count": len(memories), "metadata": {"limit": limit, **metadata}}
    if isinstance(found, Mapping) and "relations" in found:  # graph memory is on
        answer["relations"] = found["relations"]
    return answer
def stage_report(engine: Mapping[str, Any] | None, warnings: list[str]) -> dict[str, Any]:
    """The engine's search metadata (seed 001's terms, ``Trace.to_dict``) in the tool's report: stages
    requested, run and failed (by flag name), ``advanced_retrieval``, ``fallback_used`` and
    ``original_error`` (and ``fallback_failed``), timings in ms and warnings."""
    engine = engine or {}
    stages: Mapping[str, Mapping[str, Any]] = engine.get("stages") or {}
    run_ = ["semantic_search"] if stages.get("vector", {}).get("ran", not stages) else []
    run_ += [STAGE_FLAGS[name] for name, s in stages.items() if name in STAGE_FLAGS and s.get("ran")]
    if stages.get("standard_search", {}).get("ran"):
        run_.append("standard_search")
    failed = dict(engine.get("stages_failed") or {})
    warnings.extend(engine.get("warnings") or [])  # a stage skipped on purpose (rerank with no reranker chosen)
    for name, error in failed.items():
        warnings.append(f"{name} failed ({error}); the search continued without it")
    if engine.get("fallback_used"):
        warnings.append(f"advanced retrieval failed ({engine.get('original_error')}); "
                        + ("the standard search failed too" if engine.get("fallback_failed")
                           else "a standard search answered"))
    timings = {("semantic_search" if name == "vector" else STAGE_FLAGS.get(name, name)): s.get("ms", 0.0)
               for name, s in stages.items()}
    report: dict[str, Any] = {
        "stages_requested": list(engine.get("stages_requested") or []),
        "stages_run": run_,
        "stages_failed": failed,
        "advanced_retrieval": bool(engine.get("advanced_retrieval")),
        "fallback_used": bool(engine.get("fallback_used")),
        "timings_ms": timings,
        "warnings": warnings,
    }
    if engine.get("original_error"):
        report["original_error"] = engine["original_error"]
    if engine.get("fallback_failed"):
        report["fallback_failed"] = True
    return report



def get_memory(caller: Caller, memory_id: MemoryId) -> dict[str, Any]:
    """One memory by id: its text, scope, metadata and timestamps."""
    item = run(lambda: caller.memory.get(memory_id))
    if item is None:
        raise ToolFailure(f"no memory with id {memory_id!r}; check the id (search_memories or list_memories show ids)")
    return item


def list_memories(
    caller: Caller,
    *,
    user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None, filters: Filters = None,
    limit: Limit = DEFAULT_LIST_LIMIT,
    include_invalid: Annotated[bool, Field(description="also list memories that were invalidated "
                                                       "(contradicted or retracted)")] = False,
) -> dict[str, Any]:
    """Every memory of a scope, newest first (optionally filtered by metadata or fields)."""
    warnings: list[str] = []
    limit = coerce_limit(limit, DEFAULT_LIST_LIMIT, caller.memory.limits.max_results, warnings)
    scope = scope_of(caller, user_id, agent_id, run_id, filters)
    result = run(lambda: caller.memory.get_all(filters=filters, limit=limit, include_invalid=include_invalid,
                                                **scope), caller)
    answer: dict[str, Any] = {"results": result["results"], "count": len(result["results"])}
    if "relations" in result:  # graph memory is on
        answer["relations"] = result["relations"]
    if warnings:
        answer["warnings"] = warnings
    return answer


def update_memory(
    caller: Caller,
    memory_id: MemoryId,
    *,
    text: Annotated[Optional[str], Field(description="the new text of the memory")] = None,
    metadata: Annotated[Optional[dict[str, Any]], Field(description="new metadata (replaces the old)")] = None,
) -> dict[str, Any]:
    """Change a memory's text and/or metadata. The old text stays in its history. Returns the memory."""
    return run(lambda: caller.memory.update(memory_id, text=text, metadata=metadata))


def delete_memory(caller: Caller, memory_id: MemoryId) -> dict[str, Any]:
    """Delete one memory (its history is kept)."""
    return run(lambda: caller.memory.delete(memory_id))


def delete_all_memories(caller: Caller, *, user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None,
                        filters: Filters = None) -> dict[str, Any]:
    """Delete every memory of a scope (the server's default user when no scope is given), or only
    those matching filters. History is kept. Returns how many were deleted."""
    scope = scope_of(caller, user_id, agent_id, run_id, filters)
    return run(lambda: caller.memory.delete_all(filters=filters, **scope), caller)


def memory_history(caller: Caller, memory_id: MemoryId) -> dict[str, Any]:
    """Every change of a memory, oldest first: ADD, UPDATE (old and new text), DELETE."""
    events = run(lambda: caller.memory.history(memory_id))
    if not events:
        raise ToolFailure(f"no memory with id {memory_id!r} has any history")
    return {"memory_id": memory_id, "history": events}


# -- agent context (docs/context.md) ---------------------------------------------------------


DEFAULT_CONTEXT_RESULTS = 10


def should_search_memory(
    caller: Caller,
    conversation: Conversation = None,
    *,
    system_prompt: SystemPrompt = "",
    explain: Annotated[bool, Field(description="also return the score of each signal")] = False,
    user_id: UserId = None, agent_id: AgentId = None,
) -> dict[str, Any]:
    """Whether the next reply needs long-term memory, from the conversation's recent user turns:
    memory words (remember, last time, 记得, 上次), questions, relationship pronouns (my, our, 我的,
    我们), references to earlier turns, requests to choose for the user (recommend, 推荐); never for
    small talk. With user_id / agent_id it also weighs what that scope holds (no memories: no
    search). Ask it before search_memory_with_context."""
    # ``Memory.should_search_memory``: ``{"should_search"}``, with ``explain`` the score of each signal; with a
    # scope (``user_id``, ``agent_id``) what it holds is weighed too (none named: the words alone)
    decision = run(lambda: caller.memory.should_search_memory(conversation, system_prompt or "", explain=True,
                                                              user_id=user_id, agent_id=agent_id))
    return decision.model_dump() if explain is True else {"should_search": decision.should_search}


def search_memory_with_context(
    caller: Caller,
    conversation: Conversation = None,
    *,
    system_prompt: SystemPrompt = "",
    user_id: Annotated[Any, Field(description="the user (default: the server's user); an invalid id is "
                                              "ignored; with no user or agent: every memory")] = None,
    agent_id: Annotated[Optional[str], Field(
        description="the agent; without user_id: its own memories and those of every user recorded with it")] = None,
    max_results: Annotated[Any, Field(description="matches per category, a positive integer (default 10; "
                                                  "anything else: 10 with a warning)")] = DEFAULT_CONTEXT_RESULTS,
) -> dict[str, Any]:
    """The memories a whole conversation calls for: terms from the conversation (later turns first) and the
    meaning of its recent turns, so paraphrases are found. Returns search_terms and matches grouped as
    agent_profile_matches, agent_event_matches, user_profile_matches, user_event_matches (each with
    content, match_score, matched_terms), and total_matches."""
    # ``Memory.search_memory_with_context``; the server's default user when the call names neither a user nor an
    # agent (without one: every memory of the store, for an admin caller)
    warnings: list[str] = []
    max_results = coerce_limit(max_results, DEFAULT_CONTEXT_RESULTS, caller.memory.limits.max_results, warnings,
                               "max_results")
    if user_id is None and agent_id is None:
        user_id = caller.default_user_id
        if user_id is None and not caller.admin:
            raise ToolFailure("a context search over every memory (no user_id or agent_id) needs an admin API key")
    result = run(lambda: caller.memory.search_memory_with_context(
        conversation, system_prompt or "", user_id=user_id, agent_id=agent_id, max_results=max_results), caller)
    if warnings:
        result["warnings"] = warnings
    return result


#: every tool the server serves (those of document collections are ``document_tools.py``'s)
TOOL_NAMES: Sequence[str] = ("add_memory", "search_memories", "get_memory", "list_memories", "update_memory",
                             "delete_memory", "delete_all_memories", "memory_history", "should_search_memory",
                             "search_memory_with_context", "cleanup_old_memories", "merge_similar_memories",
                             "get_event", "search_documents", "create_collection", "list_collections",
                             "get_collection", "update_collection", "delete_collection", "upsert_document",
                             "list_documents", "get_document", "update_document", "delete_document")


# -- maintenance (seed 002; docs/maintenance.md) -----------------------------------------------


def cleanup_old_memories(
    caller: Caller,
    *,
    user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None,
    keep_latest: Annotated[int, Field(strict=True, ge=0, description="how many of the newest memories to keep")
                           ] = 1000,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Keep the newest keep_latest valid memories of a scope and invalidate the older ones (their
    text stays in history; list_memories with include_invalid shows them). Returns each memory
    invalidated (results) and how many were kept."""
    scope = scope_of(caller, user_id, agent_id, run_id, None)
    return run(lambda: caller.memory.cleanup_old_memories(keep_latest=keep_latest, dry_run=dry_run, **scope), caller)


def merge_similar_memories(
    caller: Caller,
    *,
    user_id: UserId = None, agent_id: AgentId = None, run_id: RunId = None,
    threshold: Annotated[float, Field(strict=True, gt=0, le=1, description=(
        "cosine similarity at which two memories are the same (0.95: near-duplicates only)"))] = 0.95,
    dry_run: DryRun = False,
) -> dict[str, Any]:
    """Merge a scope's near-duplicate memories: each group becomes its oldest memory with one text
    (the more specific one, or the configured LLM's merge); the others are invalidated and their
    texts kept in history. Memories that contradict each other are never merged (kept_apart).
    Returns each merge (results: id, memory, previous_memory, merged), kept_apart and failed."""
    scope = scope_of(caller, user_id, agent_id, run_id, None)
    return run(lambda: caller.memory.merge_similar_memories(threshold=threshold, dry_run=dry_run, **scope), caller)
