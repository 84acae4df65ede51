"""BM25's scope statistics on SQLite (N memories a filter admits, their mean length), cached.

Counting them reads every row of the scope (the table holds the vectors, so a scan of a large
scope is slow: ~30 ms for 10,000 memories, ~150 ms for 100,000), while the search's own match
reads only the rows holding a query term. A filter on the scope columns and validity alone is
counted from a narrow covering index instead when no scope narrows it (an admin's search of
everyone) or its scope is a large share of the store (a busy agent). A scope
searched again before anything was written
reuses its figures. "Anything written" is the store's write generation (``meta.generation``,
raised by every write transaction of any connection or process, ``SQLiteStore._write``), read
inside the search's own read transaction, so a cached figure is always that of the snapshot
the search sees.

A hybrid search needs no count at all when its scoped vector search has just scanned the same
filter's rows (``ScopeScan``): their number and lengths are the figures, for the same generation.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from memlane.core.filters import And, Compare, Field, Node, Not, Or

GENERATION_KEY = "generation"
#: the columns of the ``memories_lengths`` index (sqlite_schema.py), besides nterms
INDEXED_COLUMNS = frozenset({"valid_to", "user_id", "agent_id", "run_id"})
#: the statement that raises the generation; runs in every write transaction
BUMP = (f"INSERT INTO meta(key, value) VALUES ('{GENERATION_KEY}', '1')"
        " ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")


def current_generation(con: sqlite3.Connection) -> str | None:
    """The store's write generation as the connection's transaction sees it."""
    row = con.execute("SELECT value FROM meta WHERE key = ?", (GENERATION_KEY,)).fetchone()
    return row[0] if row else None


class ScopeScan:
    """What a scoped vector search read of every row its filter admits (``(rowid, vector, nterms, ...)``), kept
    for the keyword search of the same search and filter (``SearchReads.scans``): the admitted rows and their
    lengths (so N and avgdl, and no join to filter the keyword matches), and the cosines of those with a
    vector to ``vector``. Valid only in a snapshot of the same write ``generation``."""

    __slots__ = ("generation", "rows", "vector", "rowids", "scores", "matrix", "moment", "kept", "signature",
                 "_lengths", "_cosines")

    def __init__(self, generation: str | None, rows: Sequence[tuple], vector: Any, kept: Any = None,
                 signature: tuple = (), moment: str = ""):
        self.generation, self.rows, self.vector = generation, rows, vector
        self.rowids: Any = None  # the rows with a vector, their vectors and cosines (numpy), set by the vector search
        self.matrix: Any = None
        self.scores: Any = None
        #: a moment no later than the scan's reading of the clock (``ml_now()``)
        self.moment = moment
        #: what is kept of the scope between searches, when it is (``sqlite_scope_cache.ScopeEntry``)
        self.kept = kept
        #: the scope's own write generations when the scan read it (``sqlite_scope_cache.signature_of``)
        self.signature = signature
        self._lengths: dict[int, int] | None = None if kept is None else kept.lengths
        self._cosines: dict[int, float] | None = None

    @staticmethod
    def key(sql: str, params: Sequence[Any]) -> tuple | None:
        """The ``SearchReads.scans`` key of a filter compiled to ``sql`` and ``params`` (None: unhashable)."""
        key = ("scope", sql, *params)
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def lengths(self) -> dict[int, int]:
        """nterms of every admitted row, by rowid."""
        if self._lengths is None:
            self._lengths = {row[0]: row[2] for row in self.rows}
        return self._lengths

    def stats(self) -> tuple[int, float]:
        """N and avgdl of the admitted rows (``ScopeStats.get``'s figures for the same filter)."""
        lengths = self.lengths()
        return len(lengths), (sum(lengths.values()) / len(lengths) if lengths else 0.0)

    def cosines(self, vector: Any) -> dict[int, float]:
        """The cosines to ``vector`` of the admitted rows with a vector; empty for another vector."""
        if vector is not self.vector or self.rowids is None:
            return {}
        if self._cosines is None:
            self._cosines = dict(zip(self.rowids.tolist(), self.scores.tolist()))
        return self._cosines


class ScopeStats:
    """(N, avgdl) per filter, for the current write generation; at most ``size`` filters."""

    def __init__(self, size: int = 256):
        self.size = size
        self._lock = threading.Lock()
        self._generation: str | None = None
        self._entries: OrderedDict[tuple, tuple[int, float]] = OrderedDict()
        self.computed = 0  # statistics read from the table (tests check the cache is used and dropped)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._generation = None

    def get(self, con: sqlite3.Connection, sql: str, params: Sequence[Any], *,
            covering: Callable[[], bool] = lambda: False) -> tuple[int, float]:
        """N and avgdl of the memories ``m`` matching ``sql``; call inside the search's read transaction.

        ``covering()``, asked only when the figures are not cached: read them from the
        ``memories_lengths`` index (a scan of it reads a few MB, not every vector)."""
        generation = current_generation(con)
        key = (sql, *params)
        try:
            hash(key)
        except TypeError:  # an unhashable parameter: count without the cache
            key = None
        with self._lock:
            if generation != self._generation:
                self._entries.clear()
                self._generation = generation
            elif key is not None and key in self._entries and generation is not None:
                self._entries.move_to_end(key)
                return self._entries[key]
        hint = " INDEXED BY memories_lengths" if covering() else ""
        n, avgdl = con.execute(f"SELECT count(*), coalesce(avg(m.nterms), 0) FROM memories m{hint} WHERE {sql}",
                               params).fetchone()
        value = (int(n), float(avgdl))
        with self._lock:
            self.computed += 1
            if key is not None and generation is not None and generation == self._generation:
                self._entries[key] = value
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return value


def fields_of(node: Node) -> Iterator[Field]:
    """Every field a filter names."""
    if isinstance(node, Compare):
        yield node.field
    elif isinstance(node, (And, Or)):
        for item in node.items:
            yield from fields_of(item)
    elif isinstance(node, Not):
        yield from fields_of(node.item)


def covered(where: Node) -> bool:
    """True when ``where`` names only columns of the ``memories_lengths`` index."""
    return all(f.column in INDEXED_COLUMNS and not f.path for f in fields_of(where))


#: a scope holding more than this share of the rows is counted from the covering index: measured at
#: 100k memories, scanning the index costs ~0.05 us per memory of the store, reading a scope's rows
#: (vectors and all) through its scope index ~2 us per row of the scope (5 vs 20 ms for an agent
#: with 10 % of the rows), so the scan pays from ~2.5 %
LARGE_SCOPE_SHARE = 0.025


def use_lengths_index(con: sqlite3.Connection, where: Node, scope_sql: str | None, scope_params: Sequence[Any]) -> bool:
    """Whether to count N and avgdl of ``where`` from the ``memories_lengths`` index: it names only
    the index's columns, and no scope narrows it (``scope_sql`` None) or its scope holds more than
    ``LARGE_SCOPE_SHARE`` of the rows (counted from the scope's own index, which is cheap)."""
    if not covered(where):
        return False
    if scope_sql is None:
        return True
    size = con.execute(f"SELECT count(*) FROM memories m WHERE {scope_sql}", scope_params).fetchone()[0]
    top = con.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0  # rowids are never reused
    return size > LARGE_SCOPE_SHARE * top
