"""The offline relation extractor (memlane.graph.rules), as a table: sentence -> triples,
in English and Chinese; first person is the user (USER), negations retract."""

import pytest

from memlane.graph.extract import RuleExtractor
from memlane.graph.rules import extract
from memlane.core.graph_models import USER
from memlane.core.models import Message

U = USER

CASES = [
    # English: the patterns of the table
    ("I like green tea.", [(U, "likes", "green tea")]),
    ("I really enjoy hiking with my dad", [(U, "likes", "hiking")]),
    ("I love jazz", [(U, "loves", "jazz")]),
    ("I hate traffic", [(U, "hates", "traffic")]),
    ("I can't stand cilantro", [(U, "hates", "cilantro")]),
    ("I work at Google", [(U, "works_at", "Google")]),
    ("I'm working for the Red Cross now", [(U, "works_at", "Red Cross")]),
    ("I live in Paris", [(U, "lives_in", "Paris")]),
    ("I moved to Berlin last year", [(U, "lives_in", "Berlin")]),
    ("I've moved to NYC", [(U, "lives_in", "NYC")]),
    ("I'm married to Sarah", [(U, "married_to", "Sarah")]),
    ("My wife is Sarah", [(U, "married_to", "Sarah")]),
    ("I was born in Lyon", [(U, "born_in", "Lyon")]),
    ("I have a dog named Rex", [(U, "has", "dog")]),
    ("My name is Tom", [(U, "name", "Tom")]),
    # named subjects
    ("Alice works at Acme Corp.", [("Alice", "works_at", "Acme Corp")]),
    ("Bob lives in New York City", [("Bob", "lives_in", "New York City")]),
    # lists and several clauses
    ("I like tea and coffee", [(U, "likes", "tea"), (U, "likes", "coffee")]),
    ("I live in New York City and I like green tea. I work at Google.",
     [(U, "likes", "green tea"), (U, "lives_in", "New York City"), (U, "works_at", "Google")]),
    # nothing to extract: pronouns that are not the user, questions, small talk
    ("She likes cats", []),
    ("What do you like?", []),
    ("Hello, how are you today?", []),
    # Chinese
    ("我喜欢火锅", [(U, "likes", "火锅")]),
    ("我很喜欢茶和咖啡", [(U, "likes", "茶"), (U, "likes", "咖啡")]),
    ("我爱音乐", [(U, "loves", "音乐")]),
    ("我讨厌香菜", [(U, "hates", "香菜")]),
    ("我住在上海。", [(U, "lives_in", "上海")]),
    ("我搬到了北京", [(U, "lives_in", "北京")]),
    ("我在腾讯工作", [(U, "works_at", "腾讯")]),
    ("我的妻子是李娜", [(U, "married_to", "李娜")]),
    ("我老公叫王强", [(U, "married_to", "王强")]),
    ("我出生在杭州", [(U, "born_in", "杭州")]),
    ("我有一只猫", [(U, "has", "猫")]),
    ("我叫王伟", [(U, "name", "王伟")]),
    ("今天天气很好", []),
    # notes as agents write them: "the user" / "User" / 用户 is the user
    ("The user lives in Berlin", [(U, "lives_in", "Berlin")]),
    ("User works at Acme", [(U, "works_at", "Acme")]),
    ("User's wife is Ana", [(U, "married_to", "Ana")]),
    ("用户住在苏州", [(U, "lives_in", "苏州")]),
    # a predicate after "and" keeps its subject, and the first clause's object ends at the "and"
    ("I live in Paris and work at Google", [(U, "works_at", "Google"), (U, "lives_in", "Paris")]),
    ("Marco lives in Rome and works at Fiat", [("Marco", "works_at", "Fiat"), ("Marco", "lives_in", "Rome")]),
    ("Alice likes tea and loves jazz", [("Alice", "likes", "tea"), ("Alice", "loves", "jazz")]),
    ("I started working at Canva", [(U, "works_at", "Canva")]),
    # a Chinese clause without a subject after one with 我 is the speaker's
    ("我住在杭州，在阿里巴巴工作", [(U, "lives_in", "杭州"), (U, "works_at", "阿里巴巴")]),
    ("我加入了字节跳动", [(U, "works_at", "字节跳动")]),
    ("我住在杭州，他在上海工作", [(U, "lives_in", "杭州")]),  # 他 is someone else
    ("I quit smoking", []),  # not a job: no organisation named
]

CHANGES = [  # (sentence, the relations it states, the relations it retracts)
    ("I moved from Paris to Lisbon.", [(U, "lives_in", "Lisbon")], [(U, "lives_in", "Paris")]),
    ("Actually I relocated from Lisbon to Porto!", [(U, "lives_in", "Porto")], [(U, "lives_in", "Lisbon")]),
    ("I left Google and joined Meta.", [(U, "works_at", "Meta")], [(U, "works_at", "Google")]),
    ("I quit my job at IBM", [], [(U, "works_at", "IBM")]),
    ("The user has left Acme", [], [(U, "works_at", "Acme")]),
    ("我从北京搬到了上海。", [(U, "lives_in", "上海")], [(U, "lives_in", "北京")]),
    ("我不再在北京工作了，现在在深圳工作。", [(U, "works_at", "深圳")], [(U, "works_at", "北京")]),
    ("我从腾讯离职了，加入了字节跳动", [(U, "works_at", "字节跳动")], [(U, "works_at", "腾讯")]),
    ("我不再喜欢咖啡了，更喜欢茶", [(U, "likes", "茶")], [(U, "likes", "咖啡")]),
]

NEGATIONS = [
    ("I no longer like coffee", [(U, "likes", "coffee")]),
    ("I don't live in Paris anymore", [(U, "lives_in", "Paris")]),
    ("I do not work at Google", [(U, "works_at", "Google")]),
    ("我不再喜欢咖啡了", [(U, "likes", "咖啡")]),
    ("我不喜欢香菜", [(U, "likes", "香菜")]),
    ("我不住在上海", [(U, "lives_in", "上海")]),
]


def triples(text, negated=False):
    return [(t.source, t.relationship, t.destination) for t in extract(text) if t.negated == negated]


@pytest.mark.parametrize("text, expected", CASES)
def test_statements(text, expected):
    assert triples(text) == expected
    assert triples(text, negated=True) == []


@pytest.mark.parametrize("text, expected", NEGATIONS)
def test_negations_retract(text, expected):
    assert triples(text, negated=True) == expected
    assert triples(text) == []


@pytest.mark.parametrize("text, stated, retracted", CHANGES)
def test_changes_state_the_new_relation_and_retract_the_old(text, stated, retracted):
    assert triples(text) == stated
    assert triples(text, negated=True) == retracted


def test_only_the_users_messages_are_a_source():
    messages = [Message(role="user", content="I live in Oslo"),
                Message(role="assistant", content="I like Oslo too! I work at OpenAI."),
                Message(role="user", content="我喜欢滑雪")]
    found = [(t.source, t.relationship, t.destination) for t in RuleExtractor().extract(messages)]
    assert found == [(U, "lives_in", "Oslo"), (U, "likes", "滑雪")]
