"""Three formation slips of the default offline engine (docs/formation.md, "Memory types"): a date that comes
back every year (a birthday, a date of birth, an anniversary) is a fact about someone, not an event, while a
one-off dated happening stays an event; a memory rewritten by UPDATE takes its new text's type; laughter
and remarks about the assistant are skipped as small talk, not as requests."""

from __future__ import annotations

import pytest

from memlane import Memory

#: (a statement of a recurring date, its type; a one-off happening beside it, which stays an event)
RECURRING = [
    ("我的生日是5月20日", "profile", "我去年生日在巴黎过的"),
    ("My birthday is on May 20th.", "profile", "I celebrated my birthday yesterday."),
    ("I was born on 3 March 1990.", "profile", "I moved to Berlin in 2019."),
    ("My daughter was born on 4 July 2021.", "profile", "I have a dentist appointment on March 3."),
    ("Our wedding anniversary is June 12.", "fact", "We got married in June 2015."),
    ("我们的结婚纪念日是6月12日", "fact", "我们是2015年6月结婚的"),
    ("私の誕生日は5月20日です。", "profile", "昨日、誕生日を祝いました。"),
    ("Je suis né le 20 mai 1990.", "profile", None),
]


def typed(memory: Memory, text: str, user: str) -> list[str]:
    memory.add(text, user_id=user)
    return [m["memory_type"] for m in memory.get_all(user_id=user)["results"]]


@pytest.mark.parametrize(("recurring", "kind", "once"), RECURRING)
def test_a_recurring_date_is_not_an_event_and_a_one_off_one_is(memory, recurring, kind, once):
    assert typed(memory, recurring, "a") == [kind]
    if once is not None:
        assert typed(memory, once, "b") == ["event"]


#: (what the user said first, the change said after, the type before and after the UPDATE)
CHANGES = [
    ("I live in Berlin.", "I moved to Paris last week.", "profile", "event"),
    ("I work at Google.", "I started a new job at Microsoft yesterday.", "profile", "event"),
    ("我住在北京。", "我上个月搬到上海了。", "profile", "event"),
]


@pytest.mark.parametrize(("first", "change", "before", "after"), CHANGES)
def test_an_update_takes_the_new_texts_type(backend, e5_embedder, first, change, before, after):
    with Memory(backend(), embedder=e5_embedder) as m:  # SQLite and PostgreSQL
        assert typed(m, first, "u") == [before]
        [update] = m.add(change, user_id="u")["results"]
        assert update["event"] == "UPDATE"
        assert [(x["memory"], x["memory_type"]) for x in m.get_all(user_id="u")["results"]] == \
            [(update["memory"], after)]


@pytest.mark.parametrize("said", ["哈哈哈，你太逗了", "你真聪明！", "哈哈，你说得对", "haha you're so funny",
                                  "lol you are hilarious"])
def test_laughing_at_the_assistant_is_small_talk(memory, said):
    answer = memory.add(said, user_id="u")
    assert answer["results"] == [] and [s["reason"] for s in answer["skipped"]] == ["a greeting or small talk"]
