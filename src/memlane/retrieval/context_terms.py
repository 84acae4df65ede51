"""Search terms of a conversation, and which of them a memory contains.

English: lower-cased words of three letters or more that are not stop words; a
term matches a memory sharing its Snowball stem ("decorators" finds "decorator").
Chinese (either script, read as Simplified): words from the ``rjieba`` segmenter
(jieba's dictionary in Rust, shipped in the wheel: no download, no start-up cost
worth measuring), kept when the part-of-speech tag says noun, or verb / adjective
of two characters or more; a term matches a memory containing it.

Terms come from the latest turn first, then each earlier turn, the system prompt
last, so when there are more than ``max_terms`` the conversation's end wins; within a turn that
does not fit, its last sentences win ("… What about the saxophone?" keeps "saxophone").
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

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

#: part-of-speech tags (jieba's set) of words kept at any length: nouns, names, places, organisations, verbal nouns
_NOUN_TAGS = ("n", "nr", "nrt", "nrfg", "ns", "nt", "nz", "ng", "vn", "an")
#: tags of words kept from two characters up: verbs and adjectives
_CONTENT_TAGS = ("v", "vd", "a", "ad", "i", "l", "j")

#: words as the keyword index splits them, with a trailing contraction or possessive kept to judge it
_LATIN = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
#: recency weight of each earlier turn (the latest has 1.0), and the floor it decays to
TURN_DECAY = 0.85
MIN_RECENCY = 0.3
#: the system prompt's recency weight: it frames every turn but names the current topic least
SYSTEM_RECENCY = 0.3


@dataclass(frozen=True, slots=True)
class Term:
    """One search term. ``key`` is what is compared: the stem of an English word, the
    Simplified form of a Chinese one. ``weight`` (0..1) grows with recency and length."""

    text: str
    key: str
    cjk: bool
    weight: float


@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


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


def words(text: str) -> list[tuple[str, bool]]:
    """Candidate terms of one text in order of appearance, as (word, is_chinese)."""
    lowered = text.lower()
    if not has_cjk(lowered):
        return [(w, False) for t in _LATIN.findall(lowered) if (w := _latin_word(t))]
    import rjieba

    out: list[tuple[str, bool]] = []
    for word, tag in rjieba.tag(to_simplified(lowered)):
        if CJK.search(word):
            if _cjk_word(word, tag):
                out.append((word, True))
        else:
            out.extend((w, False) for t in _LATIN.findall(word) if (w := _latin_word(t)))
    return out


def _length_factor(word: str, cjk: bool) -> float:
    """Longer terms say more (PersonaLab scores frequency x length); a Chinese character counts as two letters."""
    return min(len(word) * (2 if cjk else 1), 8) / 8


def extract(turns: list[str], system_prompt: str = "", max_terms: int = 20) -> list[Term]:
    """At most ``max_terms`` unique terms of ``turns`` (oldest first) and the system prompt,
    the latest turn's first."""
    sources = [(text, max(TURN_DECAY ** age, MIN_RECENCY)) for age, text in enumerate(reversed(turns))]
    if system_prompt:
        sources.append((system_prompt, SYSTEM_RECENCY))
    terms: dict[str, Term] = {}
    for text, recency in sources:
        found: dict[str, Term] = {}
        for sentence in _SENTENCE.split(text) if text else ():
            for word, cjk in words(sentence):
                key = word if cjk else _stemmer().stemWord(word)
                if key not in terms and key not in found:
                    found[key] = Term(text=word, key=key, cjk=cjk,
                                      weight=round(recency * _length_factor(word, cjk), 6))
        room = max_terms - len(terms)
        if len(found) > room:  # the turn does not fit: its last sentences first (the question is at its end)
            found = _latest_sentences_first(text, found, room)
        terms.update(found)
        if len(terms) >= max_terms:
            break
    return list(terms.values())


#: where a turn's sentences end (English and Chinese punctuation, line breaks)
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")


def _latest_sentences_first(text: str, found: dict[str, Term], room: int) -> dict[str, Term]:
    """``room`` of a turn's terms, its last sentence's first (in their order), then the one before …,
    listed in the order they were said."""
    kept: set[str] = set()
    for sentence in reversed([s for s in _SENTENCE.split(text) if s.strip()]):
        for word, cjk in words(sentence):
            key = word if cjk else _stemmer().stemWord(word)
            if key in found and len(kept) < room:
                kept.add(key)
    return {key: term for key, term in found.items() if key in kept}


def matched(terms: list[Term], text: str) -> list[Term]:
    """The terms ``text`` contains (English by stem, Chinese as a substring of its Simplified form)."""
    if not terms:
        return []
    stems = set(analyze(text)) if any(not t.cjk for t in terms) else set()
    simplified = to_simplified(text).lower() if any(t.cjk for t in terms) else ""
    return [t for t in terms if (t.key in simplified if t.cjk else t.key in stems)]


def term_score(found: list[Term]) -> float:
    """0..1: the matched terms' weights, saturating (one strong term ~0.63, two ~0.86)."""
    return 1.0 - math.exp(-sum(t.weight for t in found))
