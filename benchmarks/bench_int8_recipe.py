#!/usr/bin/env python
"""Which int8 recipe for the local model (``quantize: int8``): cosine to fp32 and speed of candidate
dynamic-quantisation recipes, on ordinary sentences (no evaluation data).

The sample: the prose sentences of docs/*.md (6-60 words) and memory-like sentences and questions from
``common.py``. Both kinds of vectors the product uses are compared with fp32: sentence vectors (vector
search) and token vectors (the MaxSim reranker of ``rerank`` / full mode). ``--rank`` quantises one
weight MatMul at a time and ranks them by the mean cosine they cost alone (sentence + token); the
ladder then keeps the k most costly in fp32 (k in ``--ladder``). Each candidate is reported with its
file size, mean / min / 1st-percentile cosines to fp32, and its single-query and batch-64 p50 against
fp32 (interleaved rounds, like bench_embedder.py).
LoCoMo recall is the check of the chosen recipe (``bench_embedder.py --runtimes onnx,onnx_int8
--locomo ...``), not an input to the choice.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_int8_recipe.py --rank --rounds 5 --out benchmarks/last_int8.json
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MEMORY_QUERIES, MEMORY_TEMPLATES, sentence, write_report  # noqa: E402

from memlane.core.config import model_cache  # noqa: E402
from memlane.embeddings.local import DEFAULT_MODEL_NAME, default_model_dir  # noqa: E402
from memlane.embeddings.model_dir import onnx_plan  # noqa: E402
from memlane.embeddings.onnx_export import INT8, Int8Recipe, model_bytes, quantize_int8  # noqa: E402
from memlane.embeddings.runtime_onnx import OnnxRuntime  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs"


def sample_texts(seed: int = 3, prose: int = 300) -> list[str]:
    sentences = []
    for file in sorted(DOCS.glob("*.md")):
        body = re.sub(r"\s+", " ", re.sub(r"```.*?```", " ", file.read_text(encoding="utf-8"), flags=re.S))
        for text in re.split(r"(?<=[.!?])\s+", body):
            if 6 <= len(text.split()) <= 60 and "|" not in text and sum(c.isalpha() for c in text) > 0.7 * len(text):
                sentences.append(text)
    rng = random.Random(seed)
    rng.shuffle(sentences)
    return (sentences[:prose] + [sentence(rng, MEMORY_TEMPLATES) for _ in range(60)]
            + [sentence(rng, MEMORY_QUERIES) for _ in range(40)])


def weight_matmuls(graph: bytes) -> list[str]:
    import onnx

    model = onnx.load_from_string(graph)
    weights = {t.name for t in model.graph.initializer}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights]


def vectors(runtime: OnnxRuntime, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Sentence vectors, and every token vector but [CLS] and [SEP] (what the MaxSim reranker compares)
    normalised, all texts' rows in one matrix."""
    outputs = runtime.outputs(texts, 64)
    tokens = np.concatenate([o.tokens[1:-1] for o in outputs])
    return np.stack([o.sentence for o in outputs]), tokens / np.linalg.norm(tokens, axis=1, keepdims=True)


def cosine(reference: tuple[np.ndarray, np.ndarray], candidate: tuple[np.ndarray, np.ndarray]) -> dict:
    """Cosine to fp32 of the sentence vectors (mean, min, 1st percentile) and of the token vectors."""
    result = {}
    for kind, a, b in (("sentence", reference[0], candidate[0]), ("token", reference[1], candidate[1])):
        values = (a * b).sum(1)
        result[kind] = {"mean": round(float(values.mean()), 5), "min": round(float(values.min()), 5),
                        "p1": round(float(np.quantile(values, 0.01)), 5)}
    return result


def loss(figures: dict) -> float:
    """What a recipe costs: the mean cosine lost by sentence vectors plus that lost by token vectors."""
    return (1 - figures["sentence"]["mean"]) + (1 - figures["token"]["mean"])


def speed(runtimes: dict[str, OnnxRuntime], texts: list[str], rounds: int) -> dict:
    queries, batches = texts[-30:], [texts[i:i + 64] for i in range(0, 192, 64)]
    single: dict[str, list[float]] = {name: [] for name in runtimes}
    batch: dict[str, list[float]] = {name: [] for name in runtimes}
    for _ in range(rounds):
        for name, runtime in runtimes.items():
            for calls, into in (([[q] for q in queries], single), (batches, batch)):
                times = []
                for texts_of_call in calls:
                    started = time.perf_counter()
                    runtime.sentences(texts_of_call, 64)
                    times.append(time.perf_counter() - started)
                into[name].append(statistics.median(times) * 1000)
    result = {}
    for name in runtimes:
        s, b = statistics.median(single[name]), statistics.median(batch[name])
        result[name] = {"single_p50_ms": round(s, 3), "batch64_p50_ms": round(b, 1),
                        "single_ratio_to_fp32": round(s / statistics.median(single["fp32"]), 3),
                        "batch_throughput_ratio_to_fp32": round(statistics.median(batch["fp32"]) / b, 2)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rank", action="store_true", help="rank the weight MatMuls (one quantisation per node)")
    parser.add_argument("--ladder", default="1,2,3,4,5,8", help="with --rank: keep the k most costly in fp32")
    parser.add_argument("--rounds", type=int, default=5, help="speed rounds (0: no speed figures)")
    parser.add_argument("--out")
    options = parser.parse_args()

    path = default_model_dir()
    plan = onnx_plan(path)
    fp32 = model_bytes(path, DEFAULT_MODEL_NAME, model_cache(), "fp32")
    texts = sample_texts()
    reference = vectors(OnnxRuntime(fp32, plan, None, origin=path), texts)
    report: dict = {"cpus": os.cpu_count(), "load_avg_start": os.getloadavg(), "texts": len(texts),
                    "current_recipe": {"tag": INT8.tag, "keep_fp32": list(INT8.keep_fp32)}}

    candidates = {"all MatMul and Gather (the first recipe)": Int8Recipe(op_types=("MatMul", "Gather")),
                  "all MatMul": Int8Recipe(), "current": INT8}
    if options.rank:
        nodes = weight_matmuls(fp32)
        alone = {}
        for node in nodes:
            graph = quantize_int8(fp32, Int8Recipe(keep_fp32=tuple(n for n in nodes if n != node)))
            alone[node] = cosine(reference, vectors(OnnxRuntime(graph, plan, None, origin=path), texts))
            print(node, alone[node], file=sys.stderr, flush=True)
        ranked = sorted(nodes, key=lambda n: -loss(alone[n]))
        report["loss_of_each_node_alone"] = {n: {"sentence": round(1 - alone[n]["sentence"]["mean"], 5),
                                                 "token": round(1 - alone[n]["token"]["mean"], 5)} for n in ranked}
        for k in (int(k) for k in options.ladder.split(",") if k):
            candidates[f"keep the {k} most costly in fp32"] = Int8Recipe(keep_fp32=tuple(ranked[:k]))

    runtimes = {"fp32": OnnxRuntime(fp32, plan, None, origin=path)}
    report["candidates"] = {}
    for name, recipe in candidates.items():
        graph = quantize_int8(fp32, recipe)
        runtimes[name] = OnnxRuntime(graph, plan, None, origin=path)
        report["candidates"][name] = {"tag": recipe.tag, "MB": round(len(graph) / 1e6, 1),
                                      **cosine(reference, vectors(runtimes[name], texts))}
        print(name, report["candidates"][name], file=sys.stderr, flush=True)
    if options.rounds:
        report["speed"] = speed(runtimes, texts, options.rounds)
    report["load_avg_end"] = os.getloadavg()
    write_report(report, options.out)


if __name__ == "__main__":
    main()
