"""What each route needs of a key trusted with less than its tenant (``memlane keys create --read-only``,
``--user ID``): a dependency of every route, over one table.

Each route either only reads (``READ``) or writes, and reaches either the memories of the users it names
(``USER``: the ``Memory`` the request gets, ``hosting.key_limits``, holds a user-limited key to those)
or what the whole tenant shares (``TENANT``: documents, entities, profiles, project settings, webhooks,
exports, event lists). A read-only key gets 403 on a writing route, a user-limited key on a tenant-wide
one. A route missing from the table counts as writing tenant-wide: closed to such keys until it is
listed (a test lists every route of the app against the table).
"""

from __future__ import annotations

from starlette.requests import Request

from memlane.core.errors import PermissionDeniedError
from memlane.hosting.key_limits import users_text
from memlane.server.middleware import PRINCIPAL

READ, WRITE = "read", "write"
USER, TENANT = "user", "tenant"

_PROJECT = "/api/v1/orgs/organizations/{org_id}/projects/{project_id}/"
_WEBHOOK = "/api/v1/webhooks/{webhook_id}/"

#: (method, path) -> (reads or writes, whose data it reaches)
ROUTES: dict[tuple[str, str], tuple[str, str]] = {
    # memlane's routes (mem0's open-source server)
    ("POST", "/memories"): (WRITE, USER),
    ("GET", "/memories"): (READ, USER),
    ("DELETE", "/memories"): (WRITE, USER),
    ("POST", "/memories/cleanup"): (WRITE, USER),
    ("POST", "/memories/merge"): (WRITE, USER),
    ("GET", "/memories/{memory_id}"): (READ, USER),
    ("PUT", "/memories/{memory_id}"): (WRITE, USER),
    ("DELETE", "/memories/{memory_id}"): (WRITE, USER),
    ("GET", "/memories/{memory_id}/history"): (READ, USER),
    ("POST", "/search"): (READ, USER),
    ("GET", "/messages"): (READ, USER),
    ("POST", "/reset"): (WRITE, TENANT),
    ("GET", "/info"): (READ, TENANT),
    ("GET", "/scopes"): (READ, TENANT),
    ("POST", "/context/should-search"): (READ, USER),
    ("POST", "/context/search"): (READ, USER),
    ("GET", "/events/{event_id}"): (READ, USER),
    ("GET", "/events"): (READ, TENANT),
    # mem0's platform routes
    ("GET", "/v1/ping/"): (READ, USER),
    ("POST", "/v1/memories/"): (WRITE, USER),
    ("POST", "/v3/memories/add/"): (WRITE, USER),
    ("GET", "/v1/memories/"): (READ, USER),
    ("DELETE", "/v1/memories/"): (WRITE, USER),
    ("POST", "/v1/memories/search/"): (READ, USER),
    ("POST", "/v2/memories/search/"): (READ, USER),
    ("POST", "/v3/memories/search/"): (READ, USER),
    ("POST", "/v2/memories/"): (READ, USER),
    ("POST", "/v3/memories/"): (READ, USER),
    ("GET", "/v1/memories/{memory_id}/"): (READ, USER),
    ("PUT", "/v1/memories/{memory_id}/"): (WRITE, USER),
    ("DELETE", "/v1/memories/{memory_id}/"): (WRITE, USER),
    ("GET", "/v1/memories/{memory_id}/history/"): (READ, USER),
    ("PUT", "/v1/batch/"): (WRITE, USER),
    ("DELETE", "/v1/batch/"): (WRITE, USER),
    ("GET", "/v1/event/{event_id}/"): (READ, USER),
    ("GET", "/v1/events/"): (READ, TENANT),
    ("GET", "/v1/entities/"): (READ, TENANT),
    ("DELETE", "/v1/entities/{entity_type}/{entity_id}/"): (WRITE, TENANT),
    ("DELETE", "/v2/entities/{entity_type}/{entity_id}/"): (WRITE, TENANT),
    ("GET", "/v2/entities/user/{user_id}/profile/"): (READ, TENANT),
    ("POST", "/v2/profiles/jobs/"): (WRITE, TENANT),
    ("GET", "/v2/profiles/jobs/{job_id}/"): (READ, TENANT),
    ("GET", "/v2/profiles/settings/"): (READ, TENANT),
    ("POST", "/v2/profiles/settings/"): (WRITE, TENANT),
    ("POST", "/v1/summary/"): (WRITE, TENANT),
    ("POST", "/api/v1/orgs/organizations/{org_id}/projects/"): (WRITE, TENANT),
    ("GET", _PROJECT): (READ, TENANT),
    ("PATCH", _PROJECT): (WRITE, TENANT),
    ("DELETE", _PROJECT): (WRITE, TENANT),
    ("GET", _PROJECT + "members/"): (READ, TENANT),
    ("POST", _PROJECT + "members/"): (WRITE, TENANT),
    ("PUT", _PROJECT + "members/"): (WRITE, TENANT),
    ("DELETE", _PROJECT + "members/"): (WRITE, TENANT),
    ("GET", "/api/v1/webhooks/projects/{project_id}/"): (READ, TENANT),
    ("POST", "/api/v1/webhooks/projects/{project_id}/"): (WRITE, TENANT),
    ("PUT", _WEBHOOK): (WRITE, TENANT),
    ("DELETE", _WEBHOOK): (WRITE, TENANT),
    ("GET", _WEBHOOK + "deliveries/"): (READ, TENANT),
    ("POST", "/v1/feedback/"): (WRITE, TENANT),
    ("GET", "/v1/memories/{memory_id}/feedback/"): (READ, TENANT),
    ("POST", "/v1/exports/"): (WRITE, TENANT),
    ("POST", "/v1/exports/get/"): (READ, TENANT),
    # documents: tenant-wide (a user-limited key gets 403; a read-only key reads and searches them)
    ("POST", "/collections"): (WRITE, TENANT),
    ("GET", "/collections"): (READ, TENANT),
    ("GET", "/collections/{collection_name}"): (READ, TENANT),
    ("PATCH", "/collections/{collection_name}"): (WRITE, TENANT),
    ("DELETE", "/collections/{collection_name}"): (WRITE, TENANT),
    ("POST", "/collections/{collection_name}/reencode"): (WRITE, TENANT),
    ("POST", "/documents/upsert"): (WRITE, TENANT),
    ("GET", "/documents"): (READ, TENANT),
    ("GET", "/documents/{document_name}"): (READ, TENANT),
    ("PATCH", "/documents/{document_name}"): (WRITE, TENANT),
    ("DELETE", "/documents/{document_name}"): (WRITE, TENANT),
    ("POST", "/search/documents"): (READ, TENANT),
    ("POST", "/search/documents/image"): (READ, TENANT),
    ("POST", "/filter"): (READ, TENANT),
}


def check_route(request: Request) -> None:
    """The app's dependency: 403 when the request's key lacks what its route needs."""
    principal = request.scope.get(PRINCIPAL)
    if principal is None or not principal.limited:
        return
    route = request.scope.get("route")
    where = f"{request.method} {getattr(route, 'path', request.url.path)}"
    access, reach = ROUTES.get((request.method, getattr(route, "path", "")), (WRITE, TENANT))
    if principal.read_only and access == WRITE:
        raise PermissionDeniedError(f"this API key is read-only: {where} writes (it needs the 'write' permission; "
                                    "create a key without --read-only)", permission="write")
    if principal.users is not None and reach == TENANT:
        raise PermissionDeniedError(f"this API key is limited to users {users_text(principal.users)}: {where} "
                                    "reaches the whole tenant (it needs the 'tenant' permission: a key without "
                                    "--user)", permission="tenant")
