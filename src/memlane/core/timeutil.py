"""Timestamps: stored and compared as UTC ISO-8601 strings with microseconds.

One fixed format means lexicographic order is chronological order, so SQL can
compare and index timestamps as plain text on every backend.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def canonical(value: str | datetime | date) -> str:
    """Return the stored form of a timestamp given as ISO text, datetime or date.

    Naive values are taken as UTC. Raises ``ValueError`` for text that is not ISO-8601.
    """
    if isinstance(value, str):
        value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime.combine(value, time())
    else:
        raise TypeError(f"expected an ISO-8601 string, datetime or date, got {type(value).__name__}")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def seconds_between(start: str, end: str) -> float:
    """Seconds from one stored timestamp to another."""
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def shift(moment: str, seconds: float) -> str:
    """A stored timestamp moved by ``seconds`` (negative: earlier), in the stored form."""
    return (datetime.fromisoformat(moment) + timedelta(seconds=seconds)).isoformat(timespec="microseconds")
