"""The candidates the stages rank (a ``Pool``: records and score arrays), those an answer is made of (``Candidate``),
and the trace of what ran."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memlane.core.logcontext import one_line, request_id
from memlane.core.models import MemoryRecord

log = logging.getLogger("memlane.retrieval")


@dataclass(slots=True)
class Candidate:
    record: MemoryRecord
    #: cosine similarity of query and memory (what ``threshold`` applies to)
    cosine: float
    #: BM25 score from the keyword index, when the memory matched it
    keyword: float | None = None
    rerank: float | None = None
    #: the score the current order is sorted by
    score: float = 0.0
    tokens: np.ndarray | None = None

    def scores(self) -> dict[str, float]:
        out = {"vector": round(self.cosine, 6)}
        if self.keyword is not None:
            out["keyword"] = round(self.keyword, 6)
        if self.rerank is not None:
            out["rerank"] = round(self.rerank, 6)
        return out


class Pool:
    """A search's candidates while the stages rank them (vector, actors, dates, keyword, timeline): their records in
    the current order and, as arrays in that order, each one's cosine, keyword share (NaN: no keyword match) and the
    score the order is by. The stages work on the arrays; ``best(n)`` makes ``Candidate``s of the first ``n`` only
    (a search of a 100-row scope ranks every row and returns ten)."""

    __slots__ = ("records", "cosine", "keyword", "score", "_index")

    def __init__(self, records: list[MemoryRecord], cosine: np.ndarray):
        """``records`` with their cosines, in that order, each scored by its cosine, none matched by keyword."""
        self.records = records
        self.cosine = np.asarray(cosine, dtype=np.float64)
        self.keyword = np.full(len(records), np.nan)
        self.score = self.cosine.copy()
        self._index: dict[str, int] | None = None

    @classmethod
    def of(cls, hits: Sequence[tuple[MemoryRecord, float]]) -> Pool:
        """The pool of ``hits`` (record, cosine), in their order, each scored by its cosine."""
        return cls([record for record, _ in hits], np.fromiter((cosine for _, cosine in hits), np.float64, len(hits)))

    def __len__(self) -> int:
        return len(self.records)

    def index(self) -> dict[str, int]:
        """Each candidate's place by memory id."""
        if self._index is None:
            self._index = {record.id: i for i, record in enumerate(self.records)}
        return self._index

    def add(self, hits: Sequence[tuple[MemoryRecord, float]]) -> int:
        """Append the ``hits`` (record, cosine) not in the pool, each once, scored by its cosine; how many."""
        present = self.index()
        new: dict[str, tuple[MemoryRecord, float]] = {}
        for record, cosine in hits:
            if record.id not in present:
                new.setdefault(record.id, (record, cosine))
        if new:
            added = np.fromiter((cosine for _, cosine in new.values()), np.float64, len(new))
            self.records = self.records + [record for record, _ in new.values()]
            self.cosine = np.concatenate((self.cosine, added))
            self.keyword = np.concatenate((self.keyword, np.full(len(new), np.nan)))
            self.score = np.concatenate((self.score, added))
            self._index = None
        return len(new)

    def sort(self) -> None:
        """Best score first; equal scores keep their order."""
        if len(self.score) < 2 or not (self.score[1:] > self.score[:-1]).any():
            return
        order = np.argsort(-self.score, kind="stable")
        records = self.records
        self.records = [records[i] for i in order.tolist()]
        self.cosine, self.keyword, self.score = self.cosine[order], self.keyword[order], self.score[order]
        self._index = None

    def best(self, n: int | None = None) -> list[Candidate]:
        """The first ``n`` candidates (all for None) as ``Candidate``s."""
        n = len(self) if n is None else min(n, len(self))
        return [Candidate(record, cosine, None if keyword != keyword else keyword, score=score)  # NaN: no match
                for record, cosine, keyword, score in zip(self.records[:n], self.cosine[:n].tolist(),
                                                         self.keyword[:n].tolist(), self.score[:n].tolist())]


#: the names API clients know a stage by (the search flags); the timeline is a step of keyword_search
STAGE_NAMES = {"keyword": "keyword_search", "rerank": "rerank", "filter": "filter_memories"}


@dataclass
class Trace:
    """Which stages ran, how long each took, and what failed (returned as search metadata).

    Seed 001's terms: a stage that failed and was skipped is in ``stages_failed``; ``fallback_used``
    and ``original_error`` describe the whole advanced search falling back to a standard search."""

    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    #: what the caller should know about the answer that is not a failure (a stage asked for and skipped)
    warnings: list[str] = field(default_factory=list)

    def skip(self, name: str, reason: str) -> None:
        """Record a stage asked for and not run, on purpose: ``ran`` false with its ``skipped`` reason, and a
        warning (not a failure: ``stages_failed`` is for stages that broke)."""
        self.stages[name] = {"ran": False, "skipped": reason, "ms": 0.0}
        self.warnings.append(f"{STAGE_NAMES.get(name, name)} skipped: {reason}")

    @contextmanager
    def stage(self, name: str, within: str | None = None, *, fatal: bool = False) -> Iterator[dict[str, Any]]:
        """Time and guard one stage. ``within`` records it inside an earlier stage's entry (a step of
        that stage: the set of top-level stage names stays what API clients know), whose ``ms`` then
        includes it. A ``fatal`` stage records its error and raises it (the search cannot go on)."""
        entry: dict[str, Any] = {"ran": False}
        parent = self.stages[within] if within is not None else None
        (parent if parent is not None else self.stages)[name] = entry
        started = time.perf_counter()
        try:
            yield entry
            entry["ran"] = True
        except Exception as exc:  # a failing stage degrades the search, it does not fail it
            entry["error"] = f"{type(exc).__name__}: {exc}"
            if fatal:
                if parent is not None:  # the step's failure is its stage's
                    parent["error"] = entry["error"]
                raise
            self.failed[STAGE_NAMES.get(name, name)] = entry["error"]
            # one line per degraded stage (a search runs often; a traceback per search floods the log)
            log.warning("search stage %s degraded (request %s): %s; continuing without it",
                        name, request_id.get(), one_line(exc))
            log.debug("search stage %s traceback (request %s)", name, request_id.get(), exc_info=True)
        finally:
            entry["ms"] = round((time.perf_counter() - started) * 1000, 3)
            if parent is not None:
                parent["ms"] = round(parent.get("ms", 0.0) + entry["ms"], 3)

    def to_dict(self, requested: list[str], fallback_error: str | None = None) -> dict[str, Any]:
        """The search's ``metadata``. ``advanced_retrieval``: advanced retrieval was requested and
        answered (false after a fallback, as seed 001's fallback says)."""
        return {"advanced_retrieval": fallback_error is None, "stages_requested": requested,
                "stages_failed": dict(self.failed), "fallback_used": fallback_error is not None,
                "original_error": fallback_error, "stages": self.stages, "warnings": list(self.warnings),
                "total_ms": round(sum(s["ms"] for s in self.stages.values()), 3)}


def minmax(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    if not len(values):
        return values
    low, high = values.min(), values.max()
    return np.zeros_like(values) if high - low < 1e-12 else (values - low) / (high - low)
