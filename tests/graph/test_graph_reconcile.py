"""Reconciliation of relations (a pure function, memlane.graph.reconcile) as a table:
add / keep / refine / contradict / negate; and entity resolution with the real model."""

import numpy as np
import pytest

from memlane.graph.reconcile import Existing, Policy, Proposed, reconcile
from memlane.graph.resolve import is_acronym, normalize, resolve
from memlane.core.graph_models import Entity

POLICY = Policy(single_valued=frozenset({"lives_in", "works_at"}), opposites={"likes": "hates"})


def new(rel, dest, negated=False, source="u"):
    return Proposed(source, source, rel, dest.lower(), dest, negated)


def old(rid, rel, dest, source="u"):
    return Existing(rid, source, rel, dest.lower(), dest)


# (existing, proposed, expected adds, expected keeps, expected invalidations (id, reason, superseded_by))
TABLE = [
    pytest.param([], [new("likes", "Tea")], [("likes", "tea")], [], [], id="add to an empty graph"),
    pytest.param([old("r1", "likes", "Tea")], [new("likes", "Tea")], [], ["r1"], [], id="same relation is kept"),
    pytest.param([old("r1", "likes", "Tea")], [new("likes", "Coffee")], [("likes", "coffee")], [], [],
                 id="multi-valued relation adds"),
    pytest.param([old("r1", "lives_in", "Paris")], [new("lives_in", "Berlin")], [("lives_in", "berlin")], [],
                 [("r1", "contradicted", 0)], id="single-valued new destination contradicts"),
    pytest.param([old("r1", "lives_in", "Paris"), old("r2", "likes", "Paris")], [new("lives_in", "Rome")],
                 [("lives_in", "rome")], [], [("r1", "contradicted", 0)], id="only the same relationship is contradicted"),
    pytest.param([old("r1", "lives_in", "Paris", source="v")], [new("lives_in", "Rome")], [("lives_in", "rome")], [],
                 [], id="another source is not contradicted"),
    pytest.param([old("r1", "likes", "Tea")], [new("likes", "Green Tea")], [("likes", "green tea")], [],
                 [("r1", "refined", 0)], id="a more specific destination refines"),
    pytest.param([old("r1", "likes", "茶")], [new("likes", "绿茶")], [("likes", "绿茶")], [], [("r1", "refined", 0)],
                 id="refine in Chinese"),
    pytest.param([old("r1", "likes", "Tea")], [new("likes", "Teapots")], [("likes", "teapots")], [], [],
                 id="a longer word is not a refinement"),
    pytest.param([old("r1", "likes", "Coffee")], [new("likes", "Coffee", negated=True)], [], [],
                 [("r1", "negated", None)], id="negation invalidates without adding"),
    pytest.param([], [new("likes", "Coffee", negated=True)], [], [], [], id="negating nothing does nothing"),
    pytest.param([old("r1", "likes", "Coffee")], [new("hates", "Coffee")], [("hates", "coffee")], [],
                 [("r1", "contradicted", 0)], id="the opposite relationship contradicts"),
    pytest.param([], [new("lives_in", "Paris"), new("lives_in", "Rome")], [("lives_in", "rome")], [], [],
                 id="the later of two single-valued statements wins"),
    pytest.param([old("r1", "lives_in", "Oslo")], [new("lives_in", "Paris"), new("lives_in", "Rome")],
                 [("lives_in", "rome")], [], [("r1", "contradicted", 0)], id="superseded by the one that stays"),
    pytest.param([], [new("likes", "Tea"), new("likes", "Tea", negated=True)], [], [], [],
                 id="stated and retracted in one call"),
]


@pytest.mark.parametrize("existing, proposed, adds, keeps, invalidations", TABLE)
def test_reconciliation_table(existing, proposed, adds, keeps, invalidations):
    outcome = reconcile(proposed, existing, POLICY)
    assert [(p.relationship, p.destination_id) for p in outcome.add] == adds
    assert list(outcome.keep) == keeps
    assert [(i.id, i.reason, i.superseded_by) for i in outcome.invalidate] == invalidations


def test_single_valued_is_configurable():
    existing, proposed = [old("r1", "likes", "Tea")], [new("likes", "Coffee")]
    outcome = reconcile(proposed, existing, Policy(single_valued=frozenset({"likes"})))
    assert [(i.id, i.reason) for i in outcome.invalidate] == [("r1", "contradicted")]


@pytest.mark.parametrize("name, key", [("The Beatles", "beatles"), ("  New   York ", "new york"),
                                       ("Café", "café"), ("北京", "北京"), ("臺北", "台北"), ("U.S.A.", "u s a")])
def test_normalize(name, key):
    assert normalize(name) == key


def test_acronyms():
    assert is_acronym("NYC", "New York City") and is_acronym("nyc", "new york city")
    assert not is_acronym("NY", "New York City") and not is_acronym("Tea", "Tea")


def test_resolution_merges_aliases_conservatively(embedder):
    names = ["NYC", "new york city", "Green Tea", "北京市", "Paris"]
    stored = ["New York City", "Tea", "北京", "London"]
    vectors = np.asarray(embedder.embed(stored + names, "document"), dtype=np.float32)
    existing = [Entity(id=f"e{i}", name=n, key=normalize(n), created_at="t", updated_at="t", vector=v)
                for i, (n, v) in enumerate(zip(stored, vectors))]

    def make(name, key, vector):
        return Entity(id=f"new-{name}", name=name, key=key, created_at="t", updated_at="t", vector=vector)

    result = resolve(names, vectors[len(stored):], existing, make=make, merge_threshold=0.9, acronym_threshold=0.7)
    assert {n: e.id for n, e in result.by_name.items()} == {
        "NYC": "e0",  # initials and a close vector
        "new york city": "e0",  # the same key
        "Green Tea": "new-Green Tea",  # related, not the same thing
        "北京市": "e2",  # very close vectors
        "Paris": "new-Paris",
    }
    assert [e.name for e in result.new] == ["Green Tea", "Paris"]


def test_vectors_of_another_embedder_are_ignored():
    """After ``Memory.reembed`` to a model of other dimensions, stored entity vectors no longer
    compare with new ones: resolution falls back to the name key instead of failing."""
    old = Entity(id="e0", name="Paris", key="paris", created_at="t", updated_at="t", vector=np.ones(8) / np.sqrt(8))

    def make(name, key, vector):
        return Entity(id=f"new-{name}", name=name, key=key, created_at="t", updated_at="t", vector=vector)

    unit = np.ones((2, 4), dtype=np.float32) / 2
    result = resolve(["paris", "Lyon"], unit, [old], make=make, merge_threshold=0.9, acronym_threshold=0.7)
    assert {n: e.id for n, e in result.by_name.items()} == {"paris": "e0", "Lyon": "new-Lyon"}
