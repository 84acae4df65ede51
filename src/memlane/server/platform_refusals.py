"""The mem0 client methods memlane refuses on purpose, each with a 422 that says why and what to do
instead, rather than a 404 that reads like a wrong URL: creating or deleting a project and managing its
members (``client.project.create``, ``.delete``, ``.get_members``, ``.add_member``, ``.update_member``,
``.remove_member``). A memlane project is a tenant, made and ended with API keys
(``memlane keys create --tenant NAME``, ``memlane keys revoke``); it has no members, only keys."""

from __future__ import annotations

from typing import NoReturn

from fastapi import APIRouter, Path

from memlane.core.errors import InvalidInputError

router = APIRouter(tags=["mem0 platform compatibility"])

PROJECTS = "/api/v1/orgs/organizations/{org_id}/projects/"
OrgId = Path(..., max_length=256, description="the organisation (memlane's is 'memlane')")
ProjectId = Path(..., max_length=256, description="the project (a memlane tenant)")
TENANTS = ("a memlane project is a tenant: it starts with its first key (`memlane keys create --tenant NAME`), "
           "and its keys are listed and revoked with `memlane keys list` and `memlane keys revoke`")


def _refuse(what: str, field: str) -> NoReturn:
    raise InvalidInputError(f"{what} is not supported: {TENANTS}", field=field)


@router.post(PROJECTS, summary="mem0 client project.create (refused: tenants are made with keys)")
def create_project(org_id: str = OrgId) -> None:
    _refuse("creating a project", "name")


@router.delete(PROJECTS + "{project_id}/", summary="mem0 client project.delete (refused)")
def delete_project(org_id: str = OrgId, project_id: str = ProjectId) -> None:
    _refuse("deleting a project", "project_id")


def members(org_id: str = OrgId, project_id: str = ProjectId) -> None:
    _refuse("project members", "email")


for _method in ("GET", "POST", "PUT", "DELETE"):  # one operation per method, each with its own OpenAPI id
    router.add_api_route(PROJECTS + "{project_id}/members/", members, methods=[_method],
                         operation_id=f"project_members_{_method.lower()}",
                         summary="mem0 client project members (refused: a tenant has keys, not members)")
