"""A webhook delivery: the background worker's turn at a ``WEBHOOK`` job (core/webhooks.py).

The store queued the job in the transaction of the memory change. A worker posts its payload, signed
with the webhook's current secret, to the webhook's current URL (its form checked again); a 2xx answer
ends the job ``SUCCEEDED``. Any other answer, or no answer, raises: the workers give the job back and
try again after ``background.retry_seconds`` x the attempt, up to ``background.max_attempts`` attempts,
then it ends ``FAILED`` with the last reason. Deliveries of one webhook go out one at a time, in the
order of their events (the job's order key). A webhook deleted or paused meanwhile ends its pending
deliveries ``FAILED`` without a request.

Where a delivery connects is decided once, where the connection is made (``CheckedConnections``, the
network backend of httpcore's connection pool): the URL's host is looked up, with
``webhooks.private_networks`` off every address of the answer is checked (core/webhooks.resolve_host),
and the connection goes to an address of that answer, never to a second lookup's. A DNS answer that
changes after a check (rebinding) cannot lead a delivery to a private address; one refused ends the job
``FAILED`` without a request. The request still names the URL's host (the Host header, TLS's server name
and its certificate check). Deliveries connect directly: proxy environment variables are not used (a
proxy would look the host up itself).
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from typing import Any

import httpcore
import httpx

from memlane.core import webhooks as hooks
from memlane.core.changes import ChangeSet
from memlane.core.errors import InvalidInputError, MemlaneError
from memlane.core.jobs import FAILED, SUCCEEDED, Job, JobDone

#: the ``Memory`` delivering (named, not imported: memory.py imports this package)
Facade = Any
USER_AGENT = "memlane-webhooks"


#: httpcore's failures of a request that may go through another time (no connection, no answer, a broken one)
_NO_ANSWER = (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError, httpcore.ProxyError,
              httpcore.UnsupportedProtocol)


class DeliveryFailed(MemlaneError):
    """The receiver did not take the delivery (an answer other than 2xx, or none); tried again later."""


class CheckedConnections(httpcore.NetworkBackend):
    """Connections to a host's addresses as one lookup answers them, each checked first when
    ``private_networks`` is off (``InvalidInputError``: no connection is made); tried in order."""

    def __init__(self, private_networks: bool):
        self.public_only = not private_networks
        self.tcp = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        failed: Exception | None = None
        for address in hooks.resolve_host(host, port, public_only=self.public_only):
            try:
                return self.tcp.connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                            socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failed = exc
        assert failed is not None  # resolve_host answers at least one address
        raise failed

    def sleep(self, seconds: float) -> None:
        self.tcp.sleep(seconds)


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's TLS context (certifi's roots, ``SSL_CERT_FILE``): it checks the certificate against the URL's host."""
    return httpx.create_ssl_context()


def post(url: str, body: bytes, headers: dict[str, str], *, private_networks: bool, timeout: float) -> int:
    """POST ``body`` to ``url`` through ``CheckedConnections``, no redirect followed: the answer's status.
    ``InvalidInputError`` when the host's addresses are refused, an httpcore error when no answer came."""
    try:
        target = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise InvalidInputError(f"url is not a valid URL: {exc}", field="url") from None
    with httpcore.ConnectionPool(ssl_context=_tls(), network_backend=CheckedConnections(private_networks)) as pool:
        answer = pool.request("POST", httpcore.URL(scheme=target.raw_scheme, host=target.raw_host, port=target.port,
                                                   target=target.raw_path),
                              headers={"Host": target.netloc.decode("ascii"), **headers}, content=body,
                              extensions={"timeout": dict.fromkeys(("connect", "read", "write", "pool"), timeout)})
    return answer.status


def request_of(hook: hooks.Webhook, job: Job, now: float) -> tuple[bytes, dict[str, str]]:
    """The body and headers of a delivery sent at ``now`` (Unix seconds)."""
    body = json.dumps({**job.request["payload"], "delivery_id": job.id}, ensure_ascii=False,
                      separators=(",", ":")).encode()
    stamp = int(now)
    return body, {"Content-Type": "application/json", "User-Agent": USER_AGENT,
                  hooks.SIGNATURE: hooks.sign(hook.secret, stamp, body), hooks.TIMESTAMP: str(stamp),
                  hooks.EVENT: job.request["payload"]["event_type"], hooks.DELIVERY: job.id, hooks.WEBHOOK_ID: hook.id}


def deliver(memory: Facade, job: Job, worker: str) -> None:
    hook = memory.store.webhook(job.request["webhook_id"])
    if hook is None or not hook.is_active:
        return _end(memory, job, worker, FAILED, error="the webhook was deleted or paused before this delivery")
    settings = memory.config.webhooks
    try:  # the configuration (or the host's DNS answer) changed since: no request, no retry
        url = hooks.url_form(hook.url, schemes=settings.schemes)
        body, headers = request_of(hook, job, time.time())
        status = post(url, body, headers, private_networks=settings.private_networks,
                      timeout=settings.timeout_seconds)
    except InvalidInputError as exc:
        return _end(memory, job, worker, FAILED, error=f"not delivered: {exc}")
    except _NO_ANSWER as exc:
        raise DeliveryFailed(f"POST {url} failed: {type(exc).__name__}: {exc}") from exc
    if not 200 <= status < 300:
        raise DeliveryFailed(f"POST {url} answered {status}")
    _end(memory, job, worker, SUCCEEDED, result={"status_code": status, "url": url})


def _end(memory: Facade, job: Job, worker: str, status: str, *, result: dict[str, Any] | None = None,
         error: str | None = None) -> None:
    memory.store.apply(ChangeSet(job_done=JobDone(id=job.id, worker=worker, attempt=job.attempts, status=status,
                                                  result=result, error=error, provisional=False)))
