"""A search's stages share the records they read (store.base.SearchReads): the vector candidates, the
actor focus's and the keyword matches overlap, and each memory's record is read once — with the same
results as when every stage reads its own, on both backends."""

import pytest

from memlane import Memory
from memlane.retrieval import searcher as searcher_module
from memlane.store.postgres import PostgresStore
from memlane.store.sqlite import SQLiteStore
from support.counting import built_records
from support.turns import TWO_SPEAKER_TURNS

TURNS = TWO_SPEAKER_TURNS

QUERIES = ["Where did Melanie go camping?", "What did Caroline research?", "When did Melanie paint a sunrise?",
           "What does Melanie do to destress?", "lake kids tent"]

FLAGS = [{}, {"keyword_search": True, "rerank": True}, {"keyword_search": False}, {"keyword_search": True}]


def _answers(memory: Memory) -> list:
    return [[(hit["id"], hit["score"]) for hit in memory.search(q, user_id="chat", limit=5, **flags)["results"]]
            for q in QUERIES for flags in FLAGS]


@pytest.fixture
def filled(backend, hashing_embedder):
    with Memory(backend(store_token_vectors=True), embedder=hashing_embedder) as memory:
        for name, text in TURNS:
            memory.add([{"role": "user", "name": name, "content": text}], user_id="chat", infer=False)
        yield memory


def test_shared_reads_give_the_results_of_separate_reads(filled, monkeypatch):
    shared = _answers(filled)
    monkeypatch.setattr(searcher_module, "SearchReads", lambda: None)  # every stage reads its own records
    assert _answers(filled) == shared
    assert any(len(answer) > 1 for answer in shared)


def test_each_record_is_built_once_per_search(backend, filled, monkeypatch):
    built = built_records(monkeypatch, SQLiteStore if backend.name == "sqlite" else PostgresStore)
    filled.search("Where did Melanie go camping?", user_id="chat", limit=5)
    # the vector stage, the actor focus (Melanie is named) and the keyword stage all read this scope
    assert len(built) == len(set(built)) > 0
    built.clear()
    monkeypatch.setattr(searcher_module, "SearchReads", lambda: None)
    filled.search("Where did Melanie go camping?", user_id="chat", limit=5)
    assert len(built) > len(set(built))  # without sharing, the stages' overlap is read again
