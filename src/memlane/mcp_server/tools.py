"""What the MCP tools do, as plain functions over a ``Memory`` (testable without MCP).

Every tool calls the same ``Memory`` method the SDK offers; this module only
adds what an agent-facing face needs:

* a default ``user_id`` per server, used when a call names no scope at all;
* lenient argument handling where agents are known to be sloppy: a ``limit``
  that is a string, negative or ``None`` falls back to the default with a
  warning instead of failing;
* defensive result handling: memories may come as ``results`` or
  ``memories``, as dicts or bare strings; malformed items are skipped with a
  warning;
* graceful degradation of the optional search stages (``keyword_search``,
  ``rerank``, ``filter_memories``): a stage that is not available, or that
  fails, is reported in the result's ``metadata`` and the standard semantic
  search result is used instead. memlane has none of these stages yet, so
  today every requested stage is reported as unavailable.

Failures the caller can fix raise ``ToolFailure`` with a readable message.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memlane import filters as flt
from memlane.errors import FilterError, InvalidInputError, MemlaneError, MemoryNotFoundError, ScopeError
from memlane.memory import Memory
from memlane.tenancy import widens_scope

log = logging.getLogger("memlane.mcp")

DEFAULT_SEARCH_LIMIT = 5
DEFAULT_LIST_LIMIT = 100
SEARCH_STAGES = ("keyword_search", "rerank", "filter_memories")

#: A search stage: (query, memories) -> memories (any shape ``extract_memories`` accepts).
Stage = Callable[[str, list[dict[str, Any]]], Any]
#: The stages this memlane version provides (none yet). Tests plug stages in to check degradation.
AVAILABLE_STAGES: dict[str, Stage] = {}


class ToolFailure(Exception):
    """A tool call that failed for a reason the caller can read and fix."""


@dataclass
class Caller:
    """What one tool call acts on: a ``Memory``, the caller's rights, the default scope."""

    memory: Memory
    admin: bool = True
    default_user_id: str | None = None
    stages: Mapping[str, Stage] = field(default_factory=lambda: AVAILABLE_STAGES)


# -- argument handling ---------------------------------------------------------


def coerce_limit(value: Any, default: int, maximum: int, warnings: list[str], name: str = "limit") -> int:
    """A usable limit from whatever the agent sent; anything unusable becomes ``default`` (with a warning)."""
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("+").isdigit():
            warnings.append(f"{name} {value!r} was a string; used {int(text)}")
            value = int(text)
        else:
            warnings.append(f"invalid {name} {value!r} (not a number); using the default {default}")
            return default
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if value is None or isinstance(value, bool) or not isinstance(value, int):
        warnings.append(f"invalid {name} {value!r}; using the default {default}")
        return default
    if value <= 0:
        warnings.append(f"invalid {name} {value} (must be at least 1); using the default {default}")
        return default
    if value > maximum:
        warnings.append(f"{name} {value} is above the maximum {maximum}; using {maximum}")
        return maximum
    return value


def has_scope(filters: Mapping[str, Any] | None) -> bool:
    """Whether the filters name a user / agent / run themselves (mem0 v2 style)."""
    if not filters:
        return False
    try:
        node = flt.parse(filters)
    except (FilterError, InvalidInputError):
        return any(key in flt.SCOPE_COLUMNS for key in filters)
    return any(isinstance(c, flt.Compare) and c.field.column in flt.SCOPE_COLUMNS for c in flt.conjuncts(node))


def scope_of(caller: Caller, user_id: Any, agent_id: Any, run_id: Any,
             filters: Mapping[str, Any] | None) -> dict[str, Any]:
    """The scope arguments of a call: as given, or the server's default user when none is named."""
    if user_id is None and agent_id is None and run_id is None and not has_scope(filters):
        user_id = caller.default_user_id
    if not caller.admin and widens_scope(filters):
        raise ToolFailure('a wildcard scope (e.g. filters {"user_id": "*"}) needs an admin API key')
    return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}


def run(action: Callable[[], Any]) -> Any:
    """Call ``Memory``; turn memlane's errors into readable tool failures."""
    try:
        return action()
    except MemoryNotFoundError as exc:
        raise ToolFailure(f"{exc}; check the id (search_memories or list_memories show ids)") from None
    except ScopeError as exc:
        raise ToolFailure(f"{exc} (a server can set a default user: memlane mcp --user-id NAME)") from None
    except InvalidInputError as exc:
        raise ToolFailure(f"invalid {exc.field or 'argument'}: {exc}") from None
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


# -- tools -----------------------------------------------------------------------


def add_memory(caller: Caller, messages: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
               metadata: Mapping[str, Any] | None = None, infer: bool = True,
               memory_type: str | None = None) -> dict[str, Any]:
    scope = scope_of(caller, user_id, agent_id, run_id, None)
    return run(lambda: caller.memory.add(messages, metadata=metadata, infer=infer, memory_type=memory_type, **scope))


def search_memories(caller: Caller, query: Any, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
                    filters: Mapping[str, Any] | None = None, limit: Any = DEFAULT_SEARCH_LIMIT,
                    threshold: float | None = None, keyword_search: bool = False, rerank: bool = False,
                    filter_memories: bool = False) -> dict[str, Any]:
    """Semantic search, then the requested optional stages; see the module docstring."""
    started = time.perf_counter()
    if not isinstance(query, str) or not query.strip():
        raise ToolFailure("query must be a non-empty string")
    warnings: list[str] = []
    limit = coerce_limit(limit, DEFAULT_SEARCH_LIMIT, caller.memory.limits.max_results, warnings)
    scope = scope_of(caller, user_id, agent_id, run_id, filters)
    requested = [name for name, wanted in zip(SEARCH_STAGES, (keyword_search, rerank, filter_memories)) if wanted]
    runnable = [name for name in requested if caller.stages.get(name) is not None]
    unavailable = [name for name in requested if name not in runnable]
    # stages that re-order or drop results get more candidates than the final limit
    candidates = min(limit * 3, caller.memory.limits.max_results) if runnable else limit

    timings: dict[str, float] = {}
    stage_start = time.perf_counter()
    base = run(lambda: caller.memory.search(query, filters=filters, limit=candidates, threshold=threshold, **scope))
    timings["semantic_search"] = _ms(stage_start)
    memories = extract_memories(base, warnings)
    stages_run = ["semantic_search"]
    failed: dict[str, str] = {}
    for name in unavailable:
        warnings.append(f"{name} is not available in this memlane version; standard semantic search used instead")
    for name in runnable:
        stage_start = time.perf_counter()
        try:
            changed = extract_memories(caller.stages[name](query, [dict(m) for m in memories]), warnings)
        except Exception as exc:  # a failing optional stage must not fail the search
            log.warning("search stage %s failed, continuing without it: %s", name, exc)
            failed[name] = f"{type(exc).__name__}: {exc}"
            warnings.append(f"{name} failed ({failed[name]}); continuing without it")
        else:
            memories = changed
            stages_run.append(name)
        timings[name] = _ms(stage_start)
    memories = memories[:limit]
    timings["total"] = _ms(started)
    metadata: dict[str, Any] = {
        "limit": limit,
        "stages_requested": requested,
        "stages_run": stages_run,
        "stages_unavailable": unavailable,
        "stages_failed": failed,
        "advanced_retrieval": len(stages_run) > 1,
        "fallback_used": bool(unavailable or failed),
        "timings_ms": timings,
        "warnings": warnings,
    }
    if failed:
        metadata["original_error"] = "; ".join(f"{k}: {v}" for k, v in failed.items())
    return {"results": memories, "count": len(memories), "metadata": metadata}


def get_memory(caller: Caller, memory_id: str) -> dict[str, Any]:
    item = run(lambda: caller.memory.get(memory_id))
    if item is None:
        raise ToolFailure(f"no memory with id {memory_id!r}; check the id (search_memories or list_memories show ids)")
    return item


def list_memories(caller: Caller, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
                  filters: Mapping[str, Any] | None = None, limit: Any = DEFAULT_LIST_LIMIT,
                  include_invalid: bool = False) -> dict[str, Any]:
    warnings: list[str] = []
    limit = coerce_limit(limit, DEFAULT_LIST_LIMIT, caller.memory.limits.max_results, warnings)
    scope = scope_of(caller, user_id, agent_id, run_id, filters)
    result = run(lambda: caller.memory.get_all(filters=filters, limit=limit, include_invalid=include_invalid,
                                                **scope))
    answer: dict[str, Any] = {"results": result["results"], "count": len(result["results"])}
    if warnings:
        answer["warnings"] = warnings
    return answer


def update_memory(caller: Caller, memory_id: str, *, text: str | None = None,
                  metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return run(lambda: caller.memory.update(memory_id, text=text, metadata=metadata))


def delete_memory(caller: Caller, memory_id: str) -> dict[str, Any]:
    return run(lambda: caller.memory.delete(memory_id))


def delete_all_memories(caller: Caller, *, user_id: Any = None, agent_id: Any = None, run_id: Any = None,
                        filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    scope = scope_of(caller, user_id, agent_id, run_id, filters)
    return run(lambda: caller.memory.delete_all(filters=filters, **scope))


def memory_history(caller: Caller, memory_id: str) -> dict[str, Any]:
    events = run(lambda: caller.memory.history(memory_id))
    if not events:
        raise ToolFailure(f"no memory with id {memory_id!r} has any history")
    return {"memory_id": memory_id, "history": events}


TOOL_NAMES: Sequence[str] = ("add_memory", "search_memories", "get_memory", "list_memories", "update_memory",
                             "delete_memory", "delete_all_memories", "memory_history")
