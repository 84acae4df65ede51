"""The stored memories a formation's facts are reconciled with, and their fact × memory cosines.

Unlabelled vectors (the default for a user's own memories): each fact's ``top_k`` nearest, as the
store finds them. Labelled vectors (a named speaker, ``retrieval.embed_actor``, or ``embed_metadata``
values): a wider pool by the labelled vectors, then each fact's ``top_k`` by what the texts say
without the label — the reconciler's thresholds are those of bare statements, and a shared speaker
must not make two of one person's facts look alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memlane.core.filters import Node
from memlane.core.models import MemoryRecord
from memlane.ingest.types import Candidates, Fact

#: with labelled vectors, the pool read per fact is this many times ``top_k``: 2 keeps the
#: candidates (and decisions) of unlabelled formation (benchmarks/history/formation.md)
SAID_POOL = 2


def find(store: Any, embeddings: Any, facts: Sequence[Fact], vectors: np.ndarray, where: Node, top_k: int,
         *, labelled: bool) -> Candidates:
    """``vectors``: the facts' vectors as stored; ``labelled``: whether any differs from its bare text's."""
    if not labelled:
        records, similarity = store.similar(vectors, where, top_k)
        return Candidates(records, embeddings.similarity(similarity, "document"))
    pool, _ = store.similar(vectors, where, top_k * SAID_POOL)
    return said_candidates(embeddings, facts, pool, top_k)


def said_candidates(embeddings: Any, facts: Sequence[Fact], pool: Sequence[MemoryRecord],
                    top_k: int) -> Candidates:
    """Each fact's ``top_k`` of ``pool`` by the cosine of the bare texts, and the fact × memory
    matrix over their union (recent statements' vectors come from ``Embeddings.statements``' cache)."""
    if not pool:
        return Candidates([], np.zeros((len(facts), 0), dtype=np.float32))
    said = embeddings.statements([f.text for f in facts] + [m.text for m in pool])
    similarity = embeddings.similarity(said[:len(facts)] @ said[len(facts):].T, "document")
    columns = list(dict.fromkeys(int(j) for row in similarity for j in np.argsort(-row, kind="stable")[:top_k]))
    return Candidates([pool[j] for j in columns], similarity[:, columns])
