"""A real uvicorn server on 127.0.0.1 (free port) in a background thread, for the server tests.

    with LiveServer(create_app(settings, embedder=embedder)) as server:
        httpx.get(server.url + "/health")
"""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

from memlane.server.http_protocol import uvicorn_options


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LiveServer:
    def __init__(self, app, *, startup_timeout: float = 60.0):
        self.app = app
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=5, **uvicorn_options())
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name=f"uvicorn-{self.port}", daemon=True)
        self.startup_timeout = startup_timeout

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + self.startup_timeout
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("uvicorn exited during startup")
            if time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start in time")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc_info) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
