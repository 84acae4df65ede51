"""``search_memory_with_context`` with the default model (multilingual-e5-small): a memory that says what
the conversation says in other words, sharing no term with it, is found by meaning, as plain ``search``
finds it; memories about something else are not. The semantic component reads similarities on the common
scale (embeddings/calibration.py), so ``context.min_similarity`` means the same with every model
(memlane issue 46)."""

from __future__ import annotations

import pytest

from memlane import Memory

from conftest import sqlite_config

CATEGORIES = ("agent_profile_matches", "agent_event_matches", "user_profile_matches", "user_event_matches")

#: (memory, a conversation turn saying the same in other words: no content word in common)
PARAPHRASES = [
    ("User's kitten shreds the curtains whenever she is left alone",
     "My little cat keeps tearing up the drapes when I go to the office, any tips?"),
    ("User is allergic to peanuts", "Can you suggest a snack? Groundnuts make my throat swell."),
    ("User is vegetarian", "Can you recommend a restaurant? I never eat meat or fish."),
    ("User's daughter starts kindergarten in September",
     "My little girl begins preschool after the summer holidays, what does she need?"),
    ("User drives an electric car", "Where can I recharge my EV battery on the motorway?"),
    ("User works night shifts as a nurse",
     "I look after patients on the ward until dawn, how can I sleep better during the day?"),
    ("User's grandmother is turning ninety next month", "Granny has her 90th birthday coming up soon, gift ideas?"),
    ("User is moving to Berlin for a new job",
     "I'm relocating to Germany's capital because I got hired there, what should I pack?"),
]

#: memories none of the conversations is about: found by no conversation
UNRELATED = ["User's favourite colour is green", "User's brother is an accountant in Toronto",
             "User dislikes horror films", "User plays chess online on Sundays"]


@pytest.fixture(scope="module")
def store(tmp_path_factory, e5_embedder):
    with Memory(sqlite_config(tmp_path_factory.mktemp("paraphrase") / "m.db"), embedder=e5_embedder) as m:
        m.add([memory for memory, _ in PARAPHRASES] + UNRELATED, user_id="pat", infer=False)
        yield m


def _matches(result) -> dict[str, dict]:
    return {m["content"]: m for c in CATEGORIES for m in result[c]}


@pytest.mark.parametrize("memory,turn", PARAPHRASES, ids=[m[:24] for m, _ in PARAPHRASES])
def test_a_paraphrase_without_a_shared_word_is_found_with_the_default_model(store, memory, turn):
    top = store.search(turn, user_id="pat", limit=1)["results"][0]
    assert top["memory"] == memory                              # plain search ranks it first
    result = store.search_memory_with_context([{"role": "user", "content": turn}], user_id="pat")
    found = _matches(result)
    assert memory in found, result
    assert found[memory]["matched_terms"] == []                 # by meaning alone
    assert found[memory]["scores"]["vector"] == pytest.approx(top["score"], abs=1e-6)  # search's scale
    assert not set(UNRELATED) & set(found)
