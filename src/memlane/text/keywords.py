"""The keyword analyzer: the terms a memory is indexed under and a query searches for.

- Words of alphabetic scripts (English, Spanish, German, Russian …): lower-cased, accents folded
  (``café`` and ``cafe`` meet), English stop words dropped, Snowball-stemmed (``running`` and ``runs``
  meet at ``run``; a word of another language is stemmed alike on both sides, so it still matches
  itself).
- Chinese (either script, mapped to Simplified): words from the ``rjieba`` segmenter in search mode
  (jieba's dictionary in Rust, shipped in the wheel): a long word also yields the words inside it
  (工程师 → 工程, 工程师), so 工程师 and 软件工程 meet at 工程. Chosen over every character and
  every pair of neighbouring characters (the analyzer before) by the measurement in
  benchmarks/history/multilingual.md.
- Japanese kana and other scripts without spaces between words: every pair of neighbouring
  characters, and every character.

Scope ids become opaque tokens, so a scoped keyword search intersects posting lists instead of
scanning every user's memories. ``VERSION`` names the analyzer: a store indexed by another one
re-indexes when it opens.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache
from typing import Any

from memlane.text.normalize import CJK, to_simplified

#: the analyzer's version, recorded by the stores (a change of the terms re-indexes them)
VERSION = 2

STOPWORDS = frozenset("""
a an the and or but so if then than that this these those there here it its is are was were be been being am do
does did have has had i me my we our you your he she him her his they them their what which who whom when where
why how all any both each few more most other some such only own same too very can will just should would could
might must of to in on at by for with about from up down out off over under again once also as because until
while s t d ll m ve re not no yes
""".split())

#: a run of Chinese characters, a run of kana (and other unspaced scripts), or a word of letters and digits
_CHINESE = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+"
_UNSPACED = r"[\u3040-\u30ff\u31f0-\u31ff\u0e00-\u0e7f]+"
_TOKEN = re.compile(rf"({_CHINESE})|({_UNSPACED})|([^\W_]+)")
_ASCII_WORD = re.compile(r"[a-z0-9]+")
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
    """A Latin ``word`` without accents (NFKD, combining marks dropped): ``café`` -> ``cafe``, ``Müller`` ->
    ``muller``; a word of another script as it is (``й`` is a letter of its own, not an accented ``и``)."""
    folded = "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))
    return folded if folded.isascii() else word


def _neighbours(run: str) -> list[str]:
    return [*run, *(run[i:i + 2] for i in range(len(run) - 1))]


def _chinese(run: str) -> list[str]:
    import rjieba

    return [w for w in rjieba.cut_for_search(run) if w not in CHINESE_STOPWORDS and not w.isspace()]


def analyze(text: str) -> list[str]:
    """Index terms of ``text``, in order (repeats kept: term frequency matters to BM25)."""
    lowered = text.lower()
    if lowered.isascii():  # the common case: English, no per-token script check
        return _stemmer().stemWords([t for t in _ASCII_WORD.findall(lowered) if t not in STOPWORDS])
    words: list[str] = []
    other: list[str] = []
    for chinese, unspaced, word in _TOKEN.findall(to_simplified(lowered) if CJK.search(lowered) else lowered):
        if chinese:
            other.extend(_chinese(chinese))
        elif unspaced:
            other.extend(_neighbours(unspaced))
        else:
            word = _fold(word)
            words.extend(w for w in _ASCII_WORD.findall(word) or [word] if w not in STOPWORDS)
    return _stemmer().stemWords(words) + other


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

