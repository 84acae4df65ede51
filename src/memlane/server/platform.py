"""The mem0 *platform* API's memory routes, as the official clients (Python and JavaScript
``MemoryClient``) speak them: ping, add, search, get_all, get, update, delete, delete_all and history,
in the paths of every client generation (v3, 1.x's v2, and v1's ``POST /v1/memories/search/`` and
``GET /v1/memories/?user_id=``). Batches, entities, profiles and the refused project routes are in the
``platform_*`` modules beside this one; every method, route and refusal is listed in docs/mem0.md.
The wire details, in short:

* exact paths with trailing slashes, no redirects; every 2xx has a JSON body;
* entity ids (``user_id`` / ``agent_id`` / ``run_id``) arrive top-level or in
  ``filters``; unknown body fields are ignored (the client forwards every
  keyword argument verbatim);
* ``delete_all`` sends ``filters`` in the query string as a Python ``repr``;
* ``add`` answers synchronously (``status: SUCCEEDED``), unless the body asks for ``async_mode``
  (1.x clients send it by default): then ``PENDING`` with an ``event_id`` that
  ``GET /v1/event/{id}/`` resolves, as the platform does;
* ``update`` takes ``timestamp`` (when the memory was said: its ``created_at``) and ``expiration_date``.

``app_id`` has no counterpart in memlane (scopes are user, agent and run), so
it is refused rather than ignored: ignoring it would widen the scope silently.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Optional

from fastapi import APIRouter, Depends, Path, Query, Request

from memlane.core import platform_filters
from memlane.core import validation
from memlane.core.errors import InvalidInputError, MemoryNotFoundError, ScopeError
from memlane.server import schemas
from memlane.server.access import (check_scope, json_param, principal, run_search, search_answer,
                                   search_limit, tenant_memory)
from memlane.server.responses import Json

router = APIRouter(tags=["mem0 platform compatibility"])

ENTITY_KEYS = ("user_id", "agent_id", "run_id")
MemoryId = Path(..., max_length=schemas.MAX_ID_CHARS)


def refuse_app_id(app_id: Any, filters: Any) -> None:
    if app_id is not None or _mentions(filters, "app_id"):
        raise InvalidInputError("app_id is not supported: memlane scopes memories by user_id, agent_id and run_id",
                                field="app_id")


def _mentions(value: Any, key: str) -> bool:
    if isinstance(value, Mapping):
        return key in value or any(_mentions(v, key) for v in value.values())
    if isinstance(value, list):
        return any(_mentions(v, key) for v in value)
    return False


def _ids(body: Any) -> dict[str, Any]:
    return {key: getattr(body, key) for key in ENTITY_KEYS if getattr(body, key, None) is not None}


@router.get("/v1/ping/", summary="Key check and project of the mem0 client")
def ping(request: Request) -> dict[str, Any]:
    return {"status": "ok", "org_id": "memlane", "project_id": principal(request).tenant, "user_email": None}


@router.post("/v3/memories/add/", summary="mem0 client add")
@router.post("/v1/memories/", summary="mem0 client add (1.x clients)", deprecated=True)
def add(body: schemas.PlatformAdd, request: Request,
        idempotency_key: Optional[str] = schemas.IdempotencyKey) -> dict[str, Any]:
    refuse_app_id(body.app_id, body.filters)
    ids = _ids(body)
    for key, value in (body.filters or {}).items():
        if key not in ENTITY_KEYS:
            raise InvalidInputError(f"add takes only user_id, agent_id and run_id in filters, got {key!r}",
                                    field=f"filters.{key}")
        if key in ids and ids[key] != value:
            raise ScopeError(f"{key} is given twice with different values ({ids[key]!r} and filters {value!r})",
                             field=key)
        ids[key] = value
    outcome = tenant_memory(request).add(body.messages, metadata=body.metadata, infer=body.infer,
                                         memory_type=body.memory_type, expiration_date=body.expiration_date,
                                         timestamp=body.timestamp, async_mode=bool(body.async_mode),
                                         idempotency_key=idempotency_key, **ids)
    if outcome["status"] == "PENDING":  # async_mode: the platform's answer, the provisional memories beside it
        return {**outcome, "message": outcome["results"][0]["message"]}
    results = [{**item, "data": {"memory": item["memory"]}} for item in outcome["results"]]
    answer = {**outcome, "status": "SUCCEEDED" if outcome["status"] == "ok" else "FAILED",
              "event_id": str(uuid.uuid4()), "results": results}
    answer["message"] = ("memories processed" if outcome["status"] == "ok"
                         else f"memory formation failed: {outcome.get('reason', '')}; the messages are stored")
    return answer


@router.post("/v3/memories/search/", summary="mem0 client search")
@router.post("/v2/memories/search/", summary="mem0 client search (1.x clients)", deprecated=True)
@router.post("/v1/memories/search/", summary="mem0 client search (v1 clients)", deprecated=True)
async def search(body: schemas.PlatformSearch, request: Request) -> Json:
    refuse_app_id(body.app_id, body.filters)
    filters = platform_filters.read(body.filters)  # mem0's platform fields, in memlane's filter form
    check_scope(request, filters)
    limit, warnings = search_limit(request, body, 10)  # mem0's top_k defaults to 10
    return search_answer(request, await run_search(
        request, body.query.strip(), filters=filters, limit=limit, threshold=body.threshold,
        include_invalid=body.show_expired, keyword_search=body.keyword_search, rerank=body.rerank,
        filter_memories=body.filter_memories, **_ids(body)), warnings)


@router.post("/v3/memories/", summary="mem0 client get_all")
@router.post("/v2/memories/", summary="mem0 client get_all (1.x clients)", deprecated=True)
def get_all(
    body: schemas.PlatformList,
    request: Request,
    page: Optional[int] = Query(None, ge=1),
    page_size: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS),
) -> dict[str, Any]:
    refuse_app_id(body.app_id, body.filters)
    filters = platform_filters.read(body.filters)  # mem0's platform fields, in memlane's filter form
    return _listing(request, filters, _ids(body), body.top_k, body.show_expired, page, page_size)


class QueryScope:
    """The scope mem0's v1 clients send in the query string: the entity ids, ``app_id`` (refused) and
    ``filters`` (a dict as JSON or a Python repr, read in memlane's filter form)."""

    def __init__(self,
                 user_id: Optional[str] = Query(None, max_length=schemas.MAX_ID_CHARS),
                 agent_id: Optional[str] = Query(None, max_length=schemas.MAX_ID_CHARS),
                 run_id: Optional[str] = Query(None, max_length=schemas.MAX_ID_CHARS),
                 app_id: Optional[str] = Query(None, max_length=schemas.MAX_ID_CHARS),
                 filters: Optional[str] = Query(None, max_length=schemas.MAX_QUERY_FILTER_CHARS,
                                                description="a dict (JSON or Python repr)")):
        self.entity_ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
        self.app_id, self.raw_filters = app_id, filters

    def ids(self) -> dict[str, str]:
        return {key: value for key, value in self.entity_ids.items() if value is not None}

    def filters(self) -> Optional[dict[str, Any]]:
        parsed = json_param(self.raw_filters, "filters")
        refuse_app_id(self.app_id, parsed)
        return parsed


@router.get("/v1/memories/", summary="mem0 client get_all (v1 clients: the scope in the query string)",
            deprecated=True)
def list_v1(
    request: Request,
    scope: QueryScope = Depends(),
    top_k: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS, description="at most this many"),
    limit: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS, description="alias of top_k"),
    show_expired: bool = Query(False, description="also list expired and invalidated memories"),
    page: Optional[int] = Query(None, ge=1),
    page_size: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS),
) -> dict[str, Any]:
    if top_k is not None and limit is not None and top_k != limit:
        raise InvalidInputError("give top_k or limit (its alias), not two different values", field="limit")
    return _listing(request, scope.filters(), scope.ids(), top_k or limit, show_expired, page, page_size)


def _listing(request: Request, filters: Optional[dict[str, Any]], ids: dict[str, Any], top_k: Optional[int],
             show_expired: bool, page: Optional[int], page_size: Optional[int]) -> dict[str, Any]:
    """mem0's get_all answer: ``count``, ``next``, ``previous`` and ``results`` (one page of them with
    ``page`` / ``page_size``), and ``relations`` when graph memory is on."""
    check_scope(request, filters)
    memory = tenant_memory(request)
    found = memory.get_all(filters=filters, limit=top_k or memory.limits.max_results,
                           include_invalid=show_expired, **ids)
    graph = {"relations": found["relations"]} if "relations" in found else {}  # graph memory is on (as mem0)
    return {**paged(request, found["results"], page, page_size), **graph}


def paged(request: Request, everything: list[Any], page: Optional[int], page_size: Optional[int]) -> dict[str, Any]:
    """mem0's paginated answer of ``everything``: all of it without ``page`` and ``page_size``, else one
    page (default size 100) with links to the pages beside it."""
    if page is None and page_size is None:
        return {"count": len(everything), "next": None, "previous": None, "results": everything}
    page, size = page or 1, page_size or 100
    start = (page - 1) * size

    def link(number: int) -> str:
        return str(request.url.include_query_params(page=number, page_size=size))

    return {"count": len(everything),
            "next": link(page + 1) if start + size < len(everything) else None,
            "previous": link(page - 1) if page > 1 else None,
            "results": everything[start:start + size]}


@router.get("/v1/memories/{memory_id}/", summary="mem0 client get")
def get(request: Request, memory_id: str = MemoryId) -> dict[str, Any]:
    item = tenant_memory(request).get(memory_id)
    if item is None:
        raise MemoryNotFoundError(memory_id)
    return item


@router.put("/v1/memories/{memory_id}/", summary="mem0 client update")
def update(body: schemas.PlatformUpdate, request: Request, memory_id: str = MemoryId) -> dict[str, Any]:
    """``text``, ``metadata`` and ``timestamp`` (when the memory was said: its ``created_at``) are one
    ``update``; ``expiration_date`` (sent, even as null: never) sets when the memory expires."""
    memory = tenant_memory(request)
    expires = "expiration_date" in body.model_fields_set
    if expires:  # checked before anything is written
        validation.expiration(body.expiration_date)
    if body.text is None and body.metadata is None and body.timestamp is None:
        if not expires:
            raise InvalidInputError("update needs text, metadata, timestamp or expiration_date", field="text")
        return {**memory.set_expiration(memory_id, body.expiration_date), "message": "Memory updated successfully!"}
    answer = memory.update(memory_id, text=body.text, metadata=body.metadata, timestamp=body.timestamp)
    if expires:
        answer = {**memory.set_expiration(memory_id, body.expiration_date), "message": answer["message"]}
    return answer


@router.delete("/v1/memories/{memory_id}/", summary="mem0 client delete")
def delete(request: Request, memory_id: str = MemoryId,
           delete_linked: bool = Query(False, description="refused: see docs/mem0.md")) -> dict[str, Any]:
    if delete_linked:
        raise InvalidInputError("delete_linked is not supported: memlane keeps the memories a memory superseded "
                                "invalidated (never in search or get_all answers) with their history; delete "
                                "them by id if they must go", field="delete_linked")
    return tenant_memory(request).delete(memory_id)


@router.delete("/v1/memories/", summary="mem0 client delete_all")
def delete_all(
    request: Request,
    scope: QueryScope = Depends(),
    metadata: Optional[str] = Query(None, max_length=schemas.MAX_QUERY_FILTER_CHARS,
                                    description="metadata to match (JSON or Python repr)"),
) -> dict[str, Any]:
    parsed = scope.filters()
    wanted = json_param(metadata, "metadata")
    if wanted:
        parsed = dict(parsed or {})
        for key, value in wanted.items():
            if key in parsed:
                raise InvalidInputError(f"metadata key {key!r} is also in filters; give it once", field="metadata")
            parsed[key] = value
    check_scope(request, parsed)
    return tenant_memory(request).delete_all(**scope.ids(), filters=parsed)


@router.get("/v1/memories/{memory_id}/history/", summary="mem0 client history")
def history(request: Request, memory_id: str = MemoryId) -> list[dict[str, Any]]:
    events = tenant_memory(request).history(memory_id)
    if not events:
        raise MemoryNotFoundError(memory_id)
    return events
