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


# -- other languages: function words and chat words dropped, particles cut off, matched in their own way

@pytest.mark.parametrize("turn,expected", [
    ("¿Te acuerdas de lo que te conté sobre mi hermano Pablo?", ["hermano", "pablo"]),
    ("Hazme la lista de la compra teniendo en cuenta mi alergia.", ["lista", "compra", "alergia"]),
    ("Erinnerst du dich, was ich dir über meine Schwester erzählt habe?", ["schwester"]),
    ("Tu te souviens de ce que je t'ai dit sur mon frère ?", ["frère"]),
    ("Fais-moi une liste de courses compatible avec mon allergie.", ["liste", "courses", "compatible", "allergie"]),
    ("前回話したコタロウの予防接種、いつだったっけ？", ["コタロウ", "予防接種"]),   # katakana and kanji runs
    ("この前教えたカフェの名前、何だっけ？", ["カフェ"]),                            # 教(えた) is a verb's stem
    ("姉の昇進祝いのメッセージを書いて。", ["姉", "昇進祝", "メッセージ"]),
    ("지난번에 말한 남편이랑 갈 여행 기억해?", ["남편", "여행"]),                  # particles cut off
    ("10월 마라톤까지 준비가 잘 되고 있는 걸까?", ["10월", "마라톤", "준비"]),
    ("고양이 두부 예방접종 언제였더라?", ["고양이", "두부", "예방접종"]),           # 고양이 keeps its 이
])
def test_terms_in_other_languages(turn, expected):
    assert _texts(ct.extract([turn])) == expected


@pytest.mark.parametrize("turn,memory,expected", [
    ("¿Qué tal van mis clases de alemán?", "Estudia alemán los martes", ["alemán"]),
    ("Necesito ideas para mis hermanas", "Su hermana Lucía es piloto", ["hermanas"]),   # Spanish stems
    ("Was schenke ich meiner Schwester?", "Seine Schwestern wohnen in Köln", ["schwester"]),
    ("Une idée de cadeau pour ma fille ?", "Sa fille Chloé aura sept ans", ["fille"]),
    ("コタロウの散歩は何時がいい？", "柴犬のコタロウを飼っている", ["コタロウ"]),
    ("딸 생일 선물 추천해 줘", "딸이 5월에 일곱 살이 된다", ["딸"]),
    ("딸 생일 선물 추천해 줘", "딸기 케이크를 좋아한다", []),                      # 딸기 is not 딸
    ("마라톤 준비 어때?", "10월 춘천 마라톤을 준비하고 있다", ["마라톤", "준비"]),
])
def test_matched_terms_in_other_languages(turn, memory, expected):
    assert _texts(ct.matched(ct.extract([turn]), memory)) == expected


def test_a_turn_is_read_in_its_language():
    assert [ct.language(t) for t in ("Hello there", "¿Qué tal?", "Wie geht's dir heute?", "Ça va ?", "こんにちは",
                                     "안녕하세요", "你好")] == ["en", "es", "de", "fr", "ja", "ko", "zh"]
