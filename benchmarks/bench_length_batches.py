#!/usr/bin/env python
"""Batches of similar token length (``embeddings/length_batches.py``) against the batching before them
(texts sorted longest first, cut every ``batch_size``: each cut padded to its longest), in one process.

For each model (all-MiniLM-L6-v2 and multilingual-e5-small, the two local ONNX models) and each kind of
text, the two batchings run in alternating blocks (ABBA), each block ``--batches`` calls of 64 stored
texts, so the machine's load falls on both alike; the figure is the median over blocks of the
throughput ratio of neighbouring blocks. ``plain`` texts are one templated sentence each; ``mixed`` one
to eight (token lengths about 12 to 120, as messages stored with their context are). Also reported:
the share of padded tokens each batching runs, and the cosine of every vector to the text embedded alone.
The batching before is ``length_batches`` without a padding limit (``--before-padding``); ``--max-padding``
tries another limit than memlane's.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_length_batches.py --blocks 6 \\
        --out benchmarks/last_length_batches.json
"""

from __future__ import annotations

import argparse
import functools
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MEMORY_TEMPLATES, sentence, write_report  # noqa: E402

from memlane.embeddings import e5 as e5_module, length_batches as lb, runtime_onnx  # noqa: E402
from memlane.embeddings.e5 import E5Embedder  # noqa: E402
from memlane.embeddings.local import LocalEmbedder  # noqa: E402

MODULES = (e5_module, runtime_onnx)


def use(batching) -> None:
    for module in MODULES:
        module.length_batches = batching


class Padding:
    """Counts the real and padded tokens a session runs."""

    def __init__(self, session):
        self.session, self.real, self.padded = session, 0, 0

    def run(self, names, feed):
        mask = feed["mask"]
        self.real += int(mask.sum())
        self.padded += mask.size
        return self.session.run(names, feed)


def texts(kind: str, n: int, rng: random.Random) -> list[str]:
    count = (lambda: rng.randint(1, 8)) if kind == "mixed" else (lambda: 1)
    return [" ".join(sentence(rng, MEMORY_TEMPLATES) for _ in range(count())) for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=6, help="blocks per batching (alternating ABBA)")
    parser.add_argument("--batches", type=int, default=2, help="calls of 64 texts per block")
    parser.add_argument("--kinds", default="plain,mixed")
    parser.add_argument("--models", default="minilm,e5")
    parser.add_argument("--max-padding", type=float, default=lb.MAX_PADDING,
                        help="the 'after' side's max_padding (to tune it; default: memlane's)")
    parser.add_argument("--before-padding", type=float, default=float("inf"),
                        help="the 'before' side's max_padding (default: none, the batching before)")
    parser.add_argument("--out")
    options = parser.parse_args()
    makers = {"minilm": LocalEmbedder, "e5": E5Embedder}
    models = {name: makers[name]() for name in options.models.split(",")}
    runtimes = {name: m._model()[0] if name == "minilm" else m._model().runtime for name, m in models.items()}
    rng = random.Random(7)
    report: dict = {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg(), "blocks": options.blocks,
                    "texts_per_block": 64 * options.batches}
    sides = {"before": functools.partial(lb.length_batches, max_padding=options.before_padding),
             "after": functools.partial(lb.length_batches, max_padding=options.max_padding)}
    report["max_padding"] = {"before": options.before_padding, "after": options.max_padding}
    for kind in options.kinds.split(","):
        data = texts(kind, 64 * options.batches * 2 * options.blocks, rng)
        for name, model in models.items():
            runtime = runtimes[name]
            alone = np.stack([np.asarray(model.embed([t], "document"))[0] for t in data[:64]])
            figures: dict = {}
            for side, batching in sides.items():  # padding and numbers, once
                use(batching)
                counter = Padding(runtime.session)
                runtime.session = counter
                try:
                    vectors = np.asarray(model.embed(data[:64], "document"))
                finally:
                    runtime.session = counter.session
                figures[side] = {"padded_share": round(1 - counter.real / counter.padded, 3),
                                 "cosine_to_alone_min": round(float((vectors * alone).sum(1).min()), 6)}
            rates: dict[str, list[float]] = {side: [] for side in sides}
            block = 64 * options.batches
            for b in range(2 * options.blocks):
                side = ("before", "after", "after", "before")[b % 4]  # ABBA
                use(sides[side])
                chunk = data[b * block:(b + 1) * block]
                started = time.perf_counter()
                for i in range(0, block, 64):
                    model.embed(chunk[i:i + 64], "document")
                rates[side].append(block / (time.perf_counter() - started))
            use(lb.length_batches)
            for side in sides:
                figures[side]["texts_per_s_median"] = round(statistics.median(rates[side]), 1)
                figures[side]["texts_per_s_blocks"] = [round(r, 1) for r in rates[side]]
            figures["after_over_before_median_of_block_pairs"] = round(
                statistics.median(a / b for a, b in zip(rates["after"], rates["before"])), 3)
            report[f"{kind}/{name}"] = figures
            print(kind, name, figures, file=sys.stderr, flush=True)
    report["load_avg_end"] = os.getloadavg()
    write_report(report, options.out)


if __name__ == "__main__":
    main()
