"""Formation beyond English and Chinese: the speaker's own sentence kept in their language, what
they ask or say in passing dropped, and reconciliation by what a fact is about (who owns it, which
attribute) in every language and across languages. Sentences written for memlane."""

from __future__ import annotations

import pytest

from memlane.core.models import Message
from memlane.ingest import any_language, offline_extract, offline_reconcile, owners

STATEMENTS = [  # (message, statements kept)
    ("Soy enfermera y vivo en Valencia.", ["Soy enfermera", "Vivo en Valencia"]),
    ("Tengo un perro y un gato negro.", ["Tengo un perro y un gato negro"]),  # one object, not two statements
    ("Como soy celíaco, ¿qué pasta me recomiendas?", ["Soy celíaco"]),
    ("¿Me recomiendas un libro?", []),
    ("Ich arbeite bei Siemens und wir wohnen in München.", ["Ich arbeite bei Siemens", "Wir wohnen in München"]),
    ("Ich bin Lehrerin und wohne in Bremen.", ["Ich bin Lehrerin und wohne in Bremen"]),  # no subject: not cut
    ("Puisque je suis végétarien, tu me conseilles quel restaurant ?", ["Je suis végétarien"]),
    ("Dejé mi trabajo en el banco y ahora estudio diseño.", ["Dejé mi trabajo en el banco y ahora estudio diseño"]),
    ("Moro em Curitiba com a minha namorada.", ["Moro em Curitiba com a minha namorada"]),
    ("Mieszkam w Poznaniu i uczę się hiszpańskiego.", ["Mieszkam w Poznaniu", "Uczę się hiszpańskiego"]),
    ("Я живу в Казани и работаю в больнице.", ["Я живу в Казани", "Работаю в больнице"]),
    ("京都の大学で働いています。", ["京都の大学で働いています"]),
    ("猫アレルギーなんですが、飼いやすいペットを教えてください。", ["猫アレルギー"]),
    ("저는 부산에 살아요.", ["저는 부산에 살아요"]),
    ("맛있는 식당 좀 추천해 주세요.", []),
    ("Tôi sống ở Huế.", ["Tôi sống ở Huế"]),
    ("Saya bekerja sebagai guru di Medan.", ["Saya bekerja sebagai guru di Medan"]),
]


@pytest.mark.parametrize("text, expected", STATEMENTS)
def test_the_speakers_sentence_is_kept(text, expected):
    facts = offline_extract.extract([Message(role="user", content=text)], agent_facts=False)
    assert [f.text for f in facts] == expected


SKIPPED = [  # (message, why nothing was kept)
    ("¡Gracias, hasta mañana!", "a greeting or small talk"),
    ("Vielen Dank, bis bald!", "a greeting or small talk"),
    ("¿Dónde está la estación?", "a question"),
    ("Kannst du mir ein Rezept empfehlen?", "a question"),
    ("おすすめの映画を教えて。", "a request to the assistant"),
    ("ありがとう、おやすみ！", "a greeting or small talk"),
]


@pytest.mark.parametrize("text, reason", SKIPPED)
def test_what_is_dropped_says_why(text, reason):
    message = Message(role="user", content=text)
    assert offline_extract.extract([message], agent_facts=False) == []
    assert offline_extract.skip_reason(message, agent_facts=False) == reason


def test_a_language_without_word_lists_keeps_statements_and_names_itself_when_it_drops():
    kept, _ = any_language.statements("Ninaishi Nairobi na ninafanya kazi benki.", "sw")
    assert kept == ["Ninaishi Nairobi na ninafanya kazi benki"]
    dropped, reasons = any_language.statements("Unaweza kunipendekezea kitabu?", "sw")
    assert dropped == [] and reasons == [
        "a question (Swahili, read by punctuation only: the offline engine has no Swahili word lists; an LLM "
        "reads it fully)"]


OWNERS = [  # (statement, owner)
    ("User works at a bank", owners.USER),
    ("User's company is hiring", "entity:company"),
    ("User's wife is a doctor", "spouse"),
    ("User's favourite editor is Neovim", owners.USER),  # an attribute of the user, not someone else
    ("User and their family love curry", owners.USER),
    ("用户的老婆是医生", "spouse"),
    ("Mi esposa es médica", "spouse"),
    ("Meine Frau arbeitet bei Bosch", "spouse"),
    ("Vivo en Madrid", owners.USER),
    ("User's sister owns a Civic", "person:sister"),
]


@pytest.mark.parametrize("statement, owner", OWNERS)
def test_the_owner_of_a_statement(statement, owner):
    assert owners.owner(statement)[0] == owner


RELATIONS = [  # (new fact, memory, relation): keep (None), replace, duplicate, across languages
    ("User's wife is a doctor", "User's wife loves dumplings", None),
    ("User's company is hiring", "User works at a bank", None),
    ("User's dog is scared of thunder", "User's dog is a beagle", None),
    ("User's car is a Mazda", "User's car is a red Honda", "replace"),
    ("User's dog turned 4 yesterday", "User's dog is 3 years old", "replace"),
    ("用户的老婆是医生", "用户的老婆很喜欢吃小笼包", None),
    ("用户的女儿上周满六岁了", "用户的女儿五岁", "replace"),
    ("Mi esposa es médica", "Mi esposa adora el sushi", None),
    ("Me mudé de Madrid a Sevilla", "User lives in Madrid", "replace"),  # a Spanish move ends an English home
    ("Vivo en Madrid", "User lives in Madrid", "duplicate"),  # said again in another language
    ("Ich wohne jetzt in Leipzig", "Ich wohne in Köln", "replace"),
    ("User's sister lives in Rome", "User lives in Madrid", None),  # another person's home
]


@pytest.mark.parametrize("fact, memory, expected", RELATIONS)
def test_reconciliation_by_what_a_fact_is_about(fact, memory, expected):
    assert offline_reconcile.relation(fact, memory, 0.5) == expected


EARLIER = [  # (the turn before, the new turn, what the new turn states): a pronoun points to the latest mention
    ("My dog is a husky.", "He is scared of fireworks.", ["User's dog is scared of fireworks"]),
    ("My dog is a husky.", "It's scared of fireworks.", ["User's dog is scared of fireworks"]),
    ("My father is an engineer.", "He loves fishing on weekends.", ["User's father loves fishing on weekends"]),
    ("My sister is a pilot.", "He is a chef.", ["He is a chef"]),  # nobody agrees: left as written
    ("我的猫是布偶猫。", "它很怕洗澡。", ["用户的猫很怕洗澡"]),
    ("我爸爸是工程师。", "他周末喜欢钓鱼。", ["用户的爸爸周末喜欢钓鱼"]),
    ("I drive a 2015 Toyota Corolla.", "The Corolla's brakes need replacing.", ["The Corolla's brakes need replacing"]),
    ("I love hiking.", "The sky is blue today.", []),  # names nothing of theirs: not a statement about them
    ("I drive a Honda Civic.", "Its alternator just died.", ["User's Honda Civic's alternator just died"]),
    ("I have a dog.", "He is scared of thunder.", ["User's dog is scared of thunder"]),
    ("My dog is a beagle.", "His favourite toy is a rubber duck.", ["User's dog's favourite toy is a rubber duck"]),
]


@pytest.mark.parametrize("before, text, expected", EARLIER)
def test_a_pronoun_points_to_whom_the_turn_before_mentioned(before, text, expected):
    facts = offline_extract.extract([Message(role="user", content=text)], agent_facts=False,
                                    earlier=[Message(role="user", content=before)])
    assert [f.text for f in facts] == expected


def test_adds_one_after_another_read_the_turn_before(memory):
    memory.add("My dog is a husky.", user_id="ana")
    memory.add("He is scared of fireworks.", user_id="ana")
    assert sorted(m["memory"] for m in memory.get_all(user_id="ana")["results"]) == [
        "User's dog is a husky", "User's dog is scared of fireworks"]


@pytest.mark.parametrize("statement, owner", [
    ("User's Tesla is white", "entity:tesla"),  # something of theirs, whatever its name
    ("使用者的銀行明年要搬到新大樓", "entity:银行"),  # an institution of theirs
    ("用户的名字叫小王", owners.USER),  # an attribute of theirs
    ("Siemens is cutting 500 jobs", "name:siemens"),
])
def test_things_and_institutions_own_what_is_said_of_them(statement, owner):
    assert owners.owner(statement)[0] == owner


@pytest.mark.parametrize("fact, memory, expected", [
    ("Siemens is cutting 500 jobs", "User works at Siemens", None),  # news about the employer is not a new job
    ("使用者的銀行明年要搬到新大樓", "使用者在高雄的一家銀行上班", None),
    ("User's dog is called Biscuit", "Has a dog", "refine"),  # the dog the memory names, said more of
])
def test_a_statement_about_what_a_memory_names(fact, memory, expected):
    assert offline_reconcile.relation(fact, memory, 0.5) == expected
