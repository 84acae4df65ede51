"""The dashboard: a static page at ``/ui`` (HTML, one script, one style sheet, all in the package)
and the read endpoint it needs that the API lacked, ``GET /scopes``.

The page carries no data and no key: it asks for an API key, keeps it in the browser's session
storage and sends it as ``Authorization: Bearer`` with every API call, so the key checks, tenant
isolation and error answers are the API's own. Every text the page shows is inserted as text,
never as HTML; the Content-Security-Policy below forbids inline and foreign scripts besides, so a
memory that looks like markup stays words on the page.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field
from starlette.staticfiles import StaticFiles

from memlane.server.access import require_admin, tenant_memory
from memlane.server.schemas import MAX_RESULTS

UI_DIR = Path(__file__).parent / "ui"

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                               "img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}

router = APIRouter()


class ScopeRow(BaseModel):
    id: str = Field(description="the user, agent or run id")
    memories: int = Field(description="memories of the id, valid or invalidated")
    valid: int = Field(description="memories still valid")
    messages: int = Field(description="messages stored for the id")


class Scopes(BaseModel):
    """``GET /scopes``: who has memories or messages in the tenant."""

    users: list[ScopeRow]
    agents: list[ScopeRow]
    runs: list[ScopeRow]


@router.get("/scopes", tags=["admin"], response_model=Scopes,
            summary="Every user, agent and run of the tenant with its counts, by id")
def list_scopes(request: Request, limit: int = Query(1000, ge=1, le=MAX_RESULTS,
                                                      description="ids per kind (users, agents, runs)")) -> Scopes:
    """Lists across every user of the tenant, so it needs an admin key (as a wildcard scope does)."""
    require_admin(request, "listing the tenant's users, agents and runs")
    return Scopes.model_validate(tenant_memory(request).scopes(limit))


class _Assets(StaticFiles):
    def file_response(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        response = super().file_response(*args, **kwargs)
        response.headers.update(SECURITY_HEADERS)
        return response


def _page() -> FileResponse:
    return FileResponse(UI_DIR / "index.html", media_type="text/html; charset=utf-8", headers=SECURITY_HEADERS)


def install(app: FastAPI) -> None:
    """``GET /scopes``, the page at ``/ui`` (and ``/ui/``) and its assets under ``/ui/assets``."""
    app.include_router(router)
    for path in ("/ui", "/ui/"):
        app.add_api_route(path, _page, methods=["GET"], include_in_schema=False)
    app.mount("/ui/assets", _Assets(directory=UI_DIR / "assets"), name="ui-assets")

