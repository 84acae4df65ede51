#!/usr/bin/env python
"""Fit each model's ``Calibration`` (embeddings/calibration.py) to all-MiniLM-L6-v2's cosine scale.

Over the English rows of ``tests/data/calibration_pairs.jsonl`` (written for memlane: memory-like
statements, a question about each, a paraphrase of each), both models embed the same texts and the
quantiles of their cosines are matched:

- ``query``: every question against every memory (the questions' own memories are the top ~1 %);
- ``document``: every pair of memories and paraphrases (each memory's paraphrase is the top ~0.6 %).

The reference model only reads English, so only English rows are used; the map is a change of scale,
and applies to every language alike. Prints the knots as Python to paste into the model's module;
``tests/providers/test_calibration.py`` checks the pasted knots against a fresh fit.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/calibrate_embedders.py --models multilingual-e5-small,use-multilingual
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from memlane.core.config import ProviderSpec
from memlane.embeddings import create_embedder
from memlane.embeddings.calibration import Calibration, Calibrations, knots

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "calibration_pairs.jsonl"
#: the quantiles matched: dense where thresholds live (the related tail)
QUANTILES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.998,
             0.999, 1.0)


def english_rows(path: Path = CORPUS) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if all(r[k].isascii() for k in ("memory", "question", "paraphrase"))]


def unit(matrix) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def cosines(embedder, rows: list[dict]) -> dict[str, np.ndarray]:
    """The model's cosines of the two kinds over ``rows``: (questions x memories), (stored x stored, i < j)."""
    stored = unit(embedder.embed([r["memory"] for r in rows] + [r["paraphrase"] for r in rows], "document"))
    questions = unit(embedder.embed([r["question"] for r in rows], "query"))
    pairs = stored @ stored.T
    upper = np.triu_indices(len(stored), 1)
    return {"query": (questions @ stored[:len(rows)].T).ravel(), "document": pairs[upper]}


def fit(model: dict[str, np.ndarray], reference: dict[str, np.ndarray]) -> Calibrations:
    maps = {kind: knots(np.quantile(model[kind], QUANTILES), np.quantile(reference[kind], QUANTILES))
            for kind in ("query", "document")}
    return Calibrations(**maps)


def as_python(calibrations: Calibrations) -> str:
    def one(c: Calibration) -> str:
        return f"Calibration(raw={c.raw!r},\n                common={c.common!r})"

    return f"Calibrations(\n    query={one(calibrations.query)},\n    document={one(calibrations.document)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="multilingual-e5-small,multilingual-e5-small:raw,use-multilingual",
                        help="providers; ':raw' is e5 without language centres")
    options = parser.parse_args()
    rows = english_rows()
    reference = cosines(create_embedder(ProviderSpec(provider="local")), rows)
    for name in options.models.split(","):
        provider, _, variant = name.partition(":")
        embedder = create_embedder(ProviderSpec(provider=provider, config={"centre": False} if variant == "raw" else {}))
        print(f"# {embedder.name}: {len(rows)} English rows of {CORPUS.name}", file=sys.stderr)
        print(f"{name} = {as_python(fit(cosines(embedder, rows), reference))}")


if __name__ == "__main__":
    main()
