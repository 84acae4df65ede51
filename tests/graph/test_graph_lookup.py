"""The graph lookup of a search (memlane.graph.lookup) with the real local model: which entities a
query points at (named, first person, similar) and how their relations rank."""

import numpy as np

from memlane.graph.lookup import match_entities, score_relations
from memlane.graph.resolve import normalize
from memlane.core.graph_models import Entity, Relation


def entities(embedder, names):
    vectors = np.asarray(embedder.embed(names, "document"), dtype=np.float32)
    return [Entity(id=n, name=n, key=normalize(n), created_at="t", updated_at="t", vector=v)
            for n, v in zip(names, vectors)]


def relation(embedder, s, rel, d):
    v = np.asarray(embedder.embed([f"{s} {rel.replace('_', ' ')} {d}"], "document"), dtype=np.float32)[0]
    return Relation(id=f"{s}-{rel}-{d}", source_id=s, source=s, relationship=rel, destination_id=d, destination=d,
                    created_at="t", updated_at="t", valid_from="t", vector=v)


def query(embedder, text):
    return np.asarray(embedder.embed([text], "query"), dtype=np.float32)[0]


def test_entities_match_by_name_first_person_and_meaning(embedder):
    known = entities(embedder, ["alice", "Berlin", "green tea", "Acme", "上海"])
    q = "Where in Berlin does she work?"
    matched = match_entities(q, query(embedder, q), known, user_keys={"alice"}, threshold=0.5)
    assert matched["Berlin"] == 1.0 and "alice" not in matched  # no first person, alice not named
    q = "what drinks do I like"
    matched = match_entities(q, query(embedder, q), known, user_keys={"alice"}, threshold=0.5)
    assert matched["alice"] == 1.0 and "Berlin" not in matched
    q = "我住在上海吗"
    matched = match_entities(q, query(embedder, q), known, user_keys={"alice"}, threshold=0.5)
    assert matched["上海"] == 1.0 and matched["alice"] == 1.0


def test_relations_rank_by_entity_meaning_and_relationship_cue(embedder):
    rels = [relation(embedder, "alice", "works_at", "Acme"), relation(embedder, "alice", "lives_in", "Berlin"),
            relation(embedder, "alice", "likes", "green tea"), relation(embedder, "bob", "likes", "chess")]
    q = "where does alice live?"
    ranked = score_relations(q, query(embedder, q), rels, {"alice": 1.0}, threshold=0.3, limit=10)
    assert [r.destination for r, _ in ranked] == ["Berlin", "Acme", "green tea"]  # bob's relation: no entity match
    assert all(0 < s <= 1 for _, s in ranked)
    assert score_relations(q, query(embedder, q), rels, {"alice": 1.0}, threshold=0.3, limit=1)[0][0].destination \
        == "Berlin"
    assert score_relations(q, query(embedder, q), rels, {}, threshold=0.0, limit=10) == []
