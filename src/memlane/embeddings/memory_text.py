"""The text a memory is embedded as, for its vector and for its token vectors: one rule for every
path that embeds a memory (insert, formation, update, merges, reembed) and for the reranker's
write-back, so all of them describe a memory the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memlane.core.config import RetrievalConfig

#: the longest context embedded with a memory (the model reads 256 word pieces)
CONTEXT_CHARS = 400


def clipped_context(context: str | None) -> str | None:
    """The end of ``context`` a memory keeps: its last ``CONTEXT_CHARS`` characters, so the memory's own
    words stay inside the model's window (None for no context)."""
    if not context:
        return None
    return "…" + context[-CONTEXT_CHARS:] if len(context) > CONTEXT_CHARS else context


def embedding_text(text: str, metadata: Mapping[str, Any], context: str | None, settings: RetrievalConfig,
                   actor: str | None = None) -> str:
    """A memory's vector text: selected metadata values and who said it (``embed_actor``), earlier
    context, then its text ("8 May, 2023: Melanie: <previous turn> <text>")."""
    prefix = [str(metadata[k]) for k in settings.embed_metadata if metadata.get(k) not in (None, "")]
    if actor and settings.embed_actor:
        prefix.append(actor)
    context = clipped_context(context)
    parts = ([": ".join(prefix) + ":"] if prefix else []) + ([context] if context else []) + [text]
    return " ".join(parts)


def token_text(text: str, settings: RetrievalConfig, actor: str | None = None) -> str:
    """A memory's token-vector text (late interaction): its own words, after who said them
    (``embed_actor``), so a query naming the speaker meets the name in both representations."""
    return f"{actor}: {text}" if actor and settings.embed_actor else text


