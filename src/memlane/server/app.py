"""The REST server: ``create_app(settings)`` builds the FastAPI application.

    memlane serve                       # http://127.0.0.1:18088, docs at /docs
    uvicorn --factory memlane.server.app:app_from_env   # settings from MEMLANE_* variables

Layout of ``settings.home``::

    keys.db               API keys (hashed; on PostgreSQL they live in the database)
    memlane.db            tenant "default" (the store of Memory(), the CLI and memlane mcp too)
    tenants/<name>.db     every other tenant (store/__init__.py: create_store)

Every route calls one ``Memory`` method of the request's tenant; the MCP
streamable-HTTP endpoint is mounted at ``/mcp`` behind the same API keys.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import anyio
from fastapi import Depends, FastAPI
from fastapi_offline import FastAPIOffline
from starlette.routing import Route

from memlane import __version__
from memlane.core import config as config_mod
from memlane.core.config import HOME_ENV, memlane_home
from memlane.embeddings import Embedder
from memlane.embeddings import choice as embedder_choice
from memlane.store import recorded_embedders
from memlane.hosting import local_server
from memlane.hosting.key_check import KeyCheck
from memlane.hosting.key_limits import limited
from memlane.hosting.keys import open_key_store
from memlane.core.scope import DEFAULT_USER_ID
from memlane.server import (context_routes, dashboard, documents_routes, errors, events_routes, openapi, platform,
                            project_routes, routes)
from memlane.server import garbage, grants, platform_batch, platform_entities, platform_profiles, platform_refusals
from memlane.embeddings.batching import BatchingEmbedder
from memlane.llms import check_llm
from memlane.server.local_token import KeysWithLocalToken
from memlane.server.middleware import PRINCIPAL, Authenticate, BodyLimit, RequestContext
from memlane.server.rate_limit import RateLimit
from memlane.hosting.tenancy import DEFAULT_TENANT, Tenants

log = logging.getLogger("memlane.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 18088
DEFAULT_MAX_BODY_BYTES = 1 << 20  # 1 MiB
DOCS_ASSETS = "/docs-assets"  # Swagger UI / ReDoc scripts and styles (public, like /docs)


def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class ServerSettings:
    home: Path = field(default_factory=memlane_home)
    #: False: every request acts as the admin of tenant "default" (local development only)
    auth: bool = True
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: the mem0-style configuration every tenant's Memory uses (its store path is set per tenant)
    config: Optional[dict[str, Any]] = None
    mcp: bool = True
    #: user_id the /mcp tools use when a call names no scope (None: every call must name one)
    mcp_user_id: Optional[str] = DEFAULT_USER_ID
    #: the address the server binds to (loopback binds get DNS-rebinding protection on /mcp)
    host: str = DEFAULT_HOST
    #: load the embedding model at startup rather than on the first request
    warm_up: bool = True
    #: form async adds in this server (``background.workers`` threads; else ``memlane worker`` does)
    background: bool = True
    #: embed concurrent requests' texts in one model call (see memlane.embeddings.batching)
    batch_embeddings: bool = True
    #: worker threads for the blocking Memory calls (None: anyio's default, 40). Fewer threads contend
    #: less for the GIL (cached searches get faster); more let more queries share one embedding batch.
    threads: Optional[int] = None
    #: the server's own URL and a per-process token (admin of the default tenant) for the local ``memlane``
    #: command: announced in ``<home>/server.json`` once the server is ready, withdrawn when it stops
    url: Optional[str] = None
    local_token: Optional[str] = None
    #: False: no rate or concurrency limits, whatever the config's ``server.rate_limit`` says
    #: (``memlane serve --no-rate-limit``)
    rate_limit: bool = True

    def __post_init__(self) -> None:
        self.home = Path(self.home).expanduser()
        if self.max_body_bytes < 1:
            raise ValueError("max_body_bytes must be positive")
        if self.threads is not None and self.threads < 1:
            raise ValueError("threads must be positive")

    @classmethod
    def from_env(cls) -> "ServerSettings":
        """Settings for ``uvicorn --factory`` (``memlane serve --workers N`` passes them this way)."""
        env = os.environ
        config = env.get("MEMLANE_SERVER_CONFIG")
        return cls(
            home=Path(env[HOME_ENV]) if env.get(HOME_ENV) else memlane_home(),
            auth=env.get("MEMLANE_SERVER_NO_AUTH", "") not in ("1", "true", "yes"),
            max_body_bytes=int(env.get("MEMLANE_SERVER_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)),
            config=json.loads(config) if config else None,
            mcp_user_id=env.get("MEMLANE_MCP_USER_ID", DEFAULT_USER_ID) or None,
            host=env.get("MEMLANE_SERVER_HOST", DEFAULT_HOST),
            threads=int(env["MEMLANE_SERVER_THREADS"]) if env.get("MEMLANE_SERVER_THREADS") else None,
            background=env.get("MEMLANE_SERVER_NO_BACKGROUND", "") not in ("1", "true", "yes"),
            url=env.get("MEMLANE_SERVER_URL") or None,
            local_token=env.get("MEMLANE_SERVER_LOCAL_TOKEN") or None,
            rate_limit=env.get("MEMLANE_SERVER_NO_RATE_LIMIT", "") not in ("1", "true", "yes"),
        )

    def to_env(self) -> dict[str, str]:
        env = {HOME_ENV: str(self.home), "MEMLANE_SERVER_MAX_BODY_BYTES": str(self.max_body_bytes),
               "MEMLANE_SERVER_HOST": self.host}
        if not self.auth:
            env["MEMLANE_SERVER_NO_AUTH"] = "1"
        if self.config is not None:
            env["MEMLANE_SERVER_CONFIG"] = json.dumps(self.config)
        env["MEMLANE_MCP_USER_ID"] = self.mcp_user_id or ""
        if self.threads:
            env["MEMLANE_SERVER_THREADS"] = str(self.threads)
        if not self.background:
            env["MEMLANE_SERVER_NO_BACKGROUND"] = "1"
        if self.url:
            env["MEMLANE_SERVER_URL"] = self.url
        if self.local_token:
            env["MEMLANE_SERVER_LOCAL_TOKEN"] = self.local_token
        if not self.rate_limit:
            env["MEMLANE_SERVER_NO_RATE_LIMIT"] = "1"
        return env

    def announcement(self) -> Optional[local_server.ServerAddress]:
        """What ``<home>/server.json`` says about this server (None: nothing to announce)."""
        if self.url is None or not is_loopback(self.host) or (self.auth and self.local_token is None):
            return None
        return local_server.ServerAddress(url=self.url, key=self.local_token if self.auth else None, pid=os.getpid())


DESCRIPTION = """Long-term memory for AI agents, self-hosted and mem0-compatible.

Send an API key with every request: `Authorization: Bearer <key>` (or `Token <key>`, or
`X-API-Key: <key>`). Create one with `memlane keys create --tenant NAME`. Each key belongs
to a tenant; a tenant only ever sees its own memories. Errors are `{"detail": ...}`;
every response carries an `X-Request-ID`.

The official mem0 client works too: `MemoryClient(api_key=KEY, host="http://HOST:PORT")`.
MCP (streamable HTTP) is served at `/mcp`.
"""


def create_app(settings: ServerSettings | None = None, *, embedder: Embedder | None = None,
               tenants: Tenants | None = None) -> FastAPI:
    """The application. ``embedder`` is shared by every tenant (tests pass an already loaded one)."""
    settings = settings or ServerSettings()
    if tenants is None:
        check_llm(config_mod.load(settings.config))  # a wrong llm block stops the start (memlane serve says why)
        if embedder is None:
            config = config_mod.load(settings.config)
            embedder = embedder_choice.create(config, recorded_embedders(config, settings.home))
        if settings.batch_embeddings:
            embedder = BatchingEmbedder(embedder)
        tenants = Tenants(settings.home, settings.config, embedder=embedder)
    key_store = None
    if settings.auth:  # beside the stores: <home>/keys.db, or the PostgreSQL database every server shares
        placement = getattr(tenants, "placement", None)
        key_store = open_key_store(settings.config, settings.home,
                                   database=placement.home if placement is not None else None)
    keys: Any = key_store
    if keys is not None and settings.local_token:
        keys = KeysWithLocalToken(keys, settings.local_token, DEFAULT_TENANT)
    # keys read off the event loop, served from a cache while their store does not answer
    key_check = KeyCheck(keys, refresh_seconds=keys.CACHE_SECONDS) if keys is not None else None
    mcp_manager = _mcp_manager(settings, tenants) if settings.mcp else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if mcp_manager is not None:
                await stack.enter_async_context(mcp_manager.run())
            if settings.warm_up:
                await anyio.to_thread.run_sync(_warm_up, tenants)
            if settings.background and hasattr(tenants, "start_background"):
                # async adds are formed here: every tenant's, by background.workers threads
                await anyio.to_thread.run_sync(tenants.start_background)
            # the model and libraries frozen out of garbage collection, young collections rarer (server/garbage.py)
            stack.enter_context(garbage.long_lived_heap())
            if settings.threads:
                anyio.to_thread.current_default_thread_limiter().total_tokens = settings.threads
            announcement = settings.announcement()
            if announcement is not None:  # ready: the local memlane command may use this server now
                replaced = local_server.announce(settings.home, announcement)
            try:
                yield
            finally:
                if announcement is not None:
                    local_server.withdraw(settings.home, announcement, replaced)
                tenants.close()
                if key_check is not None:
                    key_check.close()
                if keys is not None:
                    keys.close()

    # Swagger UI and ReDoc from fastapi-offline's packaged copies (no CDN): /docs works offline
    app = FastAPIOffline(title="memlane", version=__version__, description=DESCRIPTION, lifespan=lifespan,
                         redirect_slashes=False, static_url=DOCS_ASSETS, responses=errors.RESPONSES,
                         dependencies=[Depends(grants.check_route)])  # what a read-only or user-limited key may do
    app.state.settings = settings
    app.state.tenants = tenants
    app.state.keys = keys
    app.state.key_store = key_store
    app.state.key_check = key_check
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(platform.router)
    for mem0_routes in (platform_batch, platform_entities, platform_profiles, platform_refusals):
        app.include_router(mem0_routes.router)
    app.include_router(context_routes.router)
    app.include_router(events_routes.router)
    app.include_router(project_routes.router)  # project settings, webhooks, feedback, exports
    documents_routes.install(app, tenants)  # collections, documents, /search/documents, /filter
    dashboard.install(app)  # the web UI at /ui and GET /scopes
    openapi.install(app)  # API keys as security schemes, links between operations
    if mcp_manager is not None:
        from mcp.server.streamable_http_manager import StreamableHTTPASGIApp

        app.router.routes.append(Route("/mcp", endpoint=StreamableHTTPASGIApp(mcp_manager), include_in_schema=False))
    # add_middleware wraps: the last added runs first
    limits = config_mod.load(settings.config).server.rate_limit
    if settings.rate_limit and limits.enabled:  # after Authenticate: it reads the request's key and tenant
        app.add_middleware(RateLimit, config=limits)
    app.add_middleware(Authenticate, keys=key_check, no_auth_tenant=None if settings.auth else DEFAULT_TENANT)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestContext)
    return app


def _warm_up(tenants: Tenants) -> None:
    try:
        tenants.embedder.embed(["warm up"], "query")
    except Exception as exc:  # a remote embedder may be down now and up later: serve anyway
        log.warning("could not warm up the embedder %s: %s", getattr(tenants.embedder, "name", "?"), exc)


def app_from_env() -> FastAPI:
    return create_app(ServerSettings.from_env())


def _mcp_manager(settings: ServerSettings, tenants: Tenants) -> Any:
    """The MCP tools behind ``/mcp``: each call acts on the tenant of the key that sent the HTTP request."""
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.server.transport_security import TransportSecuritySettings

    from memlane.mcp_server import tools
    from memlane.mcp_server.server import build_server

    def resolve(ctx: Any) -> tools.Caller:
        request = ctx.request_context.request if ctx is not None else None
        principal = request.scope.get(PRINCIPAL) if request is not None else None
        if principal is None:  # the Authenticate middleware guards /mcp; this is only a second lock
            raise ToolError("not authenticated")
        return tools.Caller(memory=limited(tenants.memory(principal.tenant), principal), admin=principal.admin,
                            default_user_id=settings.mcp_user_id, default_user_flag="memlane serve --mcp-user-id NAME")

    server = build_server(resolve)
    security = None
    if is_loopback(settings.host):  # a browser page must not reach a loopback server through DNS rebinding
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    # builds the SDK's session manager (the Starlette app it returns is not used: /mcp is mounted directly)
    server.streamable_http_app(streamable_http_path="/mcp", transport_security=security, host=settings.host,
                               max_request_body_size=settings.max_body_bytes)
    return server.session_manager
