"""Reconciliation of relations: new triples against the scope's valid relations.

A pure function from (new relations, existing valid relations, policy) to
decisions. Per new relation (source, relationship, destination):

=================================================  =========================================
situation                                          decision
=================================================  =========================================
negated ("I no longer like X")                     invalidate the valid (s, r, X); add nothing
the same relation is already valid                 keep it (provenance grows)
``r`` single-valued, s has another destination     invalidate the old, superseded by the new; add
s has r to a destination it refines ("tea" ->      invalidate the old, superseded by the new; add
"green tea": one name contains the other)
s has the opposite relationship to X ("hates X"    invalidate the old, superseded by the new; add
after "likes X")
otherwise                                          add
=================================================  =========================================

Invalidated relations keep their row with ``valid_to`` (and ``superseded_by``); nothing is erased.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memlane.graph.resolve import normalize


@dataclass(frozen=True, slots=True)
class Proposed:
    """A resolved new relation: entity ids and display names."""

    source_id: str
    source: str
    relationship: str
    destination_id: str
    destination: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Existing:
    id: str
    source_id: str
    relationship: str
    destination_id: str
    destination: str


@dataclass(slots=True)
class Policy:
    single_valued: frozenset[str] = frozenset()
    opposites: dict[str, str] = field(default_factory=dict)

    def opposite(self, relationship: str) -> set[str]:
        return ({v for k, v in self.opposites.items() if k == relationship}
                | {k for k, v in self.opposites.items() if v == relationship})


@dataclass(slots=True)
class Invalidation:
    id: str
    reason: str  # "contradicted", "refined", "negated"
    #: index into ``Outcome.add`` of the relation that replaces it
    superseded_by: int | None = None


@dataclass(slots=True)
class Outcome:
    add: list[Proposed] = field(default_factory=list)
    #: existing relations a new one confirmed: id -> index into ``proposed`` (its messages join the provenance)
    keep: dict[str, int] = field(default_factory=dict)
    invalidate: list[Invalidation] = field(default_factory=list)


def _refines(new: str, old: str) -> bool:
    a, b = normalize(new), normalize(old)
    return a != b and bool(b) and (f" {b} " in f" {a} " or (b in a and not a.isascii()))


def reconcile(proposed: Sequence[Proposed], existing: Sequence[Existing], policy: Policy) -> Outcome:
    outcome = Outcome()
    valid = {e.id: e for e in existing}
    added: dict[tuple[str, str, str], int] = {}

    def retire(relation: Existing, reason: str, by: int | None) -> None:
        valid.pop(relation.id, None)
        outcome.invalidate.append(Invalidation(relation.id, reason, by))

    for index, p in enumerate(proposed):
        key = (p.source_id, p.relationship, p.destination_id)
        same = [e for e in valid.values() if (e.source_id, e.relationship, e.destination_id) == key]
        if p.negated:
            for e in same:
                retire(e, "negated", None)
            if key in added:  # stated and retracted in one call: the retraction is the later word
                outcome.add[added.pop(key)] = None  # type: ignore[call-overload]
            continue
        if same:
            outcome.keep.setdefault(same[0].id, index)
            continue
        if key in added:
            continue
        position = len(outcome.add)
        conflicts = []
        for e in list(valid.values()):
            if e.source_id != p.source_id:
                continue
            if e.relationship == p.relationship and e.destination_id != p.destination_id:
                if p.relationship in policy.single_valued:
                    conflicts.append((e, "contradicted"))
                elif _refines(p.destination, e.destination):
                    conflicts.append((e, "refined"))
            elif e.relationship in policy.opposite(p.relationship) and e.destination_id == p.destination_id:
                conflicts.append((e, "contradicted"))
        for e, reason in conflicts:
            retire(e, reason, position)
        outcome.add.append(p)
        added[key] = position
        # a second single-valued statement in the same call supersedes the first one
        if p.relationship in policy.single_valued:
            for other_key, other in list(added.items()):
                if other_key != key and other_key[:2] == key[:2] and outcome.add[other] is not None:
                    outcome.add[other] = None  # type: ignore[call-overload]
                    added.pop(other_key)
                    for inv in outcome.invalidate:
                        if inv.superseded_by == other:
                            inv.superseded_by = position
    _compact(outcome)
    return outcome


def _compact(outcome: Outcome) -> None:
    """Drop proposals withdrawn within the call and renumber the references to the rest."""
    mapping, kept = {}, []
    for i, p in enumerate(outcome.add):
        if p is not None:
            mapping[i] = len(kept)
            kept.append(p)
    outcome.add = kept
    for inv in outcome.invalidate:
        if inv.superseded_by is not None:
            inv.superseded_by = mapping.get(inv.superseded_by)
