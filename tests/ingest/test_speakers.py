"""Formation in a conversation with several named speakers (ingest/speakers.py): each fact belongs
to who stated it, and a speaker's facts are reconciled only with that speaker's memories and those
said by no one in particular."""

import pytest

from memlane.core.models import Message
from memlane.ingest.speakers import attribute, counterpart_filter
from memlane.ingest.types import Fact

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


def test_counterparts_are_the_speakers_and_the_unattributed():
    assert counterpart_filter([Fact("a"), Fact("b")]) is None
    node = counterpart_filter([Fact("a", actor_id="Bob"), Fact("b", actor_id="Alice"), Fact("c", actor_id="Bob")])
    values = [item.value for item in node.items]
    assert values == [["Alice", "Bob"], None]


def _active(memory, scope="chat"):
    return sorted((h["memory"], h["actor_id"]) for h in memory.get_all(user_id=scope)["results"])


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
