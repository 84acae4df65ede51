"""Actor focus: a question that names someone is about what that someone said or did.

Memories keep who said them (``actor_id``: a message's ``name`` in a conversation with several
people, as mem0 records it). When the query names an actor of the scope
(``Melanie`` in "What does Melanie do to destress?"), that actor's nearest memories join the pool
(one more vector search, filtered to the actors the query's words may name) and every memory of a named actor gains
``actor_weight`` on the min-max normalised score. A query naming no actor is left as it is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from memlane.core import filters as flt
from memlane.core.models import MemoryRecord
from memlane.core.query import Query
from memlane.retrieval.candidates import Pool, minmax


def named_actors(text: str, actors: set[str]) -> set[str]:
    """The actors whose name appears in ``text`` as a whole word (case-insensitive)."""
    return {actor for actor in actors
            if actor.strip() and re.search(rf"(?<!\w){re.escape(actor.strip())}(?!\w)", text, re.IGNORECASE)}


def name_forms(text: str) -> list[str]:
    """The words of ``text`` as an actor id might spell them: as written and capitalised, without a
    possessive ("melanie's" -> melanie, Melanie)."""
    forms: dict[str, None] = {}
    for word in re.findall(r"\w[\w.-]*", text):
        word = re.sub(r"['’]s$", "", word)
        forms.update({word: None, word[:1].upper() + word[1:].lower(): None})
    return list(forms)


@functools.lru_cache(maxsize=4096)  # a pure function of the question, asked again and again (the node is never changed)
def focus(text: str) -> flt.Node | None:
    """The memories of the actors the words of ``text`` may name as one word (``name_forms``): what ``join``
    searches, known before the candidates (a store may find them in the candidates' own pass:
    ``Store.focused_search``); None for a text without words."""
    forms = sorted(set(name_forms(text)))
    return flt.Compare(flt.Field(column="actor_id"), "in", forms) if forms else None


def join(search: Callable[[Any, flt.Node, int], list[tuple[MemoryRecord, float]]], query: Query, where: flt.Node,
         pool: Pool, k: int, focused: list[tuple[MemoryRecord, float]] | None = None) -> tuple[Pool, set[str], dict[str, Any]]:
    """The pool with the named actors' nearest memories added (vector candidates, scored by cosine;
    ``search(vector, where, limit)`` is the vector search, cosines on the common scale), sorted by score.
    An actor is named when the query spells its id as one word (looked up in the store, so an actor
    outside the pool is found too) or, for ids of several words, when it is among the candidates'.
    A pool in which no memory has an actor skips the lookup: the scope keeps no speakers. ``focused``: the
    nearest ``k`` memories of ``focus(query.text)`` found already (``Store.focused_search``), used
    instead of a search when the candidates name no actor beyond those forms."""
    actors = {record.actor_id for record in pool.records if record.actor_id}
    if not actors:  # memories without speakers (one user's notes): no second search to pay for
        return pool, set(), {"actors": 0, "added": 0}
    named = named_actors(query.text, actors)
    forms = set(name_forms(query.text))
    names = sorted(forms | named)
    scoped = flt.conjoin(where, flt.Compare(flt.Field(column="actor_id"), "in", names)) if names else None
    if focused is not None and named <= forms:  # the same search, done already
        hits = focused
    else:
        hits = search(query.vector, scoped, k) if scoped is not None else []
    named |= {record.actor_id for record, _ in hits if record.actor_id}
    added = pool.add(hits)
    pool.sort()
    return pool, named, {"actors": len(named), "added": added}


def boost(pool: Pool, named: set[str], weight: float) -> Pool:
    """Every memory of a named actor gains ``weight`` on the min-max normalised score; the pool sorted again."""
    if not named or weight <= 0 or not len(pool):
        return pool
    theirs = np.fromiter((record.actor_id in named for record in pool.records), bool, len(pool))
    pool.score = minmax(pool.score) + np.where(theirs, weight, 0.0)
    pool.sort()
    return pool
