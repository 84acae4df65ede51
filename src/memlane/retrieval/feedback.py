"""Pseudo-relevance feedback for the keyword side: a first search's best results are taken as
relevant and the query is expanded with their words.

RM3 (Lavrenko & Croft's relevance model, interpolated with the query as in Jaleel et al., UMass at
TREC 2004): a term's relevance model is its mean relative frequency in the results (uniform
weight per result: the fused ranks of a hybrid search are not probabilities); its ``terms``
strongest terms are kept, normalised, and mixed with the query's own:
``query_weight * P(t | query) + (1 - query_weight) * P(t | feedback)``. The result is a weighted
query for a second BM25 search (``store/bm25.py``, ``rank(weights=)``).

Pure functions over analysed term lists (``text.keywords.analyze``): no store, no model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def expand(query_terms: Sequence[str], feedback: Sequence[Sequence[str]], *, terms: int,
           query_weight: float) -> dict[str, float]:
    """The RM3 query: weights summing to 1 over the query's terms and the ``terms`` strongest terms
    of the ``feedback`` term lists (terms of weight 0 left out). With no query term, nothing to
    expand (an empty dict); with no usable feedback, the query's own terms weighted by their
    frequency."""
    if not query_terms:
        return {}
    asked = Counter(query_terms)
    model: Counter[str] = Counter()
    lists = [t for t in feedback if t]
    for listed in lists:
        for term, count in Counter(listed).items():
            model[term] += count / len(listed) / len(lists)
    strongest = model.most_common(terms) if lists else []
    mass = sum(weight for _, weight in strongest)
    own = query_weight if mass else 1.0
    weights = {term: own * count / len(query_terms) for term, count in asked.items()}
    for term, weight in strongest:
        weights[term] = weights.get(term, 0.0) + (1 - own) * weight / mass
    return {term: weight for term, weight in weights.items() if weight > 0}

