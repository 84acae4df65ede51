#!/usr/bin/env python
"""The local model's runtimes against each other, in one run (issue 18 item 1): sentence-transformers
on torch, ONNX Runtime fp32 (the default) and ONNX Runtime int8 (``quantize: int8``).

The first of ``--runtimes`` is the reference (default torch; ``--runtimes onnx,onnx_int8`` compares int8
with fp32 alone). Speed, interleaved round by round so that the machine's noise falls on every runtime
alike: single-query encode p50 (``--queries`` one-text calls) and batch-64 encode p50 (as texts/s).
Reported as ratios to the reference. Quality: the cosine of each runtime's sentence vectors to the
reference's on the same texts. With ``--locomo FILE``, LoCoMo evidence recall in every mode (vector,
hybrid, full) per runtime, each from one insertion (``memlane.evaluation.locomo.run_modes``).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_embedder.py --rounds 5 --out benchmarks/last_embedder.json
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_embedder.py --rounds 0 --runtimes onnx,onnx_int8 \\
        --locomo ../shared/eval/locomo/locomo_dev.json --out benchmarks/last_embedder_locomo.json
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MEMORY_QUERIES, MEMORY_TEMPLATES, sentence, write_report  # noqa: E402

from memlane.embeddings.local import LocalEmbedder  # noqa: E402

RUNTIMES = {"torch": {"runtime": "torch"}, "onnx": {"runtime": "onnx"}, "onnx_int8": {"quantize": "int8"}}


def median_ms(embedder: LocalEmbedder, batches: list[list[str]]) -> float:
    times = []
    for batch in batches:
        started = time.perf_counter()
        embedder.embed(batch, "query")
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def speed(embedders: dict[str, LocalEmbedder], rounds: int, n_queries: int, reference: str) -> dict:
    rng = random.Random(7)
    queries = [sentence(rng, MEMORY_QUERIES) for _ in range(n_queries)]
    documents = [sentence(rng, MEMORY_TEMPLATES) for _ in range(192)]
    batches = [documents[i:i + 64] for i in range(0, len(documents), 64)]
    single: dict[str, list[float]] = {name: [] for name in embedders}
    batch: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(rounds):
        for name, embedder in embedders.items():
            single[name].append(median_ms(embedder, [[q] for q in queries]))
            batch[name].append(median_ms(embedder, batches))
    single_p50 = {name: round(statistics.median(v), 3) for name, v in single.items()}
    batch_p50 = {name: round(statistics.median(v), 2) for name, v in batch.items()}
    return {
        "single_query_p50_ms": single_p50,
        "batch64_p50_ms": batch_p50,
        "batch64_texts_per_s": {name: round(64_000 / ms, 1) for name, ms in batch_p50.items()},
        "single_p50_ratio_to_reference": {name: round(ms / single_p50[reference], 3)
                                          for name, ms in single_p50.items()},
        "batch64_throughput_ratio_to_reference": {name: round(batch_p50[reference] / ms, 2)
                                                  for name, ms in batch_p50.items()},
        # the same ratios per round (each round times every runtime within seconds): their median shrugs off
        # a burst of load that hit one round
        "single_p50_ratio_to_reference_median_of_rounds": {
            name: round(statistics.median(a / b for a, b in zip(v, single[reference])), 3)
            for name, v in single.items()},
        "batch64_throughput_ratio_to_reference_median_of_rounds": {
            name: round(statistics.median(b / a for a, b in zip(v, batch[reference])), 2) for name, v in batch.items()},
        "per_round_single_ms": {name: [round(x, 3) for x in v] for name, v in single.items()},
        "per_round_batch64_ms": {name: [round(x, 2) for x in v] for name, v in batch.items()},
    }


def cosines(embedders: dict[str, LocalEmbedder], reference: str) -> dict:
    rng = random.Random(11)
    texts = [sentence(rng, MEMORY_TEMPLATES) for _ in range(200)] + [sentence(rng, MEMORY_QUERIES) for _ in range(56)]
    vectors = np.asarray(embedders[reference].embed(texts, "document"))
    result = {}
    for name, embedder in embedders.items():
        if name != reference:
            cos = (np.asarray(embedder.embed(texts, "document")) * vectors).sum(1)
            result[name] = {"min": float(cos.min()), "mean": float(cos.mean())}
    return result


def locomo(path: Path, names: list[str]) -> dict:
    from memlane import Memory
    from memlane.core.config import load
    from memlane.evaluation import locomo as evaluation

    data = evaluation.load(path)
    figures = {}
    for name in names:
        settings = load({"embedder": {"provider": "local", "config": RUNTIMES[name]}})
        with tempfile.TemporaryDirectory() as tmp:
            settings.vector_store.config = {"path": str(Path(tmp) / "eval.db")}
            started = time.perf_counter()
            with Memory(settings) as memory:
                reports = evaluation.run_modes(memory, data, ks=(1, 5, 10), modes=("vector", "hybrid", "full"))
        figures[name] = {"seconds": round(time.perf_counter() - started, 1),
                         **{mode: report["overall_1_4"] for mode, report in reports.items()}}
        print(name, figures[name], file=sys.stderr, flush=True)
    reference = names[0]
    figures["r10_difference_to_reference"] = {
        name: {mode: round(figures[name][mode]["R@10"] - figures[reference][mode]["R@10"], 1)
               for mode in ("vector", "hybrid", "full")} for name in names[1:]}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="speed rounds (0: no speed figures)")
    parser.add_argument("--queries", type=int, default=50, help="single-query calls per round and runtime")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES),
                        help=f"among {', '.join(RUNTIMES)}; the first is the reference")
    parser.add_argument("--locomo", type=Path, help="LoCoMo conversations: recall in every mode per runtime")
    parser.add_argument("--out")
    options = parser.parse_args()
    names = [n for n in options.runtimes.split(",") if n]
    if not names or names[0] not in ("torch", "onnx") or set(names) - set(RUNTIMES) or len(set(names)) < len(names):
        parser.error(f"--runtimes: the reference (torch or onnx) first, then any of {', '.join(RUNTIMES)}")
    embedders = {name: LocalEmbedder(**RUNTIMES[name]) for name in names}
    for embedder in embedders.values():
        embedder.embed(["warming up"], "query")  # loads (and on first use exports) every model
    report: dict = {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg(), "reference": names[0],
                    "embedders": {name: embedder.name for name, embedder in embedders.items()}}
    report["cosine_to_reference"] = cosines(embedders, names[0])
    if options.rounds:
        report.update(speed(embedders, options.rounds, options.queries, names[0]))
    if options.locomo:
        report["locomo_overall_1_4"] = locomo(options.locomo, names)
    report["load_avg_end"] = os.getloadavg()
    import onnxruntime

    report["versions"] = {"onnxruntime": onnxruntime.__version__}
    if "torch" in sys.modules:
        report["versions"]["torch"] = sys.modules["torch"].__version__
    write_report(report, options.out)


if __name__ == "__main__":
    main()
