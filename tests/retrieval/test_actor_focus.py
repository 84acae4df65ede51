"""Actor focus (retrieval/actors.py): a query naming someone who said memories in the scope
prefers what that someone said."""

import pytest

from memlane import Memory
from memlane.retrieval.actors import named_actors

from conftest import sqlite_config


@pytest.mark.parametrize("text, actors, named", [
    ("What does Melanie do to destress?", {"Melanie", "Caroline"}, {"Melanie"}),
    ("what does melanie like?", {"Melanie"}, {"Melanie"}),                      # case-insensitive
    ("Did Jon and Gina both dance?", {"Jon", "Gina", "John"}, {"Jon", "Gina"}),
    ("What does John collect?", {"Jon"}, set()),                                # whole words only
    ("Where did Melanie's kids go?", {"Melanie"}, {"Melanie"}),                 # a possessive is the name
    ("What is the plan?", {"Melanie"}, set()),
    ("What did a.b say?", {"a.b", "axb"}, {"a.b"}),                             # names are literal, not patterns
    ("Anything?", {"", " "}, set()),
])
def test_named_actors(text, actors, named):
    assert named_actors(text, actors) == named


#: Caroline's turns share the query's words (even Melanie's name); Melanie's shares none of them
TURNS = [("Caroline", text) for text in (
    "Melanie, where should we go camping?", "Did Melanie go camping?", "Where did you go, Melanie?",
    "Melanie, camping is fun", "camping gear: where did it go?", "Melanie went where?",
    "Where did the camping trip go wrong?", "Melanie, did you go?")] + [
    ("Melanie", "We pitched our tent by the lake with the kids"),
]


@pytest.mark.parametrize("weight", [0.0, 1.0])
def test_a_query_naming_an_actor_reaches_that_actors_memories(backend, hashing_embedder, weight):
    with Memory(backend(candidates=3, rerank_top=3, actor_weight=weight), embedder=hashing_embedder) as memory:
        for name, text in TURNS:
            memory.add([{"role": "user", "name": name, "content": text}], user_id="chat", infer=False)
        answer = memory.search("Where did Melanie go camping?", user_id="chat", limit=3, keyword_search=True)
    actors = [hit["actor_id"] for hit in answer["results"]]
    if weight:
        # outside the three vector and keyword candidates: found through the actor, and lifted
        assert "Melanie" in actors
        assert answer["metadata"]["stages"]["vector"]["actors"]["added"] >= 1  # a step of the vector stage
    else:
        assert "Melanie" not in actors
        assert "actors" not in answer["metadata"]["stages"]["vector"]


def test_actor_focus_leaves_a_query_naming_nobody_alone(tmp_path, hashing_embedder):
    config = {**sqlite_config(tmp_path / "b.db"), "retrieval": {"actor_weight": 0.5}}
    with Memory(config, embedder=hashing_embedder) as memory:
        for name, text in TURNS:
            memory.add([{"role": "user", "name": name, "content": text}], user_id="chat", infer=False)
        focused = memory.search("where should we go camping?", user_id="chat", limit=5, keyword_search=True)
        memory.config.retrieval.actor_weight = 0.0
        plain = memory.search("where should we go camping?", user_id="chat", limit=5, keyword_search=True)
    assert [h["id"] for h in focused["results"]] == [h["id"] for h in plain["results"]]
    stage = focused["metadata"]["stages"]["vector"]["actors"]
    assert stage["ran"] and stage["actors"] == 0 and stage["added"] == 0


def test_memories_without_actors_cost_no_second_search(tmp_path, hashing_embedder, monkeypatch):
    config = {**sqlite_config(tmp_path / "c.db"), "retrieval": {"actor_weight": 0.5}}
    with Memory(config, embedder=hashing_embedder) as memory:
        memory.add(["Melanie went camping", "camping gear is on sale"], user_id="notes", infer=False)
        calls = []
        search = memory.store.search
        monkeypatch.setattr(memory.store, "search", lambda *a, **k: calls.append(a) or search(*a, **k))
        answer = memory.search("Where did Melanie go camping?", user_id="notes", keyword_search=True)
    assert len(calls) == 1  # the vector candidates only: no memory has an actor to look for
    assert answer["metadata"]["stages"]["vector"]["actors"] == {**answer["metadata"]["stages"]["vector"]["actors"],
                                                                "actors": 0, "added": 0}
