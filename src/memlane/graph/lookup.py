"""The graph side of a search: entities the query points at, then their valid relations, scored.

An entity matches when the query names it (its normalised name occurs in the
normalised query: score 1), when it is the user and the query speaks in the first
person or of the user ("what do I like", "我住在哪", "用户住在哪里"), or when its name vector is close to the
query's (cosine >= ``entity_threshold``). A relation touching a matched entity
scores 0.5 x its best entity's match + 0.3 x the cosine of query and relation
text ("alice likes pizza") + 0.2 when the query uses a word of its relationship
("live", "住", "work", "工作": ``CUES``; the model reads English better than
Chinese, the cue words work in both), so "what food does alice like" ranks
``likes`` above ``works_at``. Relations under ``relation_threshold`` are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from memlane.graph.resolve import normalize
from memlane.core.graph_models import Entity, Relation

#: the query asks about the user: first person, or "the user" / 用户 as agents phrase it
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|user|user's)\b|我|用户|用戶|使用者", re.IGNORECASE)

#: words of a query that name a relationship (English stems, Chinese words)
CUES: dict[str, tuple[str, ...]] = {
    "lives_in": ("live", "living", "moved", "home", "city", "reside", "住", "搬", "家"),
    "works_at": ("work", "job", "employ", "company", "office", "工作", "上班", "公司", "单位"),
    "likes": ("like", "enjoy", "favo", "prefer", "fan of", "喜欢", "爱好", "偏好"),
    "loves": ("love", "爱"),
    "hates": ("hate", "dislike", "stand", "讨厌", "不喜欢"),
    "married_to": ("wife", "husband", "married", "spouse", "partner", "妻子", "老婆", "太太", "丈夫", "老公", "结婚"),
    "born_in": ("born", "birth", "from", "出生", "老家"),
    "has": ("have", "has", "own", "pet", "有", "养"),
    "name": ("name", "called", "名字", "叫"),
}


def cue(relationship: str, query: str) -> float:
    words = CUES.get(relationship, (relationship.replace("_", " "),))
    return 1.0 if any(w in query for w in words) else 0.0


def _named(key: str, query: str) -> bool:
    if not key:
        return False
    if key.isascii():
        return f" {key} " in f" {query} "
    return key in query


def _same(x: Any) -> Any:
    return x


def match_entities(query: str, vector: np.ndarray, entities: Sequence[Entity], *, user_keys: set[str],
                   threshold: float, similarity: Callable[[Any], Any] = _same) -> dict[str, float]:
    """Entity id -> match score in [0, 1]; ``similarity`` puts the model's cosines on the common scale."""
    normal = normalize(query)
    first_person = bool(_FIRST_PERSON.search(query))
    # vectors of another embedder (before ``Memory.reembed``) are ignored: names still match
    with_vectors = [e for e in entities if e.vector is not None and len(e.vector) == len(vector)]
    cosines = similarity(np.stack([e.vector for e in with_vectors]) @ vector).tolist() if with_vectors else []
    similarity = {e.id: c for e, c in zip(with_vectors, cosines)}
    matched: dict[str, float] = {}
    for e in entities:
        if _named(e.key, normal) or (first_person and e.key in user_keys):
            matched[e.id] = 1.0
        elif similarity.get(e.id, -1.0) >= threshold:
            matched[e.id] = float(similarity[e.id])
    return matched


def score_relations(query: str, vector: np.ndarray, relations: Sequence[Relation], matched: dict[str, float], *,
                    threshold: float, limit: int, similarity: Callable[[Any], Any] = _same
                    ) -> list[tuple[Relation, float]]:
    """The relations touching matched entities, best first, with their scores."""
    query = query.casefold()
    scored = []
    for r in relations:
        entity = max(matched.get(r.source_id, 0.0), matched.get(r.destination_id, 0.0))
        if entity <= 0:
            continue
        usable = r.vector is not None and len(r.vector) == len(vector)
        meaning = max(0.0, float(similarity(float(r.vector @ vector)))) if usable else 0.0
        score = 0.5 * entity + 0.3 * meaning + 0.2 * cue(r.relationship, query)
        if score >= threshold:
            scored.append((r, score))
    scored.sort(key=lambda pair: -pair[1])
    return scored[:limit]
