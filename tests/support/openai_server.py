"""A scripted OpenAI-compatible HTTP server for tests (standard library only).

The server listens on 127.0.0.1 on a free port, in a background thread. Each
route (an exact URL path such as ``/v1/embeddings``) answers from a queue of
scripted replies first, then from its default handler; a path with neither
answers 404 in OpenAI's error shape. Every request is recorded for assertions.

    with OpenAIServer(embed=lambda texts: model.embed(texts, "document")) as server:
        server.script("/v1/chat/completions", [
            Reply.error(429, "slow down", headers={"retry-after-ms": "1"}),
            Reply(json=chat_completion("hello")),
            Reply(body="raw text", delay=5.0),
        ])
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
        ...
        assert server.requests("/v1/chat/completions")[0].json["model"] == "gpt-test"

A script item or default handler is either a ``Reply`` or a callable taking the
``Request`` and returning a ``Reply`` (to compute the answer from the request).

``/v1/embeddings`` has a default handler when ``embed`` is given: an
``EmbeddingsHandler`` that embeds the request's inputs with that function (a
real model in memlane's tests) and answers in OpenAI's response shape, in the
``encoding_format`` the client asked for. Its options produce the broken
answers a real server can give (items shuffled, dropped, or truncated).
"""

from __future__ import annotations

import base64
import json as jsonlib
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union
from urllib.parse import parse_qs, urlsplit

import numpy as np

_NO_JSON: Any = object()


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    method: str
    path: str  # without the query string
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # the parsed body, or None when it is not JSON
    received_at: float  # time.monotonic()

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)


@dataclass
class Reply:
    """One scripted answer.

    ``json`` is sent as ``application/json``; otherwise ``body`` (str or bytes)
    is sent as given (``text/plain`` unless ``headers`` names a content type).
    ``delay`` seconds pass before anything is sent. ``drop`` closes the
    connection without answering (the client sees a connection error).
    """

    status: int = 200
    json: Any = _NO_JSON
    body: str | bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False

    @classmethod
    def error(cls, status: int, message: str = "scripted error", *, type: str = "server_error",
              code: str | None = None, headers: Mapping[str, str] | None = None, delay: float = 0.0) -> "Reply":
        """An answer in OpenAI's error shape."""
        return cls(status=status, json={"error": {"message": message, "type": type, "param": None, "code": code}},
                   headers=dict(headers or {}), delay=delay)

    @classmethod
    def sse(cls, events: Iterable[Any], *, done: bool = True, delay: float = 0.0) -> "Reply":
        """A server-sent-events stream (as for ``stream=True`` chat completions), sent in one body."""
        chunks = [f"data: {e if isinstance(e, str) else jsonlib.dumps(e)}\n\n" for e in events]
        if done:
            chunks.append("data: [DONE]\n\n")
        return cls(body="".join(chunks), headers={"content-type": "text/event-stream"}, delay=delay)

    def encoded(self) -> tuple[bytes, dict[str, str]]:
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.json is not _NO_JSON:
            payload = jsonlib.dumps(self.json).encode()
            headers.setdefault("content-type", "application/json")
        else:
            raw = self.body if self.body is not None else b""
            payload = raw.encode() if isinstance(raw, str) else raw
            headers.setdefault("content-type", "text/plain; charset=utf-8")
        return payload, headers


Handler = Union[Reply, Callable[[Request], Reply]]


def chat_completion(content: str | None = "ok", *, model: str = "test-chat", tool_calls: Sequence[Mapping] | None = None,
                    finish_reason: str | None = None, prompt_tokens: int = 10, completion_tokens: int = 5) -> dict:
    """A ``/v1/chat/completions`` response body with one choice."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [dict(call) for call in tool_calls]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def _bad_request(message: str, param: str | None = None) -> Reply:
    return Reply(status=400, json={"error": {"message": message, "type": "invalid_request_error",
                                             "param": param, "code": None}})


class EmbeddingsHandler:
    """Answers ``POST /v1/embeddings`` with vectors from ``embed`` (texts -> rows).

    ``dimensions`` in the request truncates and re-normalises the vectors, as
    OpenAI's text-embedding-3 models do. For failure tests:

    * ``shuffle``: the ``data`` items come back in a (seeded, never identity) permuted order;
    * ``drop_items``: that many items are left off the end of ``data``;
    * ``truncate_to``: every vector is cut to this many numbers (a wrong dimension).
    """

    def __init__(self, embed: Callable[[list[str]], Any], *, shuffle: bool = False, drop_items: int = 0,
                 truncate_to: int | None = None, seed: int = 0):
        self.embed = embed
        self.shuffle = shuffle
        self.drop_items = drop_items
        self.truncate_to = truncate_to
        self._random = random.Random(seed)

    def __call__(self, request: Request) -> Reply:
        body = request.json
        if request.method != "POST" or not isinstance(body, dict):
            return _bad_request("expected a POST with a JSON object body")
        model, texts = body.get("model"), body.get("input")
        if not isinstance(model, str) or not model:
            return _bad_request("you must provide a model parameter", "model")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            return _bad_request("input must be a non-empty string or a non-empty list of non-empty strings", "input")
        encoding = body.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            return _bad_request(f"unknown encoding_format {encoding!r}", "encoding_format")

        vectors = np.asarray(self.embed(list(texts)), dtype=np.float32)
        if vectors.shape[0] != len(texts):
            raise AssertionError(f"the embed function returned {vectors.shape[0]} rows for {len(texts)} texts")
        dimensions = body.get("dimensions")
        if dimensions is not None:
            if not isinstance(dimensions, int) or not 1 <= dimensions <= vectors.shape[1]:
                return _bad_request(f"dimensions must be between 1 and {vectors.shape[1]}", "dimensions")
            vectors = vectors[:, :dimensions]
            vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        if self.truncate_to is not None:
            vectors = vectors[:, : self.truncate_to]

        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode() if encoding == "base64"
                 else [float(x) for x in v]}
                for i, v in enumerate(vectors)]
        if self.shuffle and len(data) > 1:
            order = list(range(len(data)))
            while order == sorted(order):
                self._random.shuffle(order)
            data = [data[i] for i in order]
        if self.drop_items:
            data = data[: max(0, len(data) - self.drop_items)]
        tokens = sum(len(t.split()) for t in texts)
        return Reply(json={"object": "list", "data": data, "model": model,
                           "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    owner: "OpenAIServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up (timeouts, dropped connections) are part of the tests


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self) -> None:
        self.close_connection = True  # one request per connection: nothing lingers at shutdown
        owner = self.server.owner
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        try:
            parsed = jsonlib.loads(body) if body else None
        except ValueError:
            parsed = None
        parts = urlsplit(self.path)
        request = Request(method=self.command, path=parts.path, query=parse_qs(parts.query),
                          headers={k.lower(): v for k, v in self.headers.items()}, body=body, json=parsed,
                          received_at=time.monotonic())
        try:
            reply = owner._reply_for(request)
        except Exception as exc:  # a broken handler is a test bug: report it loudly, as a 500
            owner.errors.append(exc)
            reply = Reply.error(500, f"test server handler failed: {exc!r}")
        if reply.delay and owner._stopping.wait(reply.delay):
            return  # shutting down: hang up
        if reply.drop:
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        payload, headers = reply.encoded()
        try:
            self.send_response(reply.status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.send_header("connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (e.g. its timeout fired)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


class OpenAIServer:
    """See the module docstring. Use as a context manager, or ``start()`` / ``stop()``."""

    def __init__(self, embed: Callable[[list[str]], Any] | None = None):
        self._lock = threading.Lock()
        self._scripts: dict[str, deque[Handler]] = {}
        self._defaults: dict[str, Handler] = {}
        self._requests: list[Request] = []
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: Exceptions raised by handlers (each also answered with a 500).
        self.errors: list[BaseException] = []
        if embed is not None:
            self.route("/v1/embeddings", EmbeddingsHandler(embed))

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> "OpenAIServer":
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = _HTTPServer(("127.0.0.1", 0), _RequestHandler)
            self._httpd.owner = self
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="openai-test-server", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._stopping.set()  # wakes delayed replies
            self._httpd.shutdown()
            self._httpd.server_close()
            assert self._thread is not None
            self._thread.join(timeout=5)
            self._httpd = self._thread = None

    def __enter__(self) -> "OpenAIServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What OpenAI clients take as ``base_url``: ``url + "/v1"``."""
        return self.url + "/v1"

    # -- behaviour ---------------------------------------------------------

    def script(self, path: str, replies: Iterable[Handler]) -> "OpenAIServer":
        """Queue replies for ``path``, answered in order before its default handler."""
        with self._lock:
            self._scripts.setdefault(path, deque()).extend(replies)
        return self

    def route(self, path: str, handler: Handler | None) -> "OpenAIServer":
        """Set (or with ``None`` remove) the answer ``path`` gives once its script is used up."""
        with self._lock:
            if handler is None:
                self._defaults.pop(path, None)
            else:
                self._defaults[path] = handler
        return self

    def pending(self, path: str | None = None) -> int:
        """How many scripted replies have not been used yet (for ``path``, or in all)."""
        with self._lock:
            if path is not None:
                return len(self._scripts.get(path, ()))
            return sum(len(q) for q in self._scripts.values())

    def _reply_for(self, request: Request) -> Reply:
        with self._lock:
            self._requests.append(request)
            queue = self._scripts.get(request.path)
            handler = queue.popleft() if queue else self._defaults.get(request.path)
        if handler is None:
            return Reply.error(404, f"no scripted reply for {request.method} {request.path}",
                               type="invalid_request_error")
        return handler(request) if callable(handler) else handler

    # -- inspection --------------------------------------------------------

    def requests(self, path: str | None = None) -> list[Request]:
        """Every request received (for ``path``, or all), oldest first."""
        with self._lock:
            return [r for r in self._requests if path is None or r.path == path]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()
