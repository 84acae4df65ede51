"""Fixtures shared by the server tests (import them into a test module to use them).

``live`` is one real uvicorn server per test module, on 127.0.0.1 with a
temporary home, built with the session's already loaded embedder.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memlane.server import ServerSettings, create_app
from support.live_server import LiveServer

TIMEOUT = 120.0  # generous: the machine is shared and noisy; nothing here asserts on time


@dataclass
class Live:
    url: str
    home: Path
    app: object
    server: LiveServer

    def key(self, tenant: str, *, admin: bool = False) -> str:
        """A new key in the server's key store (``<home>/keys.db``, or its PostgreSQL database)."""
        return self.app.state.key_store.create(tenant, admin=admin)[0]

    def client(self, key: str | None = None, *, scheme: str = "Bearer") -> httpx.Client:
        headers = {}
        if key is not None:
            headers = {"X-API-Key": key} if scheme == "X-API-Key" else {"Authorization": f"{scheme} {key}"}
        return httpx.Client(base_url=self.url, headers=headers, timeout=TIMEOUT)

    def memory(self, tenant: str):
        return self.app.state.tenants.memory(tenant)


def start(home: Path, embedder, **settings) -> tuple[LiveServer, object]:
    app = create_app(ServerSettings(home=home, **settings), embedder=embedder)
    return LiveServer(app), app


@contextmanager
def serving(home: Path, embedder, **settings) -> Iterator[Live]:
    """A real server on 127.0.0.1 over ``home`` for the duration of the block."""
    server, app = start(home, embedder, **settings)
    with server:
        yield Live(url=server.url, home=home, app=app, server=server)


def mcp_client(live: Live, key: str):
    """The official MCP client on the server's ``/mcp`` endpoint, with ``key``."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
    return Client(streamable_http_client(live.url + "/mcp", http_client=http), read_timeout_seconds=TIMEOUT)


async def call_tool(client, name: str, arguments: dict):
    """A tool's structured result, or ``{"error": text}`` for a tool error."""
    result = await client.call_tool(name, arguments)
    if result.is_error:
        return {"error": " ".join(getattr(block, "text", "") for block in result.content)}
    return result.structured_content


@pytest.fixture(scope="module")
def live(tmp_path_factory, embedder):
    with serving(tmp_path_factory.mktemp("server-home"), embedder, max_body_bytes=256 * 1024,
                 mcp_user_id="default-user") as server:
        yield server
