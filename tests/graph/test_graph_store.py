"""Graph storage conformance: the same behaviour on SQLite and PostgreSQL (``backend`` fixture):
entities and relations round-trip with vectors, scopes (exact and open), validity and as_of,
provenance, atomic writes with the memories, delete by scope, purge and reset."""

from __future__ import annotations

import numpy as np
import pytest

from memlane import Memory
from memlane.core.errors import StoreError
from memlane.core.graph_models import (Entity, GraphChanges, Relation, RelationConfirmation,
                                  RelationInvalidation)
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord
from memlane.store import ChangeSet


@pytest.fixture
def store(backend, embedder):
    with Memory(backend(), embedder=embedder) as m:
        yield m.store, m.embeddings


def entity(embeddings, name, t="2026-01-01T00:00:00+00:00", **scope):
    return Entity(id=new_id(), name=name, key=name.lower(), created_at=t, updated_at=t,
                  vector=embeddings.documents([name])[0], **scope)


def relation(embeddings, s, rel, d, t="2026-01-01T00:00:00+00:00", **scope):
    return Relation(id=new_id(), source_id=s.id, source=s.name, relationship=rel, destination_id=d.id,
                    destination=d.name, created_at=t, updated_at=t, valid_from=t, source_message_ids=["m1"],
                    vector=embeddings.documents([f"{s.name} {rel} {d.name}"])[0], **scope)


def test_round_trip_scopes_and_validity(store):
    store, emb = store
    alice = entity(emb, "alice", user_id="alice")
    paris = entity(emb, "Paris", user_id="alice")
    berlin = entity(emb, "Berlin", user_id="alice")
    bob = entity(emb, "bob", user_id="bob", run_id="r1")
    oslo = entity(emb, "Oslo", user_id="bob", run_id="r1")
    lives = relation(emb, alice, "lives_in", paris, user_id="alice")
    bob_lives = relation(emb, bob, "lives_in", oslo, "2026-01-02T00:00:00+00:00", user_id="bob", run_id="r1")
    store.apply(ChangeSet(graph=GraphChanges(entities=[alice, paris, berlin, bob, oslo],
                                             relations=[lives, bob_lives])))

    assert [e.name for e in store.graph_entities({"user_id": "alice"})] == ["alice", "Paris", "Berlin"]
    got = store.graph_entities({"user_id": "alice"})[1]
    assert np.allclose(got.vector, paris.vector, atol=1e-6)
    # an exact scope: absent ids must be NULL
    assert store.graph_entities({"user_id": "bob", "agent_id": None, "run_id": None}) == []
    assert [e.name for e in store.graph_entities({"user_id": "bob", "agent_id": None, "run_id": "r1"})] == ["bob", "Oslo"]
    assert [r.id for r in store.graph_relations({})] == [bob_lives.id, lives.id]  # newest first, every scope

    [read] = store.graph_relations({"user_id": "alice"})
    assert (read.source, read.relationship, read.destination, read.valid_to) == ("alice", "lives_in", "Paris", None)
    assert read.source_message_ids == ["m1"] and np.allclose(read.vector, lives.vector, atol=1e-6)

    t2 = "2026-02-01T00:00:00+00:00"
    moved = relation(emb, alice, "lives_in", berlin, t2, user_id="alice")
    store.apply(ChangeSet(graph=GraphChanges(
        relations=[moved],
        invalidations=[RelationInvalidation(id=lives.id, reason="contradicted", superseded_by=moved.id, at=t2)],
        confirmations=[RelationConfirmation(id=bob_lives.id, source_message_ids=["m1", "m2"], at=t2)])))
    assert [r.destination for r in store.graph_relations({"user_id": "alice"})] == ["Berlin"]
    history = store.graph_relations({"user_id": "alice"}, include_invalid=True)
    old = next(r for r in history if r.id == lives.id)
    assert (old.valid_to, old.invalid_reason, old.superseded_by) == (t2, "contradicted", moved.id)
    assert [r.destination for r in store.graph_relations({"user_id": "alice"}, as_of="2026-01-15T00:00:00+00:00")] \
        == ["Paris"]
    assert store.graph_relations({"user_id": "bob"})[0].source_message_ids == ["m1", "m2"]
    assert [r.destination for r in store.graph_relations({"user_id": "alice"}, include_invalid=True,
                                                         entity_ids=[paris.id])] == ["Paris"]

    # an invalidation of a relation that is no longer valid fails the whole change set
    stray = entity(emb, "stray", user_id="alice")
    with pytest.raises(StoreError):
        store.apply(ChangeSet(graph=GraphChanges(entities=[stray], invalidations=[
            RelationInvalidation(id=lives.id, reason="again", at=t2)])))
    assert "stray" not in [e.name for e in store.graph_entities({"user_id": "alice"})]

    assert store.delete_graph({"user_id": "alice"}) == 2
    assert store.graph_relations({"user_id": "alice"}, include_invalid=True) == []
    assert store.graph_entities({"user_id": "alice"}) == []
    assert len(store.graph_relations({"user_id": "bob"})) == 1


def test_graph_rows_are_written_with_the_memories_or_not_at_all(store):
    store, emb = store
    alice, tea = entity(emb, "alice", user_id="alice"), entity(emb, "tea", user_id="alice")
    memory = MemoryRecord(id=new_id(), text="likes tea", hash="h", created_at="t", updated_at="t", user_id="alice",
                          vector=emb.documents(["likes tea"])[0])
    clash = MemoryRecord(id=memory.id, text="dup", hash="h", created_at="t", updated_at="t", user_id="alice",
                         vector=memory.vector)
    with pytest.raises(StoreError):  # the duplicate memory id fails the transaction, graph rows included
        store.apply(ChangeSet(inserts=[memory, clash], graph=GraphChanges(
            entities=[alice, tea], relations=[relation(emb, alice, "likes", tea, user_id="alice")])))
    assert store.graph_entities({}) == [] and store.graph_relations({}) == []
    store.apply(ChangeSet(inserts=[memory], graph=GraphChanges(
        entities=[alice, tea], relations=[relation(emb, alice, "likes", tea, user_id="alice")])))
    assert store.get(memory.id) is not None and len(store.graph_relations({"user_id": "alice"})) == 1


def test_purge_and_reset_clear_the_graph(store):
    store, emb = store
    rows = []
    for user in ("alice", "bob"):
        s, d = entity(emb, user, user_id=user), entity(emb, "tea", user_id=user)
        rows.append((s, d, relation(emb, s, "likes", d, user_id=user)))
    store.apply(ChangeSet(graph=GraphChanges(entities=[e for s, d, _ in rows for e in (s, d)],
                                             relations=[r for *_, r in rows])))
    from memlane.core import filters as flt
    store.purge(flt.Compare(flt.Field(column="user_id"), "eq", "alice"))
    assert store.graph_entities({"user_id": "alice"}) == [] and store.graph_relations({"user_id": "alice"}) == []
    assert len(store.graph_relations({"user_id": "bob"})) == 1
    store.reset()
    assert store.graph_entities({}) == [] and store.graph_relations({}) == []
