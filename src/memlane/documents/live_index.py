"""The page index a ``Documents`` searches, kept in memory and in step with the store.

- loaded lazily, on the first search, from the stored float16 vectors of the tenant's pages
  encoded by the configured encoder, with each page's fast-path (MUVERA) encoding as stored at
  upsert; a page without one made with this index's parameters (written before encodings were
  stored, or under other parameters) is encoded then, and its encoding written back for the
  next process;
- kept in step with this process's writes (the pages an upsert or delete adds and removes),
  and read again when the store's write counter shows another process wrote.

Searches and writes take turns on the index (a lock): it is plain numpy arrays, not safe to
change while read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

import numpy as np

from memlane.documents.encoders import MultiVectorEncoder
from memlane.documents.late_interaction import PageIndex, from_fde, from_half, to_fde
from memlane.documents.models import PageWrite, StoredVectors
from memlane.documents.store import DocumentStore
from memlane.core.errors import StoreError

_log = logging.getLogger(__name__)


class LiveIndex:
    """The page index of one document store and encoder: the pages that encoder encoded (each collection
    has one encoder; ``Documents`` keeps an index per encoder its collections use)."""

    def __init__(self, store: DocumentStore, encoder: MultiVectorEncoder):
        self.store = store
        self.encoder = encoder
        self._index: PageIndex | None = None
        self._ids: set[str] = set()  # the page ids in the index
        self._version = -1
        self._lock = threading.RLock()
        #: computes the encodings stored with the pages at upsert (the same parameters as the index)
        self._encoding = self._new_index()

    def search(self, vectors: np.ndarray, top_k: int, allowed: set[str] | None,
               exact: bool) -> list[tuple[str, float]]:
        """(page id, MaxSim) of the best ``top_k`` pages among ``allowed`` (None: all), best first."""
        with self._lock:
            index = self._current()
            return index.search(vectors, top_k, allowed=allowed, exact=exact) if len(index) else []

    def score(self, vectors: np.ndarray, page_ids: Sequence[str]) -> dict[str, float]:
        """Exact MaxSim of the given pages that are in the index (one deleted meanwhile is not)."""
        with self._lock:
            index = self._current()
            known = [page_id for page_id in page_ids if page_id in self._ids]
            return dict(zip(known, index.score(vectors, known))) if known else {}

    def info(self) -> dict[str, int | bool]:
        with self._lock:
            loaded = self._index is not None
            return {"index_loaded": loaded, "index_pages": len(self._index) if loaded else 0,
                    "index_bytes": self._index.nbytes if loaded else 0}

    def drop(self) -> None:
        with self._lock:
            self._index = None

    def with_encodings(self, writes: list[PageWrite]) -> list[PageWrite]:
        """The pages with their fast-path encodings, computed from the float16 vectors about to be
        stored, as the index computes them at load (up to float32 rounding: BLAS sums a matrix
        product of other row counts in another order). Stored once, every process then uses the
        same encoding of a page."""
        if writes:
            dims = self.encoder.dims
            encodings = self._encoding.encode([from_half(p.vectors, dims) for p in writes])
            for page, encoding in zip(writes, encodings):
                page.fde, page.fde_config = to_fde(encoding), self._encoding.encoding_id
        return writes

    def version_before_write(self) -> int:
        with self._lock:
            return self._version if self._index is not None else -1

    def after_write(self, before: int, removed: Sequence[str], added: Sequence[PageWrite]) -> None:
        """Apply this process's write to the loaded index when it is the only write since the index
        was brought up to date; otherwise leave it to the next search to catch up by page ids."""
        with self._lock:
            if self._index is None:
                return
            version = self.store.version()
            if before == self._version and version == before + 1:
                self._index.remove(list(removed))
                self._ids.difference_update(removed)
                if added:
                    self._add_rows([StoredVectors(p.id, p.n_tokens, p.vectors, p.fde) for p in added])
                self._version = version
            else:
                self._version = -1

    def _current(self) -> PageIndex:
        """The index of the store's current pages (call with the lock held).

        Page ids never change (an upsert writes new pages), so after another process wrote, the
        index catches up by the difference of its page ids and the stored ones: one query for
        the ids, and the vectors of the new pages only."""
        version = self.store.version()
        if self._index is not None and version == self._version:
            return self._index
        fde_config = self._encoding.encoding_id
        if self._index is None:
            self._index, self._ids = self._new_index(), set()
            for batch in self.store.iter_vectors(self.encoder.name, fde_config):
                self._add_rows(batch, save=True)
        else:
            stored = set(self.store.page_ids_of_encoder(self.encoder.name))
            gone = self._ids - stored
            self._index.remove(gone)
            self._ids -= gone
            new = sorted(stored - self._ids)
            for start in range(0, len(new), 500):
                self._add_rows(self.store.vectors(new[start:start + 500], fde_config), save=True)
        self._version = version
        return self._index

    def _new_index(self) -> PageIndex:
        """An empty page index; the one place its fast-path parameters are chosen, so the encodings
        stored at upsert and the index that reads them back agree."""
        return PageIndex(self.encoder.dims)

    def _add_rows(self, rows: Sequence[StoredVectors], *, save: bool = False) -> None:
        """Add stored pages to the index with their stored encodings; pages without a usable one are
        encoded here, and (``save``) their encodings written back to the store."""
        if not rows:
            return
        index = self._index
        assert index is not None
        dims, size = self.encoder.dims, self._encoding.encoding_size
        pages = [from_half(row.vectors, dims) for row in rows]
        encodings = np.empty((len(rows), size), dtype=np.float32)
        missing = []
        for n, row in enumerate(rows):
            if row.fde is not None and len(row.fde) == size * 4:
                encodings[n] = from_fde(row.fde)
            else:
                missing.append(n)
        if missing:
            encodings[missing] = index.encode([pages[n] for n in missing])
            if save:
                self._save_encodings([(rows[n].id, to_fde(encodings[n])) for n in missing])
        index.add([row.id for row in rows], pages, encodings=encodings)
        self._ids.update(row.id for row in rows)

    def _save_encodings(self, encodings: list[tuple[str, bytes]]) -> None:
        """Write encodings computed at load back to the store. Best effort: they are a cache of what
        the pages' vectors determine, so a store that refuses the write (a read-only file, a lock
        held too long) costs the next process the same encoding work, nothing else."""
        try:
            self.store.save_encodings(encodings, self._encoding.encoding_id)
        except StoreError as exc:
            _log.warning("could not store the fast-path encodings of %d pages (%s); they are computed "
                         "again when the next process loads its page index", len(encodings), exc)
