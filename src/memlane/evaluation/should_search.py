"""``memlane eval should-search``: the agent-context gate (``Memory.should_search_memory``) on
labelled conversations, and the cross-validation its weights are chosen by.

Case format (``tests/data/should_search_dev.jsonl``): ``{"id", "lang", "should_search",
"conversation", "system_prompt"?, "memories"?}``. ``memories`` are what the user's scope holds:
they are stored through the public API (``add(..., infer=False)``, one scope per distinct list) and
the gate is asked with ``user_id`` naming that scope. Without ``--no-scope`` that is how a case
with ``memories`` is asked (``[]``: a scope that holds nothing, where the gate never searches); a case
without the field says nothing of a scope and is asked without one, as ``scope=False`` asks every
case (the keywords alone).

The gate's decision for any setting is a function of what the conversation and the scope are,
so ``features`` reads each case once (the store and the model work) and ``decide`` re-scores it
under other settings: ``cross_validate`` picks the settings on k - 1 folds and measures the held-out
fold, every case held out once.
"""

from __future__ import annotations

import itertools
import json
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlane.core import validation
from memlane.core.config import ContextConfig
from memlane.retrieval import context

#: settings searched by cross-validation (every other setting is the default gate's)
GRID: dict[str, Sequence[Any]] = {
    "request_weight": (1.0, 2.0, 3.0),
    "personal_weight": (1.0, 2.0, 3.0),
    "know_how_weight": (0.0, -1.0, -2.0),
    "material_penalty": (0.0, 2.0, 4.0),
    "memory_term_weight": (0.0, 1.0, 2.0),
    "memory_similarity_weight": (0.0, 1.0, 2.0),
    "memory_similarity": (0.4, 0.5, 0.6, 0.7, 0.8),
    "threshold": (2.0, 3.0, 4.0),
}


@dataclass
class Case:
    id: str
    lang: str
    expected: bool
    #: what the gate read (its reading does not depend on the weights and threshold searched)
    reading: context.GateReading


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def features(memory: Any, cases: Iterable[dict[str, Any]], *, scope: bool = True) -> list[Case]:
    """Each case read once by the memory's gate settings: its turns, and what its scope holds (stored
    through ``add``; a case without ``memories`` names no scope)."""
    settings = memory.config.context
    scopes: dict[tuple[str, ...], str] = {}
    out = []
    for row in cases:
        turns = validation.messages(row["conversation"], memory.limits, "conversation")
        evidence = None
        if scope and "memories" in row:
            held = tuple(row["memories"] or ())
            if held not in scopes:
                scopes[held] = f"gate-{uuid.uuid4().hex[:10]}"
                if held:
                    memory.add([{"role": "user", "content": text} for text in held], user_id=scopes[held],
                               infer=False)
            pools = context.scope_pools(scopes[held], None)
            evidence = memory.searcher.evidence(turns, pools)
        reading = context.read(turns, row.get("system_prompt", ""), settings, evidence)
        out.append(Case(row["id"], row.get("lang", ""), bool(row["should_search"]), reading))
    return out


def decide(case: Case, settings: ContextConfig) -> bool:
    return context.should_search(case.reading, settings)


def metrics(cases: Sequence[Case], said: Sequence[bool]) -> dict[str, float]:
    tp = sum(1 for c, s in zip(cases, said) if s and c.expected)
    fp = sum(1 for c, s in zip(cases, said) if s and not c.expected)
    fn = sum(1 for c, s in zip(cases, said) if not s and c.expected)
    n = len(cases)
    return {"cases": n, "accuracy": round((n - fp - fn) / n, 4) if n else 0.0,
            "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
            "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0}


def report(cases: Sequence[Case], settings: ContextConfig) -> dict[str, Any]:
    said = [decide(c, settings) for c in cases]
    by_lang = {lang: metrics([c for c in cases if c.lang == lang], [s for c, s in zip(cases, said) if c.lang == lang])
               for lang in sorted({c.lang for c in cases})}
    return {**metrics(cases, said), "by_lang": by_lang,
            "wrong": [c.id for c, s in zip(cases, said) if s != c.expected]}


def _grid(grid: dict[str, Sequence[Any]]) -> list[dict[str, Any]]:
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def _accuracy(cases: Sequence[Case], settings: ContextConfig) -> float:
    return sum(decide(c, settings) == c.expected for c in cases) / len(cases)


def best_settings(cases: Sequence[Case], base: ContextConfig, grid: dict[str, Sequence[Any]]) -> dict[str, Any]:
    """The grid point with the best accuracy on ``cases`` (ties: the one listed first, i.e. the smallest values)."""
    scored = [(_accuracy(cases, base.model_copy(update=point)), -i, point) for i, point in enumerate(_grid(grid))]
    return max(scored, key=lambda item: (item[0], item[1]))[2]


def cross_validate(cases: Sequence[Case], base: ContextConfig | None = None, grid: dict[str, Sequence[Any]] = GRID,
                   folds: int = 5, seed: int = 7) -> dict[str, Any]:
    """k-fold cross-validation of the grid: each fold scored with the settings the other folds chose."""
    base = base or ContextConfig()
    order = list(range(len(cases)))
    random.Random(seed).shuffle(order)
    said: dict[int, bool] = {}
    chosen = []
    for k in range(folds):
        held = set(order[k::folds])
        train = [cases[i] for i in order if i not in held]
        point = best_settings(train, base, grid)
        chosen.append(point)
        settings = base.model_copy(update=point)
        said.update({i: decide(cases[i], settings) for i in held})
    out = metrics(cases, [said[i] for i in range(len(cases))])
    return {**out, "folds": folds, "chosen": chosen}
