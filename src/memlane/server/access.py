"""Who is asking, which tenant's ``Memory`` answers, and what needs an admin key.

Handlers call ``tenant_memory(request)`` inside their (threadpool) body: the
only ``Memory`` a request can reach is its own tenant's.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request

from memlane.core import validation
from memlane.core.errors import InvalidInputError
from memlane.hosting.key_limits import limited
from memlane.hosting.keys import Principal
from memlane.memory import Memory
from memlane.server.middleware import PRINCIPAL, REQUEST_ID
from memlane.server.responses import Json

#: seed 001: an invalid limit falls back to this
SEED_DEFAULT_LIMIT = 5
from memlane.hosting.tenancy import Tenants, widens_scope


def principal(request: Request) -> Principal:
    found = request.scope.get(PRINCIPAL)
    if found is None:  # only public paths skip authentication; a handler here is a wiring bug
        raise RuntimeError("request reached a protected handler without a principal")
    return found


def tenant_memory(request: Request) -> Memory:
    """The request's tenant's ``Memory``, as far as its key is trusted (``hosting.key_limits``: read-only,
    some users only)."""
    tenants: Tenants = request.app.state.tenants
    who = principal(request)
    return limited(tenants.memory(who.tenant), who)


async def run_search(request: Request, query: str, **arguments: Any) -> dict[str, Any]:
    """``Memory.search`` of the request's tenant. A quick one (cached query vector, the store's own
    lookups: a few milliseconds of this process, ``Memory.search_is_quick``) runs right here on the
    event loop, which is cheaper than handing it to a thread (SQLite, 100k memories, 32 clients: 172
    cached hybrid searches/s on the loop, 110 from the threadpool); anything that may call the model
    or wait for another server runs in the threadpool."""
    memory = tenant_memory(request)
    flags = {name: arguments.get(name) for name in ("keyword_search", "rerank", "filter_memories")}
    if memory.search_is_quick(query, **flags):
        return memory.search(query, **arguments)
    return await run_in_threadpool(functools.partial(memory.search, query, **arguments))


def search_limit(request: Request, body: Any, default: int) -> tuple[int, list[str]]:
    """The limit of a search body under seed 001's rule: ``limit`` or its alias ``top_k`` (both given
    with different values is an error) when sent, else ``default``; a value that is not a positive
    integer (``"7"``, ``2.0``, ``null``) gives 5, with a warning for the answer's ``warnings``."""
    given = [name for name in ("limit", "top_k") if name in body.model_fields_set]
    if len(given) == 2 and body.limit != body.top_k:
        raise InvalidInputError("give limit or top_k (its alias), not two different values", field="top_k")
    if not given:
        return default, []
    limit, warning = validation.lenient_limit(getattr(body, given[0]), SEED_DEFAULT_LIMIT,
                                              tenant_memory(request).limits.max_results, given[0])
    return limit, [warning] if warning else []


def search_answer(request: Request, result: dict[str, Any], warnings: list[str]) -> Json:
    """A search's response: the result with the limit's ``warnings``; seed 001's error answer (advanced
    and standard search both failed) as 503 with the request id."""
    if warnings:
        result = {**result, "warnings": warnings}
    if result.get("status") == "error":
        request_id = request.scope.get(REQUEST_ID)
        return Json({"detail": f"search failed (request id {request_id}); see the server log",
                     "request_id": request_id, **result}, status_code=503)
    return Json(result)


def require_admin(request: Request, what: str) -> None:
    if not principal(request).admin:
        raise HTTPException(403, f"{what} needs an admin API key (memlane keys create --tenant NAME --admin)")


def check_scope(request: Request, filters: Mapping[str, Any] | None) -> None:
    """Listing, searching or deleting across every user of a tenant is for admin keys only."""
    if widens_scope(filters):
        require_admin(request, "a wildcard scope (e.g. filters {\"user_id\": \"*\"})")


def json_param(value: str | None, field: str) -> dict[str, Any] | None:
    """A filter dict sent in a query string: JSON, or (as the mem0 client sends it) a Python
    literal such as ``{'user_id': 'alice'}``, read with ``ast.literal_eval`` (never ``eval``)."""
    if value is None or value == "":
        return None
    try:
        parsed = json.loads(value)
    except RecursionError:
        raise InvalidInputError(f"{field} nests too deeply to be a filter", field=field) from None
    except ValueError:
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise InvalidInputError(f"{field} must be a JSON object, got {value[:200]!r}", field=field) from None
    if not isinstance(parsed, dict):
        raise InvalidInputError(f"{field} must be a JSON object, got {type(parsed).__name__}", field=field)
    return parsed
