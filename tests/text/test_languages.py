"""Which language a text is in, and the language packs: every pack loads and is well formed, and the
small talk of each language with a pack is recognised as such (sentences written for memlane)."""

from __future__ import annotations

import pytest
import snowballstemmer

from memlane.text import languages, small_talk
from memlane.text.languages.pack import CONCEPTS, PARTIES

DETECTED = [  # (text, language)
    ("I moved to Denver last spring.", "en"),
    ("Favourite editor: Neovim", "en"),  # a short English note: not Italian because the model leans that way
    ("Marco is vegetarian", "en"),
    ("Likes short meetings and hates phone calls", "en"),
    ("Mi hermano trabaja en un hospital de Valencia.", "es"),
    ("Meine Tochter spielt seit zwei Jahren Geige.", "de"),
    ("Nous avons acheté une maison près de Rennes.", "fr"),
    ("A minha irmã mora no Porto com o marido.", "pt"),
    ("Mio figlio frequenta la scuola elementare.", "it"),
    ("Mijn broer woont al jaren in Gent.", "nl"),
    ("Moja siostra pracuje w szpitalu w Gdańsku.", "pl"),
    ("Мой брат живёт в Казани.", "ru"),
    ("Моя сестра працює вчителькою в Одесі.", "uk"),
    ("Kız kardeşim Ankara'da öğretmen.", "tr"),
    ("週末はよく公園を走っています。", "ja"),
    ("주말마다 한강에서 자전거를 타요.", "ko"),
    ("我周末常去公园跑步。", "zh"),
    ("我週末常去公園跑步。", "zh"),
    ("Anh trai tôi làm kỹ sư ở Hà Nội.", "vi"),
    ("Adik saya kuliah di Yogyakarta.", "id"),
    ("أخي يعمل مهندسا في دبي.", "ar"),
    ("मेरा भाई दिल्ली में रहता है।", "hi"),
    ("ฉันชอบกินข้าวผัด", "th"),
]


@pytest.mark.parametrize("text, code", DETECTED)
def test_detect(text, code):
    assert languages.detect(text) == code


def test_a_short_sentence_is_read_in_its_message_language():
    assert languages.detect("Tengo dos perros.", "es") == "es"
    assert languages.detect("Ho due gatti.", "it") == "it"
    assert languages.detect("I have two dogs.", "es") == "en"  # an English sentence stays English


@pytest.mark.parametrize("code", languages.PACKS)
def test_every_pack_is_well_formed(code):
    pack = languages.pack(code)
    assert pack is not None and pack.code == code and pack.name
    assert pack.stemmer is None or pack.stemmer in snowballstemmer.algorithms()
    assert set(pack.concepts) <= set(CONCEPTS), "unknown concept"
    assert set(pack.relations) <= set(PARTIES), "unknown party"
    for field in ("first_person", "question_words", "small_talk", "negation", "stop_words", "endings", "moves"):
        forms = getattr(pack, field)
        assert forms, f"{code}: {field} is empty"
        assert all(f == f.lower() and f.strip() == f and f for f in forms), f"{code}: {field} holds {forms}"
    # a stop word is never the form of a concept: it would make every sentence about it
    stop = {languages.fold(w) for w in pack.stop_words}
    for concept, forms in pack.concepts.items():
        assert not {languages.fold(f) for f in forms} & stop, f"{code}: {concept} form is a stop word"


SMALL_TALK = [  # (text, language, small talk?)
    ("¡Muchas gracias, hasta luego!", "es", True),
    ("Gracias, soy celíaca.", "es", False),
    ("Danke schön, schönen Abend noch!", "de", True),
    ("Ich bin Lehrerin.", "de", False),
    ("Merci beaucoup, bonne soirée !", "fr", True),
    ("Obrigado, até amanhã!", "pt", True),
    ("Grazie mille, a presto!", "it", True),
    ("Bedankt, tot morgen!", "nl", True),
    ("Dziękuję, dobranoc!", "pl", True),
    ("Спасибо, до завтра!", "ru", True),
    ("Я врач.", "ru", False),
    ("Дякую, на все добре!", "uk", True),
    ("Teşekkürler, iyi geceler!", "tr", True),
    ("ありがとうございます、またね！", "ja", True),
    ("東京に住んでいます。", "ja", False),
    ("감사합니다, 좋은 하루 보내세요!", "ko", True),
    ("Cảm ơn bạn nhiều, tạm biệt!", "vi", True),
    ("Terima kasih, sampai jumpa!", "id", True),
    ("شكرا جزيلا، مع السلامة", "ar", True),
    ("धन्यवाद, फिर मिलेंगे!", "hi", True),
    ("hahaha 😂", "es", True),
]


@pytest.mark.parametrize("text, code, expected", SMALL_TALK)
def test_small_talk_in_every_language_with_a_pack(text, code, expected):
    assert small_talk.is_small_talk(text, code) is expected


def test_a_language_without_a_pack_is_small_talk_only_when_it_is_laughter_or_emoji():
    assert small_talk.is_small_talk("555555 😂", "th")
    assert not small_talk.is_small_talk("ฉันชอบกินข้าวผัด", "th")


@pytest.mark.parametrize("word, folded", [("Telefónica", "telefonica"), ("Müller", "muller"), ("й", "й"),
                                          ("İstanbul", "istanbul"), ("başladım", "basladım"), ("Ёлка", "ёлка")])
def test_fold_takes_accents_off_latin_letters_only(word, folded):
    assert languages.fold(word) == folded
