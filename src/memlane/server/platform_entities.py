"""mem0's entities: ``GET /v1/entities/`` (``users()``: every user, agent and run with memories or
messages, with its count of valid memories) and ``DELETE /v2/entities/{type}/{name}/`` (``delete_users``
/ ``deleteUsers``, and ``reset``, which deletes every entity listed): the entity is erased, its memories,
their history and its messages (``delete_all(purge=True)``), so it leaves the list; one that is not there
answers ``deleted: 0`` (a reset deleting an agent has erased the runs only its memories named). JavaScript's deprecated
``deleteUser`` sends ``DELETE /v1/entities/{type}/{name}/``, served the same way.

memlane keeps no entity rows: an entity is an id that memories or messages name (``Memory.scopes``), so
``created_at`` and ``updated_at`` are null. Listing every entity reads across users: admin keys only,
as a wildcard scope is. Type ``app`` is refused, as ``app_id`` is everywhere."""

from __future__ import annotations

from typing import Any, Optional

from fastapi import APIRouter, Path, Query, Request

from memlane.core.errors import EntityNotFoundError, InvalidInputError
from memlane.memory import Memory
from memlane.server import schemas
from memlane.server.access import principal, require_admin, tenant_memory
from memlane.server.platform import paged, refuse_app_id

router = APIRouter(tags=["mem0 platform compatibility"])

#: mem0's entity types, the ``Memory.scopes`` key of each, and the scope argument naming one
KINDS = {"user": ("users", "user_id"), "agent": ("agents", "agent_id"), "run": ("runs", "run_id")}


def entities(memory: Memory, owner: str) -> list[dict[str, Any]]:
    """Every user, agent and run of the store (users first, each kind by id), as mem0 lists them."""
    found = memory.scopes(memory.limits.max_results)
    return [{"id": row["id"], "name": row["id"], "type": kind, "total_memories": row["valid"],
             "total_messages": row["messages"], "owner": owner, "metadata": None,
             "created_at": None, "updated_at": None}
            for kind, (key, _) in KINDS.items() for row in found[key]]


def scope_of(kind: str, name: str) -> dict[str, str]:
    """The scope argument of entity ``kind`` ``name``: ``{"user_id": name}``."""
    if kind == "app":
        refuse_app_id(name, None)
    if kind not in KINDS:
        raise InvalidInputError(f"entity type must be one of {', '.join(KINDS)}, got {kind!r}", field="entity_type")
    return {KINDS[kind][1]: name}


def exists(memory: Memory, ids: dict[str, str]) -> bool:
    """Whether a memory (valid or not) or a message names the entity."""
    return bool(memory.get_all(**ids, include_invalid=True, limit=1)["results"] or memory.get_messages(**ids, limit=1))


def require_entity(memory: Memory, kind: str, name: str) -> dict[str, str]:
    """``scope_of`` an entity that exists; ``EntityNotFoundError`` otherwise."""
    ids = scope_of(kind, name)
    if not exists(memory, ids):
        raise EntityNotFoundError(kind, name)
    return ids


@router.get("/v1/entities/", summary="mem0 client users: every user, agent and run with its memory count")
def list_entities(request: Request, page: Optional[int] = Query(None, ge=1),
                  page_size: Optional[int] = Query(None, ge=1, le=schemas.MAX_RESULTS)) -> dict[str, Any]:
    require_admin(request, "listing the tenant's users, agents and runs")
    return paged(request, entities(tenant_memory(request), principal(request).tenant), page, page_size)


@router.delete("/v2/entities/{entity_type}/{entity_id}/", summary="mem0 client delete_users: erase an entity")
@router.delete("/v1/entities/{entity_type}/{entity_id}/", summary="mem0 client deleteUser (JavaScript, deprecated)",
               deprecated=True)
def delete_entity(request: Request, entity_type: str = Path(..., max_length=16),
                  entity_id: str = Path(..., max_length=schemas.MAX_ID_CHARS)) -> dict[str, Any]:
    """Idempotent, as the clients' ``reset`` needs (deleting an agent erases the runs only its memories
    named, before the loop reaches them): an entity that is not there answers ``deleted: 0`` and says so."""
    memory = tenant_memory(request)
    ids = scope_of(entity_type, entity_id)
    if not exists(memory, ids):
        return {"message": f"Nothing to delete: no {entity_type} {entity_id!r} has memories or messages here",
                "deleted": 0}
    erased = memory.delete_all(**ids, purge=True)
    return {"message": "Entity deleted successfully!", "deleted": erased["deleted"]}
