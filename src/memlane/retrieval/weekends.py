"""Weekends a question names ("last weekend", "este fin de semana", "nächstes Wochenende", "上周末", "来週末"):
the Saturday–Sunday they stand for, read against the conversation's "now" (``relative_time.py``'s anchor).

dateparser has no weekend: it is not one of its units, and neither its language data nor CLDR's (Babel's)
date fields name it, so the word for it is the one thing written here (``WEEKEND``, per language of
``relative_time.LANGUAGES``; the translations of "weekend" in Wiktionary). Whether the question means the
last, this or the next weekend is read from the word next to it, and those words come from dateparser's own
language data: its phrases for the last, this and next week, month and year ("la semana pasada", "el año
pasado", "esta semana", "el próximo mes"), less the unit names and the words shared by two directions
("el", "la"). A modifier agrees with its noun ("pasado" with "fin de semana", "pasada" with "semana"), so a
word matches one of those when they share all but their last letters (``_same_word``). Scripts without
spaces (Chinese, Japanese, Korean) read the modifier just before the weekend word ("上" of "上周末"), from
the week's phrases alone ("上周", "先週", "지난주"), where no other word of the sentence could pass for one.

A weekend with no such word ("at the weekend", "am Wochenende", "周末做什么运动": often a habit) names
no window. The weekend is Saturday and Sunday of the anchor's Monday-to-Sunday week, one week back for
"last", one on for "next", in UTC as the other windows.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, timezone
from functools import cache

from memlane.core.query import Window

#: the word for the weekend in each language read (Wiktionary's translations of "weekend")
WEEKEND: dict[str, tuple[str, ...]] = {
    "en": ("weekend", "week-end"),
    "es": ("fin de semana", "finde"),
    "de": ("wochenende",),
    "fr": ("week-end", "weekend", "fin de semaine"),
    "pt": ("fim de semana", "fim-de-semana"),
    "it": ("fine settimana", "fine-settimana", "weekend"),
    "nl": ("weekend",),
    "ru": ("выходные", "уик-энд"),
    "zh": ("周末",),
    "zh-Hant": ("週末",),
    "ja": ("週末",),
    "ko": ("주말",),
}
#: dateparser's relative phrases whose words say the direction: (key pattern, weeks from the anchor's week)
_DIRECTIONS = (("1 {} ago", -1), ("0 {} ago", 0), ("in 1 {}", 1))
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"\w+")
#: the most words a direction word stands from the weekend's ("le week-end dernier", "the last weekend")
REACH = 3


@cache
def _pattern() -> re.Pattern[str]:
    spaced = sorted({w for words in WEEKEND.values() for w in words if not _CJK.search(w)}, key=len, reverse=True)
    joined = sorted({w for words in WEEKEND.values() for w in words if _CJK.search(w)}, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, spaced)) + r")(?!\w)|" + "|".join(map(re.escape, joined)),
                      re.IGNORECASE)


def mentions(text: str) -> bool:
    """Whether ``text`` names a weekend (the cheap test: no parser loaded)."""
    return _pattern().search(text) is not None


def places(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names a weekend, with a direction or without."""
    return [match.span() for match in _pattern().finditer(text)]


def _languages(phrase: str) -> list[str]:
    phrase = phrase.lower()
    return [language for language, words in WEEKEND.items() if phrase in words]


@cache
def directions(language: str) -> dict[str, int]:
    """The words of dateparser's ``language`` that say last (-1), this (0) or next (1) week, lower-cased."""
    from dateparser.languages.loader import default_loader

    info = default_loader.get_locale(language).info
    spaced = not _CJK.search("".join(info.get("day", [])))
    units = ("week", "month", "year") if spaced else ("week",)
    names = sorted({n.lower() for key in ("year", "month", "week", "day") for n in info.get(key, [])},
                   key=len, reverse=True)
    found: dict[str, set[int]] = {}
    for unit in units:
        for pattern, offset in _DIRECTIONS:
            for phrase in info.get("relative-type", {}).get(pattern.format(unit), []):
                phrase = phrase.lower()
                if spaced:
                    words = [w for w in _WORD.findall(phrase) if w not in names]
                else:  # the phrase less its unit: "上周" -> "上", "지난주" -> "지난", "이번 주" -> "이번"
                    words = [w for w in (re.sub("|".join(map(re.escape, names)), " ", phrase).split()) if w]
                for word in words:
                    found.setdefault(word, set()).add(offset)
    return {word: next(iter(offsets)) for word, offsets in found.items() if len(offsets) == 1}


def _same_word(word: str, known: str) -> bool:
    """The same word, or another form of it (agreement: "pasado" / "pasada", "letztes" / "letzte", "dernier" /
    "dernière", "прошлые" / "прошлой"): a common start of at least four letters, each ending in at most three
    more."""
    if word == known:
        return True
    common = len(os.path.commonprefix([word, known]))
    return common >= 4 and len(word) - common <= 3 and len(known) - common <= 3


def _offset(text: str, start: int, end: int, languages: list[str]) -> int | None:
    """Last (-1), this (0) or next (1) weekend, from the word nearest the weekend's at ``start:end``."""
    if _CJK.search(text[start:end]):
        before = text[:start].rstrip()
        for language in languages:
            for word, offset in sorted(directions(language).items(), key=lambda item: -len(item[0])):
                if before.endswith(word):
                    return offset
        return None
    left = [m.group().lower() for m in _WORD.finditer(text, 0, start)][-REACH:][::-1]
    right = [m.group().lower() for m in _WORD.finditer(text, end)][:REACH]
    for distance in range(REACH):  # nearest first; before it first at the same distance
        for side in (left, right):
            if distance < len(side):
                for language in languages:
                    offset = next((o for w, o in directions(language).items() if _same_word(side[distance], w)),
                                  None)
                    if offset is not None:
                        return offset
    return None


def spans(text: str, anchor: datetime) -> list[tuple[int, int, Window]]:
    """Each weekend ``text`` names with a direction: (start, end, its Saturday–Sunday), read against
    ``anchor``."""
    found = []
    for match in _pattern().finditer(text):
        offset = _offset(text, match.start(), match.end(), _languages(match.group()))
        if offset is not None:
            found.append((match.start(), match.end(), weekend(anchor, offset)))
    return found


def weekend(anchor: datetime, offset: int) -> Window:
    """Saturday 00:00 to Monday 00:00 (UTC) of the week holding ``anchor``, ``offset`` weeks on."""
    moment = anchor.astimezone(timezone.utc) if anchor.tzinfo else anchor
    day = datetime(moment.year, moment.month, moment.day, tzinfo=timezone.utc)
    saturday = day - timedelta(days=day.weekday()) + timedelta(days=5 + 7 * offset)
    return saturday, saturday + timedelta(days=2)
