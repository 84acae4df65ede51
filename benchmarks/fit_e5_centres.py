#!/usr/bin/env python
"""Fit the language centres of multilingual-e5-small (``src/memlane/data/e5_centres.npz``).

e5 places every text near a common direction that differs by language: unrelated English sentences
have a cosine near 0.75 with each other, unrelated Chinese ones near 0.83, and a Chinese question is
closer to any Chinese memory than to the English memory it asks about. memlane subtracts, before
normalising, the centre of the text's language and role (``embeddings/e5.py``):

- English (every text without Chinese characters), per role: the mean of the model's unit vectors of
  memory-like statements and their paraphrases (``tests/data/calibration_pairs.jsonl``) averaged with
  the mean over the turns (passages) and questions (queries) of the LoCoMo development conversations
  (``../shared/eval/locomo/locomo_dev.json``: conversation, not document, style);
- Chinese: the English centre plus the mean difference between the Chinese and the English side of
  parallel sentences (``tests/data/parallel_en_zh.jsonl``, written for memlane; the Chinese as Simplified,
  which is what the model is given: Traditional text is converted first).

benchmarks/history/multilingual.md records what it changed (a mixed English/Chinese pool: a Chinese
question finds the English memory it asks about in the top 3 for 67 % of questions instead of 0 %;
LoCoMo vector recall with centres fitted without the conversation measured: 54.4 against 54.8).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/fit_e5_centres.py [--locomo ../shared/eval/locomo/locomo_dev.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

from memlane.embeddings.e5 import CENTRES_FILE, E5Embedder, E5EmbedderConfig
from memlane.text.normalize import to_simplified

ROOT = Path(__file__).resolve().parents[1]
CALIBRATION = ROOT / "tests" / "data" / "calibration_pairs.jsonl"
PARALLEL = ROOT / "tests" / "data" / "parallel_en_zh.jsonl"


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def mean_unit(embedder: E5Embedder, texts: list[str], purpose: str) -> np.ndarray:
    vectors = np.asarray(embedder.embed(texts, purpose), dtype=np.float64)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).mean(axis=0)


def locomo_texts(path: Path) -> tuple[list[str], list[str]]:
    from memlane.evaluation.locomo import load, turns

    passages, questions = [], []
    for sample in load(path):
        passages += [t["text"] for t in turns(sample["conversation"])]
        questions += [qa["question"] for qa in sample["qa"]]
    return passages, questions


def fit(locomo: Path | None) -> dict[str, np.ndarray]:
    raw = E5Embedder(E5EmbedderConfig(centre=False))
    calibration = [r for r in rows(CALIBRATION) if all(r[k].isascii() for k in ("memory", "paraphrase", "question"))]
    english = {"document": [mean_unit(raw, [r["memory"] for r in calibration] + [r["paraphrase"] for r in calibration],
                                      "document")],
               "query": [mean_unit(raw, [r["question"] for r in calibration], "query")]}
    if locomo is not None:
        passages, questions = locomo_texts(locomo)
        english["document"].append(mean_unit(raw, passages, "document"))
        english["query"].append(mean_unit(raw, questions, "query"))
    parallel = rows(PARALLEL)
    centres = {}
    for purpose, kind in (("document", "statement"), ("query", "question")):
        pairs = [p for p in parallel if p["kind"] == kind]
        offset = (mean_unit(raw, [to_simplified(p["zh"]) for p in pairs], purpose)
                  - mean_unit(raw, [p["en"] for p in pairs], purpose))
        centres[f"en_{purpose}"] = np.mean(english[purpose], axis=0)
        centres[f"zh_{purpose}"] = centres[f"en_{purpose}"] + offset
    return {k: v.astype(np.float32) for k, v in centres.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=ROOT.parent / "shared" / "eval" / "locomo" / "locomo_dev.json")
    parser.add_argument("--out", type=Path, default=CENTRES_FILE)
    options = parser.parse_args()
    locomo = options.locomo if options.locomo.is_file() else None
    centres = fit(locomo)
    sources = [CALIBRATION.name, PARALLEL.name] + ([options.locomo.name] if locomo else [])
    np.savez(options.out, **centres, sources=np.array(sources))
    digest = hashlib.sha256(b"".join(centres[k].tobytes() for k in sorted(centres))).hexdigest()[:8]
    print(json.dumps({"written": str(options.out), "sources": sources, "checksum": digest,
                      "norms": {k: round(float(np.linalg.norm(v)), 4) for k, v in centres.items()}}, indent=2))


if __name__ == "__main__":
    main()
