"""The search modes every retrieval eval reports: the stages each asks for. ``default`` asks for
none, so the configured defaults decide: what a user who calls ``search(query, user_id=...)`` gets."""

from __future__ import annotations

MODES: dict[str, dict[str, bool]] = {
    "default": {},
    "vector": {"keyword_search": False, "rerank": False, "filter_memories": False},
    "hybrid": {"keyword_search": True, "rerank": False, "filter_memories": False},
    "full": {"keyword_search": True, "rerank": True, "filter_memories": False},
}
