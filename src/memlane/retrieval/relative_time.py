"""Relative times a question names ("yesterday", "last week", "in May", "vor drei Tagen", "上个月"), read
against the conversation's "now": the periods they stand for, as date windows of the timeline stage.

"What did I cook last week?" asked of a conversation whose latest message was said on Friday 15 March
2024 means the week of 4–10 March 2024, whatever the machine's clock says. ``windows(text, anchor)``
resolves such expressions against ``anchor`` (the searcher passes the search's ``as_of`` when given, else
the time of the scope's latest memory) into the spans (UTC, end exclusive) of the day, week (Monday to
Sunday), month or year they name; the searcher adds them to the question's ``Query.windows``, so that
``timeline.join`` fetches the memories said in them and ``timeline.apply`` gives those its date bonus.

Parsing is `dateparser <https://github.com/scrapinghub/dateparser>`_'s (BSD-3-Clause; its own data for
some 200 languages): the words that can start a relative time come from its language data
(``data/time_words.json``, made by ``vocabulary()``; a test checks it is a fresh derivation), so a
question without any of them (``mentions``) never imports or pays the parser. Around each such word the
longest run of up to four words (characters, in Chinese and Japanese) that dateparser reads whole, in the
languages of the words found, is the expression; its period (``day``, ``week``, ``month``, ``year``) gives the
span's length. Chinese numerals are read as digits when the text as written does not parse ("三天前"), and
so are number words in the languages `text2num <https://github.com/allo-media/text2num>`_ reads (MIT;
"hace tres días", "há duas semanas", "tre giorni fa", "drie dagen geleden": dateparser reads them only as
digits in those languages). A weekend with its direction ("last weekend", "el fin de semana pasado", "上周末")
is its Saturday and Sunday (``weekends.py``: dateparser has no weekend).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from memlane.core import timeutil
from memlane.core.query import Query, Window
from memlane.retrieval import weekends

#: the languages whose time words are read (dateparser's locale names)
LANGUAGES = ("en", "es", "de", "fr", "pt", "it", "nl", "ru", "zh", "zh-Hant", "ja", "ko")
#: the most words (characters, for CJK) an expression spans on each side of its time word
REACH = 3
_UNITS = ("year", "month", "week", "day")
_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: English month names that are also everyday words ("What may I…", "a march"): a time word only when capitalised
_LOWER_NOT_TIME = frozenset({"may", "march"})
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_WORD = re.compile(r"\w+")
#: a word as a phrase is cut: "one-year-old" and "l'année" are one each ("year" in a compound is no time)
_TOKEN = re.compile(r"\w+(?:[-']\w+)*")
_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2, "兩": 2}
_NUMERAL = re.compile(r"[一二两兩三四五六七八九]?十[一二三四五六七八九]?|[零一二两兩三四五六七八九]")
#: the languages of ``LANGUAGES`` whose number words text2num writes as digits
NUMBER_WORDS = ("en", "es", "de", "fr", "pt", "it", "nl")


def vocabulary() -> dict[str, list[str]]:
    """Each time word of ``LANGUAGES`` with the languages it belongs to, from dateparser's language data:
    the names of the units day to year, of the months and weekdays (not their abbreviations: a name
    that begins a longer one of its list), and the relative words said alone ("yesterday", "gestern", "昨天").
    Words of scripts with spaces are kept from three letters up and lower-cased; Chinese, Japanese and
    Korean ones from two characters up, but for the units ("年", "月", "天")."""
    from dateparser.languages.loader import default_loader

    words: dict[str, set[str]] = {}
    for language in LANGUAGES:
        info = default_loader.get_locale(language).info
        spaced = not _CJK.search("".join(info.get("day", [])))
        units: set[str] = set()
        found: set[str] = set()
        for key in (*_UNITS, *_NAMES):
            names = [n.lower() if spaced else n for n in info.get(key, [])]
            if key in _UNITS:
                units.update(names)
            else:
                found.update(n for n in names if not any(o != n and o.startswith(n) for o in names))
        for key, phrases in info.get("relative-type", {}).items():
            if any(unit in key for unit in _UNITS):
                found.update(p.lower() if spaced else p for p in phrases if not spaced or " " not in p)
        for word in units | found:
            if _WORD.fullmatch(word) and (len(word) >= 3 if spaced else len(word) >= 2 or word in units):
                words.setdefault(word, set()).add(language)
    return {word: sorted(languages) for word, languages in sorted(words.items())}


@cache
def _words() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[int, ...]]]:
    """The time words (``data/time_words.json``) with their languages, and the lengths of the CJK ones by
    their first character, longest first."""
    table = json.loads(resources.files("memlane.data").joinpath("time_words.json").read_text(encoding="utf-8"))
    starts: dict[str, set[int]] = {}
    for word in table:
        if _CJK.search(word):
            starts.setdefault(word[0], set()).add(len(word))
    return ({word: tuple(languages) for word, languages in table.items()},
            {first: tuple(sorted(sizes, reverse=True)) for first, sizes in starts.items()})


@lru_cache(maxsize=256)
def _hits(text: str) -> tuple[tuple[int, int, str], ...]:
    """Where ``text`` holds time words: (start, end, word). A word of a spaced script is a whole word, in
    any case (but ``_LOWER_NOT_TIME`` lower-cased); in CJK text, the longest time word at each place, left to right.
    Kept for the last questions: the searcher's gate, ``resolve`` and ``windows`` ask it of the same text."""
    words, starts = _words()
    hits = []
    for m in _WORD.finditer(text):
        word = m.group()
        if not _CJK.search(word):
            if word.lower() in words and word not in _LOWER_NOT_TIME:
                hits.append((m.start(), m.end(), word.lower()))
            continue
        i = 0
        while i < len(word):
            size = next((n for n in starts.get(word[i], ()) if i + n <= len(word) and word[i:i + n] in words), 0)
            if size:
                hits.append((m.start() + i, m.start() + i + size, word[i:i + size]))
            i += size or 1
    return tuple(hits)


def mentions(text: str) -> bool:
    """Whether ``text`` holds a time word or names a weekend: the cheap test before any parsing."""
    return bool(_hits(text)) or weekends.mentions(text)


def windows(text: str, anchor: datetime) -> list[Window]:
    """The spans of the relative times ``text`` names, read against ``anchor`` (its "now"), in the order
    they are named; [] for none. A weekend with its direction ("last weekend", "上周末") is its Saturday and
    Sunday (``weekends.py``); the time words within a weekend's name ("semana" of "fin de semana", "周" of
    "周末") are not read on their own."""
    named = weekends.places(text)
    found = [(start, span) for start, _, span in weekends.spans(text, anchor)] if named else []
    hits = [hit for hit in _hits(text) if not any(start < hit[1] and hit[0] < end for start, end in named)]
    if hits:
        found += _windows(text, anchor, hits)
    spans: list[Window] = []
    for _, span in sorted(found, key=lambda item: item[0]):
        if span not in spans:
            spans.append(span)
    return spans


def _windows(text: str, anchor: datetime, hits: list[tuple[int, int, str]]) -> list[tuple[int, Window]]:
    """The spans of the expressions around ``hits`` (time words: ``_hits``), each with where it starts."""
    words, _ = _words()
    languages = sorted({language for *_, word in hits for language in words[word]})
    base = anchor.astimezone(timezone.utc).replace(tzinfo=None) if anchor.tzinfo else anchor
    read = _reader(tuple(languages), base)
    numbers = _number_words(tuple(language for language in languages if language in NUMBER_WORDS))
    tokens: list[tuple[int, int]] = []
    for m in _TOKEN.finditer(text):
        if _CJK.search(m.group()):  # no spaces: a character a token ("5", "月")
            tokens += [(i, i + 1) for i in range(m.start(), m.end())]
        else:
            tokens.append(m.span())
    spans: list[tuple[int, Window]] = []
    used = -1
    for start, end, _ in sorted(hits):
        if start < used:
            continue
        found = _expression(text, tokens, start, end, read, numbers)
        if found is not None:
            (used, period, moment) = found
            spans.append((start, _span(moment, period)))
    return spans


def _expression(text: str, tokens: list[tuple[int, int]], start: int, end: int, read: Any,
                numbers: Callable[[str], list[str]] = lambda phrase: []) -> tuple[int, str, datetime] | None:
    """The longest run of tokens around the time word at ``start:end`` that dateparser reads whole, as written
    or with its numerals in digits (``numbers``: the phrase's number words as digits, per language):
    (where it ends, its period, its moment), or None."""
    first = next((i for i, (s, e) in enumerate(tokens) if e > start), None)
    last = next((i for i in range(len(tokens) - 1, -1, -1) if tokens[i][0] < end), None)
    if first is None or last is None:
        return None
    runs = sorted(((a, b) for a in range(max(0, first - REACH), first + 1)
                   for b in range(last, min(len(tokens), last + REACH + 1))), key=lambda r: r[0] - r[1])
    for a, b in runs:
        phrase = text[tokens[a][0]:tokens[b][1]]
        for variant in dict.fromkeys((phrase, _NUMERAL.sub(_arabic, phrase), *numbers(phrase))):
            data = read(variant)
            if data.date_obj is not None:
                return tokens[b][1], data.period or "day", data.date_obj
    return None


def _number_words(languages: tuple[str, ...]) -> Callable[[str], list[str]]:
    """The phrase with its number words as digits in each of ``languages`` ("tres días" -> "3 días"; text2num's
    ``alpha2digit``); none without text2num."""
    try:
        from text_to_num import alpha2digit
    except ImportError:  # an optional reading: the phrase as written still parses
        return lambda phrase: []
    # threshold 0: a lone small number too ("dos semanas"; text2num leaves those below 3 as words by default)
    return lambda phrase: [alpha2digit(phrase, language, threshold=0) for language in languages]


def _arabic(match: re.Match[str]) -> str:
    """A Chinese numeral below a hundred in digits ("三" -> "3", "十二" -> "12", "二十" -> "20")."""
    text = match.group()
    if "十" not in text:
        return str(_DIGITS[text])
    tens, _, ones = text.partition("十")
    return str(10 * (_DIGITS[tens] if tens else 1) + (_DIGITS[ones] if ones else 0))


def _reader(languages: tuple[str, ...], base: datetime) -> Any:
    """dateparser's reader of whole phrases in ``languages``, relative to ``base`` (past preferred)."""
    from dateparser.date import DateDataParser

    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past", "RETURN_TIME_AS_PERIOD": True,
                "REQUIRE_PARTS": [], "STRICT_PARSING": False}
    return DateDataParser(languages=list(languages), settings=settings).get_date_data


def _span(moment: datetime, period: str) -> Window:
    """The day, week (Monday to Sunday), month or year holding ``moment``, in UTC; a time of day
    counts as its day."""
    day = datetime(moment.year, moment.month, moment.day, tzinfo=timezone.utc)
    if period == "week":
        start = day - timedelta(days=day.weekday())
        return start, start + timedelta(days=7)
    if period == "month":
        start = day.replace(day=1)
        return start, (start + timedelta(days=32)).replace(day=1)
    if period == "year":
        start = day.replace(month=1, day=1)
        return start, start.replace(year=start.year + 1)
    return day, day + timedelta(days=1)


def resolve(query: Query, as_of: Any, latest: Callable[[], str | None]) -> dict[str, Any]:
    """Give ``query`` the windows of the relative times it names, read against the search's ``as_of``
    when given, else the time of the scope's latest memory (``latest()``, asked only when the question
    holds a time word); a question naming a date already (``Query.windows``) is left as it is. Returns
    what happened, for the trace."""
    if query.windows or not mentions(query.text):
        return {}
    said = timeutil.canonical(as_of) if as_of is not None else latest()
    if said is None:
        return {}
    anchor = datetime.fromisoformat(said)
    query.windows = tuple(windows(query.text, anchor if anchor.tzinfo else anchor.replace(tzinfo=timezone.utc)))
    return {"anchor": said, "relative_windows": len(query.windows)}


if __name__ == "__main__":  # python -m memlane.retrieval.relative_time: write data/time_words.json afresh
    rows = [json.dumps(word, ensure_ascii=False) + ": " + json.dumps(languages)
            for word, languages in vocabulary().items()]
    target = resources.files("memlane.data").joinpath("time_words.json")
    with resources.as_file(target) as path:
        path.write_text("{\n" + ",\n".join(rows) + "\n}\n", encoding="utf-8")
