"""The keyword analyzer (text/keywords.py): the terms a memory is indexed under and a query searches for."""

import pytest

from memlane.text.keywords import analyze


@pytest.mark.parametrize("text, terms", [
    ("Running shoes, the runner runs", ["run", "shoe", "runner", "run"]),       # English: stems, no stop words
    ("用户对青霉素过敏", ["用户", "青霉", "霉素", "青霉素", "过敏"]),                 # words, and the words inside a long one
    ("我对什么药物过敏", ["药物", "过敏"]),                                          # function words find nothing alone
    ("使用者喜歡喝烏龍茶", analyze("使用者喜欢喝乌龙茶")),                            # Traditional indexes as Simplified
    ("Café Müller in Zürich", ["cafe", "muller", "zurich"]),                   # accents folded
    ("cafe muller", ["cafe", "muller"]),
    ("Я люблю чай", ["я", "люблю", "чай"]),                                     # other alphabets are words too
    ("El usuario trabaja en Toronto", ["el", "usuario", "trabaja", "en", "toronto"]),
    ("ラーメン", ["ラ", "ー", "メ", "ン", "ラー", "ーメ", "メン"]),                  # kana: characters and pairs
    ("I love 火锅 and dim sum", ["love", "dim", "sum", "火锅"]),                  # mixed: both rules
    ("user_id XJ-9000", ["user", "id", "xj", "9000"]),
    ("", []),
])
def test_terms(text, terms):
    assert analyze(text) == terms


def test_a_chinese_word_meets_the_longer_word_it_is_part_of():
    assert set(analyze("我是工程师")) & set(analyze("软件工程"))  # 工程
