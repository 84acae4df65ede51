"""The events of async adds (``add(async_mode=True)``): ``GET /events/{id}`` (memlane's route
family) and ``GET /v1/event/{id}/`` (mem0 platform's), each ``Memory.event`` of the request's tenant."""

from __future__ import annotations

from typing import Any, Literal, Optional

from fastapi import APIRouter, Path, Query, Request

from memlane.server import schemas
from memlane.server.access import tenant_memory

router = APIRouter(tags=["events"])

EventId = Path(..., max_length=schemas.MAX_ID_CHARS, description="the event id an async add answered with")
Status = Optional[Literal["PENDING", "RUNNING", "SUCCEEDED", "FAILED"]]


@router.get("/events/{event_id}", summary="The outcome of an async add")
@router.get("/v1/event/{event_id}/", summary="The outcome of an async add (mem0 platform)")
def event(request: Request, event_id: str = EventId) -> dict[str, Any]:
    """``status``: ``PENDING`` (queued), ``RUNNING`` (being formed), ``SUCCEEDED`` (``result`` is the
    add's full answer; ``results`` as mem0's platform lists them) or ``FAILED`` (``error`` says why;
    the messages stay kept)."""
    return tenant_memory(request).event(event_id)


@router.get("/events", summary="The newest events of async adds")
@router.get("/v1/events/", summary="The newest events of async adds (mem0 platform)")
def events(request: Request, status: Status = Query(None, description="only events in this state"),
           limit: int = Query(100, ge=1, le=schemas.MAX_RESULTS)) -> dict[str, Any]:
    found = tenant_memory(request).events(status, limit)
    return {"count": len(found), "results": found}
