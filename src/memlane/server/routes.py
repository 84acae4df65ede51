"""The mem0 open-source server's endpoints. Each handler calls exactly one ``Memory``
method of the request's tenant. Handlers are plain ``def`` (FastAPI runs them in its
threadpool, so blocking ``Memory`` calls never stall the event loop), except search,
which answers quick searches on the loop and hands the rest to the threadpool
(``access.run_search``)."""

from __future__ import annotations

from typing import Any, Optional

import anyio
from fastapi import APIRouter, Path, Query, Request

from memlane import __version__
from memlane.core.errors import MemoryNotFoundError, StoreUnavailableError
from memlane.server import schemas
from memlane.server.access import (check_scope, json_param, require_admin, run_search, search_answer,
                                   search_limit, tenant_memory)
from memlane.server.responses import Json

router = APIRouter()

MemoryId = Path(..., max_length=schemas.MAX_ID_CHARS, description="the memory's id")
UserQ = Query(None, max_length=schemas.MAX_ID_CHARS, description="user_id scope")
AgentQ = Query(None, max_length=schemas.MAX_ID_CHARS, description="agent_id scope")
RunQ = Query(None, max_length=schemas.MAX_ID_CHARS, description="run_id scope")
FiltersQ = Query(None, max_length=schemas.MAX_QUERY_FILTER_CHARS,
                 description='filter as JSON, e.g. {"category": "food"}')


@router.get("/health", tags=["server"], summary="Liveness: the server runs (no API key needed)")
async def health(request: Request) -> dict[str, Any]:
    """Always 200 while the process serves, answered at once from what the server knows (it never waits
    for the database): ``status`` ``ok``, or ``degraded`` with ``database: "unreachable"`` and ``since``
    while the database is away. A liveness probe: restarting the server would not bring the database
    back. ``/ready`` says whether requests can be served."""
    state = _database_state(request)
    return {"status": "ok" if state["database"] == "ok" else "degraded", "version": __version__, **state}


@router.get("/ready", tags=["server"], summary="Readiness: requests can be served now (no API key needed)",
            responses={503: {"description": "the database is unreachable; Retry-After says when to ask again"}})
async def ready(request: Request) -> Json:
    """200 when the database answers (asked at most once a second, on threads of its own: a server busy
    with other requests still answers), else 503 with ``Retry-After``, ``database: "unreachable"`` and
    ``since``. A readiness probe: a load balancer sends no traffic to a server that cannot serve it."""
    global _ready_threads
    if _ready_threads is None:
        _ready_threads = anyio.CapacityLimiter(2)
    state = await anyio.to_thread.run_sync(lambda: _database_state(request, confirm=True), limiter=_ready_threads)
    if state["database"] == "ok":
        return Json({"status": "ready", "version": __version__, **state})
    return Json({"status": "unavailable", "version": __version__, **state,
                 "detail": "the database is unreachable; requests answer 503 until it is back"},
                status_code=503, headers={"Retry-After": str(StoreUnavailableError.RETRY_AFTER)})


#: the threads /ready asks the database on (not the request threads, which may all be waiting)
_ready_threads: anyio.CapacityLimiter | None = None


def _database_state(request: Request, *, confirm: bool = False) -> dict[str, Any]:
    state = getattr(request.app.state.tenants, "database_state", None)  # Tenants; a test's stand-in may have none
    return state(confirm=confirm) if state is not None else {"database": "ok"}


@router.post("/memories", tags=["memories"], summary="Remember a conversation")
def add_memories(body: schemas.MemoryCreate, request: Request,
                 idempotency_key: Optional[str] = schemas.IdempotencyKey) -> dict[str, Any]:
    """Keeps the messages verbatim, then extracts and reconciles facts (``infer``) or stores
    each message as a memory. Returns ``Memory.add``'s result: ``results`` (ADD / UPDATE /
    DELETE events), ``status``, ``facts``, ``unchanged``, ``skipped`` (each message that stored nothing,
    with why) and ``message_ids``. With ``async_mode`` it answers at once with ``status: PENDING`` and
    an ``event_id`` (``GET /events/{event_id}``); what was sent is searchable at once. With an
    ``Idempotency-Key`` header, a request that comes again (a client's retry) answers the first one's
    result and stores nothing twice."""
    messages = body.messages if isinstance(body.messages, str) else [m.model_dump(exclude_none=True)
                                                                      for m in body.messages]
    return tenant_memory(request).add(messages, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id,
                                      metadata=body.metadata, infer=body.infer, memory_type=body.memory_type,
                                      expiration_date=body.expiration_date, timestamp=body.timestamp,
                                      async_mode=body.async_mode, idempotency_key=idempotency_key)


@router.get("/memories", tags=["memories"], summary="List the memories of a scope, newest first")
def list_memories(
    request: Request,
    user_id: Optional[str] = UserQ, agent_id: Optional[str] = AgentQ, run_id: Optional[str] = RunQ,
    filters: Optional[str] = FiltersQ,
    limit: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS, description="at most this many (default 100)"),
    top_k: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS, description="mem0's name for limit"),
    include_invalid: bool = Query(False, description="also list invalidated memories"),
    as_of: Optional[str] = Query(None, max_length=64, description="ISO-8601 time: what was valid then, as it read"),
) -> Json:
    parsed = json_param(filters, "filters")
    check_scope(request, parsed)
    return Json(tenant_memory(request).get_all(user_id=user_id, agent_id=agent_id, run_id=run_id, filters=parsed,
                                               limit=limit, top_k=top_k, include_invalid=include_invalid,
                                               as_of=as_of))


@router.post("/memories/cleanup", tags=["maintenance"], summary="Invalidate a scope's memories beyond the newest")
def cleanup_memories(body: schemas.CleanupRequest, request: Request) -> dict[str, Any]:
    """``Memory.cleanup_old_memories``: the ``keep_latest`` newest valid memories stay, the older ones are
    invalidated (texts kept in history). ``dry_run`` returns the plan only."""
    return tenant_memory(request).cleanup_old_memories(body.user_id, body.keep_latest, agent_id=body.agent_id,
                                                       run_id=body.run_id, dry_run=body.dry_run)


@router.post("/memories/merge", tags=["maintenance"], summary="Merge a scope's near-duplicate memories")
def merge_memories(body: schemas.MergeRequest, request: Request) -> dict[str, Any]:
    """``Memory.merge_similar_memories``: each group of memories with cosine >= ``threshold`` becomes its
    oldest memory with one text; the others are invalidated (texts kept in history). ``dry_run`` plans only."""
    return tenant_memory(request).merge_similar_memories(body.user_id, body.threshold, agent_id=body.agent_id,
                                                         run_id=body.run_id, dry_run=body.dry_run)


@router.get("/memories/{memory_id}", tags=["memories"], summary="One memory")
def get_memory(request: Request, memory_id: str = MemoryId) -> dict[str, Any]:
    item = tenant_memory(request).get(memory_id)
    if item is None:
        raise MemoryNotFoundError(memory_id)
    return item


@router.put("/memories/{memory_id}", tags=["memories"], summary="Change a memory's text and/or metadata")
def update_memory(body: schemas.MemoryUpdate, request: Request, memory_id: str = MemoryId) -> dict[str, Any]:
    """Returns the updated memory; the old text stays in its history."""
    return tenant_memory(request).update(memory_id, text=body.text, metadata=body.metadata)


@router.delete("/memories/{memory_id}", tags=["memories"], summary="Delete a memory (its history is kept)")
def delete_memory(request: Request, memory_id: str = MemoryId) -> dict[str, Any]:
    return tenant_memory(request).delete(memory_id)


@router.delete("/memories", tags=["memories"], summary="Delete every memory of a scope")
def delete_memories(
    request: Request,
    user_id: Optional[str] = UserQ, agent_id: Optional[str] = AgentQ, run_id: Optional[str] = RunQ,
    filters: Optional[str] = FiltersQ,
    purge: bool = Query(False, description="also erase the scope's history and stored messages"),
) -> dict[str, Any]:
    parsed = json_param(filters, "filters")
    check_scope(request, parsed)
    return tenant_memory(request).delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id, filters=parsed,
                                             purge=purge)


@router.get("/memories/{memory_id}/history", tags=["memories"], summary="Every change of a memory, oldest first")
def memory_history(request: Request, memory_id: str = MemoryId) -> list[dict[str, Any]]:
    events = tenant_memory(request).history(memory_id)
    if not events:  # history outlives the memory: no event at all means the id was never known here
        raise MemoryNotFoundError(memory_id)
    return events


@router.post("/search", tags=["memories"], summary="Search a scope's memories by meaning")
async def search_memories(body: schemas.SearchRequest, request: Request) -> Json:
    """``score`` is the cosine similarity of query and memory; ``threshold`` keeps
    ``score >= threshold``. ``limit`` (or its alias ``top_k``) defaults to 100; a value that is not a
    positive integer gives 5 with a warning (seed 001). With a retrieval flag, a search whose advanced
    and standard attempts both failed answers 503 with ``{"memories": [], "status": "error", ...}``."""
    limit, warnings = search_limit(request, body, 100)
    check_scope(request, body.filters)
    return search_answer(request, await run_search(
        request, body.query, user_id=body.user_id, agent_id=body.agent_id, run_id=body.run_id, filters=body.filters,
        limit=limit, threshold=body.threshold, include_invalid=body.include_invalid,
        as_of=body.as_of, keyword_search=body.keyword_search, rerank=body.rerank,
        filter_memories=body.filter_memories), warnings)


@router.get("/messages", tags=["memories"], summary="The raw messages stored for a scope, oldest first")
def list_messages(
    request: Request,
    user_id: Optional[str] = UserQ, agent_id: Optional[str] = AgentQ, run_id: Optional[str] = RunQ,
    limit: int = Query(100, ge=1, le=schemas.MAX_RESULTS),
) -> list[dict[str, Any]]:
    return tenant_memory(request).get_messages(user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit)


@router.post("/reset", tags=["admin"], summary="Erase every memory, history event and message of the tenant")
def reset(request: Request) -> dict[str, Any]:
    require_admin(request, "reset")
    tenant_memory(request).reset()
    return {"message": "All memories reset"}


@router.get("/info", tags=["admin"], summary="Store, embedder and counts of the tenant")
def info(request: Request) -> dict[str, Any]:
    require_admin(request, "info")
    details = tenant_memory(request).info()
    details["store"] = str(details["store"]).rsplit("/", 1)[-1]  # the tenant's file name, not the server's layout
    return details
