"""Pure ASGI middleware (cheaper than Starlette's BaseHTTPMiddleware on every request).

Outermost first:

* ``RequestContext``: gives every request an id, returns it as ``X-Request-ID``
  on every response, and turns an unhandled exception into a logged 500 with a
  JSON body (never a stack trace).
* ``BodyLimit``: 413 for bodies over the limit, by ``Content-Length`` up front
  and by counting while the body is read (chunked uploads).
* ``Authenticate``: resolves the API key to a ``Principal`` (tenant, admin, read-only, users) or
  answers 401 (503 when the key store does not answer and the key is not one it verified recently:
  ``hosting.key_check``, which reads keys off the event loop); public paths (health, docs) need no key.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import uuid
from abc import ABC, abstractmethod
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memlane.core import logcontext
from memlane.core.errors import StoreUnavailableError
from memlane.hosting.key_check import KeyCheck
from memlane.hosting.keys import Principal

log = logging.getLogger("memlane.server")

REQUEST_ID = "memlane.request_id"
PRINCIPAL = "memlane.principal"
PUBLIC_PATHS = frozenset({"/health", "/ready", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json", "/ui"})
#: the API docs' packaged scripts and styles; the dashboard's page and assets (they hold no data and no key;
#: every API call they make sends one)
PUBLIC_PREFIXES = ("/docs-assets/", "/ui/")
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


async def send_json(send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    payload = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})


def store_unavailable(exc: StoreUnavailableError, request_id: str | None) -> tuple[dict[str, Any], dict[str, str]]:
    """The 503 answer (body, headers) to a request the database cannot serve now: the cause, the request
    id, and ``Retry-After``. A route's error and the API-key check (which reads the database) share it."""
    log.info("request %s: 503, %s", request_id, exc)
    return ({"detail": f"{exc} (request id {request_id})", "request_id": request_id},
            {"Retry-After": str(exc.retry_after)})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


class HttpMiddleware(ABC):
    """A middleware of HTTP requests: other scopes (lifespan, websocket) and the requests ``passes``
    names go through untouched; the rest to ``handle``."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.passes(scope):
            await self.app(scope, receive, send)
            return
        await self.handle(scope, receive, send)

    def passes(self, scope: Scope) -> bool:
        return False

    @abstractmethod
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the request, or pass it on to ``self.app``."""


class RequestContext(HttpMiddleware):
    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        offered = _header(scope, b"x-request-id")
        request_id = offered if offered and _CLIENT_REQUEST_ID.match(offered) else uuid.uuid4().hex
        scope[REQUEST_ID] = request_id
        logcontext.request_id.set(request_id)  # for log lines below the server (a degraded search stage)
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except BodyTooLarge as exc:
            if started:
                raise
            await send_json(send_with_id, 413, {"detail": exc.detail})
        except StoreUnavailableError as exc:  # the database is away before a route ran (the API-key check)
            if started:
                raise
            body, headers = store_unavailable(exc, request_id)
            await send_json(send_with_id, 503, body, headers)
        except Exception:
            log.exception("request %s failed: %s %s", request_id, scope.get("method"), scope.get("path"))
            if started:
                raise
            await send_json(send_with_id, 500, {"detail": f"internal server error (request id {request_id})",
                                                 "request_id": request_id})


class BodyTooLarge(HTTPException):
    """Raised while reading a body past the limit. An ``HTTPException`` so FastAPI's body
    parsing lets it through (it would turn anything else into a 400)."""

    def __init__(self, limit: int):
        super().__init__(413, f"request body is larger than the limit of {limit:,} bytes")


class BodyLimit(HttpMiddleware):
    def __init__(self, app: ASGIApp, max_bytes: int):
        super().__init__(app)
        self.max_bytes = max_bytes

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        declared = _header(scope, b"content-length")
        if declared is not None:
            try:
                too_large = int(declared) > self.max_bytes
            except ValueError:
                await send_json(send, 400, {"detail": "invalid Content-Length header"})
                return
            if too_large:
                await send_json(send, 413, {"detail": BodyTooLarge(self.max_bytes).detail}, {"connection": "close"})
                return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, counting_receive, send)


def bearer_key(scope: Scope) -> str | None:
    """The API key from ``Authorization: Bearer|Token <key>`` or ``X-API-Key``."""
    authorization = _header(scope, b"authorization")
    if authorization:
        scheme, _, credential = authorization.strip().partition(" ")
        if scheme.lower() in ("bearer", "token") and credential.strip():
            return credential.strip()
    key = _header(scope, b"x-api-key")
    return key.strip() if key and key.strip() else None


class Authenticate(HttpMiddleware):
    def __init__(self, app: ASGIApp, keys: KeyCheck | None, *, no_auth_tenant: str | None = None):
        super().__init__(app)
        self.keys = keys
        self.no_auth = Principal(tenant=no_auth_tenant, admin=True) if no_auth_tenant else None

    def passes(self, scope: Scope) -> bool:
        return scope["path"] in PUBLIC_PATHS or scope["path"].startswith(PUBLIC_PREFIXES)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = self.no_auth
        if principal is None:
            key = bearer_key(scope)
            if key is None:
                await send_json(send, 401, {"detail": "missing API key: send 'Authorization: Bearer <key>' "
                                                      "(or 'Token <key>', or an 'X-API-Key' header); "
                                                      "create one with `memlane keys create --tenant NAME`"},
                                {"www-authenticate": "Bearer"})
                return
            assert self.keys is not None
            # off the event loop; a key store that does not answer: StoreUnavailableError (RequestContext's 503)
            principal = await self.keys.principal(key)
            if principal is None:
                await send_json(send, 401, {"detail": "Invalid API key: unknown or revoked"},
                                {"www-authenticate": 'Bearer error="invalid_token"'})
                return
        scope[PRINCIPAL] = principal
        scope["user"] = _mcp_user(principal)
        await self.app(scope, receive, send)


@functools.lru_cache(maxsize=1024)
def _mcp_user(principal: Principal) -> Any:
    """The MCP SDK binds each streamable-HTTP session to the credential that opened it
    (``scope["user"]``), so a session id cannot be reused with another tenant's key."""
    try:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken
    except ImportError:  # the MCP mount is optional
        return None
    client = principal.key_id or f"no-auth:{principal.tenant}"
    return AuthenticatedUser(AccessToken(token=client, client_id=client, scopes=[]))
