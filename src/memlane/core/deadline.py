"""One deadline per provider call, retries included.

A provider call (a chat completion, an embedding request) may be retried after
a timeout, a dropped connection, 429 or 5xx. Each attempt gets only the time
that is left, and no retry starts that could not finish in time, so a hung
endpoint (one that accepts and never answers) holds the caller for at most the
deadline, however many retries are allowed.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")

#: the first pause between attempts; it doubles each time, up to ``MAX_BACKOFF``
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 8.0


class DeadlineExceeded(Exception):
    """No time was left for another attempt (raised only when the last attempt raised nothing to re-raise)."""


def backoff(attempt: int) -> float:
    """The pause before retry ``attempt`` (0-based): exponential with jitter, capped."""
    return min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** attempt) * random.uniform(0.75, 1.0)


def call_within(attempt: Callable[[float], T], *, seconds: float, retries: int,
                retry_after: Callable[[Exception], float | None]) -> T:
    """Run ``attempt(time_left)`` until it returns, retrying at most ``retries`` times.

    ``retry_after(exc)`` says whether a failure is worth another attempt: ``None`` means no (the
    exception propagates at once); a number is the pause the endpoint asked for (``Retry-After``),
    or ``0`` for the default backoff. When the pause would run past the deadline, the failure
    propagates instead: the caller never waits longer than ``seconds`` in all.
    """
    end = time.monotonic() + seconds
    done = 0
    while True:
        left = end - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(f"no time left within the {seconds:g} s deadline")
        try:
            return attempt(left)
        except Exception as exc:
            asked = retry_after(exc)
            if asked is None or done >= retries:
                raise
            pause = asked if asked > 0 else backoff(done)
            if time.monotonic() + pause >= end:
                raise
            time.sleep(pause)
            done += 1


def retry_after_status(status: int, headers: Mapping[str, Any]) -> float | None:
    """Whether an HTTP answer is worth another attempt (408, 409, 429, 5xx: the ``openai`` SDK's own rule)
    and the pause the endpoint asked for; ``None`` for any other status (the caller's fault)."""
    if status not in (408, 409, 429) and status < 500:
        return None
    return retry_after_header(headers)


def retry_after_header(headers: Mapping[str, Any]) -> float:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (a number of seconds); 0 when absent or unreadable."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(headers.get(name))
        except (TypeError, ValueError):
            continue
        if value >= 0:
            return value / scale
    return 0.0

