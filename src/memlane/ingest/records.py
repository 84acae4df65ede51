"""Validated drafts (``NewMemory``) become records ready to store: embedded (with the configured
metadata, the speaker and earlier context before the text: ``embeddings/memory_text.py``), hashed,
stamped, with token vectors when the store keeps them. Nothing here opens the store: the facade applies the records."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memlane.core import timeutil
from memlane.core.config import RetrievalConfig
from memlane.embeddings import Embeddings
from memlane.embeddings.memory_text import clipped_context, embedding_text, token_text
from memlane.core.ids import new_id
from memlane.core.changes import Update
from memlane.core.models import MemoryRecord, NewMemory, text_hash


def records(drafts: Sequence[NewMemory], embeddings: Embeddings, settings: RetrievalConfig) -> list[MemoryRecord]:
    """One record per draft, embedded in one batch."""
    stored = unembedded(drafts)
    embed(stored, embeddings, settings)
    return stored


def unembedded(drafts: Sequence[NewMemory]) -> list[MemoryRecord]:
    """One record per draft, hashed and stamped but without a vector yet (an async add's provisional
    memories: keyword-searchable at once, given their vectors by a worker, ``embed``)."""
    now = timeutil.now_iso()
    return [
        MemoryRecord(
            id=d.id or new_id(), text=d.text, hash=text_hash(d.text),
            created_at=d.created_at or now, updated_at=d.updated_at or d.created_at or now,
            user_id=d.user_id, agent_id=d.agent_id, run_id=d.run_id, actor_id=d.actor_id, role=d.role,
            metadata=d.metadata, memory_type=d.memory_type, source_message_ids=d.source_message_ids,
            valid_to=d.valid_to, invalid_reason=d.invalid_reason, superseded_by=d.superseded_by,
            event_id=d.event_id, context=clipped_context(d.context),
        )
        for d in drafts
    ]


def embed(stored: Sequence[MemoryRecord], embeddings: Embeddings, settings: RetrievalConfig) -> None:
    """Give records their vectors (and token vectors, when the store keeps them at insert), in one batch:
    each embedded as it is stored (``text``, ``metadata``, ``context``, ``actor_id``)."""
    if not stored:
        return
    texts = [embedding_text(r.text, r.metadata, r.context, settings, r.actor_id) for r in stored]
    tokens: list[Any] = [None] * len(stored)
    if settings.tokens_at_insert and embeddings.has_tokens:
        # token vectors describe the memory's own words; with a context prefix that takes a second pass
        own = [token_text(r.text, settings, r.actor_id) for r in stored]
        if own == texts:
            matrix, tokens = embeddings.documents_and_tokens(texts, settings.max_token_vectors)
        else:
            matrix = embeddings.documents(texts)
            _, tokens = embeddings.documents_and_tokens(own, settings.max_token_vectors)
    else:
        matrix = embeddings.documents(texts)
    for record, vector, token_vectors in zip(stored, matrix, tokens):
        record.vector, record.token_vectors = vector, token_vectors


def vectors(memories: Sequence[Any], embeddings: Embeddings, settings: RetrievalConfig) -> np.ndarray:
    """Stored memories' vectors as they are embedded when stored (``text``, ``metadata``, ``context``,
    ``actor_id`` of each): ``Memory.reembed``."""
    return embeddings.documents([embedding_text(m.text, m.metadata, m.context, settings, m.actor_id) for m in memories])


def revised_vectors(revisions: Sequence[tuple[MemoryRecord, Update]], embeddings: Embeddings,
                    settings: RetrievalConfig) -> list[np.ndarray | None]:
    """Each updated memory's new vector, when what it is embedded as changed (the text, or an embedded
    metadata value), else None (the vector stays); the changed ones embedded in one batch."""
    afters: list[str | None] = []
    for current, change in revisions:
        before = embedding_text(current.text, current.metadata, current.context, settings, current.actor_id)
        after = embedding_text(change.text if change.text is not None else current.text,
                               change.metadata if change.metadata is not None else current.metadata,
                               current.context, settings, current.actor_id)
        afters.append(after if after != before else None)
    changed = [text for text in afters if text is not None]
    vectors = iter(embeddings.documents(changed) if changed else [])
    return [next(vectors) if text is not None else None for text in afters]


def revised_vector(current: MemoryRecord, change: Update, embeddings: Embeddings,
                   settings: RetrievalConfig) -> np.ndarray | None:
    """One updated memory's new vector (``revised_vectors`` of one), or None: the vector stays."""
    return revised_vectors([(current, change)], embeddings, settings)[0]
