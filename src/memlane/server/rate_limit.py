"""Limits per API key and per tenant (``server.rate_limit`` in the config; docs/rest.md, Limits).

``RateLimit`` runs after ``Authenticate`` (it reads the request's ``Principal``):

* a token bucket per API key and one per tenant: ``rate`` requests a second, ``burst`` at once. A
  request finding either empty is answered **429** with ``Retry-After`` (whole seconds until both have
  a token again) and a JSON body naming the limit (``per_key``, ``per_tenant``) and the request id;
* a cap on the requests of one tenant being answered at once (``concurrency_per_tenant``). The next
  ones wait, in order, on the event loop (not in the thread pool, so not ahead of other tenants'
  requests) for one of their tenant's turns; past ``queue_per_tenant`` waiting, 429 (``concurrency``).
  A turn is given back however the request ends: answered, failed, cancelled, its stream closed.

Public paths (``/health``, the API docs, the dashboard's page and assets) carry no principal and are
never limited. The MCP endpoint's long-lived ``GET /mcp`` event stream counts against the buckets but
holds no turn. Counters live in the process: N workers allow N times the limits.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from memlane.core.config import BucketConfig, RateLimitConfig
from memlane.hosting.keys import Principal
from memlane.server.middleware import PRINCIPAL, REQUEST_ID, HttpMiddleware, send_json

#: a bucket map holding more than this drops the buckets that have filled up again (they equal new ones)
_PRUNE_AT = 10_000


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` held; a request takes one."""

    __slots__ = ("rate", "burst", "tokens", "at")

    def __init__(self, spec: BucketConfig, now: float):
        self.rate = spec.rate
        self.burst = spec.burst
        self.tokens = float(spec.burst)
        self.at = now

    def wait(self, now: float) -> float:
        """Seconds until a token is here (0: one is); refills up to ``now`` first."""
        self.tokens = min(self.burst, self.tokens + max(0.0, now - self.at) * self.rate)
        self.at = max(self.at, now)
        return 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.rate

    def take(self) -> None:
        self.tokens -= 1

    def full(self, now: float) -> bool:
        return self.tokens + max(0.0, now - self.at) * self.rate >= self.burst


class Buckets:
    """One bucket per name, made full on first use."""

    def __init__(self, spec: BucketConfig):
        self.spec = spec
        self.buckets: dict[str, TokenBucket] = {}

    def get(self, name: str, now: float) -> TokenBucket:
        bucket = self.buckets.get(name)
        if bucket is None:
            if len(self.buckets) >= _PRUNE_AT:
                self.buckets = {k: b for k, b in self.buckets.items() if not b.full(now)}
            bucket = self.buckets[name] = TokenBucket(self.spec, now)
        return bucket


@dataclass(frozen=True)
class Refusal:
    limit: str  # per_key, per_tenant, concurrency
    retry_after: float  # seconds
    detail: str

    @property
    def retry_after_header(self) -> str:
        """``Retry-After`` in whole seconds (HTTP's delay-seconds), never 0."""
        return str(max(1, math.ceil(self.retry_after - 1e-9)))


class Limiter:
    """The buckets and turns of one process, by key and tenant; ``clock`` is monotonic seconds."""

    def __init__(self, config: RateLimitConfig, clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.clock = clock
        self.per_key = Buckets(config.per_key) if config.per_key else None
        self.per_tenant = Buckets(config.per_tenant) if config.per_tenant else None
        self.turns: dict[str, anyio.Semaphore] = {}

    def admit(self, principal: Principal) -> Optional[Refusal]:
        """Take a token from the key's and the tenant's bucket, or say which is empty (taking none)."""
        now = self.clock()
        waits = []
        if self.per_key is not None:
            key = principal.key_id or f"tenant:{principal.tenant}"
            waits.append(("per_key", self.per_key.get(key, now), f"API key {key}"))
        if self.per_tenant is not None:
            waits.append(("per_tenant", self.per_tenant.get(principal.tenant, now), f"tenant {principal.tenant!r}"))
        worst = max(((bucket.wait(now), limit, bucket, whose) for limit, bucket, whose in waits),
                    key=lambda entry: entry[0], default=None)
        if worst is not None and worst[0] > 0:
            wait, limit, bucket, whose = worst
            return Refusal(limit, wait, f"rate limit ({limit}) of {whose} exceeded: {bucket.rate:g} requests/s, "
                                        f"bursts of {bucket.burst}; retry in {wait:.2f} s")
        for _, bucket, _ in waits:
            bucket.take()
        return None

    def turn(self, tenant: str) -> Optional[anyio.Semaphore]:
        """The tenant's turns (None: no cap)."""
        cap = self.config.concurrency_per_tenant
        if cap is None:
            return None
        turns = self.turns.get(tenant)
        if turns is None:
            turns = self.turns[tenant] = anyio.Semaphore(cap, fast_acquire=True)
        return turns

    def queue_full(self, turns: anyio.Semaphore, tenant: str) -> Optional[Refusal]:
        if turns.value > 0 or turns.statistics().tasks_waiting < self.config.queue_per_tenant:
            return None
        return Refusal("concurrency", 1.0,
                       f"too many requests of tenant {tenant!r} at once: {self.config.concurrency_per_tenant} "
                       f"answered and {self.config.queue_per_tenant} waiting; retry in 1 s")


class RateLimit(HttpMiddleware):
    def __init__(self, app: ASGIApp, config: RateLimitConfig, clock: Callable[[], float] = time.monotonic):
        super().__init__(app)
        self.limiter = Limiter(config, clock)

    def passes(self, scope: Scope) -> bool:
        return scope.get(PRINCIPAL) is None  # public paths: Authenticate let them through without one

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal: Principal = scope[PRINCIPAL]
        turns = None if _event_stream(scope) else self.limiter.turn(principal.tenant)
        refusal = (self.limiter.queue_full(turns, principal.tenant) if turns is not None else None) \
            or self.limiter.admit(principal)
        if refusal is not None:
            await send_json(send, 429, {"detail": refusal.detail, "limit": refusal.limit,
                                        "retry_after": round(refusal.retry_after, 3),
                                        "request_id": scope.get(REQUEST_ID)},
                            {"retry-after": refusal.retry_after_header})
            return
        if turns is None:
            await self.app(scope, receive, send)
            return
        async with turns:  # given back on return, error and cancellation alike
            await self.app(scope, receive, send)


def _event_stream(scope: Scope) -> bool:
    """MCP's ``GET /mcp``: a server-to-client event stream open as long as the session."""
    return scope["method"] == "GET" and scope["path"] == "/mcp"
