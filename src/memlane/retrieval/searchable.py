"""What searches see of the store: every memory but those kept out of search.

A memory whose metadata says ``"searchable": false`` (``core.models.SEARCHABLE``) is stored, listed,
read and changed like any other, and is never a search result: not by vector, keyword, actor focus or
agent context. The rule is applied to what the store returns, asking for more while it removed some, so
a store without such memories pays nothing and the SQL of the searches is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import attrgetter, contains, itemgetter
from typing import Any, TypeVar

import numpy as np

from memlane.core import filters as flt
from memlane.core.models import SEARCHABLE, MemoryRecord
from memlane.core.query import Query
from memlane.store import SearchReads, Store

Hit = TypeVar("Hit", bound=tuple)
_RECORD, _METADATA = itemgetter(0), attrgetter("metadata")


def _searchable(hits: list[Hit]) -> list[Hit]:
    """The hits whose record is not kept out of search (most records' metadata does not name the rule: one pass
    in C finds that)."""
    if not any(map(contains, map(_METADATA, map(_RECORD, hits)), repeat(SEARCHABLE))):
        return hits
    return [hit for hit in hits if hit[0].searchable]


def _kept(fetch: Callable[[int], list[Hit]], limit: int) -> list[Hit]:
    """The first ``limit`` searchable hits of ``fetch(k)`` (best first), fetching more while hits were dropped."""
    k = limit
    while True:
        hits = fetch(k)
        kept = _searchable(hits)
        if len(kept) >= limit or len(hits) < k:
            return kept[:limit]
        k = 2 * k + (len(hits) - len(kept))


class SearchableStore:
    """The store's search calls, without the memories kept out of search; the rest is the store's."""

    def __init__(self, store: Store):
        self._store = store

    def search(self, query: np.ndarray, where: flt.Node, limit: int, threshold: float | None,
               reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float]]:
        return _kept(lambda k: self._store.search(query, where, k, threshold, reads), limit)

    def focused_search(self, query: np.ndarray, where: flt.Node, focus: flt.Node, limit: int,
                       reads: SearchReads | None = None
                       ) -> tuple[list[tuple[MemoryRecord, float]], list[tuple[MemoryRecord, float]] | None]:
        """``Store.focused_search``; when the rule removed a memory from a full list, ``search`` instead (which
        asks for more) and no focus (the caller searches it, through ``search``)."""
        near, focused = self._store.focused_search(query, where, focus, limit, reads)
        kept = _searchable(near)
        kept_focused = None if focused is None else _searchable(focused)
        if (len(kept) < len(near) == limit) or (focused is not None and len(kept_focused) < len(focused) == limit):
            return self.search(query, where, limit, None, reads), None
        return kept, kept_focused

    def keyword_search(self, query: str | Query, vector: np.ndarray, where: flt.Node, limit: int,
                       reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float, float]]:
        return _kept(lambda k: self._store.keyword_search(query, vector, where, k, reads), limit)

    def listed(self, where: flt.Node, limit: int) -> list[MemoryRecord]:
        """``Store.list`` (most recent first) without the memories kept out of search."""
        return [hit[0] for hit in _kept(lambda k: [(record,) for record in self._store.list(where, k)], limit)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
