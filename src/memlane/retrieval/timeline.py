"""Timeline stage: what a memory's place in time says about its relevance.

Two signals, applied to the fused candidate pool before reranking:

- **Dates named in the query.** "What did Tim say on 16 November, 2023?" or
  "... in August 2023": memories created inside the named day, month or year
  (``Query.windows``, read in ``query.py``) gain ``date_weight``. Such a
  query first fetches the nearest memories created inside its windows
  (``join``: one more vector search, filtered to them) into the pool, so the
  bonus also reaches a memory of that day that shares no word with the query
  (LoCoMo dev: R@25 85.8 -> 86.2, R@50 90.4 -> 90.9, R@10 80.5 -> 80.6).
- **Neighbours.** A conversation's answer often sits next to the turn that
  matches the query (a question and its reply, a story told over several
  turns). Candidates are put in time order — ``created_at``, then the
  time-ordered id, within one user/agent/run — and each gains
  ``neighbour_weight`` times the better score of the nearest candidates
  before and after it, when they are at most ``neighbour_gap_seconds`` apart
  and turns of a conversation (``conversation_turns``: one is a reply stored
  with its context, or two people said them): notes stored one after another
  are not lent each other's score.
  Only candidates already in the pool lend each other score (memories outside
  it are skipped over), so the stage costs no store access; on LoCoMo this
  pool-order variant did as well as lending between truly adjacent turns.

Scores are min-max normalised first, so the weights mean the same thing after
weighted or RRF fusion. Runs as a step of the hybrid stage (``searcher.py``). Measurements: benchmarks/RESULTS.md
("Retrieval quality").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import numpy as np

from memlane.core import filters as flt
from memlane.core import timeutil
from memlane.core.models import MemoryRecord
from memlane.core.query import Query, Window
from memlane.retrieval.candidates import Pool, minmax


@functools.lru_cache(maxsize=16384)  # a conversation's candidates come back search after search
def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def conversation_turns(a: Any, b: Any) -> bool:
    """Whether two memories (records) close in time are turns of one conversation: one of them
    answers the message before it (stored with that ``context``), or two speakers said them."""
    return bool(a.context or b.context or (a.actor_id and b.actor_id and a.actor_id != b.actor_id))


def may_pair(records: list[MemoryRecord]) -> bool:
    """Whether any two of ``records`` may be turns of one conversation (``conversation_turns``): one
    of them holds a ``context``, or two speakers are among them. Notes of one user, with no context and no
    speaker, lend each other nothing, so the neighbour step reads none of their times."""
    speakers: set[str] = set()
    for record in records:
        if record.context:
            return True
        if record.actor_id:
            speakers.add(record.actor_id)
            if len(speakers) > 1:
                return True
    return False


def window_filter(windows: tuple[Window, ...]) -> flt.Node | None:
    """The filter of memories created inside any of ``windows`` (None for none)."""
    spans = [flt.conjoin(flt.Compare(flt.Field(column="created_at"), "gte", timeutil.canonical(start)),
                         flt.Compare(flt.Field(column="created_at"), "lt", timeutil.canonical(end)))
             for start, end in windows]
    if not spans:
        return None
    return spans[0] if len(spans) == 1 else flt.Or(tuple(spans))


def join(search: Callable[[Any, flt.Node, int], list[tuple[MemoryRecord, float]]], query: Query, where: flt.Node,
         pool: Pool, k: int) -> tuple[Pool, dict[str, Any]]:
    """The pool with the nearest memories created on the dates the query names (one more vector search,
    filtered to those dates; ``search(vector, where, limit)`` as ``actors.join``'s), so that ``apply``'s
    date bonus reaches a memory of that day the query's words and meaning alone ranked outside the pool.
    A query naming no date is left as it is."""
    scoped = window_filter(query.windows)
    if scoped is None or query.vector is None:
        return pool, {}
    added = pool.add(search(query.vector, flt.conjoin(where, scoped), k))
    return pool, {"dated_added": added}


def apply(pool: Pool, query: Query, *, date_weight: float, neighbour_weight: float,
          neighbour_gap_seconds: float) -> tuple[Pool, dict[str, Any]]:
    """Re-score the pool with both signals and sort it again, plus what happened (for the trace)."""
    info: dict[str, Any] = {}
    if not len(pool):
        return pool, info
    records = pool.records
    scores = minmax(pool.score)
    spans = query.windows if date_weight > 0 else ()
    if neighbour_weight > 0 and not may_pair(records):
        info["neighbour_pairs"] = 0  # no two candidates can be turns of a conversation: nothing to lend
        neighbour_weight = 0.0
    times = [_moment(record.created_at) for record in records] if spans or neighbour_weight > 0 else []
    if date_weight > 0:
        if spans:
            inside = np.array([t is not None and any(start <= t < end for start, end in spans) for t in times])
            scores = scores + date_weight * inside
            info["date_windows"], info["in_window"] = len(spans), int(inside.sum())
    if neighbour_weight > 0:
        scope = [(r.user_id or "", r.agent_id or "", r.run_id or "") for r in records]
        stamps = [t.timestamp() if t is not None else np.nan for t in times]
        seconds = np.array(stamps)
        timed = np.array(sorted((i for i, t in enumerate(times) if t is not None),
                                key=lambda i: (scope[i], stamps[i], records[i].id)), dtype=np.intp)
        lent = np.zeros(len(records))
        pairs = 0
        if len(timed) > 1:
            before, after = timed[:-1], timed[1:]
            near = (seconds[after] - seconds[before] <= neighbour_gap_seconds) & \
                np.fromiter((scope[a] == scope[b] and conversation_turns(records[a], records[b])
                             for a, b in zip(before.tolist(), after.tolist())), bool, len(before))
            before, after = before[near], after[near]
            np.maximum.at(lent, before, scores[after])
            np.maximum.at(lent, after, scores[before])
            pairs = int(near.sum())
        scores = scores + neighbour_weight * lent
        info["neighbour_pairs"] = pairs
    pool.score = scores
    pool.sort()
    return pool, info
