"""What a log line written below the server needs to say which request it belongs to.

The server sets ``request_id`` for each request (``server.middleware.RequestContext``); the
blocking work of a request runs in worker threads that inherit it (anyio copies the context), so a
degraded search stage can name its request without the pipeline knowing about HTTP.
"""

from __future__ import annotations

from contextvars import ContextVar

#: the id of the request being served ("-" outside a request)
request_id: ContextVar[str] = ContextVar("memlane_request_id", default="-")


def one_line(exc: BaseException) -> str:
    """``ErrorClass: message`` on one line (a provider's message may span several)."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"
