"""The offline relation extractor: a table of common English and Chinese patterns.

Each pattern reads a subject (first person, or an English capitalised name), an
optional negation ("no longer", "don't", "不再", "不") and an object, and yields
a ``Triple`` with a canonical relationship (``likes``, ``lives_in`` …). First
person ("I", "me", "我") becomes ``models.USER``, which the facade maps to the
scope's user entity. Objects end at punctuation or a connective ("because",
"但是") and lose leading articles; "tea and coffee" gives two triples for the
relationships that hold many values.

It is deliberately conservative: a sentence it does not understand yields
nothing rather than a wrong relation. An LLM extractor covers the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memlane.graph_models import USER, Triple

# -- English ---------------------------------------------------------------------------------------

_NOT_NAMES = {"she", "he", "they", "we", "you", "it", "this", "that", "there", "what", "who", "where", "when",
              "why", "how", "do", "does", "did", "my", "our", "your", "his", "her", "their", "the", "a", "an",
              "yes", "no", "and", "but", "so", "if", "then", "also", "maybe", "today", "yesterday", "now"}

#: (verb phrase regex, relationship). Auxiliaries ("I'm", "I've been", "am") are part of the phrase.
_EN_VERBS: list[tuple[str, str]] = [
    (r"(?:really\s+|also\s+|still\s+)?(?:like|likes|enjoy|enjoys|am\s+fond\s+of|is\s+fond\s+of|'m\s+fond\s+of)", "likes"),
    (r"(?:really\s+|also\s+|still\s+)?(?:love|loves|adore|adores)", "loves"),
    (r"(?:really\s+|also\s+|still\s+)?(?:hate|hates|dislike|dislikes|can't\s+stand|cannot\s+stand|detest|detests)", "hates"),
    (r"(?:(?:now\s+)?(?:work|works|am\s+working|'m\s+working|is\s+working)\s+(?:at|for)|am\s+employed\s+(?:at|by)"
     r"|'m\s+employed\s+(?:at|by)|is\s+employed\s+(?:at|by)|(?:have\s+|'ve\s+|has\s+)?joined)", "works_at"),
    (r"(?:(?:now\s+|currently\s+)?(?:live|lives|am\s+living|'m\s+living|is\s+living|(?:have|'ve|has)\s+been\s+living)"
     r"\s+in|(?:have\s+|'ve\s+|has\s+|just\s+)?(?:moved|relocated)\s+to|(?:am|'m|is)\s+based\s+in)", "lives_in"),
    (r"(?:am|'m|is|got|get)\s+married\s+to|married", "married_to"),
    (r"(?:was|were)\s+born\s+in", "born_in"),
    (r"(?:have|has|own|owns|'ve\s+got|have\s+got|has\s+got)\s+(?:a|an|one|two|three)\s+", "has"),
]
_EN_NEGATION = (r"(?:no\s+longer|don't|do\s+not|doesn't|does\s+not|never|am\s+not|'m\s+not|is\s+not|isn't"
                r"|not\s+anymore)")
_EN_SUBJECT = r"(?P<subject>\bI\b|\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
_EN_PATTERNS = [
    (re.compile(
        _EN_SUBJECT + r"(?P<neg>\s+" + _EN_NEGATION + r")?\s*(?:'d\s+)?\s*(?P<verb>" + verb + r")\s*(?P<object>[^,.;!?\n]+)"
        if relationship == "has" else
        _EN_SUBJECT + r"(?P<neg>\s+" + _EN_NEGATION + r")?\s*(?P<verb>" + verb + r")\s+(?P<object>[^,.;!?\n]+)"),
     relationship)
    for verb, relationship in _EN_VERBS
]
#: "My wife is Sarah", "my name is Tom", "my husband's name is Li"
_EN_POSSESSIVE = [
    (re.compile(r"\b[Mm]y\s+(?:wife|husband|spouse)(?:'s\s+name)?\s+is\s+(?:called\s+|named\s+)?(?P<object>[^,.;!?\n]+)"),
     "married_to"),
    (re.compile(r"\b[Mm]y\s+name\s+is\s+(?P<object>[^,.;!?\n]+)|\bI\s+am\s+called\s+(?P<object2>[^,.;!?\n]+)"), "name"),
]
_EN_STOP = re.compile(
    r"\s+(?:and\s+(?:i|i'm|i've|my|we|he|she|they|it)|because|but|since|so|though|although|when|while|which|who|where|now|anymore|any\s+more|these\s+days"
    r"|nowadays|very\s+much|a\s+lot|too|as\s+well|either|with\s+my|for\s+\d|named|called|last|next|ago|yesterday|today|recently|tomorrow|this\s+(?:week|month|year|morning|summer|winter)|in\s+\d{4})\b.*$", re.IGNORECASE)
_EN_ARTICLE = re.compile(r"^(?:the|a|an|my|some|really)\s+", re.IGNORECASE)
_EN_AND = re.compile(r"\s*(?:,|\band\b|\bor\b|&)\s*")

# -- Chinese ---------------------------------------------------------------------------------------

_ZH_END = r"[^，。！？；、,.!?;\s]"
_ZH_NEGATION = r"(?P<neg>不再|再也不|已经不|不)?"
_ZH_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"我" + _ZH_NEGATION + r"(?:很|也|还|真的|特别|非常)?(?:喜欢|喜爱)(?P<object>" + _ZH_END + r"+)"), "likes"),
    (re.compile(r"我" + _ZH_NEGATION + r"(?:很|也|还|真的|特别|非常)?(?:热爱|爱)(?P<object>" + _ZH_END + r"+)"), "loves"),
    (re.compile(r"我" + _ZH_NEGATION + r"(?:很|也|还|真的|特别|非常)?(?:讨厌|厌恶|受不了)(?P<object>" + _ZH_END + r"+)"), "hates"),
    (re.compile(r"我" + _ZH_NEGATION + r"(?:现在|目前)?(?:住在|生活在|居住在)(?P<object>" + _ZH_END + r"+)"), "lives_in"),
    (re.compile(r"我(?:已经|刚)?(?:搬到|搬去)了?(?P<object>" + _ZH_END + r"+)"), "lives_in"),
    (re.compile(r"我" + _ZH_NEGATION + r"(?:现在|目前)?在(?P<object>" + _ZH_END + r"+?)(?:工作|上班|任职)"), "works_at"),
    (re.compile(r"我(?:的)?(?:妻子|老婆|太太|丈夫|老公|爱人)(?:的名字)?(?:是|叫)(?P<object>" + _ZH_END + r"+)"), "married_to"),
    (re.compile(r"我(?:出生在|出生于|生于|生在)(?P<object>" + _ZH_END + r"+)"), "born_in"),
    (re.compile(r"我(?:家)?(?:有|养了)(?:一|两|三)?(?:只|个|条|辆|台|位|匹)?(?P<object>" + _ZH_END + r"+)"), "has"),
    (re.compile(r"我(?:的名字)?(?:叫|是叫|名叫)(?P<object>" + _ZH_END + r"+)"), "name"),
]
_ZH_STOP = re.compile(r"(?:但是|但|因为|所以|而且|不过|可是|了|啦|呢|吧|哦|呀|啊)+.*$")
_ZH_AND = re.compile(r"(?:和|跟|与|及|、)")

#: relationships whose objects are many values ("likes tea and coffee")
_LISTS = {"likes", "loves", "hates", "has"}
_MAX_OBJECT_WORDS = 6


def _clean_english(obj: str) -> str:
    obj = _EN_STOP.sub("", obj.strip())
    for _ in range(2):
        obj = _EN_ARTICLE.sub("", obj)
    obj = obj.strip(" '\"")
    return obj if 0 < len(obj.split()) <= _MAX_OBJECT_WORDS else ""


def _clean_chinese(obj: str) -> str:
    obj = _ZH_STOP.sub("", obj).strip()
    return obj if 0 < len(obj) <= 16 else ""


def _objects(obj: str, relationship: str, cjk: bool) -> list[str]:
    obj = _ZH_STOP.sub("", obj) if cjk else _EN_STOP.sub("", obj)  # the clause ends first, then lists split
    parts = (_ZH_AND if cjk else _EN_AND).split(obj) if relationship in _LISTS else [obj]
    cleaned = [(_clean_chinese if cjk else _clean_english)(p) for p in parts]
    return [c for c in cleaned if c]


def _subject(raw: str) -> str | None:
    if raw == "I":
        return USER
    if raw.split()[0].lower() in _NOT_NAMES:
        return None
    return raw


def _english(sentence: str) -> Iterable[Triple]:
    for pattern, relationship in _EN_PATTERNS:
        for match in pattern.finditer(sentence):
            subject = _subject(match["subject"])
            if subject is None:
                continue
            obj = match["object"]
            negated = bool(match["neg"]) or bool(re.search(r"\b(?:anymore|any\s+more)\b", obj, re.IGNORECASE))
            for name in _objects(obj, relationship, False):
                yield Triple(source=subject, relationship=relationship, destination=name, negated=negated)
    for pattern, relationship in _EN_POSSESSIVE:
        for match in pattern.finditer(sentence):
            obj = match.group("object") or (match.groupdict().get("object2") or "")
            for name in _objects(obj, relationship, False):
                yield Triple(source=USER, relationship=relationship, destination=name)


def _chinese(sentence: str) -> Iterable[Triple]:
    for pattern, relationship in _ZH_PATTERNS:
        for match in pattern.finditer(sentence):
            negated = bool(match.groupdict().get("neg"))
            for name in _objects(match["object"], relationship, True):
                yield Triple(source=USER, relationship=relationship, destination=name, negated=negated)


_SENTENCES = re.compile(r"(?<=[.!?;。！？；\n])\s*")


def extract(text: str) -> list[Triple]:
    """The triples stated in ``text``, in order, without duplicates."""
    found: dict[Triple, None] = {}
    for sentence in _SENTENCES.split(text):
        if not sentence.strip():
            continue
        for triple in (*_english(sentence), *_chinese(sentence)):
            found.setdefault(triple, None)
    return list(found)
