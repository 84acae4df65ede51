"""Ids of stored memories and messages: time-ordered UUIDs (version 7, RFC 9562).

A v7 UUID starts with its creation time in milliseconds, so new rows land at the
end of the ``id`` indexes instead of on random pages: at 100k memories a batch
insert with random UUID4 ids dirtied almost every leaf page of those indexes
(6.4 vs 8.4 KB written per memory, ~20 % more inserts/s; benchmarks/RESULTS.md).
They are ordinary UUID strings to every caller. ``uuid6`` implements the RFC
(monotonic within a millisecond) until the standard library's ``uuid.uuid7``
(Python 3.14) is available everywhere.
"""

from __future__ import annotations

try:
    from uuid import uuid7  # type: ignore[attr-defined]  # Python >= 3.14
except ImportError:
    from uuid6 import uuid7


def new_id() -> str:
    return str(uuid7())
