"""Which language a text is written in, and that language's pack of words (``pack.py``).

``detect`` reads the script first (Hangul is Korean, kana Japanese, Han without kana Chinese,
Arabic, Devanagari …), then, for scripts several languages share (Latin, Cyrillic), asks
py3langid (langid.py's naive Bayes model over byte n-grams, shipped in its wheel: no download)
restricted to the languages memlane has packs for. A short text that names English function
words ("I", "my", "the") stays English unless the model is sure otherwise, so English chat is
never routed away from the English engine by a name or a loanword.

``pack(code)`` gives a language's pack, or None when memlane has none: callers then read the text
by punctuation and script alone.
"""

from __future__ import annotations

import importlib
import math
import re
from functools import lru_cache

from memlane.text.languages.pack import Lexicon, Pack, fold

__all__ = ["Pack", "Lexicon", "detect", "pack", "PACKS", "name", "fold"]

#: languages with a pack (module ``memlane.text.languages.<code>``); English and Chinese are read by the
#: engine's own English and Chinese readers, their packs hold what the other readers share with them
PACKS = ("es", "de", "fr", "pt", "it", "nl", "pl", "ru", "uk", "tr", "ja", "ko", "vi", "id", "ar", "hi")
#: English names of languages detected without a pack
_NAMES = {"en": "English", "zh": "Chinese", "th": "Thai", "he": "Hebrew", "el": "Greek", "fa": "Persian",
          "bn": "Bengali", "ta": "Tamil", "ka": "Georgian", "hy": "Armenian", "sv": "Swedish", "da": "Danish",
          "no": "Norwegian", "fi": "Finnish", "cs": "Czech", "ro": "Romanian", "hu": "Hungarian", "hr": "Croatian",
          "sk": "Slovak", "sl": "Slovenian", "lt": "Lithuanian", "lv": "Latvian", "et": "Estonian", "tl": "Tagalog",
          "sw": "Swahili", "af": "Afrikaans", "eu": "Basque", "ca": "Catalan", "gl": "Galician", "ms": "Malay",
          "is": "Icelandic", "ga": "Irish", "cy": "Welsh", "sq": "Albanian", "mt": "Maltese", "lb": "Luxembourgish",
          "bg": "Bulgarian", "sr": "Serbian", "mk": "Macedonian", "be": "Belarusian", "kk": "Kazakh", "mn": "Mongolian",
          "ur": "Urdu", "mr": "Marathi", "ne": "Nepali"}
#: what py3langid may answer for a script several languages share
_CANDIDATES = {
    # the languages with a pack: a short sentence is read as the nearest of them (Catalan-looking Spanish is
    # Spanish); a Latin-script language without a pack is kept as said either way
    "latin": ["en", "es", "de", "fr", "pt", "it", "nl", "pl", "tr", "vi", "id"],
    "cyrillic": ["ru", "uk", "bg", "sr", "mk", "be", "kk", "mn"],
    "arabic": ["ar", "fa", "ur"],
    "devanagari": ["hi", "mr", "ne"],
}
#: every Latin-script language the model knows that memlane names, to tell a language without a pack
_OTHER_LATIN = (*_CANDIDATES["latin"], "sv", "da", "no", "fi", "cs", "ro", "hu", "hr", "sk", "sl", "lt", "lv", "et",
                "tl", "sw", "af", "eu", "ca", "gl", "ms", "is", "ga", "cy", "sq", "mt", "lb")
#: languages so close to one with a pack that a short text of the one is often read as the other
_CLOSE = frozenset({"ca", "gl", "ms", "af", "lb"})
_SCRIPTS = [
    ("ko", re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")),
    ("ja", re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")),
    ("zh", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")),
    ("arabic", re.compile(r"[\u0600-\u06ff\u0750-\u077f]")),
    ("devanagari", re.compile(r"[\u0900-\u097f]")),
    ("cyrillic", re.compile(r"[\u0400-\u04ff]")),
    ("th", re.compile(r"[\u0e00-\u0e7f]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("el", re.compile(r"[\u0370-\u03ff]")),
    ("bn", re.compile(r"[\u0980-\u09ff]")),
    ("ta", re.compile(r"[\u0b80-\u0bff]")),
    ("ka", re.compile(r"[\u10a0-\u10ff]")),
    ("hy", re.compile(r"[\u0530-\u058f]")),
]
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_WORDS_ANY = re.compile(r"[^\W\d_]{2,}")
#: English words common enough that a text holding one is English unless the model is sure otherwise
_ENGLISH = frozenset("""i'm i've i'd i'll my our the are am and with of it this that you your she his they them their
have has had does don't can't didn't what how why""".split())
_ENGLISH_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)


def _rank(text: str, candidates: list[str] | tuple[str, ...]) -> list[tuple[str, float]]:
    """``candidates`` by the model's probability that ``text`` is in them, normalised over them alone (the
    model ranks every language it knows in one pass; narrowing it with ``set_languages`` costs more than
    the ranking)."""
    wanted = set(candidates)
    scores = [(code, float(score)) for code, score in _identifier().rank(text) if code in wanted]
    if not scores:
        return [(candidates[0], 1.0)]
    top = scores[0][1]
    weights = [(code, math.exp(score - top)) for code, score in scores]
    total = sum(w for _, w in weights)
    return [(code, w / total) for code, w in weights]


def _model(text: str, candidates: list[str]) -> tuple[str, float]:
    """The most likely of ``candidates`` and its probability; for Latin text, the probability is the
    margin over English (the top's probability less English's), so a close call stays English."""
    ranked = _rank(text, candidates)
    code, probability = ranked[0]
    if code != "en" and "en" in candidates:
        probability -= next((p for c, p in ranked if c == "en"), 0.0)
    return code, float(probability)


def detect(text: str, hint: str | None = None) -> str:
    """The ISO 639-1 code of the language ``text`` is mostly written in ("en" when it cannot tell).
    ``hint``: the language of the text around it (a sentence's message): a short sentence that could be
    either is read in it ("Tengo dos perros." in a Spanish message)."""
    code = _detect(text)
    if not hint or hint == code or hint in ("en", "zh") or (code == "en" and _english(text)):
        return code
    own = pack(hint)
    if own is None or code not in ("en", *_CANDIDATES["latin"]) or not _LATIN.search(text):
        return code
    if own.lexicon.has(text, own.stop_words + own.first_person + own.small_talk):
        return hint
    return hint if dict(_rank(text, [code, hint])).get(hint, 0.0) >= 0.25 else code


def _english(text: str) -> bool:
    """Holds an English word common enough to say the text is English (or "I")."""
    return re.search(r"(?<![\w'])I(?![\w'])", text) is not None or any(
        w in _ENGLISH for w in _ENGLISH_WORD.findall(text.lower().replace("’", "'")))


@lru_cache(maxsize=8192)
def _detect(text: str) -> str:
    if not text or not text.strip():
        return "en"
    if _SCRIPTS[0][1].search(text):
        return "ko"
    if _SCRIPTS[1][1].search(text):
        return "ja"
    letters = [ch for ch in text if ch.isalpha()]
    han = _SCRIPTS[2][1]
    if letters and sum(1 for ch in letters if han.match(ch)) * 3 >= len(letters):
        return "zh"  # Chinese characters are a third of the letters or more (code-switched Chinese/English too)
    for script, pattern in _SCRIPTS[3:]:
        if pattern.search(text):
            if script == "cyrillic" and (found := _cyrillic(text)):
                return found
            if script not in _CANDIDATES:
                return script
            return _model(text, _CANDIDATES[script])[0]
    if han.search(text):
        return "zh"
    if not _LATIN.search(text):
        return "en"
    lowered = text.lower().replace("’", "'")
    english = _english(text)
    other, sure = _rank(text, _OTHER_LATIN)[0]
    if (other not in _CANDIDATES["latin"] and other not in _CLOSE and sure >= 0.9 and not english
            and len(_WORDS_ANY.findall(text)) >= 3):  # a name alone ("Deloitte") is no language's
        return other  # a Latin-script language without a pack (Swedish, Swahili …): kept as said
    code, probability = _nearest(text)
    if code == "en" or (lowered.isascii() and _english_words(lowered) > len(_words(lowered) & vocabulary(code))):
        return "en"  # more of its words are English than the other language's: "Marco is vegetarian"
    own = pack(code)
    # the language's own function words back the model up: a short English note ("Favourite editor: Neovim")
    # is not Italian because the model leans that way
    evidence = own is not None and own.lexicon.has(text, own.stop_words + own.first_person + own.small_talk)
    if english:
        return code if evidence and probability >= 0.98 else "en"
    if own is not None:
        return code if (evidence and probability >= 0.15) or probability >= 0.98 else "en"
    return code if probability >= 0.98 or (not lowered.isascii() and probability >= 0.5) else "en"


def _nearest(text: str) -> tuple[str, float]:
    """The model's best Latin-script language, or among those it finds nearly as likely (within 0.3) the
    one whose pack holds most of the text's words ("Me mudé de Madrid a Sevilla": "mudé" is Spanish's, the
    function words are everyone's)."""
    ranked = _rank(text, _CANDIDATES["latin"])
    english = next((p for c, p in ranked if c == "en"), 0.0)
    best = ranked[0][1]
    near = [c for c, p in ranked[:4] if c != "en" and p >= best - 0.3]
    if ranked[0][0] == "en" or len(near) < 2:
        code = ranked[0][0]
    else:
        words = {fold(w) for w in re.findall(r"[^\W\d_]+", text)}
        code = max(near, key=lambda c: (len(words & vocabulary(c)), -near.index(c)))
    probability = next(p for c, p in ranked if c == code)
    return code, float(probability - english if code != "en" else probability)


@lru_cache(maxsize=64)
def vocabulary(code: str) -> frozenset[str]:
    """Every single word a pack lists, folded."""
    own = pack(code)
    if own is None:
        return frozenset()
    lists = [own.first_person, own.possessives, own.question_words, own.requests, own.small_talk, own.fillers,
             own.reasons, own.conjunctions, own.negation, own.now, own.stop_words, own.endings, own.moves, own.starts,
             *own.concepts.values(), *own.relations.values()]
    return frozenset(fold(w) for forms in lists for form in forms for w in form.split() if not w.endswith("-"))


def besides_english(text: str) -> str | None:
    """The language with a pack a Latin-script text is most likely in after English (a code-switched
    sentence read as English: "Mi hermana vive en London and she works as a nurse" -> "es"), or None."""
    if not _LATIN.search(text):
        return None
    ranked = [code for code, _ in _rank(text, _CANDIDATES["latin"]) if code != "en"]
    return ranked[0] if ranked else None


def _words(lowered: str) -> set[str]:
    return set(re.findall(r"[a-z]+(?:'[a-z]+)?", lowered))


def _english_words(lowered: str) -> int:
    """How many distinct words of an ASCII text English's dictionary knows (lemminflect's, as the English
    reader uses; its function words too)."""
    from lemminflect import getAllLemmas

    return sum(1 for w in _words(lowered) if w in _FUNCTION_EN or getAllLemmas(w))


_FUNCTION_EN = frozenset("""a an the and or but of to in on at by with from about into over under after before than as if
because while is am are was were be been has have had do does did can could will would should may might must not i me
my we us our you your he him his she her it its they them their this that these those who what where when why how""".split())


_UKRAINIAN = re.compile(r"[іїєґІЇЄҐ]")
_RUSSIAN = re.compile(r"[ыэъёЫЭЪЁ]")


def _cyrillic(text: str) -> str | None:
    """Russian or Ukrainian by the letters only one of them has, else by the model backed by the packs'
    own words (a short "Привет!" is not Serbian)."""
    if _UKRAINIAN.search(text):
        return "uk"
    if _RUSSIAN.search(text):
        return "ru"
    code = _model(text, _CANDIDATES["cyrillic"])[0]
    if code in ("ru", "uk"):
        return code
    for candidate in ("ru", "uk"):
        own = pack(candidate)
        if own is not None and own.lexicon.has(text, own.stop_words + own.first_person + own.small_talk):
            return candidate
    return None


@lru_cache(maxsize=64)
def pack(code: str) -> Pack | None:
    """The pack of language ``code`` (a region or script suffix is ignored: "pt-BR" -> pt), or None."""
    base = code.split("-")[0].lower()
    if base not in PACKS:
        return None
    try:
        module = importlib.import_module(f"memlane.text.languages.{base}")
    except ModuleNotFoundError:
        return None
    return module.PACK


def name(code: str) -> str:
    """The English name of a language ("es" -> "Spanish"; the code itself when unknown)."""
    found = pack(code)
    if found is not None:
        return found.name
    return _NAMES.get(code, code)
