"""Offline merging of two near-duplicate memories (``Memory.merge_similar_memories``): keep the
more specific text, unless the two disagree.

**More specific** means saying more: the text with more distinct content terms
(``language.terms``: concepts, stemmed content words, numbers, names, Chinese content characters;
generic concept markers such as "likes" do not count). A text that says everything the other
does and more has more terms, so it always wins. Equal term counts: the longer text; equal
lengths: the newer memory (the later statement of the same thing).

**Disagree** means what add's reconciliation would read as a change rather than a repetition
(``offline_reconcile.relation``: a contradiction, a negation, a new value of the same attribute):
such a pair is not merged, whatever its embedding similarity (``likes pizza`` and ``doesn't like
pizza`` can lie very close together).
"""

from __future__ import annotations

from memlane.ingest import language, lexicon, offline_reconcile


def specificity(text: str) -> tuple[int, int]:
    """(distinct content terms, characters): the larger, the more specific."""
    return len(language.terms(text) - lexicon.GENERIC), len(" ".join(text.split()))


def _negated(text: str) -> bool:
    return offline_reconcile.negated(text)


def disagree(older: str, newer: str, similarity: float) -> bool:
    """Whether the newer text changes or contradicts the older one (not a repetition of it)."""
    return _negated(older) != _negated(newer) or \
        offline_reconcile.relation(newer, older, similarity) in ("contradict", "replace")


def more_specific(older: str, newer: str) -> str:
    """The text to keep: the more specific one, the newer on a tie."""
    return older if specificity(older) > specificity(newer) else newer
