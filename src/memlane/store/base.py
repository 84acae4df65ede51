"""The store seam: what ``Memory`` needs from a backend (SQLite now, PostgreSQL next).

Writes go through ``apply(ChangeSet)``: one atomic transaction that also writes
the history events, so history can never disagree with the memories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from memlane.core.filters import Node
from memlane.core.graph_models import Entity, GraphChanges, Relation
from memlane.core.models import HistoryRecord, MemoryRecord, MessageRecord
from memlane.core.changes import AddRecord, ChangeSet, Delete, Invalidate, Update
from memlane.core.query import Query
from memlane.core.project import ExportRecord, FeedbackRecord
from memlane.core.webhooks import Webhook
from memlane.store.scope_counts import ScopeCount

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StoreInfo:
    location: str
    embedder: str | None
    dims: int | None
    memories: int
    history_events: int
    #: what an acknowledged write survives: the setting in force (docs/storage.md, Durability)
    durability: str = ""


class ReembedItem(NamedTuple):
    """What ``Store.reembed`` hands its embed function for one memory."""

    text: str
    metadata: dict[str, Any]
    actor_id: str | None
    context: str | None = None


class SearchReads:
    """The records one search has read, kept for its later stages: the vector candidates, the actor
    focus's and the keyword matches overlap (a LoCoMo conversation: 300 candidates, 170 memories), and
    each memory's record is read once. Keyed by the store's own row key (SQLite's rowid, PostgreSQL's
    seq). ``scans``: what a store's earlier statements of the search learnt that its later ones reuse, under
    keys of its own (SQLite: the rows a scope admits, read by the vector search, give the keyword search
    its statistics and cosines).

    A store may read the candidates' records **in part**: what ranking reads of them (id, ``created_at``,
    the scope ids, ``actor_id``, ``context``, ``metadata``; the text and the rest left empty), since most
    candidates are dropped. It names them in ``partial`` (memory id -> its key) and sets ``read_whole``
    (``read_whole(reads, keys)`` -> whole records: given the reads, so that it need not hold them, which would make
    every search's reads a reference cycle left to the garbage collector); ``whole`` gives the records a search
    returns or reads further."""

    __slots__ = ("records", "scans", "partial", "read_whole")

    def __init__(self) -> None:
        self.records: dict[Any, MemoryRecord] = {}
        self.scans: dict[Any, Any] = {}
        self.partial: dict[str, Any] = {}
        self.read_whole: Callable[[SearchReads, list[Any]], dict[Any, MemoryRecord]] | None = None

    def whole(self, records: Sequence[MemoryRecord]) -> dict[str, MemoryRecord]:
        """``records`` whole, by memory id: those read in part read again (one read for all); one deleted
        since is left out."""
        whole = {r.id: r for r in records if r.id not in self.partial}
        keys = [self.partial[r.id] for r in records if r.id in self.partial]
        if keys and self.read_whole is not None:
            for key, record in self.read_whole(self, keys).items():
                self.records[key] = whole[record.id] = record
                del self.partial[record.id]
        return whole

    def of(self, keys: Sequence[Any], read: Callable[[list[Any]], dict[Any, MemoryRecord]]) -> dict[Any, MemoryRecord]:
        """The records read so far, with those of ``keys`` not yet read added by ``read(missing keys)``
        (a store's own record read: those that exist). A superset of ``keys``' records."""
        missing = [key for key in keys if key not in self.records]
        if missing:
            self.records.update(read(missing))
        return self.records


class Store(Protocol):
    def bind_embedder(self, name: str, dims: int) -> None:
        """Record the embedder filling the store; raise ``EmbedderMismatchError`` if another one did."""

    def bound_embedder(self) -> tuple[str | None, int | None]:
        """The recorded embedder's name and dimensions (None before one is bound)."""

    def apply(self, changes: ChangeSet) -> None:
        """Write atomically; ``MemoryNotFoundError`` (and nothing written) if an update or delete names no memory."""

    def get(self, memory_id: str) -> MemoryRecord | None: ...

    def list(self, where: Node, limit: int, offset: int = 0) -> list[MemoryRecord]:
        """Matching memories, newest first, skipping the ``offset`` newest."""

    def with_vectors(self, where: Node) -> tuple[list[MemoryRecord], np.ndarray]:
        """Every matching memory that has a vector, oldest first, and their vectors as one (memories × dims)
        float32 matrix."""

    def search(self, query: np.ndarray, where: Node, limit: int, threshold: float | None,
               reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float]]:
        """Matching memories by cosine similarity to the unit vector ``query``, best first (``reads``: the
        records this search has read already, and where to keep those it reads; with it, records may be
        read in part: ``SearchReads.whole``). A memory without a vector
        yet (an async add's provisional memory before a worker embeds it) is never among them."""

    def focused_search(self, query: np.ndarray, where: Node, focus: Node, limit: int, reads: SearchReads | None = None
                       ) -> tuple[list[tuple[MemoryRecord, float]], list[tuple[MemoryRecord, float]] | None]:
        """``search(query, where, limit, None, reads)``, and the nearest ``limit`` memories of those ``focus`` admits
        too when the store finds them in the same pass (PostgreSQL's exact scan: one statement for both);
        None when it does not (the caller searches the focus itself, if it needs it)."""

    def similar(self, queries: np.ndarray, where: Node, k: int) -> tuple[list[MemoryRecord], np.ndarray]:
        """The union of each query's ``k`` nearest matching memories (those with a vector), and the full
        (queries × memories) cosine matrix between them (reconciliation input)."""

    def keyword_search(self, query: str | Query, vector: np.ndarray, where: Node,
                       limit: int, reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float, float]]:
        """Matching memories by BM25 over the keyword index, best first, as (record, keyword score,
        cosine similarity to ``vector``, None for a memory without a vector yet): the score is the BM25 as a share of the query's ideal
        (``store/bm25.py``: 1 for a memory of average length holding every query term once). The terms
        are ``keywords.query_terms(query)``: a ``Query``'s own, analysed once per search. ``reads``: as
        for ``search``."""

    def token_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored late-interaction token vectors of the given memories (those that have them)."""

    def keep_token_vectors(self, items: Sequence[tuple[MemoryRecord, np.ndarray]]) -> int:
        """Store token vectors computed for the given memories as they were read, for those still
        unchanged (same ``updated_at`` and ``hash``) and valid; returns how many were stored."""

    def messages(self, where: Node, limit: int) -> list[MessageRecord]:
        """The latest ``limit`` stored messages matching ``where`` (scope columns only), oldest first."""

    def purge(self, where: Node) -> int:
        """Erase the memories, history and messages of a scope (``where``: scope columns only)."""

    def delete_matching(self, where: Node, *, actor_id: str | None = None, role: str | None = None) -> int: ...

    def history(self, memory_id: str) -> list[HistoryRecord]:
        """Events of one memory, oldest first; kept after the memory is deleted."""

    def known_keys(self, keys: Sequence[str]) -> set[str]: ...

    # the add journal (store/sql_adds.py): ``apply`` writes ``ChangeSet.journal`` and ``ChangeSet.done``

    def add_record(self, *, add_id: str | None = None, key: str | None = None) -> AddRecord | None:
        """The journaled add with this id, or with this idempotency key."""

    def pending_adds(self, scope: dict[str, str] | None = None, limit: int = 100) -> list[AddRecord]:
        """Pending adds, oldest first: all, or those of exactly ``scope``."""

    def claim_add(self, add_id: str, expected_owner: str | None, owner: str | None,
                  lease_until: str | None) -> bool:
        """Take over a pending add from ``expected_owner``; False if it is done or taken."""

    def forget_adds(self, before: str, keyed_before: str | None = None) -> int:
        """Remove completed adds last changed before ``before`` (with an idempotency key: ``keyed_before``)."""

    def count(self, where: Node) -> int: ...

    def scopes(self, column: str, limit: int) -> list[ScopeCount]:
        """Each distinct id of a scope column (``user_id``, ``agent_id``, ``run_id``) with its counts, by id."""

    def iter_records(self, where: Node, batch_size: int = 1000) -> Iterator[list[MemoryRecord]]:
        """Every matching memory, oldest first, in batches (export)."""

    def reembed(self, embed: Callable[[list[ReembedItem]], np.ndarray], name: str, dims: int, *,
                batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """Replace every vector with ``embed(items)`` (each memory's text, metadata and actor: what
        its vector is made from) and record the new embedder. Resumable."""

    def info(self) -> StoreInfo: ...

    # graph memory: ``scope`` maps scope columns to ids, each must match (None: must be NULL, an exact
    # scope); keys left out match anything, so an empty scope is every row

    def graph_entities(self, scope: dict[str, str]) -> list[Entity]:
        """The scope's entities with their name vectors, oldest first."""

    def graph_relations(self, scope: dict[str, str], *, include_invalid: bool = False, as_of: str | None = None,
                        entity_ids: Sequence[str] | None = None, limit: int | None = None) -> list[Relation]:
        """The scope's relations, newest first, with entity names and vectors: valid ones, all of them
        (``include_invalid``), or those valid at ``as_of``; only those touching ``entity_ids`` if given."""

    def delete_graph(self, scope: dict[str, str]) -> int:
        """Erase the scope's relations and the entities no remaining relation uses; returns relations erased."""

    # the tenant's project (store/sql_project.py): settings, webhooks (``apply`` queues their deliveries with
    # the history it writes), feedback, exports

    def project_settings(self) -> dict[str, Any]: ...

    def set_project_settings(self, values: dict[str, Any]) -> None: ...

    def webhooks(self) -> list[Webhook]: ...

    def webhook(self, webhook_id: str) -> Webhook | None: ...

    def save_webhook(self, hook: Webhook) -> None: ...

    def delete_webhook(self, webhook_id: str) -> bool: ...

    def add_feedback(self, record: FeedbackRecord) -> None: ...

    def feedback_of(self, memory_id: str) -> list[FeedbackRecord]: ...

    def save_export(self, export: ExportRecord) -> None: ...

    def export(self, export_id: str | None = None, filters: dict[str, Any] | None = None) -> ExportRecord | None: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


class SharedDatabase(Protocol):
    """What a memory store lends tables kept beside its own in the same file or database (the
    document collections of ``documents/``, which find theirs by ``provider``)."""

    #: the ``vector_store.provider`` the store is (``STORES``): ``"sqlite"``, ``"postgres"``
    provider: str

    def transaction(self, work: Callable[[Any], T], *, write: bool) -> T:
        """``work(connection)`` in one transaction of this store: a write transaction (the store's write
        lock) when ``write``, else a read that sees one state."""
