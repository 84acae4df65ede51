"""mem0 platform's project routes: the project's settings, its webhooks, feedback on memories and memory
exports (docs/webhooks.md). Each calls one ``Memory`` method of the request's tenant (memlane/project.py).

The project is the API key's tenant (``GET /v1/ping/`` names it ``project_id``, in the organisation
``memlane``): a path naming another project answers 404. Changing the settings and everything about
webhooks (their URLs see every memory of the tenant, their secrets sign its events) need an admin key.
"""

from __future__ import annotations

from typing import Any, Optional

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from memlane.core.errors import InvalidInputError, NotFoundError
from memlane.core.project import MAX_INSTRUCTIONS_CHARS, ProjectSettings
from memlane.server import schemas
from memlane.server.access import check_scope, principal, require_admin, tenant_memory

router = APIRouter(tags=["mem0 platform: project, webhooks, feedback, exports"])

ORG = "memlane"


def _path_id() -> Any:
    """A path id parameter (a new one for each: FastAPI keeps a parameter's name in it)."""
    return Path(..., max_length=schemas.MAX_ID_CHARS)

SCOPE_KEYS = ("user_id", "agent_id", "run_id")


def _own_project(request: Request, org_id: str | None, project_id: str | None) -> None:
    tenant = principal(request).tenant
    if org_id is not None and org_id != ORG:
        raise NotFoundError("organization", org_id, field="org_id")
    if project_id is not None and project_id != tenant:
        raise NotFoundError("project", project_id, field="project_id")


# -- project settings ---------------------------------------------------------------------------------

class ProjectUpdate(ProjectSettings):
    """The settings to change (mem0's ``project.update()``); the client may repeat the org and project ids."""

    model_config = ConfigDict(extra="forbid")

    org_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    project_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)


PROJECT = "/api/v1/orgs/organizations/{org_id}/projects/{project_id}/"


@router.get(PROJECT, summary="The project's settings (mem0 client project.get)")
def get_project(request: Request, org_id: str = _path_id(), project_id: str = _path_id(),
                fields: Optional[list[str]] = Query(None, description="only these settings")) -> dict[str, Any]:
    _own_project(request, org_id, project_id)
    return {"org_id": ORG, "project_id": project_id, "name": project_id,
            **tenant_memory(request).get_project(fields)}


@router.patch(PROJECT, summary="Change the project's settings (mem0 client project.update)")
def update_project(body: ProjectUpdate, request: Request, org_id: str = _path_id(), project_id: str = _path_id()) -> dict[str, Any]:
    """``custom_instructions`` (and ``agent_custom_instructions`` for an agent's own memories) are added to
    the LLM engine's extraction prompt; the other settings are kept and shown (docs/webhooks.md)."""
    _own_project(request, org_id, project_id)
    _own_project(request, body.org_id, body.project_id)
    require_admin(request, "changing the project's settings")
    given = body.model_dump(exclude_unset=True, exclude={"org_id", "project_id"})
    return tenant_memory(request).update_project(**given)


# -- webhooks -----------------------------------------------------------------------------------------

class WebhookCreate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: str = Field(..., max_length=2048)
    name: str = Field(..., max_length=200)
    event_types: list[str] = Field(..., min_length=1, max_length=10,
                                   description="memory_add, memory_update, memory_delete (memory_categorize never fires)")


class WebhookUpdate(BaseModel):
    model_config = ConfigDict(extra="ignore")

    url: Optional[str] = Field(None, max_length=2048)
    name: Optional[str] = Field(None, max_length=200)
    event_types: Optional[list[str]] = Field(None, min_length=1, max_length=10)
    is_active: Optional[bool] = None


@router.get("/api/v1/webhooks/projects/{project_id}/", summary="The project's webhooks (mem0 client get_webhooks)")
def get_webhooks(request: Request, project_id: str = _path_id()) -> list[dict[str, Any]]:
    _own_project(request, None, project_id)
    require_admin(request, "reading webhooks")
    return tenant_memory(request).get_webhooks()


@router.post("/api/v1/webhooks/projects/{project_id}/", summary="Create a webhook (mem0 client create_webhook)")
def create_webhook(body: WebhookCreate, request: Request, project_id: str = _path_id()) -> dict[str, Any]:
    """The answer holds the webhook's ``secret``: each delivery's ``X-Memlane-Signature`` is the
    HMAC-SHA256 of ``<X-Memlane-Timestamp>.<body>`` under it (docs/webhooks.md)."""
    _own_project(request, None, project_id)
    require_admin(request, "creating a webhook")
    return tenant_memory(request).create_webhook(body.url, body.name, body.event_types)


@router.put("/api/v1/webhooks/{webhook_id}/", summary="Change a webhook (mem0 client update_webhook)")
def update_webhook(body: WebhookUpdate, request: Request, webhook_id: str = _path_id()) -> dict[str, Any]:
    require_admin(request, "changing a webhook")
    return tenant_memory(request).update_webhook(webhook_id, name=body.name, url=body.url,
                                                 event_types=body.event_types, is_active=body.is_active)


@router.delete("/api/v1/webhooks/{webhook_id}/", summary="Delete a webhook (mem0 client delete_webhook)")
def delete_webhook(request: Request, webhook_id: str = _path_id()) -> dict[str, Any]:
    require_admin(request, "deleting a webhook")
    return tenant_memory(request).delete_webhook(webhook_id)


@router.get("/api/v1/webhooks/{webhook_id}/deliveries/", summary="A webhook's newest deliveries (memlane)")
def webhook_deliveries(request: Request, webhook_id: str = _path_id(),
                       status: Optional[str] = Query(None, description="PENDING, RUNNING, SUCCEEDED or FAILED"),
                       limit: int = Query(100, ge=1, le=schemas.MAX_RESULTS)) -> dict[str, Any]:
    require_admin(request, "reading webhook deliveries")
    found = tenant_memory(request).webhook_deliveries(webhook_id, status, limit)
    return {"count": len(found), "results": found}


# -- feedback -----------------------------------------------------------------------------------------

class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memory_id: str = Field(..., max_length=schemas.MAX_ID_CHARS)
    feedback: Optional[str] = Field(None, description="POSITIVE, NEGATIVE, VERY_NEGATIVE or null")
    feedback_reason: Optional[str] = Field(None, max_length=MAX_INSTRUCTIONS_CHARS)


@router.post("/v1/feedback/", summary="Feedback on a memory (mem0 client feedback)")
def feedback(body: FeedbackBody, request: Request) -> dict[str, Any]:
    return tenant_memory(request).feedback(body.memory_id, body.feedback, body.feedback_reason)


@router.get("/v1/memories/{memory_id}/feedback/", summary="The feedback given on a memory (memlane)")
def memory_feedback(request: Request, memory_id: str = _path_id()) -> dict[str, Any]:
    found = tenant_memory(request).get_feedback(memory_id)
    return {"count": len(found), "results": found}


# -- exports ------------------------------------------------------------------------------------------

class ExportCreate(BaseModel):
    """mem0's export request; its Python client sends the filters' ids (``user_id`` …) at the top level."""

    model_config = ConfigDict(extra="ignore")

    schema_: Any = Field(..., alias="schema", description="a JSON schema (object, or JSON text)")
    filters: Optional[dict[str, Any]] = None
    export_instructions: Optional[str] = Field(None, max_length=MAX_INSTRUCTIONS_CHARS)
    user_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    agent_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    run_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    app_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)


class ExportGet(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memory_export_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    filters: Optional[dict[str, Any]] = None
    user_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    agent_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    run_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)
    app_id: Optional[str] = Field(None, max_length=schemas.MAX_ID_CHARS)


def _filters(body: Any) -> Optional[dict[str, Any]]:
    if body.app_id is not None:
        raise InvalidInputError("app_id is not supported: memlane scopes memories by user_id, agent_id and run_id",
                                field="app_id")
    filters = dict(body.filters) if body.filters is not None else None
    for key in SCOPE_KEYS:
        value = getattr(body, key)
        if value is None:
            continue
        filters = filters or {}
        if key in filters and filters[key] != value:
            raise InvalidInputError(f"{key} is given twice with different values", field=key)
        filters[key] = value
    return filters


@router.post("/v1/exports/", summary="Create a memory export (mem0 client create_memory_export)")
def create_export(body: ExportCreate, request: Request) -> dict[str, Any]:
    """Made at once: by the configured LLM, else by field names (docs/webhooks.md); ``status`` says whether
    the result validates against the schema."""
    filters = _filters(body)
    check_scope(request, filters)
    return tenant_memory(request).create_memory_export(body.schema_, filters, body.export_instructions)


@router.post("/v1/exports/get/", summary="A memory export's data (mem0 client get_memory_export)")
def get_export(body: ExportGet, request: Request) -> Any:
    """The export with ``memory_export_id``, else the newest one made with these filters."""
    return tenant_memory(request).get_memory_export(body.memory_export_id, _filters(body))
