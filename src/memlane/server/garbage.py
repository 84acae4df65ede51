"""The server process's garbage collector, set for a heap of long-lived objects and many requests at once.

CPython's defaults (a young collection after 700 new container objects) suit a short script. In the server,
32 searches in flight hold more than that between them, so young collections run over and over and move
what those searches hold into the older generations; that fills the count that starts a full collection,
which walks every object the process keeps: the model and libraries (frozen at start-up, so skipped) and
the scope cache's records (``store/sqlite_scope_cache.py``: about two objects per kept row), made later.

Measured (``benchmarks/bench_server.py``, 100k memories, 1,000 users, 32 clients, a 65-second run; RESULTS.md):
with the defaults, 35 full collections of about 120 ms each, 0.2 ms of a default search's 1.9 ms of server
CPU; with ``YOUNG_THRESHOLD``, one, and 0.02 ms of 1.7. A young collection then runs when 10,000 more
container objects live than at the last one: cyclic garbage waits a little longer for it (a few MB at most).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: container objects allocated (net of those freed) between two young collections in the server
YOUNG_THRESHOLD = 10_000


@contextmanager
def long_lived_heap() -> Iterator[None]:
    """While serving: what exists at start-up (the model, the libraries) frozen out of every collection, and
    young collections every ``YOUNG_THRESHOLD`` objects; afterwards, the thresholds as they were and nothing frozen."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
