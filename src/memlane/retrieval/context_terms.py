"""Search terms of a conversation, and which of them a memory contains.

A turn is read in its language (``language``: the script; for Latin letters the words that show
a language, ``context_markers.language_of``; English when none does):

* English: lower-cased words of three letters or more that are not stop words; a term matches a
  memory sharing its Snowball stem ("decorators" finds "decorator").
* Chinese (either script, read as Simplified): words from the ``rjieba`` segmenter (jieba's
  dictionary in Rust, shipped in the wheel: no download, no start-up cost worth measuring), kept
  when the part-of-speech tag says noun, or verb / adjective of two characters or more; a term
  matches a memory containing it.
* Spanish, German, French, Portuguese, Italian, Russian (any language with a Snowball stemmer):
  words of three letters or more that are not the language's function words (its pack's
  ``stop_words``, pronouns, question words, fillers, small talk: ``text.languages``) nor the words
  people use to talk to an assistant (the gate's markers of that language: recuérdame, dijiste,
  empfiehl, la dernière fois …, and ``CHAT_STOPWORDS``); a term matches a memory sharing its stem in
  that language, accents folded ("alergias" finds "alergia", "Schwester" finds "Schwestern").
* Japanese: runs of katakana (マラソン) and of kanji (予防接種, 姉), not a verb's stem (教えて ->
  教 is dropped) nor a conversational word (前回, 先週); a term matches a memory containing it.
* Korean: Hangul words without their particles (남편이랑 -> 남편, 마라톤까지 -> 마라톤), not a
  predicate (말한, 추천해) nor a conversational word; a term matches a memory with a word it
  opens (마라톤 finds 마라톤을; a one-syllable term only the word itself, with a particle: 딸 finds
  딸이, not 딸기).

Terms come from the latest turn first, then each earlier turn, the system prompt
last, so when there are more than ``max_terms`` the conversation's end wins; within a turn that
does not fit, its last sentences win ("… What about the saxophone?" keeps "saxophone").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from memlane.retrieval import context_markers
from memlane.text.keywords import STOPWORDS, analyze
from memlane.text.normalize import CJK, has_cjk, to_simplified

#: conversation words that say nothing about what to look for (on top of the index's stop words)
CHAT_STOPWORDS_EN = frozenset("""
remember remembered recall recalled forget forgot forgetting forgotten remind reminded previously earlier last time times before again said say says saying told tell
telling talk talked talking discuss discussed discussing mention mentioned know knew think thought want wanted need
needed please thanks thank hello okay yeah yes sure also just really maybe something anything everything nothing
thing things way well still much many one ones get got let make made sure good great like can could would should
you're i'm i've it's that's what's don't didn't doesn't can't won't isn't we're they're let's explain help give
going come came see look looking try tried use used ago back day days week weeks today yesterday tomorrow now
assistant user agent
""".split())

#: Chinese words the segmenter tags as content that still say nothing about what to look for
CHAT_STOPWORDS_ZH = frozenset("""
记得 记住 还记得 知道 告诉 觉得 喜欢 认为 说过 说 提到 提过 讨论 聊过 聊 之前 以前 上次 上回 刚才 时候 时间 事情 东西 问题
一下 这个 那个 这些 那些 什么 怎么 怎样 为什么 可以 能够 应该 需要 希望 帮忙 帮助 现在 今天 昨天 明天 用户 助手 我们 你们
""".split())

#: words people use to talk to an assistant that say nothing about what to look for, per language (on top
#: of the language pack's function words and the gate's markers of the language)
CHAT_STOPWORDS: dict[str, frozenset[str]] = {
    "es": frozenset("""hola gracias favor puedes podrías puede podría dime dame hazme ayúdame explícame escribe
necesito necesitas quiero quería saber decir dices dicho hacer hago haces tengo tienes tiene algo cosa cosas vez
veces hoy ayer mañana ahora semana pasada pasado noche tarde siempre nunca bien mal mejor bueno buena gusta
gustaría llamaba llama acuerdo verdad oye mira vale sí también todavía solo sólo crees piensas parece parezca puedo
pueda podemos ayudarte ayudar teniendo tener cuenta última último dije dijo conté mencioné acuerdas algún alguna alguno
estas estos estamos estaba siento pasando pasa otra otro otros tal muchas muchos sido ser hablar voy vas fuimos
escribió""".split()),
    "de": frozenset("""hallo danke bitte kannst könntest kann könnte soll sollte sag sagen gesagt gib mach machen
schreib erklär erklären hilf brauche brauchst möchte möchtest will willst weißt wissen heute gestern morgen jetzt
immer nie gut besser mal nochmal etwas was sache sachen woche abend letzte letzten letztes gerade eigentlich
vielleicht denkst glaubst hieß heißt erzählt erzählen helfen stell fass hattest hatte geht gehen guten genommen
gegangen übersetze korrigiere funktioniert""".split()),
    "fr": frozenset("""bonjour salut merci stp svp plaît peux pourrais peut pourrait dis dire dit donne fais faire
écris explique aide besoin veux voudrais voulais savoir sais aujourd hui hier demain maintenant toujours jamais bien
mieux bon bonne chose choses fois semaine soir dernière dernier déjà encore penses crois semble appelait appelle
quelque dont parlé aider faudrait font habitude décidé recommandé conseillé proposé puis""".split()),
    "pt": frozenset("""olá obrigado obrigada favor pode podes poderia diz dizer dá faz fazer escreve explica ajuda
preciso quero queria saber sabe hoje ontem amanhã agora sempre nunca bem melhor bom boa coisa coisas vez semana
noite tarde acha""".split()),
    "it": frozenset("""ciao grazie favore puoi potresti può dimmi dammi fammi scrivi spiega aiutami bisogno voglio
vorrei sapere sai oggi ieri domani adesso ora sempre mai bene meglio buono buona cosa cose volta settimana sera
pensi""".split()),
    "ru": frozenset("""привет спасибо пожалуйста можешь можете мог могла скажи дай сделай напиши объясни помоги нужно
надо хочу хотел хотела знать знаешь сегодня вчера завтра сейчас всегда никогда хорошо лучше хороший вещь раз
неделе думаешь""".split()),
    "ja": frozenset("""今 今日 明日 昨日 今夜 今晩 今週 来週 前 後 間 時 日 月 年 週 分 何 私 僕 俺 方 事 物 中 上 下 次 毎 度 回 件
点 気 感 一週間 一度 一回 名前 質問 答え 話 言 教 お願い 手伝 大丈夫 本当 全部 最近 自分""".split()),
    "ko": frozenset("""뭐 뭘 뭔 무엇 어디 언제 누구 왜 어떻게 어떤 어때 몇 얼마 오늘 내일 어제 지금 요즘 이번 다음
좀 잘 더 또 다시 같이 정말 진짜 너무 아주 그냥 이거 그거 저거 이것 그것 저것 것 거 수 때 번 하나 만한 만
내 나 제 저 우리 저희 너 네 당신 해 줘 써 봐 와 가 해줘 할 한 된 되 안녕 고마워 감사 부탁 얘기 이야기 말 짜 곳 갈 준 쓴
편 분 자 많 나올""".split()),
}

#: part-of-speech tags (jieba's set) of words kept at any length: nouns, names, places, organisations, verbal nouns
_NOUN_TAGS = ("n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "ng", "vn", "an")
#: tags of words kept from two characters up: verbs and adjectives
_CONTENT_TAGS = ("v", "vd", "a", "ad", "i", "l", "j")

#: English words (Latin letters, accented ones too: café), with a trailing contraction or possessive kept to judge it
_LATIN = re.compile(r"[a-z0-9\u00c0-\u024f]+(?:['’][a-z\u00c0-\u024f]+)?")
#: words of a language written in letters with spaces (accented Latin, Cyrillic): hyphenated words kept
#: whole, an elided article (l', d', dell') split off
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")
_KANJI = re.compile(r"[0-9０-９]*[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆]+")
_HIRAGANA = re.compile(r"[\u3041-\u3096]")
#: Japanese particles: a kanji run before one is a noun (姉の, 妻と), before other kana a verb's stem (教えて)
_JA_PARTICLES = ("の", "を", "に", "は", "が", "で", "と", "へ", "も", "や", "ね", "よ", "から", "まで", "より")
_HANGUL_WORD = re.compile(r"[0-9]*[\uac00-\ud7af]+")
#: Korean particles and copulas a noun may carry, longest first; the one-syllable ones that follow only a
#: syllable with (은 을 이 과) or without (는 를 가 와 로) a final consonant are checked
_KO_PARTICLES = sorted("""이에요 이었어 이었지 였어요 에게서 한테서 이랑 에게 에서 한테 까지 부터 처럼 보다 으로 이나 이야 이고
예요 였어 였지 하고 랑 은 는 이 가 을 를 의 에 도 만 와 과 로 야 께""".split(), key=len, reverse=True)
_AFTER_CONSONANT = frozenset("은 을 이 과 으로 이랑 이나 이야 이고 이에요 이었어 이었지".split())
_AFTER_VOWEL = frozenset("는 를 가 와 로 랑 야 예요 였어 였지 였어요".split())
#: endings of a Korean predicate (said, recommend, would like, easily): such a word names no topic
_KO_PREDICATE = tuple(sorted("""했어요 해줘요 해주세요 했었 했던 했지 했고 였지 었지 았지 였어 었어 았어 됐어 더라 려면 으면 는데
는지 지만 니까 해요 해줘 줄래 을까 할까 하는 해서 하면 아서 어서 워서 들어 줘요 되고 되는 해 했 줘 까 다 요 죠 던 한 할 서 하 게
""".split(), key=len, reverse=True))
#: Korean nouns ending as a particle or a predicate would (고양이 is a cat, not 고양 + 이)
_KO_NOUNS = frozenset("고양이 아이 나이 놀이 오이 사이 종이 어린이 거북이 아이디어 최고 냉장고 바다 요리 노래 미래 가게 "
                      "도서 한국어 영어 일본어 중국어 스페인어 독일어 프랑스어".split())
#: recency weight of each earlier turn (the latest has 1.0), and the floor it decays to
TURN_DECAY = 0.85
MIN_RECENCY = 0.3
#: the system prompt's recency weight: it frames every turn but names the current topic least
SYSTEM_RECENCY = 0.3
#: Snowball algorithms of languages whose pack names none (or that have no pack yet)
_STEMMERS = {"es": "spanish", "de": "german", "fr": "french", "pt": "portuguese", "it": "italian", "ru": "russian",
             "nl": "dutch", "tr": "turkish", "pl": "polish", "sv": "swedish", "da": "danish", "no": "norwegian",
             "fi": "finnish", "ro": "romanian", "hu": "hungarian", "ca": "catalan", "id": "indonesian"}


@dataclass(frozen=True, slots=True)
class Term:
    """One search term. ``key`` is what is compared: the stem of an English word (or of a word of
    ``language`` in its own stemmer, accents folded), the Simplified form of a Chinese one, a Japanese
    or Korean word as written. ``weight`` (0..1) grows with recency and length."""

    text: str
    key: str
    cjk: bool
    weight: float
    #: "en", "zh", "ja", "ko" or the code of another language the term is compared in
    language: str = "en"


@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def language(text: str) -> str:
    """The language a turn is read in: "ko" (Hangul), "ja" (kana), "zh" (Chinese characters), "en", or the
    language written in Latin letters the text shows most (``context_markers.language_of``; a tie: the
    first listed); Cyrillic by the language detector (Russian, Ukrainian …)."""
    code = context_markers.language_of(text)
    if code is not None:
        return code
    shown = context_markers.evidence(text)
    if shown:  # a tie between languages written in Latin letters: the first listed
        return max(shown, key=lambda c: (shown[c], -list(context_markers.EVIDENCE).index(c)))
    from memlane.text import languages

    return languages.detect(text)


@lru_cache(maxsize=32)
def _reader(code: str):
    """(stemmer or None, words to drop, prefixes to drop, endings to drop) of a language: its pack's
    function words, the gate's markers of the language (memory words, questions, references, requests,
    know-how: said to the assistant, not about the topic) and ``CHAT_STOPWORDS``."""
    from memlane.text import languages

    pack = languages.pack(code)
    algorithm = getattr(pack, "stemmer", None) or _STEMMERS.get(code)
    stemmer = None
    if algorithm:
        import snowballstemmer

        stemmer = snowballstemmer.stemmer(algorithm)
    forms: list[str] = list(CHAT_STOPWORDS.get(code, ()))
    if pack is not None:
        for name in ("stop_words", "first_person", "possessives", "question_words", "question_particles",
                     "fillers", "small_talk", "negation", "now", "conjunctions"):
            forms.extend(getattr(pack, name, ()) or ())
    for signal in ("memory_keywords", "questions", "references", "requests", "know_how"):
        forms.extend(context_markers.MARKERS[signal].get(code, ()))
    exact, prefixes, endings = set(), set(), set()
    for form in forms:
        form = form.lower().replace("’", "'")
        if " " in form or "|" in form:
            continue
        if form.endswith("-") and len(form) > 1:
            prefixes.add(form[:-1])
        elif form.startswith("-") and len(form) > 1:
            endings.add(form[1:])
        else:
            exact.add(form)
    return stemmer, frozenset(exact), tuple(sorted(prefixes)), tuple(sorted(endings))


def _dropped(word: str, code: str) -> bool:
    _, exact, prefixes, endings = _reader(code)
    return word in exact or word.startswith(prefixes) or word.endswith(endings)


def _fold(word: str) -> str:
    from memlane.text.languages import fold

    return fold(word)


def _key(word: str, code: str) -> str:
    """What a word is compared by: English its stem; Chinese its Simplified form; Japanese and Korean
    as written; another language its stem in that language, accents folded."""
    if code == "en":
        return _stemmer().stemWord(word if word.isascii() else _fold(word))
    if code in ("zh", "ja", "ko"):
        return word
    stemmer = _reader(code)[0]
    return _fold(stemmer.stemWord(word) if stemmer else word)


def _latin_word(token: str) -> str | None:
    word = token.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if "'" in word:  # a contraction (don't, we'll): a function word
        return None
    if len(word) < 3 or word in STOPWORDS or word in CHAT_STOPWORDS_EN:
        return None
    return word


def _cjk_word(word: str, tag: str) -> bool:
    if not CJK.search(word) or word in CHAT_STOPWORDS_ZH:
        return False
    return tag in _NOUN_TAGS or (len(word) >= 2 and tag in _CONTENT_TAGS)


def _english(text: str) -> list[tuple[str, str]]:
    return [(w, "en") for t in _LATIN.findall(text) if (w := _latin_word(t))]


def _chinese(lowered: str) -> list[tuple[str, str]]:
    import rjieba

    out: list[tuple[str, str]] = []
    for word, tag in rjieba.tag(to_simplified(lowered)):
        if CJK.search(word):
            if _cjk_word(word, tag):
                out.append((word, "zh"))
        else:
            out.extend(_english(word))
    return out


def _spaced(lowered: str, code: str) -> list[tuple[str, str]]:
    """Words of a language written in letters with spaces, without its function and chat words."""
    out = []
    for token in _WORD.findall(lowered.replace("’", "'").replace("'", " ")):
        while "-" in token and _dropped(token.rsplit("-", 1)[1], code):  # fais-moi, puis-je, est-ce
            token = token.rsplit("-", 1)[0]
        if len(token) < 3 or _dropped(token, code):
            continue
        out.append((token, code))
    return out


def _japanese(text: str) -> list[tuple[str, str]]:
    """Katakana and kanji runs of a Japanese text, in order; a kanji run that opens a verb or an
    adjective (one kanji and then kana other than a particle: 教えて, 作れば) is not a term."""
    text = _JA_CHAT.get().sub(" ", text)
    found: list[tuple[int, str]] = [(m.start(), m.group()) for m in _KATAKANA.finditer(text)]
    for m in _KANJI.finditer(text):
        run, after = m.group(), text[m.end():m.end() + 2]
        if len(run) == 1 and _HIRAGANA.match(after[:1]) and not after.startswith(_JA_PARTICLES):
            continue
        found.append((m.start(), run))
    out = [(w, "ja") for _, w in sorted(found) if not _dropped(w, "ja")]
    rest = _KATAKANA.sub(" ", _KANJI.sub(" ", text))
    return out + _english(rest.lower())


class _Lazy:
    """A pattern made on first use (it reads the gate's markers and the language packs)."""

    def __init__(self, make):
        self._make, self._value = make, None

    def get(self):
        if self._value is None:
            self._value = self._make()
        return self._value


def _ja_chat() -> re.Pattern[str]:
    """The conversational words of Japanese of two characters or more, longest first: cut out of a text
    before its kanji and katakana runs are read (前回話した -> 話した, この前教えた -> 教えた)."""
    exact = sorted((w for w in _reader("ja")[1] if len(w) >= 2 and re.search(r"[\u30a1-\u30fa\u4e00-\u9fff]", w)),
                   key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in exact))


_JA_CHAT = _Lazy(_ja_chat)


def _korean_word(word: str) -> str | None:
    """A Hangul word without its particle (남편이랑 -> 남편), or None when it names nothing (a predicate,
    a conversational word)."""
    if word in _KO_NOUNS:
        return word
    if _dropped(word, "ko"):
        return None
    stem = word
    for particle in _KO_PARTICLES:
        if word.endswith(particle) and len(word) > len(particle):
            head = word[:-len(particle)]
            final = (ord(head[-1]) - 0xAC00) % 28 if "\uac00" <= head[-1] <= "\ud7af" else 0
            if (particle in _AFTER_CONSONANT and not final) or (particle in _AFTER_VOWEL and final
                                                                 and not (particle == "로" and final == 8)):
                continue
            stem = head
            break
    if stem not in _KO_NOUNS and (stem.endswith(_KO_PREDICATE) or word.endswith(_KO_PREDICATE) and stem == word):
        return None
    if _dropped(stem, "ko"):
        return None
    return stem


def _korean(text: str) -> list[tuple[str, str]]:
    out = [(w, "ko") for token in _HANGUL_WORD.findall(text) if (w := _korean_word(token))]
    return out + _english(_HANGUL_WORD.sub(" ", text).lower())


def words(text: str, code: str | None = None) -> list[tuple[str, str]]:
    """Candidate terms of one text in order of appearance, as (word, language); ``code``: the language
    it is read in (``language(text)`` when not given)."""
    code = code or language(text)
    if code == "ja":
        return _japanese(text)
    if code == "ko":
        return _korean(text)
    lowered = text.lower()
    if code == "zh" or has_cjk(lowered):
        return _chinese(lowered)
    if code == "en":
        return _english(lowered)
    return _spaced(lowered, code)


def _length_factor(word: str, cjk: bool) -> float:
    """Longer terms say more (PersonaLab scores frequency x length); a Chinese, Japanese or Korean
    character counts as two letters."""
    return min(len(word) * (2 if cjk else 1), 8) / 8


def extract(turns: list[str], system_prompt: str = "", max_terms: int = 20) -> list[Term]:
    """At most ``max_terms`` unique terms of ``turns`` (oldest first) and the system prompt,
    the latest turn's first."""
    sources = [(text, max(TURN_DECAY ** age, MIN_RECENCY)) for age, text in enumerate(reversed(turns))]
    if system_prompt:
        sources.append((system_prompt, SYSTEM_RECENCY))
    terms: dict[str, Term] = {}
    for text, recency in sources:
        code = language(text) if text else "en"
        found: dict[str, Term] = {}
        for sentence in _SENTENCE.split(text) if text else ():
            for word, lang in words(sentence, code):
                key = _key(word, lang)
                if key not in terms and key not in found:
                    wide = lang in ("zh", "ja", "ko")
                    found[key] = Term(text=word, key=key, cjk=wide,
                                      weight=round(recency * _length_factor(word, wide), 6), language=lang)
        room = max_terms - len(terms)
        if len(found) > room:  # the turn does not fit: its last sentences first (the question is at its end)
            found = _latest_sentences_first(text, code, found, room)
        terms.update(found)
        if len(terms) >= max_terms:
            break
    return list(terms.values())


#: where a turn's sentences end (English, Chinese and Japanese punctuation, line breaks)
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")


def _latest_sentences_first(text: str, code: str, found: dict[str, Term], room: int) -> dict[str, Term]:
    """``room`` of a turn's terms, its last sentence's first (in their order), then the one before …,
    listed in the order they were said."""
    kept: set[str] = set()
    for sentence in reversed([s for s in _SENTENCE.split(text) if s.strip()]):
        for word, lang in words(sentence, code):
            key = _key(word, lang)
            if key in found and len(kept) < room:
                kept.add(key)
    return {key: term for key, term in found.items() if key in kept}


def _memory_keys(text: str, code: str) -> set[str]:
    """The keys of every word of a memory, as a term of language ``code`` is compared."""
    stemmer = _reader(code)[0]
    tokens = _WORD.findall(text.lower().replace("’", "'").replace("'", " "))
    return {_fold(stemmer.stemWord(t) if stemmer else t) for t in tokens if not _dropped(t, code)}


def _korean_match(key: str, memory_words: list[str]) -> bool:
    """A word of the memory opens with the term (마라톤 finds 마라톤을); a one-syllable term only the word
    itself or with a particle (딸 finds 딸이, not 딸기)."""
    if len(key) >= 2:
        return any(w.startswith(key) for w in memory_words)
    return any(w == key or (w.startswith(key) and w[len(key):] in _KO_PARTICLES) for w in memory_words)


def matched(terms: list[Term], text: str) -> list[Term]:
    """The terms ``text`` contains: English by stem, Chinese as a substring of its Simplified form,
    Japanese as a substring, Korean opening one of its words, another language by its stem there."""
    if not terms:
        return []
    languages = {t.language for t in terms}
    stems = set(analyze(text)) if "en" in languages else set()
    simplified = to_simplified(text).lower() if "zh" in languages else ""
    lowered = text.lower()
    hangul = _HANGUL_WORD.findall(text) if "ko" in languages else []
    others = {code: _memory_keys(text, code) for code in languages - {"en", "zh", "ja", "ko"}}
    out = []
    for t in terms:
        if t.language == "en":
            hit = t.key in stems
        elif t.language == "zh":
            hit = t.key in simplified
        elif t.language == "ja":
            hit = t.key in lowered
        elif t.language == "ko":
            hit = _korean_match(t.key, hangul)
        else:
            hit = t.key in others[t.language]
        if hit:
            out.append(t)
    return out


def term_score(found: list[Term]) -> float:
    """0..1: the matched terms' weights, saturating (one strong term ~0.63, two ~0.86)."""
    return 1.0 - math.exp(-sum(t.weight for t in found))
