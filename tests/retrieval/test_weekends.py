"""Weekends in questions (retrieval/weekends.py, read by retrieval/relative_time.py): "last weekend", "this
weekend", "next weekend" in the languages relative times are read in are the Saturday and Sunday they name,
read against the conversation's "now"; a weekend with no direction ("at the weekend", often a habit) is none."""

from datetime import datetime, timezone

import pytest

from memlane import Memory
from memlane.retrieval import relative_time, weekends
from support.data import data

FRIDAY = datetime(2024, 3, 15, 10, tzinfo=timezone.utc)  # this weekend: 16-17 March; last: 9-10; next: 23-24
SUNDAY = datetime(2024, 3, 17, 20, tzinfo=timezone.utc)  # this weekend: 16-17 March (today); last: 9-10
MONDAY = datetime(2024, 3, 18, 8, tzinfo=timezone.utc)  # last weekend: the one just gone, 16-17 March

LAST, THIS, NEXT = [("2024-03-09", 2)], [("2024-03-16", 2)], [("2024-03-23", 2)]


@pytest.mark.parametrize("question, anchor, spans", [
    ("What did I do last weekend?", FRIDAY, LAST),
    ("What are we doing this weekend?", FRIDAY, THIS),
    ("Any plans for next weekend?", FRIDAY, NEXT),
    ("Who did I meet this weekend?", SUNDAY, THIS),
    ("Who did I meet last weekend?", SUNDAY, LAST),
    ("Who did I meet last weekend?", MONDAY, THIS),  # on a Monday, the weekend just gone
    ("What did I cook last WEEKEND?", FRIDAY, LAST),
    ("What did we do the last week-end?", FRIDAY, LAST),
    ("¿Qué hicimos el fin de semana pasado?", FRIDAY, LAST),  # "pasado", as "el año pasado"
    ("¿Qué hacemos este fin de semana?", FRIDAY, THIS),
    ("¿Y el próximo fin de semana?", FRIDAY, NEXT),
    ("Was haben wir letztes Wochenende gemacht?", FRIDAY, LAST),
    ("Was machen wir dieses Wochenende?", FRIDAY, THIS),
    ("Und nächstes Wochenende?", FRIDAY, NEXT),
    ("Qu'avons-nous fait le week-end dernier ?", FRIDAY, LAST),
    ("Que faisons-nous ce week-end ?", FRIDAY, THIS),
    ("Et le week-end prochain ?", FRIDAY, NEXT),
    ("O que fizemos no fim de semana passado?", FRIDAY, LAST),
    ("E no próximo fim de semana?", FRIDAY, NEXT),
    ("Cosa abbiamo fatto lo scorso fine settimana?", FRIDAY, LAST),
    ("Cosa facciamo questo fine settimana?", FRIDAY, THIS),
    ("E il prossimo weekend?", FRIDAY, NEXT),
    ("Wat deden we vorig weekend?", FRIDAY, LAST),
    ("Wat doen we dit weekend?", FRIDAY, THIS),
    ("En volgend weekend?", FRIDAY, NEXT),
    ("Что мы делали в прошлые выходные?", FRIDAY, LAST),  # "прошлые", as "в прошлом году"
    ("А в следующие выходные?", FRIDAY, NEXT),
    ("我上周末做了什么？", FRIDAY, LAST),  # the weekend, not the week "上周" of its first characters
    ("我们本周末做什么？", FRIDAY, THIS),
    ("下周末呢？", FRIDAY, NEXT),
    ("我們上週末做了什麼？", FRIDAY, LAST),
    ("先週末は何をしましたか？", FRIDAY, LAST),
    ("今週末は何をしますか？", FRIDAY, THIS),
    ("来週末は？", FRIDAY, NEXT),
    ("지난 주말에 뭐 했어?", FRIDAY, LAST),
    ("지난주말에 뭐 했어?", FRIDAY, LAST),
    ("이번 주말에 뭐 해?", FRIDAY, THIS),
    ("다음 주말은?", FRIDAY, NEXT),
    ("What did I do last weekend and yesterday?", FRIDAY, [*LAST, ("2024-03-14", 1)]),  # in the order named
    # a weekend without a direction names no window (a habit, as often as not)
    ("What do I usually do on the weekend?", FRIDAY, []),
    ("Was machen wir am Wochenende?", FRIDAY, []),
    ("周末做什么运动", FRIDAY, []),
    ("週末に何をしましたか？", FRIDAY, []),
    ("What did I do on weekends last year?", FRIDAY, [("2023-01-01", 365)]),  # "weekends": the year, as before
])
def test_a_weekend_is_the_saturday_and_sunday_it_names(question, anchor, spans):
    found = relative_time.windows(question, anchor)
    assert [(start.date().isoformat(), (end - start).days) for start, end in found] == spans


@pytest.mark.parametrize("question, named", [
    ("What did I do last weekend?", True),
    ("Qu'avons-nous fait le week-end dernier ?", True),
    ("我上周末做了什么？", True),
    ("Where is the weekender bag?", False),  # a longer word is not the weekend
    ("What did I cook for Jake?", False),
])
def test_a_weekend_opens_the_gate_before_any_parsing(question, named):
    assert relative_time.mentions(question) is named


@pytest.mark.parametrize("language, last, this, nxt", [
    ("en", "last", "this", "next"),
    ("es", "pasado", "este", "próximo"),  # both genders: "el año pasado", "la semana pasada"
    ("es", "pasada", "esta", "próxima"),
    ("de", "letztes", "dieses", "nächstes"),
    ("fr", "dernier", "ce", "prochain"),
    ("zh", "上", "本", "下"),
    ("ja", "先", "今", "来"),
    ("ko", "지난", "이번", "다음"),
])
def test_the_direction_words_are_dateparsers(language, last, this, nxt):
    words = weekends.directions(language)
    assert (words[last], words[this], words[nxt]) == (-1, 0, 1)
    assert "el" not in words and "la" not in words  # words of two directions ("el año pasado", "el próximo año")


def test_the_weekend_questions_are_answered_from_their_weekend(tmp_path, e5_embedder):
    """tests/data/weekend_questions.jsonl (17 questions in six languages over six dated conversations whose
    "now" is a Sunday), the default search: hit@1 0.88 measured (before weekends were read: 0.35)."""
    from memlane.evaluation import multilingual

    cases = multilingual.load(data("weekend_questions.jsonl"))
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}}},
                embedder=e5_embedder) as m:
        report = multilingual.run(m, cases, ("default",))
    assert report["questions"] == 17
    assert report["modes"]["default"]["overall"]["hit@1"] >= 0.75
