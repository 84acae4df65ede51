"""Webhooks: a project's subscriptions to its memory events, and what a delivery carries.

A memory event is a row of the store's history (ADD, UPDATE, MERGE, DELETE), written in the
transaction of the change. In that same transaction the store queues one delivery job
(``core/jobs.py``, kind ``WEBHOOK``) per active webhook subscribed to the event's type, so a
delivery exists exactly when its change was committed; the background workers post it
(``background/webhooks.py``), retried with backoff. docs/webhooks.md is the user's side.

A delivery is signed: ``X-Memlane-Signature: sha256=<hex>``, the HMAC-SHA256 of
``"<timestamp>.<body>"`` under the webhook's secret, with ``X-Memlane-Timestamp: <timestamp>``
(Unix seconds), so a receiver can refuse a body that was changed or replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from memlane.core.errors import InvalidInputError

#: the event types a webhook may subscribe to (mem0's names); memlane has no categories, so
#: ``memory_categorize`` is accepted (mem0's clients send it) and never fires
EVENT_TYPES = ("memory_add", "memory_update", "memory_delete", "memory_categorize")
#: a history event -> the event type it fires
FIRES = {"ADD": "memory_add", "UPDATE": "memory_update", "DELETE": "memory_delete"}

SIGNATURE = "X-Memlane-Signature"
TIMESTAMP = "X-Memlane-Timestamp"
EVENT = "X-Memlane-Event"
DELIVERY = "X-Memlane-Delivery"
WEBHOOK_ID = "X-Memlane-Webhook"

MAX_NAME_CHARS = 200
MAX_URL_CHARS = 2048


@dataclass(slots=True)
class Webhook:
    id: str
    name: str
    url: str
    event_types: list[str]
    secret: str
    is_active: bool
    created_at: str
    updated_at: str

    def to_item(self, project: str) -> dict[str, Any]:
        """The webhook as mem0's platform shows it, with its signing secret (the project's keys may read it)."""
        return {"webhook_id": self.id, "name": self.name, "url": self.url, "event_types": list(self.event_types),
                "is_active": self.is_active, "project": project, "secret": self.secret,
                "created_at": self.created_at, "updated_at": self.updated_at}


def fired(event: str, new: str | None) -> str | None:
    """The event type a history row fires: a merge updates the memory it keeps (a new text) and ends the one
    it absorbs (no new text), which fires ``memory_delete``."""
    if event == "MERGE":
        return "memory_update" if new is not None else "memory_delete"
    return FIRES.get(event)


def new_id() -> str:
    return "wh_" + uuid.uuid4().hex


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError("name must be a non-empty string", field="name")
    if len(value) > MAX_NAME_CHARS:
        raise InvalidInputError(f"name is longer than {MAX_NAME_CHARS} characters", field="name")
    return value.strip()


def event_types(value: Any) -> list[str]:
    if not isinstance(value, list) or not value:
        raise InvalidInputError(f"event_types must be a non-empty list of {', '.join(EVENT_TYPES)}",
                                field="event_types")
    unknown = [v for v in value if v not in EVENT_TYPES]
    if unknown:
        raise InvalidInputError(f"unknown event type {unknown[0]!r}; use {', '.join(EVENT_TYPES)}",
                                field="event_types")
    return list(dict.fromkeys(value))


def url_form(url: Any, *, schemes: list[str]) -> str:
    """``url`` if its form fits a webhook: an allowed scheme, a host, no credentials in it
    (``InvalidInputError``, field ``url``, else). Where its host leads is ``resolve_host``'s to say."""
    if not isinstance(url, str) or not url.strip():
        raise InvalidInputError("url must be a non-empty string", field="url")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise InvalidInputError(f"url is longer than {MAX_URL_CHARS} characters", field="url")
    parts = urlsplit(url)
    if parts.scheme not in schemes:
        raise InvalidInputError(f"url must start with {' or '.join(s + '://' for s in schemes)}; got {url!r}",
                                field="url")
    if not parts.hostname:
        raise InvalidInputError(f"url names no host: {url!r}", field="url")
    if parts.username or parts.password:
        raise InvalidInputError("url must not hold a user name or password; the deliveries are signed instead",
                                field="url")
    try:
        _ = parts.port  # urlsplit reads it when asked: out of range or not a number raises
    except ValueError as exc:
        raise InvalidInputError(f"url has an invalid port: {exc}", field="url") from None
    return url


def resolve_host(host: str, port: int, *, public_only: bool, resolve: Callable[..., Any] | None = None) -> list[str]:
    """The addresses ``host`` resolves to for TCP on ``port``, in the resolver's order (``resolve``: the
    system's ``socket.getaddrinfo``, looked up when called). With ``public_only`` every one must be public:
    ``InvalidInputError`` (field ``url``) names the first that is not (loopback, private, link-local, shared,
    reserved), as it does a host that does not resolve. A delivery connects to an address of this answer
    only, so the addresses checked are the ones connected to (background/webhooks.py)."""
    try:
        found = (resolve or socket.getaddrinfo)(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError, UnicodeError) as exc:
        raise InvalidInputError(f"the host of url {host!r} does not resolve: {exc}", field="url") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses:
        raise InvalidInputError(f"the host of url {host!r} does not resolve", field="url")
    if public_only:
        private = sorted(a for a in addresses if not ipaddress.ip_address(a.split("%")[0]).is_global)
        if private:
            raise InvalidInputError(f"url's host {host!r} resolves to a non-public address ({private[0]}); "
                                    "this server delivers webhooks to public addresses only "
                                    "(webhooks.private_networks is false)", field="url")
    return addresses


def check_url(url: Any, *, schemes: list[str], private_networks: bool,
              resolve: Callable[..., Any] | None = None) -> str:
    """``url`` if a webhook may post to it: its form fits (``url_form``); with ``private_networks`` off, its
    host resolves to public addresses only (``resolve_host``). ``InvalidInputError`` (field ``url``) else."""
    url = url_form(url, schemes=schemes)
    if not private_networks:
        parts = urlsplit(url)
        resolve_host(parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80), public_only=True,
                     resolve=resolve)
    return url


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Memlane-Signature`` value of ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify(secret: str, timestamp: str, body: bytes, signature: str, *, now: float, tolerance: float = 300) -> bool:
    """A receiver's check (docs/webhooks.md shows the same in a few lines): the signature is the body's
    under ``secret`` and the timestamp is within ``tolerance`` seconds of ``now``."""
    try:
        sent = int(timestamp)
    except (TypeError, ValueError):
        return False
    return abs(now - sent) <= tolerance and hmac.compare_digest(sign(secret, sent, body), signature)


def payload(project: str, webhook_id: str, event: str, memory_id: str, old: str | None, new: str | None,
            at: str, scope: dict[str, str]) -> dict[str, Any]:
    """What a delivery posts: mem0's ``event_details``, with the event type, the project and the scope."""
    details: dict[str, Any] = {"id": memory_id, "data": {"memory": new if new is not None else old}, "event": event}
    if old is not None and new is not None and old != new:
        details["previous_memory"] = old
    return {"event_details": details, "event_type": fired(event, new), "project_id": project, "webhook_id": webhook_id,
            "created_at": at, **scope}
