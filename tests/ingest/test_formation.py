"""Memory formation with the offline engine: extraction, reconciliation, validity, provenance."""

import pytest

from memlane import InvalidInputError, Memory
from memlane.evaluation.reconcile import load_cases, run
from memlane.ingest.offline_extract import extract
from memlane.ingest.offline_reconcile import relation
from memlane.core.models import HistoryEvent, MemoryItem, Message

from conftest import sqlite_config
from support.data import data, dev_case_file

HOLDOUT = data("reconcile_holdout.jsonl")


@pytest.fixture
def memory(model_memory):
    """These tests are about what the real model finds similar."""
    return model_memory


@pytest.mark.parametrize("path", [dev_case_file("reconcile/reconcile_dev.jsonl"),
                                  pytest.param(HOLDOUT, id="holdout")])
def test_offline_engine_passes_the_labelled_cases(memory, path):
    report = run(memory, load_cases(path))
    failed = {c["id"]: c["failures"] for c in report["cases"] if not c["passed"]}
    assert report["pass_rate"] >= 0.85, failed


EXTRACTION = [
    ("I love spicy food and I live in Oslo.", ["User loves spicy food", "User lives in Oslo"]),
    ("My wife Ana teaches math, and I work as a pilot.", ["User's wife Ana teaches math", "User works as a pilot"]),
    ("I'm training for my first marathon.", ["User is training for their first marathon"]),
    ("Big news: I don't eat meat anymore!", ["User doesn't eat meat anymore"]),
    ("Thanks! What's the weather like?", []),
    ("Can you book a table for two?", []),
    ("Heads up: I'm allergic to nuts, so keep that in mind when you cook.", ["User is allergic to nuts"]),
    ("我喜欢喝绿茶，我住在杭州。", ["用户喜欢喝绿茶", "用户住在杭州"]),
    ("我報名了明年的馬拉松！", ["使用者報名了明年的馬拉松"]),
    ("对了，我对芒果过敏，帮我记一下吧。", ["用户对芒果过敏"]),
    ("好的，谢谢！", []),
    ("这家餐厅怎么样？", []),
]


@pytest.mark.parametrize("text, expected", EXTRACTION)
def test_extraction(text, expected):
    facts = extract([Message(role="user", content=text)], agent_facts=False)
    assert [f.text for f in facts if f.kind == "statement"] == expected


def test_assistant_turns_are_context_unless_the_memory_is_the_agents():
    turns = [Message(role="user", content="Hi"), Message(role="assistant", content="I am a travel assistant and I speak French.")]
    assert extract(turns, agent_facts=False) == []
    facts = extract(turns, agent_facts=True)
    assert [f.text for f in facts] == ["Agent is a travel assistant and Agent speaks French"] or \
        [f.text for f in facts] == ["Agent is a travel assistant", "Agent speaks French"]


RELATIONS = [
    ("User has a peanut allergy", "Is allergic to peanuts", "duplicate"),
    ("User adores sushi", "Loves sushi", "duplicate"),
    ("User's dog is called Rex, a beagle", "Has a dog", "refine"),
    ("User moved to Rome", "Lives in Milan", "replace"),
    ("User's sister lives in Rome", "Lives in Milan", None),  # another person's home does not move the user
    ("User doesn't like coffee anymore", "Likes coffee", "contradict"),
    ("User plays chess", "Lives in Milan", None),
    ("用户搬到深圳了", "住在上海", "replace"),
    ("用户吃素", "是素食者", "duplicate"),
    ("用户现在不喝酒了", "喜欢喝酒", "contradict"),
    # sharing a name is not being about the same thing: nothing the memory says may be lost
    ("User moved to Kyoto last month", "User visited Kyoto in 2001", None),
    ("User just got back from Kyoto and loved the ramen", "User visited Kyoto in 2001", None),
    ("User switched from Mac to a ThinkPad", "Uses a Mac at work", "replace"),
    ("User switched to a Mac", "Uses a Mac at work", None),
]


@pytest.mark.parametrize("fact, memory_text, expected", RELATIONS)
def test_relation(fact, memory_text, expected):
    assert relation(fact, memory_text, 0.5) == expected


def test_add_infers_and_reconciles_keeping_ids_and_history(memory):
    first = memory.add("I live in Berlin and I love cheese pizza.", user_id="u")
    assert first["status"] == "ok" and [r["event"] for r in first["results"]] == ["ADD", "ADD"]
    home = next(r["id"] for r in first["results"] if "Berlin" in r["memory"])
    pizza = next(r["id"] for r in first["results"] if "pizza" in r["memory"])

    moved = memory.add([{"role": "user", "content": "I moved from Berlin to Paris last month!"},
                        {"role": "assistant", "content": "Congratulations on the move!"}], user_id="u")
    assert moved["results"] == [{"id": home, "memory": "User moved from Berlin to Paris last month", "event": "UPDATE",
                                 "previous_memory": "User lives in Berlin"}]
    events = memory.history(home)
    assert [e["event"] for e in events] == ["ADD", "UPDATE"] and events[1]["reason"] == "changed"
    for e in events:
        HistoryEvent.model_validate(e)

    again = memory.add("I love cheese pizza!", user_id="u")
    assert again["results"] == [] and again["unchanged"] == [{"id": pizza, "memory": "User loves cheese pizza", "event": "NONE"}]

    quit_pizza = memory.add("I don't like cheese pizza anymore.", user_id="u")
    assert {r["event"] for r in quit_pizza["results"]} == {"DELETE", "ADD"}
    new_id = next(r["id"] for r in quit_pizza["results"] if r["event"] == "ADD")
    old = memory.get(pizza)  # invalidated, not erased
    MemoryItem.model_validate(old)
    assert old["valid_to"] and old["superseded_by"] == new_id and "contradicted" in old["invalid_reason"]
    assert pizza not in {r["id"] for r in memory.get_all(user_id="u")["results"]}
    assert pizza not in {r["id"] for r in memory.search("pizza", user_id="u")["results"]}
    assert pizza in {r["id"] for r in memory.get_all(user_id="u", include_invalid=True)["results"]}
    assert memory.history(pizza)[-1]["event"] == "DELETE"


def test_as_of_shows_what_was_valid_then(memory):
    mid = memory.add("I live in Berlin.", user_id="u")["results"][0]["id"]
    before_move = memory.get(mid)["updated_at"]
    memory.add("I moved to Paris.", user_id="u")
    then = memory.get_all(user_id="u", as_of=before_move)["results"]
    assert [(r["id"], r["memory"]) for r in then] == [(mid, "User lives in Berlin")]
    assert memory.get_all(user_id="u")["results"][0]["memory"] == "User moved to Paris"
    assert memory.get_all(user_id="u", as_of="2000-01-01")["results"] == []
    hits = memory.search("where does the user live?", user_id="u", as_of=before_move)["results"]
    assert [r["memory"] for r in hits] == ["User lives in Berlin"]
    with pytest.raises(InvalidInputError, match="as_of must be an ISO-8601"):
        memory.get_all(user_id="u", as_of="last tuesday")


def test_messages_are_kept_even_when_nothing_is_remembered(memory):
    result = memory.add([{"role": "user", "content": "ok thanks!"}, {"role": "assistant", "content": "You're welcome"}],
                        user_id="u")
    assert result["results"] == [] and result["facts"] == [] and len(result["message_ids"]) == 2
    stored = memory.get_messages(user_id="u")
    assert [(m["role"], m["content"]) for m in stored] == [("user", "ok thanks!"), ("assistant", "You're welcome")]
    assert [m["id"] for m in stored] == result["message_ids"]


def test_provenance_lists_source_messages(memory):
    result = memory.add([{"role": "user", "content": "I play the cello."}, {"role": "user", "content": "I have a cat."}],
                        user_id="u")
    by_text = {r["memory"]: r["id"] for r in result["results"]}
    assert memory.get(by_text["User plays the cello"])["source_message_ids"] == [result["message_ids"][0]]
    assert memory.get(by_text["User has a cat"])["source_message_ids"] == [result["message_ids"][1]]
    refined = memory.add("My cat is called Miso.", user_id="u")
    assert memory.get(by_text["User has a cat"])["source_message_ids"] == [result["message_ids"][1], refined["message_ids"][0]]


def test_chinese_in_chinese_out(memory):
    result = memory.add("我喜欢吃火锅，我住在成都。", user_id="u")
    assert [r["memory"] for r in result["results"]] == ["用户喜欢吃火锅", "用户住在成都"]
    update = memory.add("我最爱的是麻辣火锅。", user_id="u")
    assert update["results"][0]["event"] == "UPDATE" and "麻辣" in update["results"][0]["memory"]


def test_memory_types(memory):
    result = memory.add("I love jazz. My name is Ana. I ran a marathon last Sunday.", user_id="u")
    types = {r["memory"]: memory.get(r["id"])["memory_type"] for r in result["results"]}
    assert types == {"User loves jazz": "preference", "User's name is Ana": "profile",
                     "User ran a marathon last Sunday": "event"}
    forced = memory.add("I drink tea.", user_id="v", memory_type="fact")
    assert memory.get(forced["results"][0]["id"])["memory_type"] == "fact"
    verbatim = memory.add("raw note", user_id="v", infer=False, memory_type="event")
    assert memory.get(verbatim["results"][0]["id"])["memory_type"] == "event"
    assert memory.get_all(user_id="u", filters={"memory_type": "preference"})["results"][0]["memory"] == "User loves jazz"
    with pytest.raises(InvalidInputError, match="memory_type must be one of"):
        memory.add("x", user_id="u", memory_type="opinion")


def test_procedural_memory_summarises_an_agent_run(memory):
    run_log = [{"role": "user", "content": "Book a flight to Rome for Friday"},
               {"role": "assistant", "content": "Searching flights with the travel tool"},
               {"role": "tool", "content": "3 flights found, cheapest 120 EUR at 9:00"},
               {"role": "assistant", "content": "Booked the 9:00 flight for 120 EUR"}]
    with pytest.raises(InvalidInputError, match="procedural memories belong to an agent"):
        memory.add(run_log, user_id="u", memory_type="procedural")
    result = memory.add(run_log, agent_id="travel-bot", memory_type="procedural")
    (item,) = result["results"]
    stored = memory.get(item["id"])
    assert stored["memory_type"] == "procedural" and stored["agent_id"] == "travel-bot"
    assert "Book a flight to Rome" in stored["memory"] and "120 EUR" in stored["memory"]
    assert stored["source_message_ids"] == result["message_ids"]


def test_agent_facts_come_from_the_assistant_in_agent_scope(memory):
    result = memory.add([{"role": "user", "content": "What can you do?"},
                         {"role": "assistant", "content": "I can book trains. My name is Tilda."}], agent_id="tilda")
    assert sorted(r["memory"] for r in result["results"]) == ["Agent can book trains", "Agent's name is Tilda"]


def test_forget_request_invalidates_what_it_is_about(memory):
    memory.add("I live in Oslo. I like jazz.", user_id="u")
    result = memory.add("Please forget where I live.", user_id="u")
    assert [r["event"] for r in result["results"]] == ["DELETE"]
    assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["User likes jazz"]


def test_delete_all_purge_erases_history_and_messages(memory):
    kept = memory.add("I like tea.", user_id="other")["results"][0]["id"]
    mid = memory.add("I like coffee.", user_id="u")["results"][0]["id"]
    assert memory.delete_all(user_id="u")["deleted"] == 1
    assert memory.history(mid) and memory.get_messages(user_id="u")  # a plain delete keeps both
    memory.add("I like cake.", user_id="u")
    result = memory.delete_all(user_id="u", purge=True)
    assert result["deleted"] == 1
    assert memory.history(mid) == [] and memory.get_messages(user_id="u") == []
    assert memory.get(kept) and memory.get_messages(user_id="other")
    with pytest.raises(InvalidInputError, match="takes no filters"):
        memory.delete_all(user_id="u", purge=True, filters={"a": 1})


def test_failure_between_decision_and_write_changes_nothing_but_messages(memory, monkeypatch):
    memory.add("I live in Berlin.", user_id="u")
    before = memory.get_all(user_id="u", include_invalid=True)["results"]
    history = memory.store._con.execute("SELECT count(*) FROM history").fetchone()[0]
    # the crash happens inside the store's write transaction, after the rows were written
    def failing(method):
        def run(*args, **kwargs):
            method(*args, **kwargs)
            raise RuntimeError("injected failure inside the write transaction")
        return run

    monkeypatch.setattr(memory.store, "_update", failing(memory.store._update))
    monkeypatch.setattr(memory.store, "_insert", failing(memory.store._insert))
    with pytest.raises(RuntimeError, match="injected failure"):
        memory.add("I moved to Paris and I adopted a dog.", user_id="u")
    monkeypatch.undo()
    assert memory.get_all(user_id="u", include_invalid=True)["results"] == before
    assert memory.store._con.execute("SELECT count(*) FROM history").fetchone()[0] == history
    assert [m["content"] for m in memory.get_messages(user_id="u")][-1] == "I moved to Paris and I adopted a dog."


def test_infer_must_be_a_bool(memory):
    with pytest.raises(InvalidInputError, match="infer must be true or false"):
        memory.add("x", user_id="u", infer="yes")


def test_verbatim_mode_still_keeps_messages(memory):
    result = memory.add("note to self", user_id="u", infer=False)
    assert memory.get(result["results"][0]["id"])["source_message_ids"] == result["message_ids"]
