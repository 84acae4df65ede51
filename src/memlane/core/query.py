"""The query of a search, read once: its text, its vector, its keyword terms and the dates it names.

``Query`` is built by the searcher (``retrieval/searcher.py``) and handed to the store (keyword
search), the timeline stage (date windows) and the relevance judge (term coverage), so the query
string is analysed once per search. Terms and windows are worked out on first use: a plain
vector search never needs them.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from functools import cached_property, lru_cache

import numpy as np

from memlane.text import keywords


class Query:
    """What a search looks for. ``vector`` is the query's unit vector (None when no vector is needed)."""

    def __init__(self, text: str, vector: np.ndarray | None = None):
        self.text = text
        self.vector = vector

    @cached_property
    def terms(self) -> tuple[str, ...]:
        """The distinct keyword terms of the text (``keywords.analyze``), in order of appearance."""
        return _terms(self.text)

    @cached_property
    def windows(self) -> tuple["Window", ...]:
        """The time spans of the dates the text names (``date_windows``)."""
        return _windows(self.text)

    def __repr__(self) -> str:
        return f"Query({self.text!r})"


#: the last questions' analyses (a server's clients ask the same questions again; both are pure functions of the text)
ANALYSES_KEPT = 4096


@lru_cache(maxsize=ANALYSES_KEPT)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(keywords.analyze(text)))


@lru_cache(maxsize=ANALYSES_KEPT)
def _windows(text: str) -> tuple["Window", ...]:
    return tuple(date_windows(text))


_MONTHS = {name: number for number, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"], start=1)}
_MONTHS.update({name[:3]: number for name, number in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s*(\d{{4}})\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")

Window = tuple[datetime, datetime]


def date_windows(query: str) -> list[Window]:
    """The time spans (UTC, end exclusive) of the dates a query names: a day ("16 November, 2023",
    "December 1, 2023", "2023-11-16"), a month ("August 2023") or a year ("in 2023"). English
    month names only; relative dates ("last week") are not resolved."""
    spans: list[Window] = []
    taken: list[tuple[int, int]] = []

    def free(match: re.Match[str]) -> bool:
        return all(match.end() <= start or match.start() >= end for start, end in taken)

    def day(match: re.Match[str], year: str, month: int, number: str) -> None:
        try:
            start = datetime(int(year), month, int(number), tzinfo=timezone.utc)
        except ValueError:
            return
        taken.append(match.span())
        spans.append((start, start + timedelta(days=1)))

    for m in _ISO_DATE.finditer(query):
        day(m, m[1], int(m[2]), m[3])
    for m in _DAY_MONTH_YEAR.finditer(query):
        if free(m):
            day(m, m[3], _MONTHS[m[2].lower()], m[1])
    for m in _MONTH_DAY_YEAR.finditer(query):
        if free(m):
            day(m, m[3], _MONTHS[m[1].lower()], m[2])
    for m in _MONTH_YEAR.finditer(query):
        if free(m):
            year, month = int(m[2]), _MONTHS[m[1].lower()]
            taken.append(m.span())
            spans.append((datetime(year, month, 1, tzinfo=timezone.utc),
                          datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)))
    for m in _YEAR.finditer(query):
        if free(m):
            year = int(m[1])
            spans.append((datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc)))
    return spans



