"""The keyword analyzer: the terms a memory is indexed under and a query searches for.

English: lower-cased words without stop words, Snowball-stemmed ("running" and
"runs" meet at "run"). Chinese (either script, mapped to Simplified): every
character and every pair of neighbouring characters, so 火锅 matches 火锅
without a dictionary. Scope ids become opaque tokens, so a scoped keyword
search intersects posting lists instead of scanning every user's memories.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Any

from memlane.text.normalize import CJK, to_simplified

STOPWORDS = frozenset("""
a an the and or but so if then than that this these those there here it its is are was were be been being am do
does did have has had i me my we our you your he she him her his they them their what which who whom when where
why how all any both each few more most other some such only own same too very can will just should would could
might must of to in on at by for with about from up down out off over under again once also as because until
while s t d ll m ve re not no yes
""".split())

_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


@lru_cache(maxsize=1)
def _stemmer():
    """The Snowball English stemmer; ``snowballstemmer`` hands out PyStemmer's C build when it is
    installed (a dependency: every insert runs this through the keyword index trigger)."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def analyze(text: str) -> list[str]:
    """Index terms of ``text``, in order (repeats kept: term frequency matters to BM25)."""
    if not CJK.search(text):  # the common case: no per-token script check
        return _stemmer().stemWords([t for t in _WORD.findall(text.lower()) if t not in STOPWORDS])
    out: list[str] = []
    words: list[str] = []
    for token in _WORD.findall(to_simplified(text).lower()):
        if CJK.match(token):
            out.extend(token)
            out.extend(token[i:i + 2] for i in range(len(token) - 1))
        elif token not in STOPWORDS:
            words.append(token)
    return _stemmer().stemWords(words) + out


@lru_cache(maxsize=4096)  # a batch insert asks for the same few scope ids over and over
def scope_token(key: str, value: str) -> str:
    """An index token standing for one scope id (ids may hold any character)."""
    return f"s{key[0]}{hashlib.sha1(value.encode()).hexdigest()[:20]}"


def index_text(text: str, user_id: str | None, agent_id: str | None, run_id: str | None, *,
               terms: list[str] | None = None) -> str:
    """The text of a memory's keyword index entry: its analysed terms (``terms`` when the caller
    has them already), then its scope tokens."""
    scope = [scope_token(k, v) for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if v]
    return " ".join((analyze(text) if terms is None else terms) + scope)


def query_terms(query: Any) -> list[str]:
    """The distinct terms a keyword search looks for: a ``memlane.core.query.Query``'s own (analysed once
    per search), or those of a string."""
    return list(dict.fromkeys(analyze(query))) if isinstance(query, str) else list(query.terms)

