"""What a person would store from everyday chat (issue 32): small talk skipped, the right people as
subjects, facts inside questions kept, changes that end what they are about, refinements, and the
metadata of a known fact merged into it."""

from __future__ import annotations

import numpy as np
import pytest

from memlane.core import filters as flt
from memlane.core.models import MemoryRecord, Message
from memlane.embeddings import memory_text
from memlane.ingest import endings, offline_reconcile
from memlane.ingest.offline_extract import SMALL_TALK, extract, skip_reason
from memlane.ingest.types import Candidates, Fact


def _statements(text: str) -> list[str]:
    return [f.text for f in extract([Message(role="user", content=text)], agent_facts=False)]


SMALL_TALK_LINES = [
    "Haha thanks, have a nice day!",
    "Sounds good, talk tomorrow.",
    "I'm doing well, thanks for asking.",
    "lol that's hilarious, thanks so much!",
    "Not bad, how about you?",
    "omg that's so funny 😂 thank you!!",
    "Yeah that makes sense, cheers 👍",
    "Good morning! Hope you're well.",
    "好的，谢谢你，明天再聊！",
    "哈哈哈，好的好的，晚安～",
    "嗯嗯，辛苦啦～周末愉快！",
]


@pytest.mark.parametrize("text", SMALL_TALK_LINES)
def test_small_talk_is_skipped_with_its_reason(text):
    message = Message(role="user", content=text)
    assert extract([message], agent_facts=False) == []
    assert skip_reason(message, agent_facts=False) == SMALL_TALK


STATEMENTS = [  # (message, what is kept): pleasantries cut off, the right people, facts inside questions
    ("Perfect, we love curry.", ["User and their family love curry"]),
    ("Awesome, we're big fans of Studio Ghibli films.", ["User and their family are big fans of Studio Ghibli films"]),
    ("We're expecting our second baby in June.", ["User and their family are expecting their second baby in June"]),
    ("We use Jira at work.", ["User and their colleagues use Jira at work"]),
    ("lol yeah, I just adopted a beagle and I'm learning Korean.",
     ["User just adopted a beagle", "User is learning Korean"]),
    ("Cool cool. Anyway I start my new job at Shopify on Monday.", ["User starts their new job at Shopify on Monday"]),
    ("My sister and I both love sushi.", ["User and their sister both love sushi"]),
    ("My husband and I are both teachers.", ["User and their husband are both teachers"]),
    ("Me and my dad go fishing every Sunday.", ["User and their dad go fishing every Sunday"]),
    ("Sofia and I broke up last month.", ["User and Sofia broke up last month"]),
    ("My wife and I moved to Leeds. We love it here.",
     ["User and their wife moved to Leeds", "User and their wife love it here"]),
    ("My brother Tom just moved to Oslo. He is a dentist.", ["User's brother Tom just moved to Oslo", "Tom is a dentist"]),
    ("My friend Priya is a pilot. She flies for Emirates.", ["User's friend Priya is a pilot", "Priya flies for Emirates"]),
    ("My mom is visiting next week. She's allergic to cats.",
     ["User's mom is visiting next week", "User's mom is allergic to cats"]),
    ("What should I get my mum for her birthday? She loves gardening.", ["User's mum loves gardening"]),
    ("Any ideas for my son's party? He turns 8 next Saturday.", ["User's son turns 8 next Saturday"]),
    ("She is great.", ["She is great"]),  # nobody to point to: left as written
    ("Since I'm vegan, what should I cook tonight?", ["User is vegan"]),
    ("As someone with celiac disease, which pasta brands are safe for me?", ["User has celiac disease"]),
    ("As someone who hates running, how do I get fit?", ["User hates running"]),
    ("Being a night-shift worker, how can I sleep better during the day?", ["User is a night-shift worker"]),
    ("Given that I'm allergic to nuts, is pesto safe?", ["User is allergic to nuts"]),
    ("Could you recommend a laptop? I'm a video editor.", ["User is a video editor"]),
    ("I want to learn Spanish, where do I start?", ["User wants to learn Spanish"]),
    ("I need a gift for my wife, she loves orchids, any ideas?", ["User's wife loves orchids"]),
    ("I sold my Civic, so now I take the train to work.", ["User sold their Civic", "User now takes the train to work"]),
    ("我们公司下个月搬到浦东。", ["用户的公司下个月搬到浦东"]),
    ("我们家养了两只猫。", ["用户家养了两只猫"]),
    ("哈哈，我最近在学吉他", ["用户最近在学吉他"]),
    ("我哥哥在深圳，他是程序员。", ["用户的哥哥在深圳", "用户的哥哥是程序员"]),
    ("我对海鲜过敏，晚饭吃什么好？", ["用户对海鲜过敏"]),
    ("我是糖尿病患者，有什么甜点可以吃吗？", ["用户是糖尿病患者"]),
]


@pytest.mark.parametrize("text, expected", STATEMENTS)
def test_everyday_chat_becomes_statements(text, expected):
    assert _statements(text) == expected


QUESTIONS_ONLY = [  # nothing stated: the whole message is the question or the request
    ("I was wondering, what's the best way to learn piano?", "a question"),
    ("I need a gift for my wife, any ideas?", "a question"),
    ("As usual, what's the weather?", "a question"),
    ("你觉得我该不该换工作？", "a question"),
]


@pytest.mark.parametrize("text, reason", QUESTIONS_ONLY)
def test_a_question_that_states_nothing_is_skipped(text, reason):
    message = Message(role="user", content=text)
    assert extract([message], agent_facts=False) == []
    assert skip_reason(message, agent_facts=False) == reason


ENDED = [  # (statement, the terms of what it ends, or None)
    ("User sold their Civic", {"civic"}),
    ("User traded in the Focus for an electric Kia last weekend", {"focus"}),
    ("User quit Deloitte and started their own bakery", {"deloitt"}),
    ("User and Sofia broke up last month", {"sofia"}),
    ("User left The Owls in March", {"owl"}),
    ("User gave up smoking", {"smoke"}),
    ("User moved out of their parents' place", {"parent", "place"}),
    ("User left early", None),
    ("User is leaving for Paris tomorrow", None),
    ("User's bus stop is Elm Street", None),
    ("用户把宝马卖了", {"宝", "马"}),
    ("用户上个月从腾讯辞职了，现在自己创业", {"腾", "讯"}),
]


@pytest.mark.parametrize("text, terms", ENDED)
def test_what_a_statement_ends(text, terms):
    assert endings.ended_terms(text) == (frozenset(terms) if terms is not None else None)


RELATIONS = [  # (new fact, memory, relation)
    ("User sold their Civic", "User owns a Honda Civic", "contradict"),
    ("User traded in the Focus for an electric Kia", "User drives a Ford Focus", "replace"),
    ("User quit Deloitte and started their own bakery", "User works at Deloitte as an auditor", "replace"),
    ("User and Sofia broke up last month", "User's girlfriend is Sofia", "contradict"),
    ("User left The Owls in March", "User plays bass in a band called The Owls", "contradict"),
    ("用户把宝马卖了", "用户有一辆宝马", "contradict"),
    ("User sold their Civic", "User's sister owns a Civic", None),  # another person's car
    ("User sold their Civic", "User likes Japanese cars", None),  # not about the Civic
]


@pytest.mark.parametrize("fact, memory, expected", RELATIONS)
def test_a_change_ends_the_memory_about_its_object(fact, memory, expected):
    assert offline_reconcile.relation(fact, memory, 0.5) == expected


def test_a_refinement_updates_what_it_refines():
    fact, memory = "User buys S&P 500 index ETFs every month", "User invests in ETFs"
    assert offline_reconcile.relation(fact, memory, 0.6) is None  # said plainly: a new fact beside it
    assert offline_reconcile.relation(fact, memory, 0.6, refines=True) == "refine"
    facts = extract([Message(role="user", content="Specifically, I buy S&P 500 index ETFs every month.")],
                    agent_facts=False)
    assert [(f.text, f.refines) for f in facts] == [("User buys S&P 500 index ETFs every month", True)]


ANNOUNCED_THEN_STATED = [  # (facts of one message, the memory): the fact with the new value updates it
    (["使用者換工作了", "使用者現在在台中的一家銀行上班"], "使用者在新竹的科技公司上班"),
    (["用户换工作了", "用户现在在台中的一家银行上班"], "用户在新竹的科技公司上班"),
    (["User changed jobs", "User now works at a bank in Taichung"], "User works at a tech company in Hsinchu"),
]


@pytest.mark.parametrize("similarity", [(0.9, 0.6), (0.6, 0.9)])  # whichever of the two the model puts nearer
@pytest.mark.parametrize("facts, known", ANNOUNCED_THEN_STATED)
def test_an_announced_change_leaves_the_memory_to_the_fact_that_states_it(facts, known, similarity):
    memory = MemoryRecord(id="m2", text=known, hash="", created_at="", updated_at="")
    decisions = offline_reconcile.reconcile([Fact(text) for text in facts],
                                            Candidates([memory], np.array([[s] for s in similarity], np.float32)))
    assert [(d.event, d.target, d.text) for d in decisions] == [("UPDATE", "m2", facts[1])]


def test_an_announcement_alone_still_changes_the_memory():
    memory = MemoryRecord(id="m2", text="用户在新竹的科技公司上班", hash="", created_at="", updated_at="")
    decisions = offline_reconcile.reconcile([Fact("用户换工作了"), Fact("用户报名了东京马拉松")],
                                            Candidates([memory], np.array([[0.8], [0.1]], np.float32)))
    assert [(d.event, d.target) for d in decisions] == [("UPDATE", "m2"), ("ADD", None)]


@pytest.fixture
def memory(model_memory):
    return model_memory


@pytest.mark.parametrize("before, after, gone", [
    ("I own a Honda Civic.", "I sold my Civic, so now I take the train to work.", "User owns a Honda Civic"),
    ("I work at Deloitte as an auditor.", "Big news, I quit Deloitte and started my own bakery!",
     "User works at Deloitte as an auditor"),
    ("I invest in ETFs.", "Specifically, I buy S&P 500 index ETFs every month.", "User invests in ETFs"),
])
def test_changes_and_refinements_through_add(memory, before, after, gone):
    memory.add(before, user_id="u")
    memory.add(after, user_id="u")
    active = [m["memory"] for m in memory.get_all(user_id="u")["results"]]
    assert gone not in active and active


def test_metadata_of_a_known_fact_is_merged_into_it(memory):
    first = memory.add("I love Thai food", user_id="u")["results"][0]
    again = memory.add("I love Thai food", user_id="u", metadata={"category": "food"})
    assert again["results"] == []
    assert again["unchanged"] == [{"id": first["id"], "memory": first["memory"], "event": "NONE",
                                   "metadata_merged": {"category": "food"}}]
    assert again["skipped"][0]["reason"] == "already known: the memory took this call's metadata"
    tagged = memory.get_all(user_id="u", filters={"category": "food"})["results"]
    assert [m["id"] for m in tagged] == [first["id"]]
    events = memory.history(first["id"])
    assert [e["event"] for e in events] == ["ADD", "UPDATE"]
    assert events[-1]["old_memory"] == events[-1]["new_memory"] == first["memory"]
    # the same tags again change nothing and write no history
    third = memory.add("I love Thai food", user_id="u", metadata={"category": "food"})
    assert "metadata_merged" not in third["unchanged"][0]
    assert third["skipped"][0]["reason"] == "already known"
    assert len(memory.history(first["id"])) == 2


def test_merged_metadata_that_is_embedded_re_embeds_the_memory(tmp_path, embedder):
    from memlane import Memory

    m = Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}},
                "retrieval": {"embed_metadata": ["category"]}}, embedder=embedder)
    try:
        first = m.add("I love Thai food", user_id="u")["results"][0]
        _, before = m.store.with_vectors(flt.parse({"user_id": "u"}))
        m.add("I love Thai food", user_id="u", metadata={"category": "cuisine"})
        records, after = m.store.with_vectors(flt.parse({"user_id": "u"}))
        assert [r.metadata for r in records] == [{"category": "cuisine"}]
        assert not np.allclose(before, after)
        expected = memory_text.embedding_text(records[0].text, records[0].metadata, None, m.config.retrieval,
                                              records[0].actor_id)
        assert expected.startswith("cuisine: ")
        assert np.allclose(after[0], m.embeddings.documents([expected])[0], atol=1e-5)
    finally:
        m.close()
