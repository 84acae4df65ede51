"""mem0's batch routes: ``PUT /v1/batch/`` (``batch_update`` / ``batchUpdate``) and ``DELETE /v1/batch/``
(``batch_delete`` / ``batchDelete``), 1 to 1,000 memories each, as mem0's platform takes them. Each is one
``Memory`` call, written in one transaction: an unknown id (404) or a bad item (422, ``memories.3.text``)
changes nothing."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Request
from pydantic import Field

from memlane.core.arguments import MAX_BATCH
from memlane.server.access import tenant_memory
from memlane.server.schemas import Lenient

router = APIRouter(tags=["mem0 platform compatibility"])


class Batch(Lenient):
    memories: Annotated[list[dict[str, Any]], Field(min_length=1, max_length=MAX_BATCH)] = Field(
        description="update: [{memory_id, text?, metadata?, timestamp?}]; delete: [{memory_id}]")


@router.put("/v1/batch/", summary="mem0 client batch_update")
def batch_update(body: Batch, request: Request) -> dict[str, Any]:
    return tenant_memory(request).batch_update(body.memories)


@router.delete("/v1/batch/", summary="mem0 client batch_delete")
def batch_delete(body: Batch, request: Request) -> dict[str, Any]:
    return tenant_memory(request).batch_delete(body.memories)
