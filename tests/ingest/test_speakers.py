"""Formation in a conversation with several named speakers (ingest/speakers.py): each fact belongs
to who stated it, and a speaker's facts are reconciled only with that speaker's memories and those
said by no one in particular."""

import numpy as np
import pytest

from memlane import Memory
from memlane.core.models import Message
from memlane.ingest.speakers import attribute, counterpart_filter, may_reconcile
from memlane.ingest.types import Fact

from conftest import sqlite_config

MESSAGES = [Message(role="user", content="…", name="Alice"), Message(role="user", content="…", name="Bob"),
            Message(role="assistant", content="…"), Message(role="user", content="…")]


@pytest.mark.parametrize("sources, explicit, default, actor, known", [
    ((0,), None, "Alice", "Alice", True),
    ((1,), None, "Alice", "Bob", True),            # not the first speaker's
    ((1,), "Carol", "Alice", "Carol", True),       # the call's own actor_id wins
    ((0, 1), None, "Alice", "Alice", False),       # an LLM read both: the first speaker's, not known
    ((2,), None, "Alice", "Alice", False),         # an unnamed source
    ((), None, None, None, False),
    ((1, 3), None, "Alice", "Bob", True),          # one name among the sources
])
def test_attribute(sources, explicit, default, actor, known):
    facts = [Fact("User likes tea", sources=sources)]
    assert attribute(facts, MESSAGES, explicit=explicit, default=default) is known
    assert facts[0].actor_id == actor


@pytest.mark.parametrize("first, second, may", [
    ("Alice", "Alice", True), ("Alice", "Bob", False), ("Alice", None, True), (None, "Bob", True), (None, None, True),
])
def test_may_reconcile(first, second, may):
    assert may_reconcile(first, second) is may


def test_counterparts_are_the_speakers_and_the_unattributed():
    assert counterpart_filter([Fact("a"), Fact("b")]) is None
    node = counterpart_filter([Fact("a", actor_id="Bob"), Fact("b", actor_id="Alice"), Fact("c", actor_id="Bob")])
    values = [item.value for item in node.items]
    assert values == [["Alice", "Bob"], None]


def _active(memory, scope="chat"):
    return sorted(((h["memory"], h.get("actor_id")) for h in memory.get_all(user_id=scope)["results"]),
                  key=lambda pair: (pair[0], pair[1] or ""))


def test_another_speakers_identical_fact_is_stored(model_memory):
    m = model_memory
    m.add([{"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
    second = m.add([{"role": "user", "name": "Bob", "content": "I like green tea."}], user_id="chat")
    assert [r["event"] for r in second["results"]] == ["ADD"] and second["unchanged"] == []
    again = m.add([{"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
    assert again["results"] == [] and again["unchanged"][0]["event"] == "NONE"  # her own: already known
    assert _active(m) == [("User likes green tea", "Alice"), ("User likes green tea", "Bob")]


def test_one_add_with_two_speakers_keeps_both_and_attributes_each(model_memory):
    m = model_memory
    out = m.add([{"role": "user", "name": "Alice", "content": "I like green tea."},
                 {"role": "user", "name": "Bob", "content": "I like green tea."},
                 {"role": "user", "name": "Bob", "content": "I live in Paris."}], user_id="chat")
    assert out["skipped"] == []  # Bob's first message is not "no statement about a person"
    assert _active(m) == [("User likes green tea", "Alice"), ("User likes green tea", "Bob"),
                          ("User lives in Paris", "Bob")]


def test_a_speaker_cannot_change_or_forget_anothers_memory(model_memory):
    m = model_memory
    m.add([{"role": "user", "name": "Alice", "content": "I live in Oslo."},
           {"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
    moved = m.add([{"role": "user", "name": "Bob", "content": "I live in Paris."}], user_id="chat")
    assert [r["event"] for r in moved["results"]] == ["ADD"]  # not an UPDATE of Alice's city
    forgot = m.add([{"role": "user", "name": "Bob", "content": "Please forget that I like green tea."}],
                   user_id="chat")
    assert forgot["results"] == []
    assert _active(m) == [("User likes green tea", "Alice"), ("User lives in Oslo", "Alice"),
                          ("User lives in Paris", "Bob")]
    mine = m.add([{"role": "user", "name": "Alice", "content": "I live in Bergen now."}], user_id="chat")
    assert [(r["event"], r.get("previous_memory")) for r in mine["results"]] == [("UPDATE", "User lives in Oslo")]


def test_a_speakers_fact_still_meets_memories_said_by_no_one(model_memory):
    m = model_memory
    m.add("I like green tea.", user_id="chat")  # no name: no actor
    named = m.add([{"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
    assert named["results"] == [] and named["unchanged"][0]["event"] == "NONE"


# -- who said it, in the vector (retrieval.embed_actor) on every path that embeds a memory --------

def _score_for(memory, query, actor):
    hits = memory.search(query, user_id="chat", limit=10)["results"]
    return max((h["score"] for h in hits if h["actor_id"] == actor), default=None)


@pytest.mark.parametrize("embed_actor", [True, False])
def test_a_formed_fact_is_embedded_with_its_speaker(tmp_path, hashing_embedder, embed_actor):
    config = {**sqlite_config(tmp_path / "f.db"), "retrieval": {"embed_actor": embed_actor}}
    with Memory(config, embedder=hashing_embedder) as m:
        m.add([{"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
        m.add([{"role": "user", "name": "Bob", "content": "I like green tea."}], user_id="chat")
        # the same words: only the label tells a vector search whose is whose
        assert (_score_for(m, "Alice", "Alice") > _score_for(m, "Alice", "Bob")) is embed_actor
        mine = m.add([{"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
        assert mine["unchanged"] and mine["results"] == []  # the label does not hide her own fact


def test_update_and_reembed_keep_the_speaker_in_the_vector(tmp_path, hashing_embedder):
    from memlane.embeddings.hashing import HashingEmbedder

    config = sqlite_config(tmp_path / "u.db")
    with Memory(config, embedder=hashing_embedder) as m:
        ids = {r["memory"]: r["id"] for r in
               m.add([{"role": "user", "name": "Alice", "content": "the lake froze"},
                      {"role": "user", "name": "Bob", "content": "the lake thawed"}], user_id="chat",
                     infer=False)["results"]}
        m.update(ids["the lake froze"], "the pond froze over")
        assert _score_for(m, "Alice", "Alice") > _score_for(m, "Alice", "Bob")
    with Memory.reembed(config, embedder=HashingEmbedder(dims=256)) as m:
        assert m.embeddings.dims == 256
        assert _score_for(m, "Alice", "Alice") > _score_for(m, "Alice", "Bob")
        assert _score_for(m, "Bob", "Bob") > _score_for(m, "Bob", "Alice")


def test_merging_near_duplicates_keeps_two_speakers_apart(tmp_path, hashing_embedder):
    config = {**sqlite_config(tmp_path / "d.db"), "retrieval": {"embed_actor": False}}  # identical vectors
    with Memory(config, embedder=hashing_embedder) as m:
        m.add([{"role": "user", "name": "Alice", "content": "I drink espresso every morning"},
               {"role": "user", "name": "Bob", "content": "I drink espresso every morning"},
               {"role": "user", "name": "Alice", "content": "I drink espresso every morning!"}],
              user_id="chat", infer=False)
        report = m.merge_similar_memories(user_id="chat", threshold=0.9)
        assert [len(r["merged"]) for r in report["results"]] == [1]  # Alice's two, not Bob's
        assert sorted(h["actor_id"] for h in m.get_all(user_id="chat")["results"]) == ["Alice", "Bob"]


def test_speakers_are_kept_apart_on_both_backends(backend, hashing_embedder):
    """The counterpart filter (the speaker's memories or nobody's) and the labelled vectors in SQL."""
    with Memory(backend(), embedder=hashing_embedder) as m:
        m.add("I live in Oslo.", user_id="chat")  # nobody's
        m.add([{"role": "user", "name": "Alice", "content": "I like green tea."}], user_id="chat")
        bob = m.add([{"role": "user", "name": "Bob", "content": "I like green tea."}], user_id="chat")
        assert [r["event"] for r in bob["results"]] == ["ADD"]  # not Alice's
        oslo = m.add([{"role": "user", "name": "Bob", "content": "I live in Oslo."}], user_id="chat")
        assert oslo["unchanged"] and not oslo["results"]  # nobody's memory already says it
        forgot = m.add([{"role": "user", "name": "Bob", "content": "Please forget that I like green tea."}],
                       user_id="chat")
        assert [r["event"] for r in forgot["results"]] == ["DELETE"]
        assert _active(m) == [("User likes green tea", "Alice"), ("User lives in Oslo", None)]


def test_statement_vectors_are_cached_and_equal_fresh_ones(hashing_embedder):
    from memlane.embeddings import Embeddings

    embeddings = Embeddings(hashing_embedder, 2)
    first = embeddings.statements(["a b", "c d", "a b"])
    assert np.allclose(first, embeddings.documents(["a b", "c d", "a b"]))
    again = embeddings.statements(["c d", "e f"])  # "c d" from the cache, "e f" embedded
    assert np.allclose(again, embeddings.documents(["c d", "e f"]))
    assert embeddings._statements.hits == 1 and embeddings.statements([]).shape == (0, hashing_embedder.dims)


def test_labelled_candidates_are_chosen_by_what_the_texts_say(hashing_embedder):
    from memlane.core.models import MemoryRecord
    from memlane.embeddings import Embeddings
    from memlane.ingest.candidates import said_candidates

    pool = [MemoryRecord(id=str(n), text=text, hash="", created_at="", updated_at="")
            for n, text in enumerate(["User lives in Oslo", "User likes green tea", "User likes black coffee"])]
    facts = [Fact("User likes green tea"), Fact("User lives in Oslo")]
    found = said_candidates(Embeddings(hashing_embedder), facts, pool, top_k=1)
    assert [m.text for m in found.memories] == ["User likes green tea", "User lives in Oslo"]  # each fact's best
    assert found.similarity.shape == (2, 2) and np.allclose(np.diag(found.similarity), 1.0, atol=1e-5)
    assert said_candidates(Embeddings(hashing_embedder), facts, [], top_k=1).similarity.shape == (2, 0)
