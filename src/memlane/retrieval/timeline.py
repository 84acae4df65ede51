"""Timeline stage: what a memory's place in time says about its relevance.

Two signals, applied to the fused candidate pool before reranking:

- **Dates named in the query.** "What did Tim say on 16 November, 2023?" or
  "... in August 2023": memories created inside the named day, month or year
  gain ``date_weight``.
- **Neighbours.** A conversation's answer often sits next to the turn that
  matches the query (a question and its reply, a story told over several
  turns). Candidates are put in time order — ``created_at``, then the
  time-ordered id, within one user/agent/run — and each gains
  ``neighbour_weight`` times the better score of the nearest candidates
  before and after it, when they are at most ``neighbour_gap_seconds`` apart.
  Only candidates already in the pool lend each other score (memories outside
  it are skipped over), so the stage costs no store access; on LoCoMo this
  pool-order variant did as well as lending between truly adjacent turns.

Scores are min-max normalised first, so the weights mean the same thing after
weighted or RRF fusion. Runs as a step of the hybrid stage (``memory.py``). Measurements: benchmarks/RESULTS.md
("Retrieval quality").
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from memlane.retrieval.candidates import Candidate, minmax

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


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def apply(candidates: list[Candidate], query: str, *, date_weight: float, neighbour_weight: float,
          neighbour_gap_seconds: float) -> tuple[list[Candidate], dict[str, Any]]:
    """Re-score the pool with both signals and return it re-sorted, plus what happened (for the trace)."""
    info: dict[str, Any] = {}
    if not candidates:
        return candidates, info
    times = [_moment(c.record.created_at) for c in candidates]
    scores = minmax(np.array([c.score for c in candidates]))
    if date_weight > 0:
        spans = date_windows(query)
        if spans:
            inside = np.array([t is not None and any(start <= t < end for start, end in spans) for t in times])
            scores = scores + date_weight * inside
            info["date_windows"], info["in_window"] = len(spans), int(inside.sum())
    if neighbour_weight > 0:
        scope = [(c.record.user_id or "", c.record.agent_id or "", c.record.run_id or "") for c in candidates]
        seconds = np.array([t.timestamp() if t is not None else np.nan for t in times])
        timed = np.array(sorted((i for i, t in enumerate(times) if t is not None),
                                key=lambda i: (scope[i], seconds[i], candidates[i].record.id)), dtype=np.intp)
        lent = np.zeros(len(candidates))
        pairs = 0
        if len(timed) > 1:
            before, after = timed[:-1], timed[1:]
            near = (seconds[after] - seconds[before] <= neighbour_gap_seconds) & \
                np.fromiter((scope[a] == scope[b] for a, b in zip(before, after)), bool, len(before))
            before, after = before[near], after[near]
            np.maximum.at(lent, before, scores[after])
            np.maximum.at(lent, after, scores[before])
            pairs = int(near.sum())
        scores = scores + neighbour_weight * lent
        info["neighbour_pairs"] = pairs
    for c, s in zip(candidates, scores):
        c.score = float(s)
    return sorted(candidates, key=lambda c: -c.score), info
