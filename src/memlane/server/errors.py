"""memlane's exceptions as HTTP answers: ``{"detail": ...}`` bodies, never a stack trace.

| exception                               | status |
|-----------------------------------------|--------|
| request body / query fails its schema   | 422, ``field`` names it |
| ``InvalidInputError`` (``FilterError``) | 422, ``field`` (and ``path``) |
| ``ScopeError`` (no user/agent/run id)   | 400 |
| ``MemoryNotFoundError``, ``EventNotFoundError`` | 404 |
| ``MaintenanceBusyError`` (that scope's maintenance runs already) | 409 |
| ``EmbeddingError`` (embedding provider) | 503, logged on one line |
| any other ``MemlaneError``              | 500, logged |

Anything else is a bug: ``RequestContext`` logs it and answers 500.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from memlane.core.errors import (
    EmbeddingError,
    EventNotFoundError,
    MaintenanceBusyError,
    FilterError,
    InvalidInputError,
    MemlaneError,
    MemoryNotFoundError,
    ScopeError,
)
from memlane.core.logcontext import one_line
from memlane.server.middleware import REQUEST_ID

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


#: documented on every operation (``FastAPI(responses=...)``), so the OpenAPI schema says what errors look like
RESPONSES: dict[int | str, dict[str, Any]] = {status: {"model": ErrorBody, "description": description} for status, description in [
    (400, "the request names no user_id, agent_id or run_id"),
    (401, "no API key, or an unknown or revoked one"),
    (403, "the key may not do this (admin operations)"),
    (404, "no such memory, collection or document"),
    (409, "a name that is already taken"),
    (413, "the request body is larger than the server's limit"),
    (422, "a field is invalid; field names it"),
    (500, "a server fault; request_id finds it in the server log"),
    (503, "the embedding provider failed; request_id finds it in the server log"),
]}

_LOCATIONS = ("body", "query", "path", "header")


def _is_union_tag(part: str) -> bool:
    """pydantic names the union member it tried ("str", "list[MessageIn]", "constrained-str");
    no field of memlane's request models looks like that."""
    return "[" in part or "-" in part or part in ("str", "int", "float", "bool", "dict", "list", "none")


def field_name(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("body", "messages", 0, "role")`` -> ``"messages.0.role"``."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in _LOCATIONS:
        parts = parts[1:]
    return ".".join(p for p in parts if not _is_union_tag(p)) or "body"


def _error(status: int, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": detail, **{k: v for k, v in extra.items() if v is not None}}, status_code=status)


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = []
    for error in exc.errors():
        loc = tuple(str(p) for p in error.get("loc", ()))
        if error.get("type") == "json_invalid":
            errors.append({"field": "body", "message": f"request body is not valid JSON ({error.get('msg')})",
                           "type": "json_invalid", "union": False})
            continue
        errors.append({"field": field_name(loc), "message": error.get("msg", "invalid"), "type": error.get("type"),
                       "union": any(_is_union_tag(p) for p in loc[1:])})
    # of a union's failed members, report the one that got furthest (messages.0.role, not "not a string")
    errors = [e for e in errors
              if not (e["union"] and any(o["field"].startswith(e["field"] + ".") for o in errors))]
    for e in errors:
        del e["union"]
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors) or "invalid request"
    return _error(422, detail, field=errors[0]["field"] if errors else None, errors=errors)


async def _invalid_input(request: Request, exc: InvalidInputError) -> JSONResponse:
    status = 400 if isinstance(exc, ScopeError) else 422
    return _error(status, str(exc), field=exc.field, path=exc.path if isinstance(exc, FilterError) else None)


async def _not_found(request: Request, exc: MemoryNotFoundError) -> JSONResponse:
    return _error(404, f"Memory not found: no memory with id {exc.memory_id!r}", field="memory_id")


async def _event_not_found(request: Request, exc: EventNotFoundError) -> JSONResponse:
    return _error(404, f"Event not found: {exc}", field="event_id")


async def _busy(request: Request, exc: MaintenanceBusyError) -> JSONResponse:
    return _error(409, str(exc))


async def _http(request: Request, exc: HTTPException) -> JSONResponse:
    return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))


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


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation)  # type: ignore[arg-type]
    app.add_exception_handler(InvalidInputError, _invalid_input)  # type: ignore[arg-type]
    app.add_exception_handler(MemoryNotFoundError, _not_found)  # type: ignore[arg-type]
    app.add_exception_handler(EventNotFoundError, _event_not_found)  # type: ignore[arg-type]
    app.add_exception_handler(MaintenanceBusyError, _busy)  # type: ignore[arg-type]
    app.add_exception_handler(HTTPException, _http)  # type: ignore[arg-type]
    app.add_exception_handler(MemlaneError, _server_fault)  # type: ignore[arg-type]
