"""A verbatim memory keeps what was said just before its message (its context): shown with it,
embedded before its text, indexed with its keywords, and kept by updates, re-embedding, export and
import, on both backends (``backend`` fixture). A reply ("Sounds amazing!") is found by the words of
what it answers ("hiking")."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from memlane import Memory
from memlane.core import scope
from memlane.core.errors import InvalidInputError
from memlane.embeddings.hashing import HashingEmbedder
from memlane.embeddings.memory_text import CONTEXT_CHARS, embedding_text
from memlane import transfer

HIKE = "I went hiking in the Alps last weekend"
REPLY = "Sounds amazing, I am jealous!"
CONVERSATION = [{"role": "user", "name": "Ann", "content": HIKE},
                {"role": "user", "name": "Bo", "content": REPLY}]


@pytest.fixture
def memory(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder) as m:
        yield m


def keyword_hits(memory, query, user="u"):
    where = scope.scoped_filter({"user_id": user}, None)
    return sorted(r.text for r, _, _ in memory.store.keyword_search(query, memory.embeddings.query(query), where, 10))


def vector_of(memory, text, user="u"):
    records, matrix = memory.store.with_vectors(scope.scoped_filter({"user_id": user}, None))
    return matrix[[r.text for r in records].index(text)]


def stored(memory, user="u"):
    return {r["memory"]: r.get("context") for r in memory.get_all(user_id=user)["results"]}


@pytest.mark.parametrize("messages, expected", [
    # a reply gets the message it answers
    (CONVERSATION, {HIKE: None, REPLY: HIKE}),
    # one speaker's consecutive notes are each their own
    ([{"role": "user", "content": "I like tea"}, {"role": "user", "content": "I like cake"}],
     {"I like tea": None, "I like cake": None}),
    # the assistant answering the user
    ([{"role": "user", "content": "What should I cook tonight?"}, {"role": "assistant", "content": "Try a risotto"}],
     {"What should I cook tonight?": None, "Try a risotto": "What should I cook tonight?"}),
])
def test_a_reply_keeps_what_it_answers_and_shows_it(memory, messages, expected):
    memory.add(messages, user_id="u", infer=False)
    assert stored(memory) == expected


def test_a_reply_is_a_keyword_hit_for_the_words_it_answers(memory):
    memory.add("golf on Sunday", user_id="u", infer=False, timestamp="2026-03-01T07:00:00+00:00")  # hours before
    memory.add(CONVERSATION, user_id="u", infer=False)
    assert keyword_hits(memory, "Alps") == [HIKE, REPLY]
    assert keyword_hits(memory, "jealous") == [REPLY]  # the context is not indexed with the message before
    assert keyword_hits(memory, "golf") == ["golf on Sunday"]


def test_updating_a_reply_keeps_its_context_in_its_index_and_its_vector(memory):
    memory.add(CONVERSATION, user_id="u", infer=False)
    reply = next(r["id"] for r in memory.get_all(user_id="u")["results"] if r["memory"] == REPLY)
    changed = "Sounds amazing, I want to go skiing there"
    memory.update(reply, changed)
    assert memory.get(reply)["context"] == HIKE
    assert keyword_hits(memory, "Alps") == [HIKE, changed]
    assert keyword_hits(memory, "skiing") == [changed]
    expected = memory.embeddings.documents([embedding_text(changed, {}, HIKE, memory.config.retrieval, "Bo")])[0]
    assert np.allclose(vector_of(memory, changed), expected, atol=1e-3)


def test_reembedding_embeds_the_context_again(backend):
    config = backend()
    with Memory(config, embedder=HashingEmbedder(384)) as m:
        m.add(CONVERSATION, user_id="u", infer=False)
        settings = m.config.retrieval
    with Memory.reembed(config, embedder=HashingEmbedder(256)) as m:
        expected = m.embeddings.documents([embedding_text(REPLY, {}, HIKE, settings, "Bo")])[0]
        assert np.allclose(vector_of(m, REPLY), expected, atol=1e-3)


def test_a_long_context_is_kept_as_its_end(memory):
    long = "word " * 200 + "the very end"
    memory.add([{"role": "user", "name": "Ann", "content": long}, {"role": "user", "name": "Bo", "content": "ok then"}],
               user_id="u", infer=False)
    context = stored(memory)["ok then"]
    assert len(context) == CONTEXT_CHARS + 1 and context.startswith("…") and context.endswith("the very end")


def test_export_and_import_keep_the_context(backend, hashing_embedder, tmp_path):
    with Memory(backend(), embedder=hashing_embedder) as source:
        source.add(CONVERSATION, user_id="u", infer=False)
        out = io.StringIO()
        transfer.export_jsonl(source, out, scope.scoped_filter({"user_id": "u"}, None))
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("context") for line in lines] == [None, HIKE]
    with Memory(backend(), embedder=hashing_embedder) as target:
        transfer.import_jsonl(target, _written(tmp_path, lines))
        assert stored(target) == {HIKE: None, REPLY: HIKE}
        assert keyword_hits(target, "Alps") == [HIKE, REPLY]


def test_importing_a_conversation_gives_replies_their_context_as_add_does(memory, tmp_path):
    transfer.import_jsonl(memory, _written(tmp_path, [{"messages": CONVERSATION, "user_id": "u"}]))
    assert stored(memory) == {HIKE: None, REPLY: HIKE}


@pytest.mark.parametrize("context, message", [
    (42, "context must be a string"),
    ("   ", "context must not be empty"),
])
def test_an_imported_context_is_validated(memory, tmp_path, context, message):
    path = _written(tmp_path, [{"memory": REPLY, "user_id": "u", "context": context}])
    with pytest.raises(InvalidInputError, match=message):
        transfer.import_jsonl(memory, path)
    assert memory.get_all(user_id="u")["results"] == []


def _written(folder, lines):
    path = folder / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _said(minutes):
    return f"2026-03-01T10:{minutes:02d}:00+00:00"


@pytest.mark.parametrize("first, second, expected", [
    # a conversation added turn by turn: the reply gets the turn before it, as in one add
    ({"name": "Ann", "at": 0}, {"name": "Bo", "at": 1}, HIKE),
    # the same person going on: each note its own
    ({"name": "Ann", "at": 0}, {"name": "Ann", "at": 1}, None),
    # more than retrieval.neighbour_gap_seconds (an hour) later: another conversation
    ({"name": "Ann", "at": 0}, {"name": "Bo", "at": 59, "hours": 2}, None),
    # said before the stored turn (an older conversation imported later)
    ({"name": "Ann", "at": 30}, {"name": "Bo", "at": 1}, None),
])
def test_a_conversation_added_turn_by_turn_gives_replies_their_context(memory, first, second, expected):
    def add(text, turn):
        at = _said(turn["at"]).replace("T10", f"T{10 + turn.get('hours', 0)}")
        return memory.add([{"role": "user", "name": turn["name"], "content": text}], user_id="u", infer=False,
                          timestamp=at)

    add(HIKE, first)
    add(REPLY, second)
    assert stored(memory) == {HIKE: None, REPLY: expected}


def test_turns_of_another_scope_are_not_context(memory):
    memory.add([{"role": "user", "name": "Ann", "content": HIKE}], user_id="someone-else", infer=False)
    memory.add([{"role": "user", "name": "Bo", "content": REPLY}], user_id="u", infer=False)
    assert stored(memory) == {REPLY: None}
