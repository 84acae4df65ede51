"""The keyword analyzer: the terms a memory is indexed under and a query searches for.

- English: lower-cased, English stop words dropped, Snowball-stemmed (``running`` and ``runs`` meet at
  ``run``). ASCII text holding an English-only word (the, and, with, what …: ``ENGLISH_WORDS``) is
  English without asking the detector, and is analysed exactly as by the analyzers before.
- Other alphabetic languages (Spanish, German, French, Portuguese, Italian, Dutch, Polish, Russian,
  Ukrainian, Turkish …): the text's language is ``memlane.text.languages.detect``'s, its words read
  by that language's pack (``languages.pack(code)``: ``.stemmer``, ``.stop_words``). Each word keeps
  the term it always had (lower-cased, accents folded so ``café`` and ``cafe`` meet, English-stemmed:
  the *shared form*) and, when it differs, adds the language's *own term*: the Snowball stem of the
  word's dictionary form (``simplemma``'s tables): ``vivo`` -> ``vivo viv``, ``vive`` -> ``vive viv``;
  ``wohne`` -> ``wohn``, ``wohnt`` -> ``wohnt wohn`` (Snowball alone leaves ``wohnt``, and Russian
  ``живу``/``живёт``, apart). The language's stop and question words are dropped from both.
  Every word carries its shared form on both sides, so a question the detector reads as another
  language than the memory it asks about (a short one: "¿Dónde trabaja?" reads as English) still
  meets it on the words they share as written; the own term only adds the meetings of other
  inflections. A text the detector calls English though it holds no English-only word goes to the
  language whose function words it holds (``_text_language``). Measured against the own term alone,
  stems without lemmas and the detector alone in ``benchmarks/bench_keyword_languages.py``
  (docs/multilingual.md, "Keywords in every language"). Ukrainian, which Snowball lacks, and Cyrillic
  text of a language without a stemmer use the Russian stemmer. A language whose pack is missing
  keeps the shared form alone. Letters that do not decompose are folded too (``ß`` -> ``ss``,
  ``ł`` -> ``l``, ``ı`` -> ``i``): a word is never cut at them.
- Chinese (either script, mapped to Simplified): words from the ``rjieba`` segmenter in search mode
  (jieba's dictionary in Rust, shipped in the wheel): a long word also yields the words inside it
  (工程师 → 工程, 工程师), so 工程师 and 软件工程 meet at 工程. Chosen over every character and
  every pair of neighbouring characters (the analyzer before) by the measurement in
  docs/multilingual.md.
- Japanese (text with kana): each run of kanji and kana as every character and every pair of
  neighbouring characters (住んで and 住む share 住; 図書館 and 図書 share 図書); Korean (Hangul): every
  syllable and every pair of neighbouring syllables of a word, so a noun meets itself under any
  particle (서울에, 서울에서 and 서울 share 서울). Morphological analyzers (SudachiPy and Janome,
  Kiwi) were measured against these on retrieval (docs/multilingual.md) and not taken: no better
  on the default search, at a start-up, memory and size cost.
- Thai and other scripts without spaces between words: every pair of neighbouring characters, and
  every character.

Scope ids become opaque tokens, so a scoped keyword search intersects posting lists instead of
scanning every user's memories. ``VERSION`` names the analyzer: a store indexed by another one
re-indexes when it opens (a schema migration on each backend: ``store/sqlite_schema.py``,
``store/postgres_schema.py``).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache
from typing import Any

from memlane.text.normalize import CJK, to_simplified

#: the analyzer's version, recorded by the stores (a change of the terms re-indexes them): 2, Chinese
#: words; 3, the stems and stop words of each detected language, Korean syllable pairs, folded ß ł ı
VERSION = 3

STOPWORDS = frozenset("""
a an the and or but so if then than that this these those there here it its is are was were be been being am do
does did have has had i me my we our you your he she him her his they them their what which who whom when where
why how all any both each few more most other some such only own same too very can will just should would could
might must of to in on at by for with about from up down out off over under again once also as because until
while s t d ll m ve re not no yes
""".split())

#: English words that are no word of another Latin-script language memlane reads (not "a", "me", "he",
#: "in", "is", "was", "my", "to", "on", "her" …): ASCII text holding one is English, without the detector
#: (the PostgreSQL migration to analyzer 3 reads them too: ``store/postgres_schema.py``)
ENGLISH_WORDS = frozenset("""
the and with you your what this that have has are were been being they them their she his our would could should
does did about from which who whom when where why how just really i'm it's don't can't didn't i've i'll i'd
""".split())
_ENGLISH_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")

#: a run of Chinese characters, a run of kana (and other unspaced scripts), a run of Hangul, or a word of
#: letters and digits (combining marks kept inside it: Turkish İ lower-cased is i and a combining dot)
_CHINESE = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
_UNSPACED = r"[\u3040-\u30ff\u31f0-\u31ff\u0e00-\u0e7f]+"
_HANGUL = r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+"
_TOKEN = re.compile(rf"({_CHINESE})|({_UNSPACED})|({_HANGUL})|((?:[^\W_]|[\u0300-\u036f])+)")
#: the same in Japanese text (it holds kana): kanji and kana read alike, in runs, as characters and pairs
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_JAPANESE_TOKEN = re.compile(rf"([\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヶ]+"
                             rf"|[\u0e00-\u0e7f]+)|({_HANGUL})|((?:[^\W_]|[\u0300-\u036f])+)")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
_WORD = re.compile(r"(?:[^\W_]|[\u0300-\u036f])+")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
#: combining diacritics (a stress mark over Cyrillic, a dot over Turkish i), not the vowel signs of Indic scripts
_DIACRITICS = re.compile(r"[\u0300-\u036f]")
#: Latin letters NFKD leaves as they are, folded as a reader without them would type them
_UNDECOMPOSED = str.maketrans({"ß": "ss", "ł": "l", "ı": "i", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "æ": "ae",
                               "œ": "oe", "ħ": "h", "ŀ": "l"})
#: function words jieba keeps as words of their own; a question's 什么 or 的 finds nothing by itself
CHINESE_STOPWORDS = frozenset("""
的 了 着 过 吗 呢 吧 啊 呀 嘛 么 是 在 有 和 与 及 或 而 也 都 就 还 又 很 太 把 被 给 让 对 从 向 到 为 以 于 之 其 这 那 哪
我 你 他 她 它 我们 你们 他们 她们 咱们 自己 什么 怎么 怎样 怎么样 为什么 哪里 哪儿 哪个 多少 几 谁 吗 一个 一下 可以 能 会 要 想
""".split())


@lru_cache(maxsize=1)
def _stemmer():
    """The Snowball English stemmer; ``snowballstemmer`` hands out PyStemmer's C build when it is
    installed (a dependency: every insert runs this through the keyword index trigger)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def _fold(word: str) -> str:
    """A Latin ``word`` without accents (NFKD, combining marks dropped, letters that do not decompose
    spelled out): ``café`` -> ``cafe``, ``Müller`` -> ``muller``, ``straße`` -> ``strasse``, ``łódź`` ->
    ``lodz``; a word of another script as it is (``й`` is a letter of its own, not an accented ``и``)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))
    if not folded.isascii():
        folded = folded.translate(_UNDECOMPOSED)
    return folded if folded.isascii() else _DIACRITICS.sub("", word)


class _Language:
    """How the words of one language are read besides their shared form: its pack's code, Snowball
    stemmer and stop words (folded), and whether ``simplemma`` knows its words."""

    __slots__ = ("code", "stemmer", "stop_words", "lemmas")

    def __init__(self, code: str, stemmer: Any, stop_words: frozenset[str], lemmas: bool):
        self.code, self.stemmer, self.stop_words, self.lemmas = code, stemmer, stop_words, lemmas

    def term(self, word: str) -> str:
        """The word's own term: the Snowball stem of its dictionary form, accents folded."""
        word = unicodedata.normalize("NFC", word).replace("i\u0307", "i")
        return _fold(self.stemmer.stemWord(_lemma(word, self.code) if self.lemmas else word))


@lru_cache(maxsize=65536)
def _lemma(word: str, code: str) -> str:
    """``word``'s dictionary form in language ``code`` by simplemma (its tables, shipped in the wheel, read in
    its low-memory mode), lower-cased; the word itself when simplemma does not know it."""
    import simplemma

    try:
        return simplemma.lemmatize(word, lang=code, low_memory=True).lower()
    except (ValueError, KeyError, OSError):
        return word


@lru_cache(maxsize=64)
def _language(code: str) -> _Language | None:
    """How language ``code`` is read, from its pack (``memlane.text.languages``); None when there is nothing
    to add to the shared form (English, a language without pack or stemmer)."""
    if code == "en":
        return None
    found = _pack(code)
    algorithm = getattr(found, "stemmer", None)
    if algorithm is None and code in _CYRILLIC_CODES:
        algorithm = "russian"  # Ukrainian, Belarusian …: Snowball has no stemmer of theirs, Russian's strips most
    if algorithm is None:
        return None
    import snowballstemmer

    try:
        stemmer = snowballstemmer.stemmer(algorithm)
    except KeyError:
        return None
    # its stop words and question words (as English's "what", "where" are English stop words)
    words = (*getattr(found, "stop_words", ()), *getattr(found, "question_words", ()))
    stops = frozenset(_fold(w.lower()) for w in words if " " not in w)
    return _Language(code, stemmer, stops, code in _LEMMATIZED)


def _pack(code: str) -> Any:
    from memlane.text import languages

    try:
        return languages.pack(code)
    except Exception:  # a pack being written may not import yet: the language is read without it
        return None


#: Cyrillic languages py3langid may name: the Russian stemmer when their pack has none
_CYRILLIC_CODES = frozenset({"ru", "uk", "be", "bg", "sr", "mk", "kk", "mn"})
#: languages whose words are brought to their dictionary form (simplemma) before they are stemmed: Snowball
#: alone leaves apart the persons of a verb (German wohne/wohnt, Russian живу/живёт, Turkish -yor) and
#: irregular plurals; simplemma covers each of them
_LEMMATIZED = frozenset({"es", "de", "fr", "pt", "it", "nl", "pl", "ru", "uk", "tr"})


def _english(lowered: str) -> bool:
    return any(w in ENGLISH_WORDS for w in _ENGLISH_WORD.findall(lowered.replace("’", "'")))


@lru_cache(maxsize=1)
def _function_words() -> dict[str, frozenset[str]]:
    """Each language with a pack and a stemmer: its one-word stop words and question words, folded."""
    from memlane.text import languages

    out = {}
    for code in languages.PACKS:
        found = _pack(code)
        if found is None or _language(code) is None or not found.spaced:
            continue
        out[code] = frozenset(folded for w in (*found.stop_words, *found.question_words)
                              if " " not in w and len(folded := _fold(w.lower())) > 1)
    return out


def _text_language(text: str, lowered: str) -> _Language | None:
    """The language whose terms the words of ``text`` get besides their shared form, or None (English).

    ``languages.detect``'s answer, unless it is English for a text holding none of English's own words
    (``ENGLISH_WORDS``): the detector falls back to English on a short text ("¿Dónde trabaja?", "Gdzie
    mieszka?"); the language then is the one whose function words (its pack's stop and question words,
    less those that are English words too: "a", "of", "on", "was") the text holds more of than any
    other's, one at least in a text with a letter beyond ASCII, two in an ASCII one (English captions
    name "a man" and "men": "Quel est son travail ?" is French, "Dove lavora?" stays unread)."""
    if _english(lowered):
        return None
    from memlane.text import languages

    code = languages.detect(text)
    if code == "en":
        if _CYRILLIC.search(text):
            code = "ru"
        else:
            words = {_fold(w) for w in _WORD.findall(lowered)} - STOPWORDS
            counts = sorted(((len(words & own), c) for c, own in _function_words().items()), reverse=True)
            enough = 1 if not lowered.isascii() else 2
            if counts and counts[0][0] >= enough and (len(counts) == 1 or counts[0][0] > counts[1][0]):
                code = counts[0][1]
    return _language(code)


def _spaced(words: list[str], language: _Language | None) -> list[str]:
    """Terms of the words of an alphabetic language (lower-cased, as written): each word's shared form
    (folded, English-stemmed), then its own term in ``language`` when that differs; stop words dropped."""
    if language is None:
        return _stemmer().stemWords([w for w in _shared(words) if w not in STOPWORDS])
    terms: list[str] = []
    for word in words:
        pieces = _shared([word])
        if len(pieces) != 1:  # a word folded into two (a ligature, a superscript): the pieces alone
            terms.extend(_stemmer().stemWords([p for p in pieces if p not in STOPWORDS]))
            continue
        folded = pieces[0]
        if folded in STOPWORDS or folded in language.stop_words:
            continue
        base = _stemmer().stemWord(folded)
        terms.append(base)
        own = language.term(word)
        if own and own != base:
            terms.append(own)
    return terms


def _shared(words: list[str]) -> list[str]:
    """The words folded (``_fold``), an ASCII word split at what is not a letter or digit."""
    out: list[str] = []
    for word in words:
        folded = _fold(word)
        out.extend(_ASCII_WORD.findall(folded) if folded.isascii() else [folded])
    return out


def _neighbours(run: str) -> list[str]:
    return [*run, *(run[i:i + 2] for i in range(len(run) - 1))]


def _chinese(run: str) -> list[str]:
    import rjieba

    return [w for w in rjieba.cut_for_search(run) if w not in CHINESE_STOPWORDS and not w.isspace()]


def _korean(run: str) -> list[str]:
    """A word of Hangul: its syllables and pairs of neighbouring syllables (``_neighbours``)."""
    return _neighbours(run)


def analyze(text: str) -> list[str]:
    """Index terms of ``text``, in order (repeats kept: term frequency matters to BM25)."""
    lowered = text.lower()
    if lowered.isascii():  # the common case: English, read without the detector when it says so itself
        words = _ASCII_WORD.findall(lowered)
        return _spaced(words, None if _english(lowered) else _text_language(text, lowered))
    words: list[str] = []
    other: list[str] = []
    if _KANA.search(lowered):  # Japanese: its kanji are not Chinese words (nor mapped to Simplified)
        tokens = [("", *groups) for groups in _JAPANESE_TOKEN.findall(lowered)]
    else:
        tokens = _TOKEN.findall(to_simplified(lowered) if CJK.search(lowered) else lowered)
    for chinese, unspaced, hangul, word in tokens:
        if chinese:
            other.extend(_chinese(chinese))
        elif unspaced:
            other.extend(_neighbours(unspaced))
        elif hangul:
            other.extend(_korean(hangul))
        else:
            words.append(word)
    if not words:
        return other
    return _spaced(words, _text_language(text, lowered)) + other


@lru_cache(maxsize=4096)  # a batch insert asks for the same few scope ids over and over
def scope_token(key: str, value: str) -> str:
    """An index token standing for one scope id (ids may hold any character)."""
    return f"s{key[0]}{hashlib.sha1(value.encode()).hexdigest()[:20]}"


def memory_terms(text: str, context: str | None = None, actor: str | None = None) -> list[str]:
    """A memory's index terms: its text's, then its context's (what was said just before a reply:
    "Me too!" after "I love hiking" is found by "hiking"), then who said it (its ``actor_id``, as its
    embedded text names it: "What did Melanie say about camping?" meets what Melanie said, not only
    what others said to her). BM25 counts all of them in the memory's length."""
    terms = analyze(text)
    if context:
        terms += analyze(context)
    if actor:
        terms += analyze(actor)
    return terms


def index_text(text: str, user_id: str | None, agent_id: str | None, run_id: str | None,
               context: str | None = None, actor: str | None = None, *, terms: list[str] | None = None) -> str:
    """The text of a memory's keyword index entry: its terms (``memory_terms``; ``terms`` when the
    caller has them already), then its scope tokens."""
    scope = [scope_token(k, v) for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if v]
    return " ".join((memory_terms(text, context, actor) if terms is None else terms) + scope)


def query_terms(query: Any) -> list[str]:
    """The distinct terms a keyword search looks for: a ``memlane.core.query.Query``'s own (analysed once
    per search), or those of a string."""
    return list(dict.fromkeys(analyze(query))) if isinstance(query, str) else list(query.terms)
