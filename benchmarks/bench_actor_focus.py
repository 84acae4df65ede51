#!/usr/bin/env python
"""Actor focus (issue 17): what the stage costs a search. The LoCoMo dev conversations are stored
once (each turn with its speaker as ``actor_id``, as the eval does); every question is embedded
first (its vector cached), then searched in hybrid mode (limit 10) with ``actor_weight`` 0 and the
default, interleaved question by question so machine load hits both alike. Reports p50 / p95 of
each and their ratio (store work and scoring only; the query's embedding is excluded).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_actor_focus.py [--questions 500] [--file PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from memlane import Memory  # noqa: E402
from memlane.core.config import RetrievalConfig  # noqa: E402
from memlane.evaluation import locomo  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", default="../shared/eval/locomo/locomo_dev.json")
    parser.add_argument("--questions", type=int, default=500)
    args = parser.parse_args()
    default = RetrievalConfig().actor_weight
    with tempfile.TemporaryDirectory() as tmp:
        config = {"vector_store": {"provider": "sqlite", "config": {"path": str(Path(tmp) / "a.db")}}}
        with Memory(config) as memory:
            loaded = locomo.load_conversations(memory, locomo.load(args.file))
            questions = loaded.questions[:args.questions]
            for question in questions:
                memory.embeddings.query(question.text)
            times: dict[float, list[float]] = {0.0: [], default: []}
            for question in questions:
                for weight in times:
                    memory.config.retrieval.actor_weight = weight
                    started = time.perf_counter()
                    memory.search(question.text, user_id=loaded.scopes[question.conversation], limit=10,
                                  keyword_search=True)
                    times[weight].append(time.perf_counter() - started)
    off, on = times[0.0], times[default]
    print(json.dumps({
        "questions": len(questions), "actor_weight": default,
        "off_ms": {"p50": round(percentile(off, 0.5), 2), "p95": round(percentile(off, 0.95), 2)},
        "on_ms": {"p50": round(percentile(on, 0.5), 2), "p95": round(percentile(on, 0.95), 2)},
        "ratio": {"p50": round(percentile(on, 0.5) / percentile(off, 0.5), 2),
                  "p95": round(percentile(on, 0.95) / percentile(off, 0.95), 2)},
        "load_average": os.getloadavg()[0],
    }, indent=1))


if __name__ == "__main__":
    main()
