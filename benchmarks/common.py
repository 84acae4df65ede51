"""What the memory benchmarks share: a small synthetic vocabulary of personal facts, percentiles,
and printing/writing the JSON report."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

SUBJECTS = ["running", "cooking", "the cello", "chess", "gardening", "pottery", "sailing", "painting", "hiking",
            "photography", "baking", "yoga", "climbing", "knitting", "cycling", "surfing", "reading", "jazz"]
PLACES = ["Lisbon", "Oslo", "Kyoto", "Denver", "Lima", "Hanoi", "Porto", "Quito", "Tallinn", "Perth", "Cork", "Pune"]
RELATIVES = ["sister", "brother", "wife", "husband", "daughter", "son", "friend", "cousin", "manager", "neighbour"]

#: Memory-like sentences and questions about them (the retrieval and keyword benchmarks).
MEMORY_TEMPLATES = [
    "I spent the weekend {s} with my {p} near {l}",
    "My {p} thinks {s} is the best way to relax",
    "We booked a trip to {l} to try {s} in spring",
    "I have been practising {s} every morning since moving to {l}",
    "My {p} gave me a book about {s} for my birthday",
]
MEMORY_QUERIES = ["What does my {p} like to do?", "When did I go to {l}?", "How often do I practise {s}?",
                  "Who gave me a book about {s}?", "What did we book in {l}?"]


def sentence(rng: random.Random, templates: list[str], people: list[str] = RELATIVES) -> str:
    """One template filled with a subject {s}, a person {p} and a place {l}."""
    return rng.choice(templates).format(s=rng.choice(SUBJECTS), p=rng.choice(people), l=rng.choice(PLACES))


def unit_vectors(nprng: np.random.Generator, n: int, dims: int = 384) -> np.ndarray:
    """``n`` random unit vectors (float32), as stand-ins for embeddings where only speed is measured."""
    v = nprng.standard_normal((n, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": pct(values, 0.5), "p95": pct(values, 0.95), "p99": pct(values, 0.99)}


def write_report(result: dict[str, Any], out: str | Path | None) -> None:
    """Print the report as JSON, and write it to ``out`` when given."""
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if out:
        Path(out).write_text(text + "\n")
