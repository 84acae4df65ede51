"""What a verbatim memory is embedded as (ingest/records.py ``embedding_text``): the metadata values
named by ``embed_metadata`` and who said it (``embed_actor``), earlier context, then its text."""

import pytest

from memlane import Memory
from memlane.core.config import RetrievalConfig
from memlane.embeddings.memory_text import embedding_text, token_text

from conftest import sqlite_config

DATE = {"session_date": "8 May, 2023", "session": 3}


@pytest.mark.parametrize("settings, metadata, context, actor, expected", [
    ({}, {}, None, None, "I swam"),
    ({}, {}, None, "Melanie", "Melanie: I swam"),                                   # on by default
    ({"embed_actor": False}, {}, None, "Melanie", "I swam"),
    ({}, {}, None, "", "I swam"),                                                   # no actor, no label
    ({"embed_metadata": ["session_date"]}, DATE, None, "Melanie", "8 May, 2023: Melanie: I swam"),
    ({"embed_metadata": ["session_date"]}, DATE, "Off to the lake?", "Melanie",
     "8 May, 2023: Melanie: Off to the lake? I swam"),
    ({"embed_metadata": ["session_date"], "embed_actor": False}, DATE, None, "Melanie", "8 May, 2023: I swam"),
    ({"embed_metadata": ["missing"]}, DATE, None, "Melanie", "Melanie: I swam"),      # absent keys are left out
    ({"embed_metadata": ["session"]}, DATE, None, None, "3: I swam"),
])
def test_embedding_text(settings, metadata, context, actor, expected):
    assert embedding_text("I swam", metadata, context, RetrievalConfig(**settings), actor) == expected


@pytest.mark.parametrize("embed_actor", [True, False])
def test_a_speakers_name_finds_what_they_said(tmp_path, hashing_embedder, embed_actor):
    """Vector search only (no actor focus, no keywords): the name reaches Melanie's turn, which does
    not contain it, only when the speaker is embedded with the text."""
    config = {**sqlite_config(tmp_path / "m.db"), "retrieval": {"embed_actor": embed_actor}}
    with Memory(config, embedder=hashing_embedder) as memory:
        memory.add([{"role": "user", "name": "Caroline", "content": "the weather turned cold today"},
                    {"role": "user", "name": "Melanie", "content": "the kids loved the lake trip"},
                    {"role": "user", "name": "Caroline", "content": "the lake froze over last winter"}],
                   user_id="chat", infer=False)
        hits = memory.search("Melanie", user_id="chat", limit=3)["results"]
    assert len(hits) == 3  # nothing lost either way
    melanie = next(h for h in hits if h["actor_id"] == "Melanie")
    others = max(h["score"] for h in hits if h["actor_id"] != "Melanie")
    assert melanie["memory"] == "the kids loved the lake trip"  # the label is not part of the memory
    assert (melanie["score"] > others) is embed_actor


@pytest.mark.parametrize("settings, actor, expected", [
    ({}, "Melanie", "Melanie: I swam"),
    ({"embed_actor": False}, "Melanie", "I swam"),
    ({}, None, "I swam"),
])
def test_token_text(settings, actor, expected):
    assert token_text("I swam", RetrievalConfig(**settings), actor) == expected


class _Recording:
    """The hashing embedder, recording what it embeds: sentence texts and token texts."""

    def __init__(self, inner):
        self.inner, self.name, self.dims = inner, inner.name, inner.dims
        self.texts: list[str] = []
        self.token_texts: list[str] = []

    def embed(self, texts, purpose):
        if purpose == "document":
            self.texts.extend(texts)
        return self.inner.embed(texts, purpose)

    def embed_with_tokens(self, texts, purpose="document"):
        self.token_texts.extend(texts)
        return self.inner.embed_with_tokens(texts, purpose)


@pytest.mark.parametrize("at_insert", [True, False])
@pytest.mark.parametrize("embed_actor", [True, False])
def test_the_speaker_is_in_both_representations_on_both_paths(tmp_path, hashing_embedder, at_insert, embed_actor):
    """The vector text and the token text carry the speaker alike, whether the token vectors are
    made at insert or by the first rerank that meets the memory (and written back)."""
    recording = _Recording(hashing_embedder)
    config = {**sqlite_config(tmp_path / "t.db"),
              "retrieval": {"embed_actor": embed_actor, "store_token_vectors": at_insert,
                            "reranker": {"provider": "maxsim"}}}
    with Memory(config, embedder=recording) as memory:
        mid = memory.add([{"role": "user", "name": "Melanie", "content": "the kids loved the lake"}],
                         user_id="chat", infer=False)["results"][0]["id"]
        memory.search("lake", user_id="chat", rerank=True)
        assert set(memory.store.token_vectors([mid])) == {mid}
    label = "Melanie: " if embed_actor else ""
    documents = recording.token_texts if at_insert else recording.texts
    assert f"{label}the kids loved the lake" in documents
    assert f"{label}the kids loved the lake" in recording.token_texts  # the memory's, not only the query's
