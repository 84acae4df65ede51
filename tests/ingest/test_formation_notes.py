"""Offline formation of what agents and people actually send: notes, third person, bare predicates,
``key: value``, wrappers, Chinese notes; changes reconciled; and nothing stored silently (``skipped``)."""

from __future__ import annotations

import json

import pytest

from memlane.evaluation import notes
from memlane.ingest.offline_extract import extract
from memlane.mcp_server import tools
from memlane.core.models import Message
from support.data import data, dev_eval, needs_dev_eval
from conftest import sqlite_config
from support.server_fixtures import live  # noqa: F401  (fixture)

HOLDOUT = data("notes_holdout.jsonl")
#: everyday chat (tests/data/README.md): small talk, we, compound subjects, facts inside questions, changes,
#: refinements, pronouns
CONVERSATION_HOLDOUT = data("conversation_holdout.jsonl")


@pytest.fixture
def memory(db_path, e5_embedder):
    """These tests are about what the default model (multilingual-e5-small) finds similar."""
    from memlane import Memory

    with Memory(sqlite_config(db_path), embedder=e5_embedder) as m:
        yield m


#: beyond English and Chinese (17 languages and code-switching), and a second fact about the same person or
#: thing (tests/data/README.md): written for memlane as held-out sets, never tuned on
LANGUAGES_HOLDOUT = data("languages_holdout.jsonl")
KEEP_HOLDOUT = data("keep_holdout.jsonl")
#: changes, second facts and small talk in many languages, written for memlane while building it (tuned on)
FORMATION_LANGUAGES = data("formation_languages.jsonl")


def _dev(relative: str, floor: float, id: str):
    return pytest.param(dev_eval(relative), floor, id=id, marks=needs_dev_eval)


@pytest.mark.parametrize("path, floor", [
    _dev("notes/notes_dev.jsonl", 0.95, "dev"), pytest.param(HOLDOUT, 0.95, id="holdout"),
    _dev("notes/conversation_dev.jsonl", 0.95, "conversation-dev"),
    pytest.param(CONVERSATION_HOLDOUT, 0.95, id="conversation-holdout"),
    _dev("notes/languages_dev.jsonl", 0.95, "languages-dev"),
    _dev("notes/keep_dev.jsonl", 1.0, "keep-dev"),
    pytest.param(FORMATION_LANGUAGES, 0.95, id="languages-own"),
    # held out, never tuned on: the floor is what was measured when they were first run on the finished engine
    pytest.param(LANGUAGES_HOLDOUT, 0.9, id="languages-holdout"),
    pytest.param(KEEP_HOLDOUT, 0.85, id="keep-holdout"),
])
def test_offline_engine_understands_the_note_cases(memory, path, floor):
    report = notes.run(memory, notes.load_cases(path))
    failed = {c["id"]: c["failures"] for c in report["cases"] if not c["passed"]}
    assert report["pass_rate"] >= floor, failed


NOTES = [  # (message, the statements the offline engine keeps)
    ("The user is training for a triathlon", ["User is training for a triathlon"]),
    ("User prefers replies in Spanish", ["User prefers replies in Spanish"]),
    ("Marco is lactose intolerant", ["Marco is lactose intolerant"]),
    ("Likes short meetings and hates phone calls", ["User likes short meetings", "User hates phone calls"]),
    ("Remember that my son plays the violin", ["User's son plays the violin"]),
    ("Note: user's lease ends in June", ["User's lease ends in June"]),
    ("Favourite editor: Neovim", ["User's favourite editor is Neovim"]),
    ("Dietary restrictions: gluten-free, no pork", ["User's dietary restrictions are gluten-free, no pork"]),
    ("User: night owl, drinks espresso, owns a Tesla",
     ["User is a night owl", "User drinks espresso", "User owns a Tesla"]),
    ("Ticket INC-2290: the user's VPN drops every evening", ["Ticket INC-2290: User's VPN drops every evening"]),
    ("Allergic to peanuts", ["User is allergic to peanuts"]),
    ("用户住在苏州", ["用户住在苏州"]),
    ("记一下：我每周三晚上打羽毛球", ["用户每周三晚上打羽毛球"]),
    ("不吃香菜，喜欢吃辣", ["用户不吃香菜", "用户喜欢吃辣"]),
    ("我偏好科技股，風險承受度中等", ["使用者偏好科技股", "使用者風險承受度中等"]),
    ("我有一只猫，叫咪咪", ["用户有一只猫，叫咪咪"]),  # the name is the cat's, not the user's
    ("- likes tea\n- hates coffee\n* works at Acme", ["User likes tea", "User hates coffee", "User works at Acme"]),
    ("小明喜欢打篮球", ["小明喜欢打篮球"]),
    ("1) 不吃辣", ["用户不吃辣"]),
    ("I no longer drink alcohol.", ["User no longer drinks alcohol"]),
    ("I particularly enjoy baking sourdough bread.", ["User particularly enjoys baking sourdough bread"]),
    ("Now I especially like AI-related tech stocks.", ["User now especially likes AI-related tech stocks"]),
    ("Currently I rarely eat meat.", ["User currently rarely eats meat"]),
    ("I quit IBM and now work at Canva.", ["User quit IBM and now works at Canva"]),
    ("I am a teacher, I speak French and I have a dog called Rex.",
     ["User is a teacher", "User speaks French", "User has a dog called Rex"]),
]


@pytest.mark.parametrize("text, expected", NOTES)
def test_notes_become_statements(text, expected):
    facts = extract([Message(role="user", content=text)], agent_facts=False)
    assert [f.text for f in facts] == expected


SKIPS = [  # (conversation, the reason of each message that stores nothing)
    ("Hi there!", ["a greeting or small talk"]),
    ("Thank you so much!", ["a greeting or small talk"]),
    ("What's the weather like in Lisbon?", ["a question"]),
    ("Can you book a table for two?", ["a request to the assistant"]),
    ("这家餐厅怎么样？", ["a question"]),
    ("The sky is blue today", ["no statement about a person"]),
    ([{"role": "user", "content": "ok"}, {"role": "assistant", "content": "I can help with recipes."}],
     ["a greeting or small talk", "an assistant turn: context for the user's facts, not a source of them"]),
    ([{"role": "system", "content": "You are helpful."}, {"role": "user", "content": "Thanks!"}],
     ["a system message: instructions, not facts", "a greeting or small talk"]),
    ("Please forget my shoe size", ["a request to forget: no memory matched it"]),
]


@pytest.mark.parametrize("messages, reasons", SKIPS)
def test_every_message_that_stores_nothing_says_why(memory, messages, reasons):
    outcome = memory.add(messages, user_id="skips")
    assert outcome["status"] == "ok" and outcome["results"] == []
    assert [s["reason"] for s in outcome["skipped"]] == reasons
    assert [s["message_id"] for s in outcome["skipped"]] == outcome["message_ids"]


def test_a_repeated_fact_is_reported_as_already_known_and_a_change_is_not_skipped(memory):
    memory.add("I live in Oslo.", user_id="known")
    again = memory.add([{"role": "user", "content": "I live in Oslo."}, {"role": "user", "content": "I love jazz."}],
                       user_id="known")
    assert [r["event"] for r in again["results"]] == ["ADD"]
    assert again["skipped"] == [{"message_id": again["message_ids"][0], "reason": "already known"}]
    assert [u["memory"] for u in again["unchanged"]] == ["User lives in Oslo"]


CHANGES = [  # (first, second, the old memory's word that must not stay active unchanged, the new state)
    ("I like jogging.", "I no longer like jogging.", "User likes jogging", "no longer"),
    ("My car is a Honda.", "Actually my car is a Mazda now.", "Honda", "Mazda"),
    ("I work at IBM.", "I quit IBM and now work at Canva.", "User works at IBM", "Canva"),
    ("I work at Deloitte.", "I left Deloitte and joined Stripe last month.", "User works at Deloitte", "Stripe"),
    ("I live in Oslo.", "We relocated from Oslo to Bergen in May.", "User lives in Oslo", "Bergen"),
    ("Favourite editor: Vim", "Favourite editor: Helix", "Vim", "Helix"),
    ("我喜欢看电影。", "我现在不怎么看电影了，更喜欢看书。", "用户喜欢看电影", "看书"),
    ("我在阿里工作。", "我已经离职了，现在自己创业。", "用户在阿里工作", "创业"),
    # an agent's notes negated by a contraction ("doesn't" was read as the same fact, "isn't" as no statement)
    ("User likes pizza", "User doesn't like pizza", "User likes pizza", "doesn't"),
    ("Marco is vegetarian", "Marco isn't vegetarian anymore", "Marco is vegetarian", "isn't"),
    ("The user can swim", "The user can't swim", "User can swim", "can't"),
]


@pytest.mark.parametrize("first, second, old, new", CHANGES)
def test_a_change_updates_or_invalidates_the_old_memory(memory, first, second, old, new):
    memory.add(first, user_id="change")
    before = memory.get_all(user_id="change")["results"]
    outcome = memory.add(second, user_id="change")
    assert {r["event"] for r in outcome["results"]} & {"UPDATE", "DELETE"}, outcome
    active = [item["memory"] for item in memory.get_all(user_id="change")["results"]]
    assert not any(old in text and new not in text for text in active), active
    assert any(new in text for text in active), active
    for item in before:  # the old state is kept in history or as an invalidated memory, never erased
        assert memory.get(item["id"]) is not None


def test_no_longer_is_a_delete_with_the_new_memory_superseding(memory):
    first = memory.add("I like jogging.", user_id="jog")["results"][0]
    outcome = memory.add("I no longer like jogging.", user_id="jog")
    assert sorted(r["event"] for r in outcome["results"]) == ["ADD", "DELETE"]
    added = next(r for r in outcome["results"] if r["event"] == "ADD")
    old = memory.get(first["id"])
    assert old["valid_to"] and old["superseded_by"] == added["id"]


SEED_002 = {  # seed 002's worked example (tech stocks, three days), offline
    "zh-Hant": ["我偏好科技股，風險承受度中等", "我現在特別看好 AI 相關的科技股", "我現在不想投資科技股了，想轉向價值股"],
    "en": ["I prefer tech stocks and my risk tolerance is medium.", "Now I especially like AI-related tech stocks.",
           "I don't want to invest in tech stocks anymore, I want to switch to value stocks."],
}
SEED_WORDS = {"zh-Hant": ("科技股", "風險", "AI", "價值股"), "en": ("tech stocks", "risk", "AI", "value stocks")}


@pytest.mark.parametrize("lang", SEED_002)
def test_seed_002_worked_example_offline(memory, lang):
    tech, risk, ai, value = SEED_WORDS[lang]
    day1, day2, day3 = SEED_002[lang]
    first = memory.add(day1, user_id=lang)
    assert [r["event"] for r in first["results"]] == ["ADD", "ADD"]  # two facts, as the seed extracts
    tech_id = next(r["id"] for r in first["results"] if tech in r["memory"])
    risk_item = next(r for r in first["results"] if risk in r["memory"])

    second = memory.add(day2, user_id=lang)  # a refinement: UPDATE of the same memory
    assert [(r["event"], r["id"]) for r in second["results"]] == [("UPDATE", tech_id)]
    assert ai in second["results"][0]["memory"]

    third = memory.add(day3, user_id=lang)  # a change of mind: the tech memory is invalidated, value stocks added
    events = {(r["event"], r["id"]) for r in third["results"]}
    assert ("DELETE", tech_id) in events
    assert memory.get(tech_id)["valid_to"] is not None
    assert [e["event"] for e in memory.history(tech_id)] == ["ADD", "UPDATE", "DELETE"]
    active = {item["id"]: item["memory"] for item in memory.get_all(user_id=lang)["results"]}
    assert active[risk_item["id"]] == risk_item["memory"]  # the risk tolerance is untouched
    assert any(value in text for text in active.values())
    assert not any(ai in text for text in active.values())


# -- every face reports what it did not store -----------------------------------------------------


def test_cli_prints_why_nothing_was_stored(cli):
    out = cli("add", "What's the time?", "-u", "ana").stdout
    assert "SKIP" in out and "a question" in out
    report = json.loads(cli("add", "Hello!", "-u", "ana", "--json").stdout)
    assert report["skipped"][0]["reason"] == "a greeting or small talk"


def test_mcp_add_memory_reports_a_note_that_stores_nothing(memory):
    caller = tools.Caller(memory=memory, default_user_id="agent-user")
    empty = tools.add_memory(caller, "Can you remind me tomorrow?")
    assert empty["results"] == [] and empty["skipped"][0]["reason"] == "a request to the assistant"
    assert empty["message"].startswith("nothing stored: a request to the assistant")
    assert "infer=false" in empty["message"]
    stored = tools.add_memory(caller, "The user is training for a triathlon")
    assert stored["message"] == "stored: 1 ADD"
    assert [r["memory"] for r in stored["results"]] == ["User is training for a triathlon"]
    again = tools.add_memory(caller, "The user is training for a triathlon")
    assert again["message"].startswith("nothing new: already known")


@pytest.mark.model
def test_eval_notes_command_reports_passes_and_failures(cli, tmp_path):
    cases = tmp_path / "notes.jsonl"
    cases.write_text("\n".join(json.dumps(case) for case in [
        {"id": "n-1", "lang": "en", "kind": "agent_note", "steps": ["Remember that my son plays the violin"],
         "expect": [["son", "violin"]], "forbid": ["remember"]},
        {"id": "n-2", "lang": "en", "kind": "first_person", "steps": ["I live in Oslo."],
         "expect": [["Tromsø"]]},  # cannot hold: reported as a failure
    ]) + "\n")
    report = json.loads(cli("eval", "notes", cases, "--json").stdout)
    assert (report["passed"], report["total"], report["engine"]) == (1, 2, "offline")
    failed = next(c for c in report["cases"] if c["id"] == "n-2")
    assert failed["failures"] == ["no active memory contains 'Tromsø'"]
    assert failed["memories"] == ["User lives in Oslo"]
    assert "passed 1/2" in cli("eval", "notes", cases).stdout


@pytest.mark.parametrize("memory_text, source, invented", [
    ("User noes longer drink alcohol", "I no longer drink alcohol.", ["noes"]),
    ("User particularlies enjoy baking", "I particularly enjoy baking.", ["particularlies"]),
    ("User particularly enjoys baking", "I particularly enjoy baking.", []),
    ("User and others relocated to Bergen", "We relocated to Bergen.", []),
])
def test_the_evaluator_flags_invented_words(memory_text, source, invented):
    assert notes.invented_words(memory_text, source) == invented


def test_rest_and_mem0_routes_report_skipped_messages(live):
    with live.client(live.key("skip-tenant")) as http:
        rest = http.post("/memories", json={"messages": [{"role": "user", "content": "What time is it in Lisbon?"},
                                                         {"role": "user", "content": "I keep bees."}],
                                            "user_id": "ana"}).json()
        assert [r["memory"] for r in rest["results"]] == ["User keeps bees"]
        assert rest["skipped"] == [{"message_id": rest["message_ids"][0], "reason": "a question"}]
        platform = http.post("/v3/memories/add/", json={"messages": [{"role": "user", "content": "Thanks!"}],
                                                        "user_id": "ana"}).json()
        assert platform["status"] == "SUCCEEDED" and platform["results"] == []
        assert [s["reason"] for s in platform["skipped"]] == ["a greeting or small talk"]
