"""Similarity on one scale whichever model made the vectors.

Models disagree on what a cosine means: all-MiniLM-L6-v2 puts unrelated sentences near 0 and
paraphrases near 0.85; multilingual-e5-small puts unrelated sentences near 0.75 and paraphrases near
0.95. memlane's thresholds (``search(threshold=)``, formation's "already known", merging
near-duplicates, the graph's entity matches, the context gate) and the scores users read are on one
scale: all-MiniLM-L6-v2's cosine, the model they were first tuned on. A model with another
distribution declares a ``Calibration``: a monotone piecewise-linear map from its cosine to that scale,
fitted by matching quantiles of the two models' cosines over the same pairs of texts
(``benchmarks/calibrate_embedders.py`` over ``tests/data/calibration_pairs.jsonl``: questions and the
memories they ask about, memories and their paraphrases, and every unrelated pair among them).

Two maps per model: ``query`` for a search (a question against stored texts) and ``document`` for
stored texts against each other (formation, merging, graph entities). The map keeps order within one
comparison kind, so it never changes which memory ranks first; it changes what a number means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Calibration:
    """``raw`` cosines (increasing) and the ``common`` values they map to (increasing). Below the first
    knot the first segment's slope continues; above the last, a straight line to (1, 1)."""

    raw: tuple[float, ...]
    common: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.raw) != len(self.common) or len(self.raw) < 2:
            raise ValueError("a calibration needs two or more knots of raw and common values")
        if any(b <= a for a, b in zip(self.raw, self.raw[1:])) or any(b <= a for a, b in zip(self.common, self.common[1:])):
            raise ValueError("calibration knots must increase")
        if self.raw[-1] >= 1 or self.common[-1] >= 1:
            raise ValueError("calibration knots stay below 1 (1 maps to 1)")

    @cached_property
    def _xs(self) -> np.ndarray:
        return np.array([-1.0 - 1e-9, *self.raw, 1.0])

    @cached_property
    def _ys(self) -> np.ndarray:
        slope = (self.common[1] - self.common[0]) / (self.raw[1] - self.raw[0])
        return np.array([self.common[0] - slope * (self.raw[0] + 1.0), *self.common, 1.0])

    def __call__(self, raw: Any) -> Any:
        """The common-scale value(s) of ``raw`` cosine(s): a float for a float, an array for an array."""
        value = np.interp(np.asarray(raw, dtype=np.float64), self._xs, self._ys)
        return float(value) if np.ndim(value) == 0 else value.astype(np.float32)

    def values(self, raws: Sequence[float]) -> list[float]:
        """The common-scale value of each of many cosines, as floats (one array operation)."""
        return np.interp(np.asarray(raws, dtype=np.float64), self._xs, self._ys).tolist()

    def inverse(self, common: float) -> float:
        """The raw cosine with this common-scale value (a threshold given on the common scale)."""
        return float(np.interp(common, self._ys, self._xs))


@dataclass(frozen=True)
class Calibrations:
    """A model's two maps: ``query`` (a search against stored texts) and ``document`` (stored texts
    against each other). ``None`` for a model on the common scale already (its cosine is the score)."""

    query: Calibration | None = None
    document: Calibration | None = None

    def similarity(self, raw: Any, kind: str = "query") -> Any:
        calibration = self.query if kind == "query" else self.document
        if calibration is None:
            return raw if isinstance(raw, float) or np.ndim(raw) else float(raw)
        return calibration(raw)

    def similarities(self, raws: Sequence[float], kind: str = "query") -> list[float]:
        """``similarity`` of each of many cosines, as floats (one array operation; the same values as one by one)."""
        calibration = self.query if kind == "query" else self.document
        if calibration is None or not raws:
            return [float(raw) for raw in raws]
        return calibration.values(raws)

    def raw_threshold(self, common: float | None, kind: str = "query") -> float | None:
        calibration = self.query if kind == "query" else self.document
        return common if common is None or calibration is None else calibration.inverse(common)


#: the scale itself (all-MiniLM-L6-v2, and any model that declares nothing)
IDENTITY = Calibrations()


def knots(raw: Sequence[float], common: Sequence[float]) -> Calibration:
    """A ``Calibration`` from fitted quantile pairs: duplicates and non-increasing steps dropped."""
    xs: list[float] = []
    ys: list[float] = []
    for x, y in zip(raw, common):
        x, y = round(float(x), 4), round(float(y), 4)
        if (not xs or (x > xs[-1] and y > ys[-1])) and x < 1 and y < 1:
            xs.append(x)
            ys.append(y)
    return Calibration(tuple(xs), tuple(ys))
