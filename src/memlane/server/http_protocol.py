"""uvicorn's HTTP/1.1 protocol (httptools) answering requests it cannot parse in JSON, as the app does.

A request line uvicorn cannot read never reaches the application: uvicorn answers it itself with a
``text/plain`` 400. The commonest case is a URL past 65,535 bytes (httptools keeps URL offsets in 16
bits). ``memlane serve`` (and the test servers) run this protocol instead, so such a request gets
``414 {"detail": ..., "field": "url"}`` and any other unreadable request ``400 {"detail": ..., "field":
"request"}``, like every other error of the API.
"""

from __future__ import annotations

import json
from typing import Any

#: the longest URL httptools parses (it keeps offsets in 16 bits); longer ones get 414
MAX_URL_BYTES = 65_535

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - without httptools uvicorn runs h11 and its own answers
    HttpToolsProtocol = None  # type: ignore[assignment,misc]


def uvicorn_options() -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config`` selecting this protocol."""
    return {"http": JsonErrorsProtocol} if HttpToolsProtocol is not None else {}


if HttpToolsProtocol is not None:

    class JsonErrorsProtocol(HttpToolsProtocol):  # type: ignore[misc,valid-type]
        def on_url(self, url: bytes) -> None:
            super().on_url(url)
            if len(self.url) > MAX_URL_BYTES:  # stop reading now; httptools reports it as a parse error
                raise ValueError("URL too long")

        def send_400_response(self, msg: str) -> None:
            url = getattr(self, "url", b"") or b""
            if len(url) > MAX_URL_BYTES:
                status, reason = 414, b"URI Too Long"
                body = {"detail": f"the URL is longer than {MAX_URL_BYTES:,} bytes, the limit (send large filters "
                                  "in a POST body)", "field": "url"}
            else:
                status, reason = 400, b"Bad Request"
                body = {"detail": f"invalid HTTP request: {msg}", "field": "request"}
            payload = json.dumps(body).encode()
            head = [b"HTTP/1.1 %d %s\r\n" % (status, reason)]
            for name, value in self.server_state.default_headers:
                head.extend([name, b": ", value, b"\r\n"])
            head.extend([b"content-type: application/json\r\n",
                         b"content-length: %d\r\n" % len(payload), b"connection: close\r\n", b"\r\n", payload])
            self.transport.write(b"".join(head))
            self.transport.close()
