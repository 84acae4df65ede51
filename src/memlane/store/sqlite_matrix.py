"""The embedded store's unscoped search: every vector of the file in one float32 matrix,
kept current from the ``memory_changes`` log (store/sqlite_schema.py) instead of re-read."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable

import numpy as np

from memlane.core import vectors


def _grown(rows: int) -> int:
    """Capacity for ``rows`` rows and the appends of a while (a quarter more)."""
    return rows + rows // 4 + 1024


class VectorMatrix:
    """Every vector of the store in one float32 matrix, for searches no scope index narrows.

    Kept current without re-reading the table after each write. When ``PRAGMA data_version``
    on its own read-only connection says another connection committed, it reads (in one read
    transaction) the rows above the highest rowid it has seen (rowids are never reused, see
    ``SQLiteStore._insert``) and the ``memory_changes`` log past the last entry it applied
    (vector updates and deletions, written by triggers in the writer's transaction, so other
    processes' writes are logged too). When that stretch of the log was pruned, most rows
    changed or the dimensions differ, it reads everything again. Candidates are taken
    best-first and checked against the filter in SQL, widening until ``limit`` pass.

    A memory stored without a vector yet (an empty blob: an async add's provisional memory until a
    worker embeds it) holds a row that is not alive, brought to life when its vector is written (the
    log has the update); one a compaction dropped meanwhile makes the next refresh read everything."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], dims: Callable[[], int], dtype: np.dtype):
        """``connect``: a new connection to the store's file (the matrix reads on one of its own);
        ``dims``: the store's vector dimensions when it reads; ``dtype``: how its vectors are stored."""
        self._connect = connect
        self._dims = dims
        self.dtype = dtype
        self._lock = threading.Lock()
        self.rebuilds = 0  # full reads so far (tests check that writes take the incremental path)
        self._reset()

    def clear(self) -> None:
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        self._con: sqlite3.Connection | None = None
        self._version: int | None = None
        self._seq = 0  # the last change-log entry applied
        self._top = 0  # the highest rowid read
        self._n = 0  # rows in use; the arrays below have spare capacity for appends
        self._dead = 0  # deleted rows still in the arrays (masked until the next compaction)
        self._rowids = np.empty(0, dtype=np.int64)
        self._ids: list[str] = []
        self._alive = np.empty(0, dtype=bool)
        self._matrix: np.ndarray | None = None

    def _refresh(self) -> None:
        """Bring the matrix up to the latest commit. Caller holds ``_lock``."""
        if self._con is None:
            self._con = self._connect()
        con = self._con
        con.execute("BEGIN")
        try:
            version = con.execute("PRAGMA data_version").fetchone()[0]
            if self._matrix is not None and version == self._version:
                return
            if self._matrix is None or not self._catch_up(con):
                self._rebuild(con)
            self._version = version
        finally:
            con.execute("COMMIT")

    def _rebuild(self, con: sqlite3.Connection) -> None:
        self.rebuilds += 1
        seq = con.execute("SELECT coalesce(max(seq), 0) FROM memory_changes").fetchone()[0]
        rows = con.execute("SELECT rowid, id, vector FROM memories ORDER BY rowid").fetchall()
        n, dims = len(rows), self._dims()
        capacity = _grown(n)  # room for appends: growing means copying the whole matrix
        self._rowids = np.empty(capacity, dtype=np.int64)
        self._rowids[:n] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        self._ids = [r[1] for r in rows]
        blank = bytes(dims * self.dtype.itemsize)  # the row of a memory without a vector yet
        blobs = [r[2] or blank for r in rows]
        if self.dtype == np.float32:  # one copy of the blobs, into memory numpy may write to
            spare = bytes((capacity - n) * dims * 4)
            self._matrix = np.frombuffer(bytearray().join([*blobs, spare]), dtype=np.float32).reshape(capacity, dims)
        else:
            self._matrix = np.empty((capacity, dims), dtype=np.float32)
            self._matrix[:n] = vectors.from_blobs(blobs, dims, self.dtype)
        self._alive = np.zeros(capacity, dtype=bool)
        self._alive[:n] = [bool(r[2]) for r in rows]
        self._n, self._dead, self._seq = n, n - int(self._alive[:n].sum()), seq
        self._top = max(self._top, rows[-1][0] if rows else 0)

    def _catch_up(self, con: sqlite3.Connection) -> bool:
        """Apply the writes since the last read; False when only a full read can tell."""
        first, last = con.execute("SELECT min(seq), max(seq) FROM memory_changes").fetchone()
        if last is not None and last > self._seq:
            if first > self._seq + 1:  # entries this matrix has not seen were pruned
                return False
            changed = [r[0] for r in con.execute(
                "SELECT DISTINCT memory_rowid FROM memory_changes WHERE seq > ?", (self._seq,))]
            if len(changed) * 4 > self._n:
                return False
            if not self._apply_changes(con, changed):
                return False
            self._seq = last
        new = con.execute("SELECT rowid, id, vector FROM memories WHERE rowid > ? ORDER BY rowid",
                          (self._top,)).fetchall()
        if new:
            if not self._append(new):
                return False
            self._top = new[-1][0]
        if self._dead > 64 and self._dead * 4 > self._n:
            self._compact()
        return True

    def _blob_ok(self, blob: bytes) -> bool:
        """A vector of the matrix's dimensions, or none yet (an empty blob)."""
        return self._matrix is not None and len(blob) in (0, self._matrix.shape[1] * self.dtype.itemsize)

    def _apply_changes(self, con: sqlite3.Connection, changed: list[int]) -> bool:
        rowids = self._rowids[:self._n]
        wanted = np.asarray(changed, dtype=np.int64)
        at = np.searchsorted(rowids, wanted)
        inside = at < len(rowids)
        known = inside.copy()
        known[inside] = rowids[at[inside]] == wanted[inside]
        positions = dict(zip(wanted[known].tolist(), at[known].tolist()))
        # a row read once but not held (a memory without a vector then, dropped by a compaction)
        dropped = [rowid for rowid in wanted[~known].tolist() if rowid <= self._top]
        if not positions and not dropped:
            return True
        current = dict(con.execute("SELECT rowid, vector FROM memories WHERE rowid IN (SELECT value FROM json_each(?))",
                                   (json.dumps([*positions, *dropped]),)).fetchall())
        if any(current.get(rowid) for rowid in dropped):  # it has its vector now: read everything
            return False
        for rowid, i in positions.items():
            blob = current.get(rowid)
            if not blob:  # deleted (or without a vector)
                if self._alive[i]:
                    self._alive[i] = False
                    self._dead += 1
            elif self._blob_ok(blob):
                self._matrix[i] = vectors.from_blobs([blob], self._matrix.shape[1], self.dtype)[0]
                if not self._alive[i]:  # a memory embedded after it was stored
                    self._alive[i] = True
                    self._dead -= 1
            else:
                return False
        return True

    def _append(self, rows: list[tuple]) -> bool:
        if not all(self._blob_ok(r[2]) for r in rows):
            return False
        n, k = self._n, len(rows)
        if n + k > len(self._rowids):
            self._resize(_grown(n + k))
        dims = self._matrix.shape[1]
        blank = bytes(dims * self.dtype.itemsize)
        self._rowids[n:n + k] = [r[0] for r in rows]
        self._matrix[n:n + k] = vectors.from_blobs([r[2] or blank for r in rows], dims, self.dtype)
        self._alive[n:n + k] = [bool(r[2]) for r in rows]
        self._dead += sum(1 for r in rows if not r[2])
        self._ids.extend(r[1] for r in rows)
        self._n = n + k
        return True

    def _resize(self, capacity: int) -> None:
        """New arrays (never in place: a search may still hold the old ones)."""
        n = self._n
        rowids = np.empty(capacity, dtype=np.int64)
        rowids[:n] = self._rowids[:n]
        matrix = np.empty((capacity, self._matrix.shape[1]), dtype=np.float32)
        matrix[:n] = self._matrix[:n]
        alive = np.zeros(capacity, dtype=bool)
        alive[:n] = self._alive[:n]
        self._rowids, self._matrix, self._alive, self._ids = rowids, matrix, alive, self._ids[:n]

    def _compact(self) -> None:
        """Drop the deleted rows, into new arrays."""
        keep = np.flatnonzero(self._alive[:self._n])
        n, capacity = len(keep), _grown(len(keep))
        rowids = np.empty(capacity, dtype=np.int64)
        rowids[:n] = self._rowids[keep]
        matrix = np.empty((capacity, self._matrix.shape[1]), dtype=np.float32)
        np.take(self._matrix, keep, axis=0, out=matrix[:n])
        alive = np.zeros(capacity, dtype=bool)
        alive[:n] = True
        self._ids = [self._ids[i] for i in keep.tolist()]
        self._rowids, self._matrix, self._alive = rowids, matrix, alive
        self._n, self._dead = n, 0

    def search(self, con: sqlite3.Connection, query: np.ndarray, sql: str, params: list, limit: int,
               threshold: float | None) -> list[tuple[int, float]]:
        with self._lock:  # scoring too: a refresh may rewrite rows of the matrix in place
            self._refresh()
            n, live = self._n, self._n - self._dead
            if not live:
                return []
            scores = self._matrix[:n] @ query
            if self._dead:
                scores[~self._alive[:n]] = -np.inf
            rowids, ids = self._rowids[:n], self._ids  # appends and compactions leave these entries alone
        want = min(live, max(4 * limit, 256))
        while True:
            best = vectors.top_k(scores, want, threshold)
            candidates = [int(rowids[i]) for i in best]
            passed = dict(con.execute(
                f"SELECT m.rowid, m.id FROM memories m WHERE m.rowid IN (SELECT value FROM json_each(?)) AND {sql}",
                (json.dumps(candidates), *params),
            ).fetchall())
            # the id check drops a row deleted (or changed) since the matrix was read
            hits = [(rowid, float(scores[i])) for rowid, i in zip(candidates, best) if passed.get(rowid) == ids[i]]
            if len(hits) >= limit or len(best) < want or want >= live:
                return hits[:limit]
            want = min(live, want * 4)
