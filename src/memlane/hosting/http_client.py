"""A JSON-over-HTTP call with the standard library (``http.client``): how the ``memlane`` command talks to a
running server. httpx would cost the command more time to import than the server takes to answer."""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit


class Answer:
    def __init__(self, status: int, body: bytes, headers: Mapping[str, str] | None = None):
        self.status_code = status
        self.content = body
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}  # names lower-cased

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


def request(url: str, method: str, path: str, *, params: Mapping[str, Any] | None = None,
            body: Any = None, headers: Mapping[str, str] | None = None, connect_timeout: float = 5.0,
            read_timeout: float = 600.0) -> Answer:
    """``method`` on ``url`` + ``path`` (query ``params``, a JSON ``body``); an ``OSError`` (or
    ``http.client.HTTPException``) when the server cannot be reached or breaks off."""
    parts = urlsplit(url)
    connection_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_type(parts.hostname or "127.0.0.1", parts.port, timeout=connect_timeout)
    target = parts.path.rstrip("/") + path + (f"?{urlencode(params)}" if params else "")
    sent = {"Accept": "application/json", **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        sent["Content-Type"] = "application/json"
    try:
        connection.connect()
        connection.sock.settimeout(read_timeout)  # formation with an LLM may take minutes
        connection.request(method, target, body=data, headers=sent)
        response = connection.getresponse()
        return Answer(response.status, response.read(), dict(response.getheaders()))
    finally:
        connection.close()
