"""The store seam: what ``Memory`` needs from a backend (SQLite now, PostgreSQL next).

Writes go through ``apply(ChangeSet)``: one atomic transaction that also writes
the history events, so history can never disagree with the memories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from memlane.filters import Node
from memlane.graph_models import Entity, GraphChanges, Relation
from memlane.models import HistoryRecord, MemoryRecord, MessageRecord
from memlane.query import Query
from memlane.store.scope_counts import ScopeCount


@dataclass(slots=True)
class Update:
    id: str
    updated_at: str
    text: str | None = None
    hash: str | None = None
    vector: np.ndarray | None = None
    metadata: dict[str, Any] | None = None
    actor_id: str | None = None  # who made the change (recorded in history)
    role: str | None = None
    reason: str | None = None
    #: messages that led to this change, appended to the memory's provenance
    source_message_ids: list[str] = field(default_factory=list)
    token_vectors: np.ndarray | None = None


@dataclass(slots=True)
class Delete:
    id: str
    actor_id: str | None = None
    role: str | None = None


@dataclass(slots=True)
class Invalidate:
    """Mark a memory no longer valid (contradicted or retracted) without erasing it."""

    id: str
    reason: str
    superseded_by: str | None = None
    actor_id: str | None = None
    role: str | None = None


@dataclass(slots=True)
class ChangeSet:
    """Everything one public call writes. ``keys`` are idempotency keys recorded in
    the same transaction (e.g. lines already imported), so a retried batch is a no-op."""

    inserts: list[MemoryRecord] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    invalidations: list[Invalidate] = field(default_factory=list)
    deletes: list[Delete] = field(default_factory=list)
    messages: list[MessageRecord] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    #: entities and relations (graph memory), written in the same transaction
    graph: GraphChanges = field(default_factory=GraphChanges)


@dataclass(frozen=True, slots=True)
class StoreInfo:
    location: str
    embedder: str | None
    dims: int | None
    memories: int
    history_events: int


class Store(Protocol):
    def bind_embedder(self, name: str, dims: int) -> None:
        """Record the embedder filling the store; raise ``EmbedderMismatchError`` if another one did."""

    def apply(self, changes: ChangeSet) -> None:
        """Write atomically; ``MemoryNotFoundError`` (and nothing written) if an update or delete names no memory."""

    def get(self, memory_id: str) -> MemoryRecord | None: ...

    def list(self, where: Node, limit: int) -> list[MemoryRecord]:
        """Matching memories, newest first."""

    def search(self, query: np.ndarray, where: Node, limit: int, threshold: float | None) -> list[tuple[MemoryRecord, float]]:
        """Matching memories by cosine similarity to the unit vector ``query``, best first."""

    def similar(self, queries: np.ndarray, where: Node, k: int) -> tuple[list[MemoryRecord], np.ndarray]:
        """The union of each query's ``k`` nearest matching memories, and the full
        (queries × memories) cosine matrix between them (reconciliation input)."""

    def keyword_search(self, query: str | Query, vector: np.ndarray, where: Node,
                       limit: int) -> list[tuple[MemoryRecord, float, float]]:
        """Matching memories by BM25 over the keyword index, best first, as
        (record, bm25 score, cosine similarity to ``vector``). The terms are ``keywords.query_terms(query)``:
        a ``Query``'s own, analysed once per search."""

    def token_vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored late-interaction token vectors of the given memories (those that have them)."""

    def messages(self, where: Node, limit: int) -> list[MessageRecord]:
        """The latest ``limit`` stored messages matching ``where`` (scope columns only), oldest first."""

    def purge(self, where: Node) -> int:
        """Erase the memories, history and messages of a scope (``where``: scope columns only)."""

    def delete_matching(self, where: Node, *, actor_id: str | None = None, role: str | None = None) -> int: ...

    def history(self, memory_id: str) -> list[HistoryRecord]:
        """Events of one memory, oldest first; kept after the memory is deleted."""

    def known_keys(self, keys: Sequence[str]) -> set[str]: ...

    def count(self, where: Node) -> int: ...

    def scopes(self, column: str, limit: int) -> list[ScopeCount]:
        """Each distinct id of a scope column (``user_id``, ``agent_id``, ``run_id``) with its counts, by id."""

    def iter_records(self, where: Node, batch_size: int = 1000) -> Iterator[list[MemoryRecord]]:
        """Every matching memory, oldest first, in batches (export)."""

    def reembed(self, embed: Callable[[list[str]], np.ndarray], name: str, dims: int, *,
                batch_size: int = 256, progress: Callable[[int, int], None] | None = None) -> int:
        """Replace every vector with ``embed(texts)`` and record the new embedder. Resumable."""

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

    def reset(self) -> None: ...

    def document_store(self, tenant: str = "default") -> Any:
        """The document collections (``memlane.Documents``) sharing this store's file or database."""

    def close(self) -> None: ...
