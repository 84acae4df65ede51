"""What the hybrid search reads of a scope, kept between searches (SQLite) until the store is written:
the rows' vectors, their indexed terms, each query term's postings once counted, and their records.

Each hybrid search of a scope reads every admitted row's indexed terms (a small scope) or walks the
FTS5 doclists of the query's terms over the whole file (a large one), then splits each matched row
into tokens to count the query's terms, and reads the hundred candidates' records: most of what a
hybrid search costs beyond a vector search. A scope searched again before anything is written (agents
ask their conversation many questions between two turns) finds them here instead:

- the rows' FTS5 texts, and for each query term met so far its postings (rowid, tf), counted in the
  first ``nterms`` tokens of each row exactly as ``sqlite.term_hits`` counts them, so the BM25 scores
  are the same to the last bit;
- the rows' records, whole: what ranking reads of them and what an answer returns, shared by the searches
  and never changed (``Searcher.as_of`` changes copies), so no record is read or built again;
- the rows' vectors as the scope's scan read them, so a search of a kept scope reads no row at all, only
  the scope's generations (below);
- the rows of each speaker, so the actor focus is ranked from the cosines of the kept vectors.

Validity is the scope's own write generation: each memory id of the scope (user, agent, run) has a
generation raised by every change of a memory holding it, by any connection or process (triggers of
``sqlite_schema``'s migration 20), read in one statement with the store's (inside the search's read
transaction when it scans the scope). An entry is used only under the generations it was read under, so a
write to the scope drops it, and writes to other scopes leave it. A memory also leaves a scope without a
write when its expiry passes: an entry is used with no scan only until the first ``valid_to`` of its
scope's rows after it was read (``until``, worked out on its first use); after that each search scans the
scope again, and an entry whose rows the scan does not read again is dropped. A small scope's entry is
made by its first hybrid search, which reads every row's terms anyway; a large scope's by its second
since its last write (a large scope searched once after each write pays nothing extra). Records are
shared by the searches: an answer's items copy them (``MemoryRecord.to_item``, metadata included). At
most ``budget`` rows are kept, least recently used dropped first
(``vector_store.config.scope_cache_rows``; 0 keeps none).
"""

from __future__ import annotations

import sqlite3
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from memlane.core import timeutil
from memlane.core.models import MemoryRecord
from memlane.store.sqlite_keyword_stats import GENERATION_KEY

#: what ends a row in ``ScopeEntry._counting``'s string (a token holds no space; a needle holding this is not counted)
_ROW_END = "\n"
#: ``ScopeEntry.until`` before it is worked out
UNKNOWN = object()
#: large scopes keyword-searched once since their last write remembered (their second search makes their entry)
SEEN_KEPT = 8192
#: an entry forgets the postings it counted when it holds more than this many terms per row (a flood of
#: distinct query words cannot grow it without bound)
TERMS_PER_ROW = 8


class ScopeEntry:
    """One scope's rows: ``hits(terms)`` gives ``term_hits``' rows, ``records`` the rows' whole records (by
    rowid), ``rows_of(actors)`` the rows of speakers. Shared by concurrent searches: a term's postings are
    counted once and only ever added."""

    __slots__ = ("lengths", "texts", "records", "rowids", "matrix", "moment", "until", "_order", "_postings",
                 "_speakers", "_counted")

    def __init__(self, lengths: dict[int, int], texts: list[tuple[int, str]], records: dict[int, MemoryRecord],
                 rowids: np.ndarray | None = None, matrix: np.ndarray | None = None, moment: str = ""):
        """``lengths``: each admitted row's ``nterms`` by rowid, in the order the scope's scan read them;
        ``rowids`` and ``matrix``: the rows with a vector and their vectors, as the scan read them (at ``moment``
        or later)."""
        self.lengths, self.texts, self.records = lengths, texts, records
        self.rowids, self.matrix, self.moment = rowids, matrix, moment
        #: the moment the filter may admit other rows with no write (``current``), worked out on the entry's
        #: first use (``UNKNOWN`` before)
        self.until: str | None | object = UNKNOWN
        self._order = list(lengths)
        self._postings: dict[str, tuple[tuple[int, int], ...]] = {}
        self._speakers: dict[str, list[int]] | None = None
        #: the rows' counted tokens as one string, where each row starts and its rowid (``_counting``)
        self._counted: tuple[str, list[int], list[int]] | None = None

    def admits(self, rows: list[tuple]) -> bool:
        """Whether a scan of the scope (``(rowid, ...)`` rows) read the rows this entry was made of: the filter
        admits the same rows without a write unless one of them expired (``valid_to`` passed), which makes
        the entry stale."""
        return len(rows) == len(self._order) and [row[0] for row in rows] == self._order

    def current(self) -> bool:
        """Whether the scope's filter still admits exactly this entry's rows with no scan to check it (its
        signature unchanged): its vectors are kept and no row's ``valid_to`` the filter compares with the clock
        has passed since the entry was read (``until``: the earliest such moment, None for none; "" when the
        filter compares another column with the clock: always scan)."""
        until = self.until
        if self.matrix is None or until == "" or until is UNKNOWN:
            return False
        return until is None or timeutil.now_iso() < until

    def hits(self, terms: list[str]) -> list[tuple[int, int, str, int]]:
        """(rowid, length, term, tf) for each query term a row holds (``bm25.rank``'s input)."""
        lengths, found = self.lengths, []
        for term in terms:
            posting = self._postings.get(term)
            if posting is None:
                posting = self._count(term)
            found += [(rowid, lengths[rowid], term, tf) for rowid, tf in posting]
        return found

    def _count(self, term: str) -> tuple[tuple[int, int], ...]:
        """The rows holding ``term`` in their first ``nterms`` tokens, with its count (``term_hits``' rule), in the
        rows' order: the occurrences of " term " in ``_counting``'s string, each found by one C search."""
        if " " in term or _ROW_END in term:  # no token holds one: the needle could span two tokens
            posting: tuple[tuple[int, int], ...] = ()
        else:
            counted, starts, rows = self._counting()
            needle, counts = f" {term} ", {}
            at = counted.find(needle)
            while at >= 0:
                rowid = rows[bisect_right(starts, at) - 1]
                counts[rowid] = counts.get(rowid, 0) + 1
                at = counted.find(needle, at + len(needle) - 1)  # the space after one may start the next
            posting = tuple(counts.items())
        if len(self._postings) >= TERMS_PER_ROW * len(self.lengths) + 64:
            self._postings = {}
        self._postings[term] = posting
        return posting

    def _counting(self) -> tuple[str, list[int], list[int]]:
        """Every row's first ``nterms`` tokens, each row as " t1 t2 ... tn " ended by ``_ROW_END``, in one string;
        where each row starts in it; and the rows' ids: made on the first term counted."""
        if self._counted is None:
            lengths, parts, starts, rows, offset = self.lengths, [], [], [], 0
            for rowid, text in self.texts:
                n = lengths[rowid]
                part = f" {' '.join(text.split(' ', n)[:n])} {_ROW_END}"
                parts.append(part)
                starts.append(offset)
                rows.append(rowid)
                offset += len(part)
            self._counted = ("".join(parts), starts, rows)
        return self._counted

    def rows_of(self, actors: Iterable[str]) -> np.ndarray:
        """The rowids of the rows whose ``actor_id`` is one of ``actors`` (an ``actor_id IN`` filter's rows)."""
        if self._speakers is None:
            speakers: dict[str, list[int]] = {}
            for rowid, record in self.records.items():
                if record.actor_id is not None:
                    speakers.setdefault(record.actor_id, []).append(rowid)
            self._speakers = speakers
        found = [rowid for actor in set(actors) for rowid in self._speakers.get(actor, ())]
        return np.asarray(found, dtype=np.int64)


def signature_of(con: sqlite3.Connection, scope: Mapping[str, Sequence[str]]) -> tuple[str | None, tuple]:
    """The store's write generation and the ``scope``'s signature (each of its ids' generation,
    ``scope_generations``: raised by every change of a memory holding the id), in one statement of the
    caller's read transaction."""
    pairs = [(column, value) for column in sorted(scope) for value in sorted(set(scope[column]))]
    rows = con.execute(
        f"SELECT '', '', value FROM meta WHERE key = '{GENERATION_KEY}' UNION ALL SELECT col, value, generation"
        f" FROM scope_generations WHERE (col, value) IN (VALUES {', '.join('(?, ?)' for _ in pairs)})",
        [item for pair in pairs for item in pair]).fetchall()
    generation = next((value for column, _, value in rows if column == ""), None)
    return generation, tuple(sorted((column, value, int(g)) for column, value, g in rows if column != ""))


class ScopeCache:
    """``ScopeEntry`` by scope key, each valid while its scope's signature (``signature_of``) is the one it was
    read under; at most ``budget`` rows in all."""

    def __init__(self, budget: int):
        self.budget = budget
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple, tuple[tuple, ScopeEntry]] = OrderedDict()
        self._rows = 0
        self._seen: OrderedDict[tuple, tuple] = OrderedDict()
        self.built = 0  # entries built (tests check the cache is used and dropped)

    def get(self, key: tuple, signature: tuple) -> ScopeEntry | None:
        """The scope's entry read under ``signature``; None when it is not kept (or was read before a write
        to the scope, and is dropped)."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            if found[0] != signature:
                self._remove(key)
                return None
            self._entries.move_to_end(key)
            return found[1]

    def holds(self, key: tuple) -> bool:
        """Whether an entry of the scope is kept (under some signature: ``get`` tells whether it is current)."""
        return key in self._entries

    def fits(self, rows: int) -> bool:
        """Whether an entry of ``rows`` rows may be kept (the budget)."""
        return rows <= self.budget

    def wanted(self, key: tuple, signature: tuple, rows: int) -> bool:
        """Whether to make a large scope's entry now: its second keyword search under ``signature`` (the first
        is only remembered), when it ``fits``."""
        if not self.fits(rows):
            return False
        with self._lock:
            if self._seen.get(key) == signature:
                return True
            self._seen[key] = signature
            self._seen.move_to_end(key)
            while len(self._seen) > SEEN_KEPT:
                self._seen.popitem(last=False)
            return False

    def drop(self, key: tuple) -> None:
        """Forget the scope's entry (found stale)."""
        with self._lock:
            self._remove(key)

    def put(self, key: tuple, signature: tuple, entry: ScopeEntry) -> None:
        with self._lock:
            self._remove(key)
            self.built += 1
            self._entries[key] = (signature, entry)
            self._rows += len(entry.lengths)
            while self._rows > self.budget and self._entries:
                self._remove(next(iter(self._entries)))

    def _remove(self, key: tuple) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self._rows -= len(found[1].lengths)
