"""mem0's user profiles: ``get_profile`` / ``getProfile`` (``GET /v2/entities/user/{id}/profile/``), the
generation jobs (``generate_profile``, ``sample_profiles``: ``POST /v2/profiles/jobs/``; ``get_profile_job``:
``GET /v2/profiles/jobs/{id}/``) and the settings (``GET|POST /v2/profiles/settings/``); and Python's
``get_summary`` (``POST /v1/summary/``), the facts of the memories its filters match, derived the same way.

memlane derives a user's profile from the user's memories on every read, without a model: ``profile`` is
``{"facts": [...]}``, the texts of the user's valid memories, newest first (at most ``PROFILE_FACTS``);
``status`` is ``succeeded``, or ``insufficient_data`` for a user whose messages formed no valid memory.
So a profile is never stale, a generation job has nothing left to do: it is ``succeeded`` when created,
and its id says what it did (``trigger-1-<uuid>``), so reading it needs no job table. The settings say
so: profiles are always on, and a profile schema or profile instructions are refused (422), not ignored.
"""

from __future__ import annotations

import re
import uuid
from typing import Any, Literal, Optional

from fastapi import APIRouter, Header, Path, Request
from pydantic import Field, StrictBool, StrictInt
from starlette.exceptions import HTTPException

from memlane.core.errors import InvalidInputError
from memlane.memory import Memory
from memlane.server import schemas
from memlane.server.access import check_scope, principal, require_admin, tenant_memory
from memlane.server.platform_entities import entities, require_entity
from memlane.server.schemas import Lenient

router = APIRouter(tags=["mem0 platform compatibility"])

#: the most facts a profile lists (the user's newest valid memories)
PROFILE_FACTS = 100
#: how many users ``sample_profiles`` picks when the request names no ``limit`` (mem0 takes 1 to 10)
DEFAULT_SAMPLE = 3
JOBS = "/v2/profiles/jobs/"
JOB_ID = re.compile(r"^(trigger|sample)-([0-9]{1,2})-([0-9a-f]{32})$")
SETTINGS = {"enabled": True, "entities": {"user": {"schema": None, "custom_instructions": None}},
            "capabilities": {"generation": "derived from the user's memories on every read",
                             "schema": False, "custom_instructions": False, "llm": False}}


class ProfileJob(Lenient):
    operation: Literal["trigger", "sample"] = Field(description="trigger: one user's profile; sample: a few users'")
    entity_type: Literal["user"] = Field(description="profiles are of users")
    entity_id: schemas.Id = Field(None, description="the user (trigger)")
    limit: Optional[StrictInt] = Field(None, ge=1, le=10, description=f"users to sample (default {DEFAULT_SAMPLE})")


class SummaryRequest(Lenient):
    filters: Optional[dict[str, Any]] = Field(None, description="the memories to summarise (a scope is required)")


class ProfileSettings(Lenient):
    enabled: Optional[StrictBool] = None
    entities: Optional[dict[str, dict[str, Any]]] = None


def profile(memory: Memory, user_id: str) -> dict[str, Any]:
    """mem0's ``ProfileResponse`` of ``user_id``, from its memories (``EntityNotFoundError``: no such user)."""
    ids = require_entity(memory, "user", user_id)
    found = memory.get_all(**ids, limit=PROFILE_FACTS)["results"]
    return {"profile": {"facts": [item["memory"] for item in found]} if found else {},
            "status": "succeeded" if found else "insufficient_data", "entity_type": "user", "entity_id": user_id,
            "updated_at": max(item["updated_at"] for item in found) if found else None,
            "generation_count": 1 if found else 0, "error": None}


@router.get("/v2/entities/user/{user_id}/profile/", summary="mem0 client get_profile: the user's facts")
def get_profile(request: Request, user_id: str = Path(..., max_length=schemas.MAX_ID_CHARS)) -> dict[str, Any]:
    return profile(tenant_memory(request), user_id)


@router.post(JOBS, summary="mem0 client generate_profile / sample_profiles (done at once: profiles are derived)")
def create_job(body: ProfileJob, request: Request,
               idempotency_key: Optional[str] = Header(None, alias="Idempotency-Key", max_length=schemas.MAX_ID_CHARS)
               ) -> dict[str, Any]:
    memory = tenant_memory(request)
    if body.operation == "trigger":
        if body.entity_id is None:
            raise InvalidInputError("a trigger job names the user: entity_id", field="entity_id")
        require_entity(memory, "user", body.entity_id)
        picked = [body.entity_id]
    else:
        require_admin(request, "sampling the tenant's users")
        users = [e["name"] for e in entities(memory, principal(request).tenant) if e["type"] == "user"
                 and e["total_memories"]]
        picked = users[:body.limit or DEFAULT_SAMPLE]
    tenant = principal(request).tenant
    token = uuid.uuid5(uuid.NAMESPACE_URL, f"{tenant}/{idempotency_key}") if idempotency_key else uuid.uuid4()
    job_id = f"{body.operation}-{len(picked)}-{token.hex}"
    answer = {"job_id": job_id, "status": "succeeded", "status_url": f"{JOBS}{job_id}/", "operation": body.operation,
              "entity_type": "user", "entity_count_reserved": 0, "event_id": None, "replayed": False}
    if body.operation == "sample":
        answer.update(sampled=len(picked), entity_ids=picked)
    return answer


@router.get(JOBS + "{job_id}/", summary="mem0 client get_profile_job")
def get_job(job_id: str = Path(..., max_length=64)) -> dict[str, Any]:
    match = JOB_ID.match(job_id)
    if match is None:
        raise HTTPException(404, f"no profile job {job_id!r}: job ids are those POST {JOBS} answers")
    operation, count = match.group(1), int(match.group(2))
    return {"job": {"id": job_id, "operation": operation, "entity_type": "user", "status": "succeeded",
                    "total": count, "enumeration_complete": True, "completed": count, "succeeded": count,
                    "failed": 0, "skipped": 0}}


@router.get("/v2/profiles/settings/", summary="mem0 client get_profile_settings")
def get_settings() -> dict[str, Any]:
    return SETTINGS


@router.post("/v2/profiles/settings/", summary="mem0 client update_profile_settings (what memlane can keep)")
def update_settings(body: ProfileSettings) -> dict[str, Any]:
    if body.enabled is False:
        raise InvalidInputError("profiles cannot be switched off: memlane derives them from memories when read, "
                                "nothing is generated or billed", field="enabled")
    for kind, settings in (body.entities or {}).items():
        if kind != "user":
            raise InvalidInputError(f"profiles are of users, not {kind!r}", field=f"entities.{kind}")
        for key, value in settings.items():
            if value is not None:
                raise InvalidInputError(f"a profile {key} is not supported: memlane's profile is the user's facts, "
                                        "derived without a model", field=f"entities.user.{key}")
    return SETTINGS


@router.post("/v1/summary/", summary="mem0 client get_summary: the facts of the memories the filters match")
def summary(body: SummaryRequest, request: Request) -> dict[str, Any]:
    check_scope(request, body.filters)
    found = tenant_memory(request).get_all(filters=body.filters, limit=PROFILE_FACTS)["results"]
    facts = [item["memory"] for item in found]
    return {"status": "SUCCEEDED", "count": len(facts), "facts": facts,
            "summary": "\n".join(f"- {fact}" for fact in facts)}
