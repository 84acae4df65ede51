"""Language handling for the offline engine: scripts, sentences, and comparable terms.

English and Chinese (Simplified and Traditional, and code-switched text).
Traditional text is compared through OpenCC's Traditional→Simplified mapping,
so a memory written in either script matches a fact in the other.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from memlane.ingest import lexicon
from memlane.text.normalize import CJK as _CJK
from memlane.text.normalize import has_cjk, to_simplified

Script = Literal["en", "zh-Hans", "zh-Hant"]

_LATIN_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def script(text: str) -> Script:
    """``en`` without Chinese characters; ``zh-Hant`` when OpenCC would change any character."""
    if not has_cjk(text):
        return "en"
    return "zh-Hant" if to_simplified(text) != text else "zh-Hans"


def subject_word(text_script: Script, agent: bool = False) -> str:
    if agent:
        return "Agent" if text_script == "en" else ("助手" if text_script == "zh-Hans" else "助理")
    return {"en": "User", "zh-Hans": "用户", "zh-Hant": "使用者"}[text_script]


# -- sentences -----------------------------------------------------------------------------------

_EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+|;\s+")
_ZH_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|\n+")


def sentences(text: str) -> list[str]:
    """Split a message into sentences (English punctuation and Chinese full-width punctuation)."""
    parts = []
    for chunk in _ZH_SENTENCE_END.split(text):
        if not chunk or not chunk.strip():
            continue
        parts.extend(p for p in _EN_SENTENCE_END.split(chunk) if p and p.strip())
    return [p.strip() for p in parts]


def clauses_zh(sentence: str) -> list[str]:
    return [c.strip() for c in re.split(r"[，,、：:]", sentence) if c.strip()]


# -- terms for comparison -------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _concept_patterns() -> tuple[list[tuple[re.Pattern, str]], dict[str, str], list[tuple[str, str]]]:
    """English phrases (matched as phrases), English single words (matched on their stem), Chinese forms."""
    phrases, stems, cjk = [], {}, []
    for concept, forms in lexicon.CONCEPTS.items():
        for form in forms:
            if has_cjk(form):
                cjk.append((form, concept))
            elif re.fullmatch(r"[a-z]+", form):
                stems.setdefault(_stemmer().stemWord(form), concept)
            else:
                phrases.append((re.compile(r"(?<![a-z])" + re.escape(form) + r"(?![a-z])"), concept))
    # longest forms first so "risk tolerance" wins over "risk", "不喜欢" over "喜欢"
    phrases.sort(key=lambda item: -len(item[0].pattern))
    cjk.sort(key=lambda item: -len(item[0]))
    return phrases, stems, cjk


_LATIN_PHRASES, _LATIN_STEMS, _CJK_CONCEPTS = _concept_patterns()


@lru_cache(maxsize=4096)
def terms(text: str) -> frozenset[str]:
    """Comparable content of a statement: concept tokens, stemmed English content words,
    and Chinese content characters. Subject words, fillers and function words are dropped."""
    found: set[str] = set()
    simplified = to_simplified(text).lower().replace("’", "'")
    # English concepts and words
    latin_text = simplified
    for pattern, concept in _LATIN_PHRASES:
        if pattern.search(latin_text):
            found.add(concept)
            latin_text = pattern.sub(" ", latin_text)
    for word in _LATIN_WORD.findall(latin_text):
        word = word[:-2] if word.endswith("'s") else word
        if word in lexicon.STOPWORDS_EN or (len(word) < 2 and not word.isdigit()):
            continue
        stem = _stemmer().stemWord(word)
        found.add(_LATIN_STEMS.get(stem, stem))
    # Chinese concepts and characters
    cjk_text = "".join(ch if _CJK.match(ch) else " " for ch in simplified)
    for word in lexicon.NOT_CONCEPT_ZH:
        cjk_text = cjk_text.replace(word, " ")
    for form, concept in _CJK_CONCEPTS:
        if form in cjk_text:
            found.add(concept)
            cjk_text = cjk_text.replace(form, " ")
    for word in sorted(lexicon.FUNCTION_ZH, key=len, reverse=True):
        cjk_text = cjk_text.replace(word, " ")
    found.update(ch for ch in cjk_text if _CJK.match(ch))
    return frozenset(found)


def without(text: str, phrases: tuple[str, ...]) -> str:
    """``text`` (simplified, lower-cased) with every phrase removed: whole words for English, substrings for Chinese."""
    result = to_simplified(text).lower().replace("’", "'")
    for phrase in sorted(phrases, key=len, reverse=True):
        if has_cjk(phrase):
            result = result.replace(phrase, " ")
        else:
            result = re.sub(r"(?<![a-z])" + re.escape(phrase) + r"(?![a-z])", " ", result)
    return result


def contains_any(text: str, markers: tuple[str, ...]) -> bool:
    """Phrase match: whole words for English markers, substrings for Chinese ones. A clitic marker
    ("n't", "'ll") is part of the word before it, so it matches at that word's end ("doesn't")."""
    lowered = to_simplified(text).lower().replace("’", "'")
    for marker in markers:
        if has_cjk(marker):
            if marker in lowered:
                return True
        elif re.search(("" if _is_clitic(marker) else r"(?<![a-z])") + re.escape(marker) + r"(?![a-z])", lowered):
            return True
    return False


def _is_clitic(marker: str) -> bool:
    return marker.startswith("'") or marker.startswith("n'")


def scale_values(text: str) -> set[str]:
    """Members of a level/polarity scale (high, low, 高, 低 …) that the text uses."""
    lowered = to_simplified(text).lower()
    found = set()
    for scale in lexicon.SCALES:
        for value in scale:
            if (value in lowered) if has_cjk(value) else re.search(rf"\b{re.escape(value)}\b", lowered):
                found.add(value)
    return found
