"""memlane's exceptions as HTTP answers: ``{"detail": ...}`` bodies, never a stack trace.

| exception                               | status |
|-----------------------------------------|--------|
| request body / query fails its schema   | 422, ``field`` names it |
| body that is not JSON (not UTF-8, nests too deep) | 422, ``field`` is ``body`` |
| a method the path does not serve        | 405, ``Allow`` lists every method of the path |
| ``InvalidInputError`` (``FilterError``) | 422, ``field`` (and ``path``) |
| ``ScopeError`` (no user/agent/run id)   | 400 |
| ``MemoryNotFoundError``, ``EventNotFoundError``, ``EntityNotFoundError`` | 404 |
| ``NotFoundError`` (a webhook, an export, another project) | 404 |
| ``PermissionDeniedError`` (a read-only or user-limited key) | 403, ``permission`` names what it lacks |
| ``MaintenanceBusyError`` (that scope's maintenance runs already) | 409 |
| ``AddInProgress`` (same Idempotency-Key, first still running) | 409 |
| ``EmbeddingError`` (embedding provider) | 503, logged on one line |
| ``StoreUnavailableError`` (the database is unreachable, or every connection busy) | 503 with ``Retry-After`` |
| ``StorageFullError`` (the disk holding the store is full) | 507, logged on one line |
| any other ``MemlaneError``              | 500, logged |

Anything else is a bug: ``RequestContext`` logs it and answers 500.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.routing import Match

from memlane.core import field_errors
from memlane.core.errors import (
    AddInProgress,
    EmbeddingError,
    EntityNotFoundError,
    EventNotFoundError,
    MaintenanceBusyError,
    FilterError,
    InvalidInputError,
    MemlaneError,
    MemoryNotFoundError,
    NotFoundError,
    PermissionDeniedError,
    ScopeError,
    StorageFullError,
    StoreUnavailableError,
)
from memlane.core.logcontext import one_line
from memlane.server.middleware import REQUEST_ID, store_unavailable

log = logging.getLogger("memlane.server")


class FieldError(BaseModel):
    field: str = Field(description="the field at fault, dotted (messages.0.role)")
    message: str
    type: str | None = None


class ErrorBody(BaseModel):
    """Every error answer of the server (4xx and 5xx)."""

    detail: str = Field(description="what was wrong, and how to fix it")
    field: str | None = Field(None, description="the request field at fault (400, 404, 422)")
    path: str | None = Field(None, description="where in a filter the fault is")
    errors: list[FieldError] | None = Field(None, description="every field at fault (422 from the request schema)")
    request_id: str | None = Field(None, description="the id of the request in the server log (5xx)")
    permission: str | None = Field(None, description="what the key lacks (403): write, user, tenant or admin")
    limit: str | None = Field(None, description="the limit a 429 is over: per_key, per_tenant or concurrency")
    retry_after: float | None = Field(None, description="seconds until the request would be let through (429)")


#: documented on every operation (``FastAPI(responses=...)``), so the OpenAPI schema says what errors look like
RESPONSES: dict[int | str, dict[str, Any]] = {status: {"model": ErrorBody, "description": description} for status, description in [
    (400, "the request names no user_id, agent_id or run_id"),
    (401, "no API key, or an unknown or revoked one"),
    (403, "the key may not do this: admin operations, writes with a read-only key, other users with a "
          "user-limited key; permission names what it lacks"),
    (404, "no such memory, collection or document"),
    (409, "a name that is already taken, or an add with this Idempotency-Key still being processed"),
    (405, "the path does not serve this method; Allow lists those it does"),
    (413, "the request body is larger than the server's limit"),
    (414, "the URL is longer than the server reads"),
    (422, "a field is invalid; field names it"),
    (429, "the key or its tenant is over a rate or concurrency limit: limit names it; retry after Retry-After "
          "seconds"),
    (500, "a server fault; request_id finds it in the server log"),
    (503, "the database is unreachable (retry after Retry-After seconds), or the embedding provider failed; "
          "request_id finds it in the server log"),
    (507, "the disk holding the store is full: nothing of the request was stored; retry once space is freed"),
]}

_LOCATIONS = ("body", "query", "path", "header")


class ErrorJson(JSONResponse):
    """An error answer. ASCII-escaped, so an error that quotes a client's broken text (a lone
    surrogate) is still a valid body, never a second fault."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _error(status: int, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    return ErrorJson({"detail": detail, **{k: v for k, v in extra.items() if v is not None}}, status_code=status,
                     headers=headers)


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    raw = exc.errors()
    errors = [{"field": "body", "message": f"request body is not valid JSON ({error.get('msg')})", "type": "json_invalid"}
              for error in raw if error.get("type") == "json_invalid"]
    errors += field_errors.field_errors([e for e in raw if e.get("type") != "json_invalid"], locations=_LOCATIONS)
    detail = field_errors.summary(errors) or "invalid request"
    return _error(422, detail, field=errors[0]["field"] if errors else None, errors=errors)


async def _invalid_input(request: Request, exc: InvalidInputError) -> JSONResponse:
    status = 400 if isinstance(exc, ScopeError) else 422
    return _error(status, str(exc), field=exc.field, path=exc.path if isinstance(exc, FilterError) else None)


async def _not_found(request: Request, exc: MemoryNotFoundError) -> JSONResponse:
    return _error(404, f"Memory not found: no memory with id {exc.memory_id!r}", field="memory_id")


async def _entity_not_found(request: Request, exc: EntityNotFoundError) -> JSONResponse:
    return _error(404, f"Entity not found: {exc}", field=f"{exc.kind}_id")


async def _event_not_found(request: Request, exc: EventNotFoundError) -> JSONResponse:
    return _error(404, f"Event not found: {exc}", field="event_id")


async def _item_not_found(request: Request, exc: NotFoundError) -> JSONResponse:
    return _error(404, f"Not found: {exc}", field=exc.field)


async def _denied(request: Request, exc: PermissionDeniedError) -> JSONResponse:
    return _error(403, str(exc), permission=exc.permission)


async def _busy(request: Request, exc: MaintenanceBusyError) -> JSONResponse:
    return _error(409, str(exc))


async def _in_progress(request: Request, exc: AddInProgress) -> JSONResponse:
    return _error(409, str(exc), headers={"Retry-After": "1"}, field="idempotency_key")


async def _storage_full(request: Request, exc: StorageFullError) -> JSONResponse:
    """507 Insufficient Storage: the write was rolled back; the same request succeeds once space is freed."""
    request_id = request.scope.get(REQUEST_ID)
    log.error("request %s: the disk holding the store %s is full (%s)", request_id, exc.location,
              ' '.join(exc.cause.split()) or 'no space left')
    return _error(507, f"{exc} (request id {request_id})", request_id=request_id)


async def _unavailable(request: Request, exc: StoreUnavailableError) -> JSONResponse:
    body, headers = store_unavailable(exc, request.scope.get(REQUEST_ID))
    return ErrorJson(body, status_code=503, headers=headers)


async def _http(request: Request, exc: HTTPException) -> JSONResponse:
    if exc.status_code == 405:
        return _method_not_allowed(request)
    if exc.status_code == 400 and isinstance(exc.__cause__, (RecursionError, UnicodeDecodeError)):
        # FastAPI reads the body before any handler: JSON that is not UTF-8 or nests past the parser
        why = "nests too deeply" if isinstance(exc.__cause__, RecursionError) else "is not UTF-8"
        return _error(422, f"request body is not valid JSON: it {why}", field="body")
    return _error(exc.status_code, str(exc.detail), headers=getattr(exc, "headers", None))


def _method_not_allowed(request: Request) -> JSONResponse:
    """405 with every method of the path in ``Allow``: the methods of all routes sharing the path
    template of the first one that matches (Starlette names only that route's own)."""
    routes = [route for route in _routes(request.app) if hasattr(route, "methods")]
    template = next((route.path_format for route in routes if route.matches(request.scope)[0] is not Match.NONE), None)
    allow = ", ".join(sorted({m for route in routes if route.path_format == template for m in route.methods or ()}))
    return _error(405, f"{request.method} is not served on {request.url.path}; it takes {allow}",
                  headers={"Allow": allow}, field="method")


async def _server_fault(request: Request, exc: MemlaneError) -> JSONResponse:
    request_id = request.scope.get(REQUEST_ID)
    if isinstance(exc, EmbeddingError):  # the provider's fault, not the server's: one line, traceback at debug
        log.warning("request %s: embedding provider failed: %s", request_id, one_line(exc))
        log.debug("request %s: traceback", request_id, exc_info=exc)
        return _error(503, f"the embedding provider failed (request id {request_id}); see the server log",
                      request_id=request_id)
    log.error("request %s: %s", request_id, one_line(exc), exc_info=exc)
    return _error(500, f"internal server error: {type(exc).__name__} (request id {request_id}); see the server log",
                  request_id=request_id)


def _routes(app: FastAPI) -> Any:
    """Every route of the app, those of included routers too."""
    try:
        from fastapi.routing import iter_route_contexts  # FastAPI >= 0.16x wraps included routers
    except ImportError:  # pragma: no cover - older FastAPI keeps them flat
        return app.router.routes
    return iter_route_contexts(app.router.routes)


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    app.add_exception_handler(InvalidInputError, _invalid_input)  # type: ignore[arg-type]
    app.add_exception_handler(MemoryNotFoundError, _not_found)  # type: ignore[arg-type]
    app.add_exception_handler(EventNotFoundError, _event_not_found)  # type: ignore[arg-type]
    app.add_exception_handler(NotFoundError, _item_not_found)  # type: ignore[arg-type]
    app.add_exception_handler(EntityNotFoundError, _entity_not_found)  # type: ignore[arg-type]
    app.add_exception_handler(PermissionDeniedError, _denied)  # type: ignore[arg-type]
    app.add_exception_handler(MaintenanceBusyError, _busy)  # type: ignore[arg-type]
    app.add_exception_handler(AddInProgress, _in_progress)  # type: ignore[arg-type]
    app.add_exception_handler(StorageFullError, _storage_full)  # type: ignore[arg-type]
    app.add_exception_handler(StoreUnavailableError, _unavailable)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http)  # type: ignore[arg-type]
    app.add_exception_handler(MemlaneError, _server_fault)  # type: ignore[arg-type]
