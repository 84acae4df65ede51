"""The keyword analyzer (text/keywords.py): the terms a memory is indexed under and a query searches for."""

import json

import pytest

from memlane.text import keywords
from memlane.text.keywords import analyze
from support import keywords_v2
from support.data import dev_eval, needs_dev_eval


@pytest.mark.parametrize("text, terms", [
    ("Running shoes, the runner runs", ["run", "shoe", "runner", "run"]),       # English: stems, no stop words
    ("用户对青霉素过敏", ["用户", "青霉", "霉素", "青霉素", "过敏"]),                 # words, and the words inside a long one
    ("我对什么药物过敏", ["药物", "过敏"]),                                          # function words find nothing alone
    ("使用者喜歡喝烏龍茶", analyze("使用者喜欢喝乌龙茶")),                            # Traditional indexes as Simplified
    ("Café au lait with Müller in Zürich", ["cafe", "au", "lait", "muller", "zurich"]),  # accents folded
    ("cafe muller", ["cafe", "muller"]),
    ("Я люблю чай", ["люблю", "люб", "чай", "ча"]),                            # Russian: word and stem, я a stop word
    ("El usuario trabaja en Toronto", ["usuario", "usuari", "trabaja", "trabaj", "toronto", "toront"]),
    ("The Straße of Łódź and Iğdır", ["strass", "lodz", "igdir"]),             # letters NFKD keeps, folded too
    ("ラーメン", ["ラ", "ー", "メ", "ン", "ラー", "ーメ", "メン"]),                  # kana: characters and pairs
    ("図書館で", ["図", "書", "館", "で", "図書", "書館", "館で"]),                  # Japanese kanji alike, not Chinese words
    ("서울에서", ["서", "울", "에", "서", "서울", "울에", "에서"]),                  # Hangul: syllables and pairs
    ("I love 火锅 and dim sum", ["love", "dim", "sum", "火锅"]),                  # mixed: both rules
    ("user_id XJ-9000", ["user", "id", "xj", "9000"]),
    ("", []),
])
def test_terms(text, terms):
    assert analyze(text) == terms


def test_a_chinese_word_meets_the_longer_word_it_is_part_of():
    assert set(analyze("我是工程师")) & set(analyze("软件工程"))  # 工程


ENGLISH = [
    "Running shoes, the runner runs", "What did Melanie say about camping?", "Favourite editor: Neovim",
    "Golf course booking", "a photo of a man in a suit is performing a dance", "Thanks for having my back.",
    "Hey Gina, how's it going?", "Way to go, Jon! Keep it up, you're almost there!", "Melanie", "Caroline sunrise",
    "Vacation in Rome", "No, but it sounds fun! Going to those places is definitely on my to-do list.",
    "Looking forward to more cool memories!", "User prefers dark mode in VS Code", "Allergic to penicillin",
]


@pytest.mark.parametrize("text", ENGLISH)
def test_english_is_analysed_as_by_the_analyzer_before(text):
    assert analyze(text) == keywords_v2.analyze(text)


@needs_dev_eval
def test_every_locomo_turn_and_question_is_analysed_as_by_the_analyzer_before():
    """LoCoMo's recall rests on the English terms: not one of its texts gets another term."""
    texts = []
    for conversation in json.loads(dev_eval("locomo/locomo_dev.json").read_text()):
        for key, turns in conversation["conversation"].items():
            if key.startswith("session") and isinstance(turns, list):
                texts += [t for turn in turns for t in (turn["text"], turn.get("blip_caption")) if t]
        texts += [qa["question"] for qa in conversation["qa"]]
    assert len(texts) > 4000
    assert [t for t in texts if analyze(t) != keywords_v2.analyze(t)] == []


@pytest.mark.parametrize("memory, question", [
    ("Vivo en Sevilla con mi novia", "¿Dónde vive el usuario?"),                    # es: vivo / vive
    ("Ich wohne seit 2019 in Hamburg", "Wo wohnt der Nutzer?"),                      # de: wohne / wohnt
    ("Я живу в Новосибирске", "Где живёт пользователь?"),                            # ru: живу / живёт
    ("J'habite à Lyon depuis cinq ans", "Où habitons-nous maintenant ?"),            # fr
    ("Moro em Lisboa perto do rio", "Onde mora o usuário?"),                         # pt
    ("Lavoro in una banca del centro", "Dove lavora l'utente?"),                     # it
    ("Ik woon in Utrecht met mijn vriend", "Waar woont de gebruiker?"),              # nl
    ("Mieszkam w Krakowie od dziesięciu lat", "Gdzie mieszka użytkownik?"),          # pl
    ("Працюю вчителькою англійської мови", "Ким він працює?"),                      # uk (Russian stemmer, lemmas)
    ("İzmir'de yaşıyorum", "Kullanıcı nerede yaşıyor?"),                             # tr
])
def test_another_inflection_of_a_word_meets_it(memory, question):
    shared = set(analyze(memory)) & set(analyze(question))
    assert shared, (analyze(memory), analyze(question))


def test_a_short_question_read_as_english_still_meets_its_memory():
    """"¿Dónde trabaja?" is too short for the detector; the function word dónde says Spanish, and the
    words' shared (English-stemmed) form is on both sides whatever each is read as."""
    assert set(analyze("¿Dónde trabaja?")) & set(analyze("Trabajo como enfermera en un hospital"))
    assert set(analyze("gatos")) & set(analyze("Tengo dos gatos persas"))  # "gato", as written


def test_the_languages_stop_and_question_words_are_dropped():
    assert analyze("¿Dónde está el perro de mi hermana?") == ["perro", "perr", "hermana", "herman"]
    assert analyze("Wo ist der Hund?") == ["hund"]


def test_a_language_without_its_pack_is_read_by_the_shared_form(monkeypatch):
    """A pack still being written (or failing to import) leaves its language's words as before: folded,
    English-stemmed."""
    from memlane.text import languages

    def no_pack(code):
        raise ImportError(code)

    monkeypatch.setattr(languages, "pack", no_pack)
    keywords._language.cache_clear()
    keywords._function_words.cache_clear()
    try:
        assert analyze("El usuario trabaja en Toronto") == keywords_v2.analyze("El usuario trabaja en Toronto")
    finally:
        keywords._language.cache_clear()
        keywords._function_words.cache_clear()


def test_a_korean_noun_meets_itself_under_any_particle():
    assert "서울" in set(analyze("저는 서울에서 살아요")) & set(analyze("서울에 살고 있어요")) & set(analyze("서울"))
