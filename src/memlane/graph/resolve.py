"""Entity resolution: which stored entity a name in a new triple refers to.

Conservative on purpose (a wrong merge fuses two people; a missed merge only
leaves two nodes): a name joins an existing entity of the scope when its
normalised key is equal ("The Beatles" / "beatles", "北京" / "北京"), or when the
name vectors are very similar (``merge_threshold``, 0.9: "New York" / "New York
City" 0.95 but "tea" / "green tea" 0.81), or when one name is the initials of the
other and the vectors agree (``acronym_threshold``: "NYC" / "New York City").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from memlane.core.graph_models import Entity
from memlane.text.normalize import to_simplified

_ARTICLES = re.compile(r"^(?:the|a|an)\s+")
_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalize(name: str) -> str:
    """The resolution key: NFKC, Simplified Chinese, case-folded, no leading article or punctuation."""
    key = to_simplified(unicodedata.normalize("NFKC", name)).casefold().strip()
    key = _PUNCT.sub(" ", key)
    key = " ".join(key.split())
    return _ARTICLES.sub("", key) or key


def initials(name: str) -> str:
    words = normalize(name).split()
    return "".join(w[0] for w in words) if len(words) > 1 else ""


def is_acronym(short: str, long: str) -> bool:
    key = normalize(short).replace(" ", "").replace(".", "")
    return len(key) >= 2 and key == initials(long)


@dataclass(slots=True)
class Resolution:
    """Entity per name (existing or new), and the new ones to store."""

    by_name: dict[str, Entity]
    new: list[Entity]


def resolve(names: Sequence[str], vectors: np.ndarray, existing: Sequence[Entity], *,
            make: Callable[[str, str, np.ndarray], Entity], merge_threshold: float,
            acronym_threshold: float) -> Resolution:
    """Map every name to an entity. ``vectors`` are the names' unit vectors (rows); ``make(name, key,
    vector)`` builds a new entity. Names of one call that resolve to each other share one entity."""
    pool = list(existing)
    by_key = {e.key: e for e in pool}
    by_name: dict[str, Entity] = {}
    new: list[Entity] = []
    for name, vector in zip(names, vectors):
        if name in by_name:
            continue
        key = normalize(name)
        entity = by_key.get(key) or _similar(name, vector, pool, merge_threshold, acronym_threshold)
        if entity is None:
            entity = make(name, key, vector)
            new.append(entity)
            pool.append(entity)
            by_key[key] = entity
        by_name[name] = entity
    return Resolution(by_name, new)


def _similar(name: str, vector: np.ndarray, pool: Sequence[Entity], merge_threshold: float,
             acronym_threshold: float) -> Entity | None:
    candidates = [e for e in pool if e.vector is not None and len(e.vector) == len(vector)]
    if not candidates:
        return None
    scores = np.stack([e.vector for e in candidates]) @ vector
    best: tuple[float, Entity] | None = None
    for score, entity in zip(scores.tolist(), candidates):
        acronym = is_acronym(name, entity.name) or is_acronym(entity.name, name)
        if score >= merge_threshold or (acronym and score >= acronym_threshold):
            if best is None or score > best[0]:
                best = (score, entity)
    return best[1] if best else None
