"""A webhook delivery: the background worker's turn at a ``WEBHOOK`` job (core/webhooks.py).

The store queued the job in the transaction of the memory change. A worker posts its payload, signed
with the webhook's current secret, to the webhook's current URL (checked again, against
``webhooks.private_networks``); a 2xx answer ends the job ``SUCCEEDED``. Any other answer, or no
answer, raises: the workers give the job back and try again after ``background.retry_seconds`` x the
attempt, up to ``background.max_attempts`` attempts, then it ends ``FAILED`` with the last reason.
Deliveries of one webhook go out one at a time, in the order of their events (the job's order key).
A webhook deleted or paused meanwhile ends its pending deliveries ``FAILED`` without a request.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from memlane.core import webhooks as hooks
from memlane.core.changes import ChangeSet
from memlane.core.errors import InvalidInputError, MemlaneError
from memlane.core.jobs import FAILED, SUCCEEDED, Job, JobDone

#: the ``Memory`` delivering (named, not imported: memory.py imports this package)
Facade = Any
USER_AGENT = "memlane-webhooks"


class DeliveryFailed(MemlaneError):
    """The receiver did not take the delivery (an answer other than 2xx, or none); tried again later."""


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
    try:
        url = hooks.check_url(hook.url, schemes=settings.schemes, private_networks=settings.private_networks)
    except InvalidInputError as exc:  # the configuration changed since: no request, no retry
        return _end(memory, job, worker, FAILED, error=f"not delivered: {exc}")
    body, headers = request_of(hook, job, time.time())
    try:
        answer = httpx.post(url, content=body, headers=headers, timeout=settings.timeout_seconds,
                            follow_redirects=False)
    except httpx.HTTPError as exc:
        raise DeliveryFailed(f"POST {url} failed: {type(exc).__name__}: {exc}") from exc
    if not 200 <= answer.status_code < 300:
        raise DeliveryFailed(f"POST {url} answered {answer.status_code}")
    _end(memory, job, worker, SUCCEEDED, result={"status_code": answer.status_code, "url": url})


def _end(memory: Facade, job: Job, worker: str, status: str, *, result: dict[str, Any] | None = None,
         error: str | None = None) -> None:
    memory.store.apply(ChangeSet(job_done=JobDone(id=job.id, worker=worker, attempt=job.attempts, status=status,
                                                  result=result, error=error, provisional=False)))
