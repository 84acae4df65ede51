"""Validated drafts (``NewMemory``) become records ready to store: embedded (with the configured
metadata and earlier context before the text), hashed, stamped, with token vectors when the store
keeps them. Nothing here opens the store: the facade applies the records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memlane.core import timeutil
from memlane.core.config import RetrievalConfig
from memlane.embeddings import Embeddings
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord, NewMemory, text_hash

#: the longest context embedded with a memory (the model reads 256 word pieces)
CONTEXT_CHARS = 400


def embedding_text(text: str, metadata: Mapping[str, Any], context: str | None, settings: RetrievalConfig) -> str:
    """What a memory is embedded as: selected metadata values and earlier context, then its text."""
    prefix = [str(metadata[k]) for k in settings.embed_metadata if metadata.get(k) not in (None, "")]
    if context and len(context) > CONTEXT_CHARS:  # keep the memory's own words inside the model's window
        context = "…" + context[-CONTEXT_CHARS:]
    parts = ([": ".join(prefix) + ":"] if prefix else []) + ([context] if context else []) + [text]
    return " ".join(parts)


def records(drafts: Sequence[NewMemory], embeddings: Embeddings, settings: RetrievalConfig) -> list[MemoryRecord]:
    """One record per draft, embedded in one batch."""
    if not drafts:
        return []
    texts = [embedding_text(d.text, d.metadata, d.context, settings) for d in drafts]
    tokens: list[Any] = [None] * len(drafts)
    if settings.tokens_at_insert and embeddings.has_tokens:
        # token vectors describe the memory's own words; with a context prefix that takes a second pass
        own = [d.text for d in drafts]
        if own == texts:
            matrix, tokens = embeddings.documents_and_tokens(texts, settings.max_token_vectors)
        else:
            matrix = embeddings.documents(texts)
            _, tokens = embeddings.documents_and_tokens(own, settings.max_token_vectors)
    else:
        matrix = embeddings.documents(texts)
    now = timeutil.now_iso()
    return [
        MemoryRecord(
            id=d.id or new_id(), text=d.text, hash=text_hash(d.text),
            created_at=d.created_at or now, updated_at=d.updated_at or d.created_at or now,
            user_id=d.user_id, agent_id=d.agent_id, run_id=d.run_id, actor_id=d.actor_id, role=d.role,
            metadata=d.metadata, memory_type=d.memory_type, source_message_ids=d.source_message_ids, vector=vector,
            valid_to=d.valid_to, invalid_reason=d.invalid_reason, superseded_by=d.superseded_by,
            token_vectors=token_vectors,
        )
        for d, vector, token_vectors in zip(drafts, matrix, tokens)
    ]
