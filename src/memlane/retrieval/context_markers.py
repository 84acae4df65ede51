"""The markers of the agent-context gate's signals, per language (``context.SIGNALS`` weighs them).

``MARKERS[signal][language]`` lists what a speaker of the language says when the signal is present:
memory words (remember, last time, recuerdas, letztes Mal, la dernière fois, 覚えて, 기억 …),
question words, first-person possessives and pronouns of a relationship, references to earlier
turns, requests to choose for the speaker (recommend, recomiéndame, empfiehl, conseille, おすすめ,
추천 …), the speaker's own people, pets and constraints ("my sister", mi hermana, meine Schwester,
妻, 남편 …) and requests for know-how (how do I, cómo hago, wie kann ich, comment faire, どうやって,
-려면 …). Written for memlane from how people talk to an assistant in each language; the
multilingual dev set (``tests/data/should_search_multilingual.jsonl``) measures them.

Which markers a text is read with (``languages_of``): English and Chinese always (as before
other languages had markers); Japanese when it has kana, Korean when it has Hangul, Russian when
it is Cyrillic; Spanish, German, French, Portuguese and Italian when the text shows the language
(``EVIDENCE``: one of its own letters or common words that are not English words), so "was" is a
German question word only in German and English chat is read as it always was. No language model
is asked: the gate stays well under a millisecond.

How a marker matches (``compile_marker``), on the text lower-cased, Traditional Chinese read as
Simplified, curly apostrophes straightened:

* English: whole words (``(?<![a-z0-9'])``, as the gate always matched them);
* Chinese and Japanese: substrings;
* Korean: a word (after a space or punctuation); a word of two syllables or more may carry a
  particle (남편 finds 남편이, 남편한테), a one-syllable word is matched as written, its particle forms
  listed (딸, 딸이, 딸한테: not 딸기, a strawberry; 제, 제가: not 제도);
* the other languages: whole words (Unicode letters, so ``qué``, ``où`` and ``für`` are words and an
  elided ``t'``/``l'`` is a boundary).

A word of a marker ending in ``-`` is a prefix ("erinner-" finds erinnerst and Erinnerung; 기억-
finds 기억해, 기억나); one starting with ``-`` may be the end of a longer word ("-idee" finds
Geschenkidee; "-려면" finds 뒤집으려면); ``a|b|c`` is any of them ("mi|mis|nuestr- herman-": mi
hermano, mis hermanas, nuestra hermana). ``…`` is a short gap inside one clause: up to
``GAP_CHARS`` characters in Chinese and Japanese (我们…定的 finds 我们三月份定的, not 我们。… 定的), up to
``GAP_WORDS`` words elsewhere. A marker written without them is reported as written; one with them, as
the text said it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memlane.text.normalize import CJK, to_simplified
from memlane.text.relations import PETS_EN, PETS_ZH, PLURAL_RELATIONS_EN, RELATIONS_EN, RELATIONS_ZH

#: languages with markers, in the order their hits are listed
LANGUAGES = ("en", "zh", "es", "de", "fr", "pt", "it", "ru", "ja", "ko")
#: read with every text
ALWAYS = ("en", "zh")

# -- which languages a text is in ----------------------------------------------------------------

_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LATIN_WORD = re.compile(r"[^\W\d_]+")
_FRENCH_ELISION = re.compile(r"(?<![^\W_])(?:j|l|d|m|t|n|s|c|qu)'[^\W\d_]")

#: what shows a text is in a language written in Latin letters: letters of its own, and common words of
#: it that are not English words (so an English sentence is never read as Spanish for one "a" or "no").
#: A word several of them write (que, de, la) shows each: a French question is read with the Spanish and
#: Portuguese markers too, which costs little (their markers are words of their own)
EVIDENCE: dict[str, tuple[str, frozenset[str]]] = {
    "es": ("ñ¿¡", frozenset("""el los las una unos unas del al lo por para qué cómo cuál cuáles quién dónde cuándo
cuánto cuántos mi mis yo tú tengo es está estoy estás eres soy muy pero también y sí gracias hola puedo puedes
quiero necesito esta este esto eso ese sobre cuando donde como porque pues algo nada mejor semana vez otra siempre
nuestro nuestra hacer dame dime hazme te se su sus le les nos que de la en un buenas buenos noches vale jaja
adiós""".split())),
    "de": ("äöüß", frozenset("""ich du der das und ist nicht mein meine meinen meinem meiner mir mich dir dich ein eine
einen einem einer wir uns unser unsere bitte wie wer wann warum wieso welche welcher welches wo kann kannst soll
sollte habe hast bist sind mit für auf von zu zum zur dem des noch auch schon heute hallo danke mal im ins über dass
oder aber nochmal gibt sehr gute guten nacht tschüss genau""".split())),
    "fr": ("çœèêëîïôûù«»", frozenset("""je tu il elle nous vous mon ma mes notre nos le la les un une des du de et est
suis pas ne que qui quoi où quand comment pourquoi quel quelle quels quelles combien avec dans sur ce cette ces moi toi
merci bonjour bonsoir salut coucou oui très aussi mais ou au aux bien peux veux faire fais bonne nuit mdr ça
voilà""".split())),
    "pt": ("ãõ", frozenset("""eu você vocês meu minha meus minhas nosso nossa não é um uma da dos das na em com para por
que de se te como onde quando qual quem quanto obrigado obrigada olá oi isso isto muito também lembra pode posso
estou está tenho valeu tchau""".split())),
    "it": ("", frozenset("""io tu mio mia miei mie nostro nostra il lo gli le un una che di del della non è sono sei ho
hai ciao grazie cosa dove quando perché chi quale quanto ti mi ricordi puoi posso anche molto sempre questo
questa buona buonanotte prego""".split())),
}


#: English words no other language above writes: a text with more of them than signs of another language is English
_ENGLISH = frozenset("""the and is are was were my your you what how why which who when where i i'm it it's this that
with for to of do does did don't have has can will would should we our they them not be been just about from""".split())


def evidence(text: str) -> dict[str, int]:
    """How many signs of each language written in Latin letters ``text`` shows (languages with none left out)."""
    low = text.lower().replace("’", "'")
    words = _LATIN_WORD.findall(low)
    out = {}
    for code, (letters, common) in EVIDENCE.items():
        count = sum(1 for w in words if w in common) + sum(1 for ch in low if ch in letters)
        if code == "fr":
            count += len(_FRENCH_ELISION.findall(low))
        if count:
            out[code] = count
    return out


def languages_of(text: str) -> tuple[str, ...]:
    """The languages whose markers ``text`` is read with: English and Chinese always, then Japanese
    (kana), Korean (Hangul), Russian (Cyrillic) and each Latin-script language the text shows."""
    found = list(ALWAYS)
    if _KANA.search(text):
        found.append("ja")
    if _HANGUL.search(text):
        found.append("ko")
    if _CYRILLIC.search(text):
        found.append("ru")
    found.extend(evidence(text))
    return tuple(code for code in LANGUAGES if code in found)


def language_of(text: str) -> str | None:
    """The one language ``text`` is most likely in, by script and ``EVIDENCE`` alone: "ja" (kana),
    "ko" (Hangul), "zh" (Chinese characters), "en" (Latin letters showing no other language, or fewer
    signs of one than English words), the Latin-script language with the most signs, or None when that
    does not settle it (Cyrillic, a tie)."""
    if _HANGUL.search(text):
        return "ko"
    if _KANA.search(text):
        return "ja"
    if CJK.search(text):
        return "zh"
    if _CYRILLIC.search(text):
        return None
    shown = evidence(text)
    if not shown:
        return "en"
    ranked = sorted(shown.items(), key=lambda item: -item[1])
    english = sum(1 for w in re.findall(r"[a-z]+(?:'[a-z]+)?", text.lower().replace("’", "'")) if w in _ENGLISH)
    if english >= ranked[0][1]:
        return "en"
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return None
    return ranked[0][0]


# -- the markers ----------------------------------------------------------------------------------

#: what a person's answers depend on besides the people around them
_CONSTRAINTS_EN = frozenset("""allergy allergies diet dietary restrictions intolerance intolerances medication
medications budget schedule taste tastes preferences usual routine plan plans goals goal training health condition job
work commute home house flat apartment car""".split())
_CONSTRAINTS_ZH = ("我的口味", "我的饮食", "我的预算", "我的安排", "我的计划", "我的习惯", "我平时", "我家", "我的工作")


def _owned(owners: str, nouns: str) -> tuple[str, ...]:
    """One marker per noun: any of ``owners`` followed by it ("mi|mis|nuestr- herman-")."""
    return tuple(f"{owners} {noun}" for noun in nouns.split())


#: people, pets and constraints of one's own, per language (the nouns of the ``personal`` signal)
_PERSONAL_ES = _owned("mi|mis|nuestr-", """herman- hijo hija hijos hijas hijit- espos- marido mujer pareja novio novia
madre padre mamá papá padres abuel- tío tía tíos prim- amig- compañer- jefe jefa vecin- suegr- cuñad- sobrin- niet-
bebé niños niñas perr- gat- mascota- alergia- intolerancia- dieta presupuesto horario agenda rutina plan planes
objetivo- entrenamiento- salud trabajo empresa oficina casa piso coche carro gustos preferencias""")
_PERSONAL_DE = _owned("mein-|unser-", """frau mann freundin freund partner partnerin sohn tochter kinder kind kids
mutter vater mama papa eltern schwester schwestern bruder brüder geschwister oma opa tante onkel cousin cousine
chef chefin kollege kollegin kollegen nachbar nachbarin hund katze kater haustier allergie allergien
unverträglichkeit- ernährung diät budget zeitplan terminplan termine routine plan pläne ziel ziele training
gesundheit job arbeit firma büro wohnung haus auto fahrrad geschmack vorlieben""")
_PERSONAL_FR = _owned("mon|ma|mes|notre|nos", """femme mari copain copine compagnon compagne conjoint conjointe
partenaire fils fille filles enfant enfants bébé mère père maman papa parents frère frères sœur sœurs soeur soeurs
grand-mère grand-père oncle tante cousin cousine ami amie amis amies collègue collègues chef patron patronne voisin
voisine chien chienne chat chatte chats animal allergie allergies intolérance régime alimentation budget agenda
planning routine programme objectif objectifs entraînement santé travail boulot job bureau maison appartement
voiture vélo goûts préférences""")
_PERSONAL_PT = _owned("meu|minha|meus|minhas|noss-", """esposa marido mulher namorad- companheir- filho filha filhos
filhas mãe pai pais irmão irmã irmãos irmãs avó avô tio tia prim- amig- colega- chefe vizinh- cachorr- gat- cão
bebê alergia- dieta orçamento agenda rotina plano- treino- saúde trabalho emprego casa carro""")
_PERSONAL_IT = _owned("mio|mia|miei|mie|nostr-", """moglie marito ragazza ragazzo compagn- figlio figlia figli figlie
madre padre mamma papà genitori fratell- sorell- nonn- zio zia cugin- amic- colleg- capo vicin- cane gatt-
allergi- dieta budget agenda programma routine allenamento salute lavoro ufficio casa macchina""")
_PERSONAL_RU = _owned("мой|моя|моё|мое|мои|моего|моей|моему|моим|моих|мою|моем|моём|наш-", """жена жену жены жене
муж мужа мужу сестр- брат- сын- дочь дочери дочк- дети детей ребён- ребен- мам- пап- мать матери отец отца
родител- бабушк- дедушк- друг друга другу друзья друзей подруг- коллег- начальник- сосед- собак- кот кота кошк-
питом- аллерги- диет- бюджет- график- расписани- работ- здоровь- машин-""")
#: Japanese and Korean name their own family without "my" (母, 妻, 남편, 엄마: said of someone else's,
#: they are お母さん, 奥さん, 어머님): a kin word alone is the speaker's own
_KIN_JA = ("妻", "夫", "主人", "旦那", "嫁", "家内", "息子", "娘", "母", "父", "両親", "姉", "兄", "妹", "弟", "祖母",
           "祖父", "彼氏", "彼女")
_KIN_KO = ("아내", "남편-", "와이프-", "신랑-", "아들-", "애들-", "아이", "아기-", "엄마-", "아빠-", "어머니-", "아버지-",
           "부모님-", "언니-", "오빠-", "누나-", "동생-", "여동생-", "남동생-", "남자친구-", "여자친구-", "남친-", "여친-",
           "할머니-", "할아버지-", "시어머니-", "장모님-",
           # one syllable: written with their particles (딸기 is a strawberry, 형태 a shape)
           "딸", "딸이", "딸은", "딸을", "딸의", "딸도", "딸한테", "딸에게", "딸이랑", "딸하고", "딸과",
           "형", "형이", "형은", "형을", "형의", "형도", "형한테", "형에게", "형이랑", "형하고")

MARKERS: dict[str, dict[str, tuple[str, ...]]] = {
    "memory_keywords": {
        "en": ("remember", "remembered", "remembering", "recall", "recalled", "recollect", "memory", "memories",
               "forgot", "forget", "forgotten", "remind me", "last time", "previously", "previous", "before",
               "as usual", "the usual", "my usual"),
        "zh": ("记得", "记住", "记不记得", "回忆", "想起", "上次", "上回", "之前", "以前", "忘了", "忘记", "提醒我",
               "老样子", "照旧"),
        "es": ("recuerd-", "recuérd-", "recordar-", "te acuerdas", "se acuerda", "os acordáis", "acuérdate",
               "acuerdate", "me acuerdo", "la última vez", "la ultima vez", "la otra vez", "anteriormente",
               "previamente", "olvidé", "olvidaste", "se me olvidó", "lo de siempre", "lo habitual", "como siempre",
               "como de costumbre", "lo de costumbre", "memoria"),
        "de": ("erinner-", "weißt du noch", "weisst du noch", "letztes mal", "das letzte mal", "beim letzten mal",
               "zuletzt", "zuvor", "vergessen", "vergaß", "wie immer", "wie gewohnt", "wie üblich", "das übliche",
               "gedächtnis"),
        "fr": ("souviens", "souvient", "souvenez", "souvenir", "souvenirs", "rappelles", "rappelez", "rappelle-moi",
               "rappelle moi", "la dernière fois", "la derniere fois", "l'autre fois", "auparavant",
               "précédemment", "oublié", "comme d'habitude", "comme d'hab", "comme toujours", "mémoire"),
        "pt": ("lembra", "lembras", "lembrar", "lembre-me", "me lembre", "recorda", "da última vez", "na última vez",
               "a última vez", "da ultima vez", "como sempre", "o de sempre", "esqueci", "memória"),
        "it": ("ricordi", "ricordati", "ricorda", "ricordami", "ricordarmi", "l'ultima volta", "la volta scorsa",
               "l'altra volta", "come al solito", "il solito", "come sempre", "dimenticato", "memoria"),
        "ru": ("помнишь", "помните", "помню", "вспомни", "вспомнить", "напомни", "напомните", "в прошлый раз",
               "прошлый раз", "ранее", "забыл", "забыла", "как обычно", "как всегда"),
        "ja": ("覚えて", "憶えて", "思い出", "前回", "この前", "このあいだ", "この間", "以前", "前に話", "前に言",
               "前に教", "忘れ", "いつもの", "いつも通り", "いつもどおり", "例の", "っけ", "記憶"),
        "ko": ("기억-", "지난번-", "지난 번-", "저번-", "예전에-", "이전에-", "전에 말-", "전에 얘기-", "잊어-", "잊었-",
               "잊지-", "까먹-", "평소처럼", "평소대로", "늘 하던", "항상 하던", "하던 대로", "-였더라", "-었더라",
               "-았더라", "-했더라", "뭐더라"),
    },
    "questions": {
        "en": ("what", "which", "who", "whom", "whose", "when", "where", "why", "how", "?"),
        "zh": ("什么", "哪", "谁", "为什么", "怎么", "如何", "多少", "几点", "吗", "呢", "？"),
        "es": ("¿", "qué", "cuál", "cuáles", "quién", "quiénes", "cuándo", "dónde", "adónde", "cómo", "por qué",
               "cuánto", "cuánta", "cuántos", "cuántas"),
        "de": ("was", "wer", "wen", "wem", "wessen", "wann", "wo", "wohin", "woher", "warum", "wieso", "weshalb",
               "wie", "welche-", "wie viel", "wieviel"),
        "fr": ("quoi", "qui", "quand", "où", "comment", "pourquoi", "combien", "quel", "quelle", "quels", "quelles",
               "lequel", "laquelle", "est-ce que", "qu'est-ce"),
        "pt": ("o que", "qual", "quais", "quem", "quando", "onde", "por que", "por quê", "quanto", "quanta",
               "quantos", "quantas"),
        "it": ("cosa", "che cosa", "chi", "quando", "dove", "come", "perché", "perche", "quale", "quali", "quanto",
               "quanta", "quanti", "quante"),
        "ru": ("что", "кто", "когда", "где", "куда", "откуда", "почему", "зачем", "как", "какой", "какая", "какое",
               "какие", "сколько", "ли"),
        "ja": ("何", "なに", "なん", "どこ", "いつ", "誰", "だれ", "どう", "どの", "どれ", "どんな", "どちら", "なぜ",
               "なんで", "いくら", "いくつ", "ですか", "ますか", "かな"),
        "ko": ("뭐-", "뭘", "무엇-", "무슨-", "어디-", "언제-", "누구-", "누가", "왜", "왜요", "어떻게-", "어떤-", "어때-",
               "어땠-", "어떨-", "몇-", "얼마-", "어느-"),
    },
    "pronouns": {
        "en": ("my", "mine", "our", "ours", "we", "us", "myself"),
        "zh": ("我的", "我们", "咱们", "咱", "我家", "我妈", "我爸", "我女儿", "我儿子", "我老婆", "我老公", "我太太",
               "我丈夫", "我男朋友", "我女朋友", "我朋友", "我同事", "我老板", "我公司"),
        "es": ("mi", "mis", "mío", "mía", "míos", "mías", "nuestro", "nuestra", "nuestros", "nuestras", "nosotros",
               "nosotras", "nos"),
        "de": ("mein", "meine", "meinen", "meinem", "meiner", "meines", "meins", "unser", "unsere", "unseren",
               "unserem", "unserer", "unseres", "wir", "uns"),
        "fr": ("mon", "ma", "mes", "notre", "nos", "nous", "le mien", "la mienne", "les miens", "les miennes",
               "le nôtre", "la nôtre", "moi-même"),
        "pt": ("meu", "minha", "meus", "minhas", "nosso", "nossa", "nossos", "nossas", "nós", "a gente"),
        "it": ("mio", "mia", "miei", "mie", "nostro", "nostra", "nostri", "nostre", "noi"),
        "ru": ("мой", "моя", "моё", "мое", "мои", "моего", "моей", "моему", "моим", "моих", "мою", "наш-", "мы",
               "нас", "нам"),
        "ja": ("私の", "僕の", "俺の", "あたしの", "自分の", "うちの", "私たち", "僕たち", "僕ら", "我が家", "わが家",
               *_KIN_JA),
        "ko": ("내", "내가", "내게", "나의", "나한테", "나에게", "제", "제가", "제게", "저의", "저한테", "저에게", "우리-", "저희-", *_KIN_KO),
    },
    "references": {
        "en": ("as i said", "as i mentioned", "i told you", "i mentioned", "you said", "you mentioned", "you told me",
               "you suggested", "you recommended", "we discussed", "we talked", "we spoke", "earlier",
               "the other day", "last week", "last month", "last year", "back then", "again", "same as before",
               "did you say", "did i say", "did i tell you", "did i mention", "have i told you", "i said",
               "we decided", "we agreed", "we planned",
               # what was settled or made together before ('the budget we set up'), and the same with an
               # adverb inside ('I already told you', 'you once recommended')
               "we set up", "we made", "we picked", "we chose", "we booked", "we settled on", "we went with",
               "we came up with", "we worked out", "we put together", "you gave me", "you showed me",
               "you sent me", "i gave you", "i sent you", "i showed you", "i … told you", "did i … tell you",
               "you … recommended", "you … suggested", "you … mentioned", "we … discussed", "we … talked",
               "we … agreed", "we … decided"),
        "zh": ("说过", "提到", "提过", "告诉过你", "你推荐", "你建议", "聊过", "讨论过", "那次", "刚才", "前几天",
               "上周", "上个月", "去年", "跟以前一样", "再说一遍", "我说的", "我跟你说", "你说的", "我们定的",
               # what was settled or made together before, a time or place inside (我们三月份定的预算)
               "我们…定的", "我们…说好", "我们…约好", "我们…商量好", "我们…订的", "我们…选的", "我们…买的",
               "我们…聊的"),
        "es": ("como te dije", "como te decía", "te dije", "te conté", "te comenté", "te mencioné", "te hablé",
               "me dijiste", "dijiste", "me contaste", "me recomendaste", "me sugeriste", "mencionaste",
               "comentaste", "hablamos de", "comentamos", "decidimos", "quedamos", "acordamos", "planeamos",
               "la semana pasada", "el mes pasado", "el año pasado", "el otro día", "hace unos días", "otra vez",
               "de nuevo", "nuevamente"),
        "de": ("wie gesagt", "wie ich sagte", "wie ich erwähnt", "ich hab dir", "ich habe dir", "hab ich dir",
               "habe ich dir", "hast du gesagt", "du hast gesagt", "du meintest", "hast du mir", "du hast mir",
               "hattest du mir", "du hattest mir", "vorgeschlagen", "empfohlen", "erwähnt", "besprochen",
               "hatten wir", "wir hatten", "abgemacht", "ausgemacht", "vereinbart", "beschlossen", "letzte woche",
               "letzten monat", "letztes jahr", "vorige woche", "neulich", "vorhin", "nochmal", "noch mal",
               "noch einmal", "wieder"),
        "fr": ("comme je disais", "comme je l'ai dit", "comme je te l'ai dit", "je t'ai dit", "je t'avais dit",
               "je t'ai parlé", "je t'avais parlé", "je t'ai raconté", "tu m'as dit", "tu m'avais dit", "tu as dit",
               "tu disais", "tu m'as conseillé", "tu m'avais conseillé", "tu m'as recommandé",
               "tu m'avais recommandé", "m'avais recommandé", "tu m'as proposé", "tu m'avais proposé",
               "tu m'as suggéré", "on a parlé", "on avait parlé", "on en a parlé", "on a discuté", "on avait discuté",
               "nous avons parlé", "nous avons discuté", "on a décidé", "on avait décidé", "nous avons décidé",
               "la semaine dernière", "le mois dernier", "l'année dernière", "l'autre jour", "tout à l'heure",
               "encore une fois", "à nouveau", "de nouveau", "on en était", "on en est"),
        "pt": ("como eu disse", "eu te disse", "te disse", "te contei", "te falei", "você disse", "você falou",
               "você me disse", "você recomendou", "você sugeriu", "me recomendou", "conversamos", "falamos sobre",
               "decidimos", "combinamos", "semana passada", "mês passado", "ano passado", "outro dia", "de novo",
               "novamente", "outra vez"),
        "it": ("come ti ho detto", "ti ho detto", "ti avevo detto", "ti ho parlato", "ti ho raccontato",
               "mi hai detto", "hai detto", "mi hai consigliato", "mi avevi consigliato", "mi hai suggerito",
               "abbiamo parlato", "abbiamo deciso", "avevamo deciso", "la settimana scorsa", "il mese scorso",
               "l'anno scorso", "l'altro giorno", "di nuovo", "ancora una volta"),
        "ru": ("как я говорил", "как я говорила", "я говорил", "я говорила", "я рассказывал", "я рассказывала",
               "ты говорил", "ты говорила", "ты сказал", "ты сказала", "ты советовал", "ты советовала",
               "ты рекомендовал", "ты предлагал", "мы обсуждали", "мы говорили", "мы решили", "мы договорились",
               "на прошлой неделе", "в прошлом месяце", "в прошлом году", "на днях", "снова", "опять", "ещё раз",
               "еще раз"),
        "ja": ("言ったよね", "言った", "言ってた", "話した", "話してた", "教えてくれた", "教えた", "すすめてくれた",
               "勧めてくれた", "薦めてくれた", "おすすめしてくれた", "決めた", "約束した", "先週", "先月", "去年",
               "昨年", "さっき", "先日", "もう一度", "もう一回", "あの時", "あのとき", "例の件"),
        "ko": ("말했-", "말한-", "얘기했-", "얘기한-", "이야기했-", "이야기한-", "알려준-", "알려줬-", "추천해준",
               "추천해 준", "추천해줬-", "추천해 줬-", "정했-", "정한-", "결정했-", "약속했-", "지난주-", "지난달-",
               "작년-", "아까-", "다시-", "-했었-", "-였었-", "-였지", "-었지", "-았지"),
    },
    # asking for know-how: how a thing is done is the same for everyone (a negative weight)
    "know_how": {
        "en": ("how do i", "how can i", "how to", "how should i", "how would i", "how do you", "why is my",
               "why does my", "why do my", "what's wrong with my", "is it true", "what is the difference",
               "what's the difference"),
        "zh": ("怎么让", "怎样才能", "怎么才能", "如何", "为什么我", "是什么意思", "什么是", "有什么区别"),
        "es": ("cómo hago", "cómo puedo", "cómo se hace", "cómo hacer", "cómo -ar", "cómo -er", "cómo -ir",
               "cómo funciona", "por qué mi", "por qué se", "qué es", "qué significa", "es verdad que",
               "es cierto que", "cuál es la diferencia", "qué diferencia", "diferencia entre"),
        "de": ("wie kann ich", "wie mache ich", "wie macht man", "wie man", "wie funktioniert", "wie geht",
               "wie soll ich", "wie bekomme ich", "warum ist mein-", "warum funktioniert", "was ist der unterschied",
               "unterschied zwischen", "stimmt es", "ist es wahr", "was bedeutet", "was heißt"),
        "fr": ("comment faire", "comment fait-on", "comment on fait", "comment je fais", "comment puis-je",
               "comment est-ce que je", "comment peut-on",
               # "comment" and an infinitive is "how to" (-re verbs listed: notre, mère and père end so too)
               "comment -er", "comment -ir", "comment rendre", "comment prendre", "comment apprendre",
               "comment écrire", "comment lire", "comment cuire", "comment dire", "comment réduire",
               "comment mettre", "comment perdre", "comment vendre", "comment traduire", "comment résoudre",
               "comment ça marche", "comment fonctionne", "pourquoi mon", "pourquoi ma", "pourquoi mes",
               "est-il vrai", "c'est vrai que", "est-ce vrai", "quelle est la différence", "quelle différence",
               "la différence entre", "qu'est-ce que c'est", "qu'est-ce qu'un", "qu'est-ce qu'une", "que veut dire",
               "que signifie"),
        "pt": ("como faço", "como fazer", "como eu faço", "como posso", "como funciona", "por que meu",
               "por que minha", "o que é", "qual a diferença", "qual é a diferença", "é verdade que"),
        "it": ("come si fa", "come faccio", "come posso", "come fare", "come funziona", "perché il mio",
               "perché la mia", "cos'è", "che cos'è", "qual è la differenza", "differenza tra", "è vero che"),
        "ru": ("как сделать", "как мне", "как можно", "как правильно", "как работает", "почему мой", "почему моя",
               "что такое", "что значит", "в чём разница", "в чем разница", "правда ли"),
        "ja": ("どうやって", "どうすれば", "どうしたら", "方法", "やり方", "仕方", "とは何", "とは？", "って何",
               "ってなに", "の違い", "違いは", "本当に", "仕組み"),
        "ko": ("어떻게 하면", "어떻게 해-", "어떻게 하-", "-려면", "방법-", "하는 법", "차이-", "사실이야",
               "사실인가-"),
    },
    # someone close to the speaker, their pets, their own constraints: what memory knows of them matters
    "personal": {
        "en": tuple(f"{owner} {who}" for owner in ("my", "our") for who in sorted(
            RELATIONS_EN.keys() | PLURAL_RELATIONS_EN | PETS_EN | _CONSTRAINTS_EN)),
        "zh": (*RELATIONS_ZH, *PETS_ZH, *_CONSTRAINTS_ZH),
        "es": _PERSONAL_ES,
        "de": _PERSONAL_DE,
        "fr": _PERSONAL_FR,
        "pt": _PERSONAL_PT,
        "it": _PERSONAL_IT,
        "ru": _PERSONAL_RU,
        "ja": (*_KIN_JA, "子供", "子ども", "家族", "友達", "友人", "同僚", "上司", "犬", "猫", "ペット", "アレルギー",
               "予算", "食事制限", "スケジュール", "体調", "持病", "通勤", "職場"),
        "ko": (*_KIN_KO, "친구-", "동료-", "상사-", "강아지-", "고양이-", "반려-", "알레르기-", "알러지-", "예산-",
               "일정-", "스케줄-", "식단-", "다이어트-", "직장-", "출퇴근-", "통근-", "집", "집이", "집에", "집은", "집을", "집의"),
    },
    # a choice made for the speaker: what suits them depends on what is known of them
    "requests": {
        "en": ("recommend", "recommendation", "recommendations", "suggest", "suggestion", "suggestions", "idea",
               "ideas", "pick", "choose", "plan", "what should i", "which should i", "where should i",
               "should i get", "should i buy", "should i wear", "should i try", "for me", "suit me", "suits me",
               "about me", "i'd enjoy", "i would enjoy", "i'd like", "i like", "i can", "can i", "am i", "i'm on",
               "my usual", "where i live", "near me", "me and"),
        "zh": ("推荐", "建议", "适合", "合适", "什么好", "哪个好", "想想", "安排", "挑", "选", "我能", "我可以", "按我",
               "我平时", "给我做", "我家附近", "我的口味"),
        "es": ("recomiend-", "recomiénd-", "recomend-", "sugier-", "sugiér-", "suger-", "aconsej-", "aconséj-",
               "consejo", "consejos", "ideas", "elige", "elígeme", "escoge", "escógeme", "qué puedo", "qué podría",
               "qué debería", "qué debo", "qué le puedo", "qué les puedo", "qué me puedo", "dónde puedo",
               "dónde podría", "cuál debería", "cuál me", "puedo comer", "puedo tomar", "puedo ir", "debería ir",
               "debería comprar", "debería ponerme", "debería probar", "para mí", "para nosotros", "me gustaría",
               "me gusta", "me gustan", "me encanta", "me encantan", "me apetece", "me conviene", "me queda",
               "me pueda gustar", "que me guste", "cerca de mí", "cerca de casa", "voy bien", "estoy a tiempo",
               "planea", "planifica", "organiza", "teniendo en cuenta"),
        "de": ("empfiehl", "empfehl-", "vorschlag", "vorschläge", "vorschlagen", "schlag mir", "schlag uns", "idee",
               "ideen", "-idee", "-ideen", "was soll ich", "was sollte ich", "was kann ich", "was könnte ich",
               "welche- soll ich", "welche- sollte ich", "wohin soll ich", "wo soll ich", "soll ich lieber",
               "sollte ich lieber", "für mich", "für uns", "passt zu mir", "zu mir passt", "mir gefallen",
               "mir gefällt", "ich mag", "ich hätte gern", "ich hätte gerne", "in meiner nähe", "in der nähe",
               "bin ich", "darf ich", "aussuchen", "auswählen", "such mir", "plan mir", "plane", "planen",
               "stell mir"),
        "fr": ("conseille-", "conseillez", "conseiller", "conseils", "recommande-", "recommandez", "recommander",
               "recommandation-", "suggère", "suggérer", "suggestion-", "propose", "proposes", "proposez",
               "proposer", "proposition-", "idée", "idées", "qu'est-ce que je pourrais", "qu'est-ce que je devrais",
               "qu'est-ce que je peux", "que je pourrais", "que je devrais", "que pourrais-je", "que devrais-je",
               "que puis-je", "je devrais", "dois-je", "devrais-je", "pour moi", "pour nous", "me plaire",
               "me plairait", "me convient", "me conviendrait", "m'irait", "j'aimerais", "j'aime", "j'adore",
               "près de chez moi", "à côté de chez moi", "choisis", "choisir", "planifie", "organise", "prévois",
               "est-ce que je suis", "suis-je"),
        "pt": ("recomend-", "recomende", "sugir-", "suger-", "sugest-", "indica", "indique", "ideia", "ideias",
               "o que eu posso", "o que posso", "o que devo", "o que eu devo", "qual devo", "onde posso", "para mim",
               "pra mim", "eu gostaria", "eu gosto", "perto de mim", "perto de casa", "escolhe", "escolha",
               "planeje", "planeja", "monta"),
        "it": ("consiglia-", "consigli", "raccomand-", "suggeris-", "suggerim-", "proponi", "idea", "idee",
               "cosa posso", "cosa potrei", "cosa dovrei", "che cosa posso", "dove posso", "quale dovrei", "per me",
               "per noi", "mi piacerebbe", "mi piace", "mi piacciono", "vicino a me", "vicino a casa", "scegli",
               "sceglimi", "organizza", "pianifica"),
        "ru": ("посоветуй", "посоветуйте", "порекомендуй", "порекомендуйте", "рекоменд-", "предложи", "предложите",
               "идея", "идеи", "идей", "что мне", "что приготовить", "куда мне", "какой мне", "какую мне",
               "для меня", "мне подойдёт", "мне подойдет", "подойдёт мне", "подходит мне", "мне нравится",
               "мне понравится", "рядом со мной", "выбери", "подбери", "спланируй", "составь"),
        "ja": ("おすすめ", "オススメ", "お勧め", "お薦め", "お奨め", "すすめて", "勧めて", "薦めて", "提案", "アイデア",
               "アイディア", "いい案", "選んで", "選ぶなら", "決めて", "何がいい", "どれがいい", "どこがいい",
               "何にしよう", "ばいいかな", "たらいいかな", "がいいかな", "私に合う", "私に合った", "私向け",
               "私にぴったり", "好きそうな", "に合わせて", "似合う", "向いてる", "向いている", "計画を立て",
               "プランを", "家の近く", "近所の"),
        "ko": ("추천-", "골라-", "제안-", "아이디어-", "뭐 먹-", "뭘 먹-", "먹을까", "할까", "갈까", "볼까", "살까",
               "입을까", "좋을까", "어울리-", "맞는", "맞춰-", "맞춘-", "좋아할 만한", "좋아할만한", "마음에 들-",
               "계획-", "짜 줘", "짜줘-", "집 근처", "우리 집 근처"),
    },
}

#: Korean particles a word may carry after a marker (딸 finds 딸이, 딸한테, 딸의)
_KO_PARTICLES = ("이랑|에게서|한테서|에게|에서|한테|까지|부터|처럼|보다|으로|이나|이야|이에요|예요|이가|이는|이를|"
                 "이의|이도|이한테|하고|랑|이|가|은|는|을|를|의|에|도|만|와|과|께|로|야|요|게|나|네")


def normalise(text: str) -> str:
    """What markers are matched against: lower-cased, Traditional Chinese as Simplified, straight apostrophes."""
    return to_simplified(text).lower().replace("’", "'")


def _word(word: str, letter: str) -> str:
    """One word of a marker as a regular expression: its alternatives, each a prefix (``x-``), the end of a
    longer word (``-x``) or itself."""
    options = []
    for option in word.split("|"):
        before = option.startswith("-") and len(option) > 1
        after = option.endswith("-") and len(option) > 1
        core = option[1 if before else 0:len(option) - 1 if after else None]
        options.append((f"{letter}*" if before else "") + re.escape(core) + (f"{letter}*" if after else ""))
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"


#: what a gap (``…``) of a marker may span: characters of one clause in Chinese and Japanese, words elsewhere
GAP_CHARS = 6
GAP_WORDS = 2
_GAP_CJK = rf"[^\s，。！？、；：,.!?;:]{{0,{GAP_CHARS}}}"
_GAP_WORDS = rf"(?:\s+[^\s,.!?;:]+){{0,{GAP_WORDS}}}\s+"


def compile_marker(marker: str, language: str) -> tuple[re.Pattern[str], bool]:
    """A marker as a pattern over ``normalise``d text, and whether it is reported as written (False: as
    the text said it, for markers with affixes, alternatives or gaps)."""
    text = normalise(marker)
    if "…" in text:
        parts = [compile_marker(part.strip(), language)[0].pattern for part in text.split("…")]
        gap = _GAP_CJK if language in ("zh", "ja") else _GAP_WORDS
        return re.compile(gap.join(parts)), False
    plain = "|" not in text and not any(w.startswith("-") or w.endswith("-") for w in text.split() if len(w) > 1)
    if language == "en":
        if CJK.search(text) or not text[0].isalnum():
            return re.compile(re.escape(text)), True
        return re.compile(r"(?<![a-z0-9'])" + re.escape(text) + r"(?![a-z0-9])"), True
    if language in ("zh", "ja") or (plain and not text[0].isalnum()):
        return re.compile(re.escape(text)), True
    letter = r"[\uac00-\ud7af]" if language == "ko" else r"[^\W\d_]"
    words = text.split()
    body = r"\s+".join(_word(w, letter) for w in words)
    first, last = words[0], words[-1]
    start = "" if first.startswith("-") else (r"(?<![\uac00-\ud7af])" if language == "ko" else r"(?<![^\W_])")
    if language == "ko":
        short = "|" not in last and len(last.strip("-")) < 2 and not last.endswith("-")
        end = ("" if short else f"(?:{_KO_PARTICLES})?") + r"(?![\uac00-\ud7af])"
    else:
        end = r"(?![^\W_])"
    return re.compile(start + body + end), plain


def _anchor(marker: str) -> str:
    """Text every match of ``marker`` contains (its longest word without alternatives, affixes cut off):
    a marker whose anchor is not in the text is not searched for. "" when every word has alternatives."""
    words = [w.strip("-") if len(w) > 1 else w for w in normalise(marker).replace("…", " ").split() if "|" not in w]
    return max(words, key=len) if words else ""


@lru_cache(maxsize=None)
def patterns(signal: str, languages: tuple[str, ...]) -> tuple[tuple[tuple[int, int], str, re.Pattern[str], bool, str],
                                                                 ...]:
    """The markers of ``signal`` in ``languages`` as ((language rank, index), marker, pattern, plain, anchor),
    longest first (a longer marker consumes its span: "as i mentioned" is one hit, not also "i mentioned");
    a marker two languages share is read once."""
    seen: set[str] = set()
    out = []
    for language in languages:
        for index, marker in enumerate(MARKERS[signal].get(language, ())):
            key = normalise(marker)
            if key in seen:
                continue
            seen.add(key)
            pattern, plain = compile_marker(marker, language)
            out.append(((LANGUAGES.index(language), index), marker, pattern, plain, _anchor(marker)))
    return tuple(sorted(out, key=lambda row: -len(row[1])))
