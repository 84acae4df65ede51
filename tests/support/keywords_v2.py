"""The keyword analyzer 2 (``text/keywords.py`` before analyzer 3), frozen: English stems for every
alphabet, accents folded when a word became ASCII, Chinese by rjieba, kana as characters and pairs,
Hangul words as written. The tests check English text is analysed by analyzer 3 exactly as by it, and
give stores its terms to check they are indexed again when they open."""

from __future__ import annotations

import re
import unicodedata

from memlane.text import keywords
from memlane.text.normalize import CJK, to_simplified

_TOKEN = re.compile(r"([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)|([\u3040-\u30ff\u31f0-\u31ff\u0e00-\u0e7f]+)|([^\W_]+)")
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _fold(word: str) -> str:
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))
    return folded if folded.isascii() else word


def analyze(text: str) -> list[str]:
    lowered = text.lower()
    stem = keywords._stemmer().stemWords
    if lowered.isascii():
        return stem([t for t in _ASCII_WORD.findall(lowered) if t not in keywords.STOPWORDS])
    words: list[str] = []
    other: list[str] = []
    for chinese, unspaced, word in _TOKEN.findall(to_simplified(lowered) if CJK.search(lowered) else lowered):
        if chinese:
            other.extend(keywords._chinese(chinese))
        elif unspaced:
            other.extend(keywords._neighbours(unspaced))
        else:
            word = _fold(word)
            words.extend(w for w in _ASCII_WORD.findall(word) or [word] if w not in keywords.STOPWORDS)
    return stem(words) + other
