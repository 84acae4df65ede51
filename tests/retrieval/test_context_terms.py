"""Search terms of a conversation (``retrieval.context_terms``): stop words per language,
short English words dropped, Chinese segmented (rjieba), at most ``max_terms`` unique terms,
later turns first; and which terms a memory contains."""

from __future__ import annotations

import pytest

from memlane.retrieval import context_terms as ct


def _texts(terms):
    return [t.text for t in terms]


def test_english_terms_drop_stop_words_chat_words_and_short_words():
    terms = ct.extract(["Remember when we discussed Python decorators? Can you explain it to me on AWS?"])
    assert _texts(terms) == ["python", "decorators", "aws"]   # 'on', 'it', 'me' (< 3) and chat words gone


def test_contractions_and_possessives():
    assert _texts(ct.extract(["Don't forget Maria's birthday, we'll see"])) == ["maria", "birthday"]


def test_chinese_is_segmented_into_words_without_function_words():
    terms = ct.extract(["你还记得我在北京的一家互联网公司工作吗？"])
    assert _texts(terms) == ["北京", "互联网", "公司", "工作"]
    assert all(t.cjk for t in terms)


def test_traditional_chinese_is_read_as_simplified():
    assert _texts(ct.extract(["我們上次討論過的項目"])) == ["项目"]


def test_code_switched_text_gives_both_kinds_of_terms():
    assert _texts(ct.extract(["我们之前讨论的Python装饰器"])) == ["python", "装饰", "器"]


def test_later_turns_come_first_and_duplicates_collapse_by_stem():
    terms = ct.extract(["I adopted a kitten", "Tell me about decorators", "Decorator syntax again"])
    assert _texts(terms) == ["decorator", "syntax", "adopted", "kitten"]
    weights = {t.text: t.weight for t in terms}
    assert weights["syntax"] > weights["kitten"]      # recency (and length) weigh


def test_the_system_prompt_is_read_last():
    terms = ct.extract(["Budget spreadsheet"], "You are a finance assistant")
    assert _texts(terms) == ["budget", "spreadsheet", "finance"]


def test_at_most_max_terms_preferring_the_latest_turn():
    old = " ".join(f"oldword{i}" for i in range(30))
    new = " ".join(f"newword{i}" for i in range(15))
    terms = ct.extract([old, new], max_terms=20)
    assert len(terms) == 20
    assert _texts(terms)[:15] == [f"newword{i}" for i in range(15)]
    assert len(ct.extract([old], max_terms=5)) == 5


@pytest.mark.parametrize("memory,expected", [
    ("The user wrote a decorator for caching", ["decorators"]),      # stem match
    ("Python 3.12 is installed", ["python"]),
    ("用户在北京的互聯網公司上班", ["北京", "互联网", "公司"]),          # either script
    ("Loves hiking in the Alps", []),
])
def test_matched_terms(memory, expected):
    terms = ct.extract(["python decorators", "北京 互联网公司"])
    assert _texts(ct.matched(terms, memory)) == expected


def test_term_score_saturates_and_grows_with_matches():
    one, two = ct.Term("a", "a", False, 1.0), ct.Term("b", "b", False, 1.0)
    assert ct.term_score([]) == 0.0
    assert 0.6 < ct.term_score([one]) < ct.term_score([one, two]) < 1.0


def test_a_long_last_turn_keeps_its_last_sentence():
    """The question at the end of a turn too long for ``max_terms`` is what the search is for."""
    story = ("I have been learning jazz piano for three years with a teacher named Carla in Boston, practising "
             "scales, chords, voicings and improvisation every evening after dinner with Bill Evans records. ")
    terms = _texts(ct.extract(["Earlier turn about gardening", story + "What about the saxophone?"], max_terms=12))
    assert "saxophone" in terms and len(terms) == 12
    assert "gardening" not in terms                       # the latest turn still comes first
    assert terms[:3] == ["learning", "jazz", "piano"]     # kept terms stay in the order they were said
