"""The facade: ``Memory`` (sync) and ``AsyncMemory`` (the same methods, awaited).

``Memory`` validates input, asks the embedder for vectors and the store for
records, and writes each call's outcome in one transaction. ``AsyncMemory`` has
no bodies of its own: every method runs the ``Memory`` method in a worker
thread, so the two can never drift apart.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memlane import config as config_mod
from memlane import scope, timeutil, validation
from memlane.embeddings import Embedder, Embeddings, create_embedder
from memlane.errors import InvalidInputError, MemoryNotFoundError
from memlane.models import MemoryRecord
from memlane.store import ChangeSet, Delete, Store, Update, create_store


def text_hash(text: str) -> str:
    """mem0's memory hash: MD5 of the text (an identity check, not security)."""
    return hashlib.md5(text.encode()).hexdigest()


@dataclass(slots=True)
class NewMemory:
    """A validated memory about to be stored (``Memory.insert``)."""

    text: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    actor_id: str | None = None
    role: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class Memory:
    """Long-term memory. ``Memory()`` works offline: SQLite under ``~/.memlane``
    (or ``$MEMLANE_HOME``) and the local all-MiniLM-L6-v2 model."""

    def __init__(
        self,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        store: Store | None = None,
    ):
        self.config = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        self.limits = self.config.limits.to_limits()
        self.embeddings = Embeddings(embedder or create_embedder(self.config.embedder), self.config.query_cache_size)
        self.store = store or create_store(self.config, self.embeddings.dims)
        self.store.bind_embedder(self.embeddings.name, self.embeddings.dims)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> "Memory":
        return cls(config_dict)

    # -- writes -------------------------------------------------------------

    def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Store each message verbatim as one memory (system messages are skipped, as in mem0).

        Returns ``{"results": [{"id", "memory", "event": "ADD"}, ...]}``.
        """
        ids = scope.scope_ids(user_id, agent_id, run_id)
        scope.require_ids(ids)
        stored_metadata, promoted = validation.metadata(metadata, self.limits)
        drafts = [
            NewMemory(text=message.content, actor_id=promoted.get("actor_id", message.name),
                      role=promoted.get("role", message.role), metadata=stored_metadata, **ids)
            for message in validation.messages(messages, self.limits)
            if message.role != "system"
        ]
        records = self.insert(drafts)
        return {"results": [{"id": r.id, "memory": r.text, "event": "ADD"} for r in records]}

    def insert(self, drafts: Sequence[NewMemory], *, idempotency_keys: Sequence[str] = ()) -> list[MemoryRecord]:
        """Embed and store already validated memories in one transaction (bulk paths: add, import).

        ``idempotency_keys`` are recorded in the same transaction; see ``Store.known_keys``.
        """
        if not drafts and not idempotency_keys:
            return []
        matrix = self.embeddings.documents([d.text for d in drafts])
        now = timeutil.now_iso()
        records = [
            MemoryRecord(
                id=d.id or str(uuid.uuid4()), text=d.text, hash=text_hash(d.text),
                created_at=d.created_at or now, updated_at=d.updated_at or d.created_at or now,
                user_id=d.user_id, agent_id=d.agent_id, run_id=d.run_id, actor_id=d.actor_id, role=d.role,
                metadata=d.metadata, vector=vector,
            )
            for d, vector in zip(drafts, matrix)
        ]
        self.store.apply(ChangeSet(inserts=records, keys=list(idempotency_keys)))
        return records

    def update(self, memory_id: str, text: str | None = None, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Replace the text (re-embedding it) and/or the metadata; returns the updated memory."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        if text is None and metadata is None:
            raise InvalidInputError("update needs text, metadata or both", field="text")
        current = self.store.get(memory_id)
        if current is None:
            raise MemoryNotFoundError(memory_id)
        change = Update(id=memory_id, updated_at=timeutil.now_iso())
        if text is not None:
            change.text = validation.text(text, "text", self.limits)
            change.hash = text_hash(change.text)
            if change.text != current.text:
                change.vector = self.embeddings.documents([change.text])[0]
        if metadata is not None:
            change.metadata, promoted = validation.metadata(metadata, self.limits)
            if promoted:
                raise InvalidInputError(f"{', '.join(promoted)} cannot be changed by update", field="metadata")
        self.store.apply(ChangeSet(updates=[change]))
        return self._get_record(memory_id).to_item()

    def delete(self, memory_id: str) -> dict[str, str]:
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        self.store.apply(ChangeSet(deletes=[Delete(memory_id)]))
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Delete every memory in the scope (history is kept)."""
        where = scope.scoped_filter(scope.scope_ids(user_id, agent_id, run_id), filters)
        deleted = self.store.delete_matching(where)
        return {"message": "Memories deleted successfully!", "deleted": deleted}

    def reset(self) -> None:
        """Erase every memory, history event and import record in the store."""
        self.store.reset()
        self.store.bind_embedder(self.embeddings.name, self.embeddings.dims)

    # -- reads --------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        record = self.store.get(memory_id)
        return record.to_item() if record else None

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> dict[str, list[dict[str, Any]]]:
        """Memories in the scope, newest first."""
        where = scope.scoped_filter(scope.scope_ids(user_id, agent_id, run_id), filters)
        limit = validation.limit(limit, self.limits)
        return {"results": [record.to_item() for record in self.store.list(where, limit)]}

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
        threshold: float | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Memories in the scope by semantic similarity, best first.

        ``score`` is the cosine similarity of query and memory, in [-1, 1]
        (in practice 0 to 1 for the default model); ``threshold`` keeps results
        with ``score >= threshold``.
        """
        query = validation.text(query, "query", self.limits)
        limit = validation.limit(limit, self.limits)
        threshold = validation.threshold(threshold)
        where = scope.scoped_filter(scope.scope_ids(user_id, agent_id, run_id), filters)
        hits = self.store.search(self.embeddings.query(query), where, limit, threshold)
        return {"results": [record.to_item(score) for record, score in hits]}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every ADD / UPDATE / DELETE of the memory, oldest first (also after deletion)."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        return [event.to_dict() for event in self.store.history(memory_id)]

    def info(self) -> dict[str, Any]:
        info = self.store.info()
        return {"store": info.location, "embedder": self.embeddings.name, "dims": self.embeddings.dims,
                "memories": info.memories, "history_events": info.history_events}

    def _get_record(self, memory_id: str) -> MemoryRecord:
        record = self.store.get(memory_id)
        if record is None:
            raise MemoryNotFoundError(memory_id)
        return record

    # -- maintenance --------------------------------------------------------

    @classmethod
    def reembed(
        cls,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        batch_size: int = 256,
        progress: Callable[[int, int], None] | None = None,
    ) -> "Memory":
        """Re-embed every memory of the configured store with the configured embedder
        (after changing models), then return a ready ``Memory``. Safe to interrupt and rerun."""
        settings = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        embeddings = Embeddings(embedder or create_embedder(settings.embedder), 0)
        store = create_store(settings, embeddings.dims)
        store.reembed(embeddings.documents, embeddings.name, embeddings.dims, batch_size=batch_size, progress=progress)
        return cls(settings, embedder=embeddings.embedder, store=store)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _offload(name: str) -> Callable[..., Any]:
    method = getattr(Memory, name)

    @functools.wraps(method)
    async def call(self: "AsyncMemory", *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return call


class AsyncMemory:
    """``Memory`` for asyncio code: the same methods and results, awaited.

    Blocking work (embedding, SQLite) runs in worker threads, so many calls can
    be in flight at once without blocking the event loop.
    """

    def __init__(
        self,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        store: Store | None = None,
        memory: Memory | None = None,
    ):
        self.sync = memory or Memory(config, embedder=embedder, store=store)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> "AsyncMemory":
        return cls(config_dict)

    add = _offload("add")
    insert = _offload("insert")
    get = _offload("get")
    get_all = _offload("get_all")
    search = _offload("search")
    update = _offload("update")
    delete = _offload("delete")
    delete_all = _offload("delete_all")
    history = _offload("history")
    reset = _offload("reset")
    info = _offload("info")
    close = _offload("close")

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
