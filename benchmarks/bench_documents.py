#!/usr/bin/env python
"""Late-interaction search benchmark: the PageIndex fast path against exact MaxSim.

Synthetic collection (``--pages`` pages x about ``--tokens`` token vectors of ``--dims`` dims),
clustered so that the exact top-10 means something: ``--topics`` topic centres; every page mixes
4 topics; a token is its topic's centre plus noise (cosine to the centre about 0.7). A query is
32 tokens drawn the same way from 3 topics of a random page. Vectors are unit length.

Measured, in one run (compare as ratios; absolute times drift on a shared machine):

1. build       ``PageIndex.add`` in batches (float16 tokens + MUVERA encodings), memory footprint
               float32 vs float16 tokens and the encodings
2. search      per query: exact top-10 (brute force over every page) and fast-path top-10;
               recall@10 of the fast path against the exact top-10; p50/p95 latency of both; and
               the floor: one float32 product of the query's vectors with every stored vector (a
               float32 copy made before timing) plus the segmented max, with exact / floor
3. pooling     on the first ``--pool-pages`` pages: token pooling (factor 2) - vectors kept,
               exact top-10 of the pooled index against the unpooled one, exact latency

``--cranfield DIR`` replaces the synthetic pages and queries by the Cranfield abstracts and dev
queries as the default local encoder encodes them (no pooling step).

Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import Noise, loadavg, machine_facts  # noqa: E402

from memlane.documents.late_interaction import PageIndex  # noqa: E402


def log(msg: str) -> None:
    print(f"[bench_documents {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


class Collection:
    def __init__(self, rng: np.random.Generator, dims: int, topics: int, tokens: int, noise: float = 0.75):
        self.rng, self.dims, self.tokens, self.noise = rng, dims, tokens, noise
        self.centres = unit(rng.standard_normal((topics, dims)))
        self.page_topics: list[np.ndarray] = []

    def _draw(self, topics: np.ndarray, n: int) -> np.ndarray:
        noise = self.rng.standard_normal((n, self.dims)).astype(np.float32) / np.sqrt(self.dims)
        return unit(self.centres[self.rng.choice(topics, size=n)] + self.noise * noise)

    def pages(self, n: int) -> list[np.ndarray]:
        out = []
        for _ in range(n):
            mine = self.rng.choice(len(self.centres), size=4, replace=False)
            self.page_topics.append(mine)
            length = int(self.rng.integers(int(self.tokens * 0.75), int(self.tokens * 1.25) + 1))
            out.append(self._draw(mine, length))
        return out

    def query(self, n_tokens: int = 32) -> np.ndarray:
        page = self.page_topics[int(self.rng.integers(len(self.page_topics)))]
        return self._draw(self.rng.choice(page, size=3, replace=False), n_tokens)


def cranfield(directory: Path, queries: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The Cranfield abstracts and the first ``queries`` dev queries as the default local encoder
    (the one ``Documents`` uses) encodes them: real token matrices for the same measurement."""
    import json

    from memlane.documents.encoders import create_encoder

    encoder = create_encoder()
    docs = [json.loads(line) for line in (directory / "cranfield_docs.jsonl").read_text().splitlines() if line]
    texts = [d.get("text") or d.get("title") or "" for d in docs]
    asked = [json.loads(line) for line in (directory / "cranfield_queries_dev.jsonl").read_text().splitlines() if line]
    log(f"encoding {len(texts)} Cranfield pages and {min(queries, len(asked))} queries ({encoder.name})")
    pages = [np.asarray(m, dtype=np.float32) for m in encoder.encode_pages(texts)]
    encoded = [np.asarray(m, dtype=np.float32) for m in encoder.encode_queries(
        [q.get("text") or q.get("query") for q in asked[:queries]])]
    return pages, encoded


def pct(samples: list[float]) -> dict:
    ms = np.array(samples) * 1000
    return {"p50_ms": round(float(np.percentile(ms, 50)), 2), "p95_ms": round(float(np.percentile(ms, 95)), 2),
            "mean_ms": round(float(ms.mean()), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--topics", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--pool-pages", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--cranfield", type=Path, metavar="DIR",
                        help="real pages instead of synthetic ones: the Cranfield abstracts in DIR "
                             "(../shared/eval/cranfield) and its dev queries, encoded by the default local encoder")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    report: dict = {"machine": machine_facts(), "loadavg_start": loadavg(),
                    "args": vars(args) | {"out": str(args.out), "cranfield": str(args.cranfield or "")}}
    data = Collection(rng, args.dims, args.topics, args.tokens)
    real_queries: list[np.ndarray] = []
    if args.cranfield:
        real_pages, real_queries = cranfield(args.cranfield, args.queries)
        args.pages, args.dims, args.pool_pages = len(real_pages), real_pages[0].shape[1], 0
        data.pages = lambda n: [real_pages.pop(0) for _ in range(n)]  # type: ignore[method-assign]

    log(f"building {args.pages} pages")
    index = PageIndex(args.dims)
    add_s = 0.0
    float32_bytes = 0
    ids = []
    with Noise() as noise:
        for start in range(0, args.pages, 1000):
            batch = data.pages(min(1000, args.pages - start))
            batch_ids = [f"p{start + i}" for i in range(len(batch))]
            float32_bytes += sum(p.nbytes for p in batch)
            t0 = time.perf_counter()
            index.add(batch_ids, batch)
            add_s += time.perf_counter() - t0
            ids += batch_ids
    fde = index._encoder.params
    report["build"] = {
        "pages": len(index), "token_vectors": index.n_vectors, "add_seconds": round(add_s, 2),
        "add_ms_per_page": round(add_s * 1000 / len(index), 3),
        "tokens_float32_mib": round(float32_bytes / 2**20, 1),
        "tokens_float16_mib": round(index.n_vectors * args.dims * 2 / 2**20, 1),
        "fde_float32_mib": round(len(index) * fde.size * 4 / 2**20, 1),
        "fde": {"repetitions": fde.repetitions, "simhash_bits": fde.simhash_bits,
                "projection_dims": fde.projection_dims, "dims": fde.size},
        "candidates_for_k": index.candidates(args.k), **noise.result,
    }
    log(f"built: {report['build']}")

    queries = real_queries or [data.query() for _ in range(args.queries)]
    index.search(queries[0], args.k)  # warm-up (first touch of the buffers)
    # the floor: every stored vector already in float32, one product, one segmented max
    all_float32 = np.asarray(index._tokens[: index.n_vectors], dtype=np.float32)
    starts = index._starts[: len(index)].copy()
    # the floor's product goes into one buffer made here: a fresh one per query (256 MB at 10k pages)
    # cost page faults and unmapping that slowed the next query's timed searches (fast path p95 2x)
    floor_buffer = np.empty(len(all_float32) * max(len(q) for q in queries), dtype=np.float32)
    exact_s, fast_s, floor_s, recalls, score_errors = [], [], [], [], []
    with Noise() as noise:
        for n, q in enumerate(queries):
            t0 = time.perf_counter()
            exact = index.search(q, args.k, exact=True)
            t1 = time.perf_counter()
            fast = index.search(q, args.k)
            t2 = time.perf_counter()
            product = floor_buffer[: len(all_float32) * len(q)].reshape(len(all_float32), len(q))
            np.maximum.reduceat(np.matmul(all_float32, q.T, out=product), starts, axis=0).sum(axis=1)
            t3 = time.perf_counter()
            exact_s.append(t1 - t0)
            fast_s.append(t2 - t1)
            floor_s.append(t3 - t2)
            truth = dict(exact)
            recalls.append(len(truth.keys() & {i for i, _ in fast}) / args.k)
            score_errors += [abs(s - truth[i]) for i, s in fast if i in truth]
            if n % 10 == 9:
                log(f"{n + 1} queries, recall so far {np.mean(recalls):.3f}")
    report["search"] = {
        "queries": len(queries), "query_tokens": 32 if not real_queries else "as encoded",
        "recall_at_k_vs_exact": round(float(np.mean(recalls)), 4),
        "min_recall": round(float(np.min(recalls)), 2),
        "max_score_difference_on_shared_pages": float(max(score_errors or [0.0])),
        "exact": pct(exact_s), "fast": pct(fast_s), "floor": pct(floor_s),
        "p95_speedup": round(float(np.percentile(exact_s, 95) / np.percentile(fast_s, 95)), 1),
        "p50_speedup": round(float(np.median(exact_s) / np.median(fast_s)), 1),
        "exact_over_floor_p50": round(float(np.median(exact_s) / np.median(floor_s)), 2),
        **noise.result,
    }
    log(f"search: {report['search']}")

    if args.pool_pages:
        log(f"pooling on {args.pool_pages} pages")
        sub = np.random.default_rng(args.seed + 1)
        pool_data = Collection(sub, args.dims, args.topics, args.tokens)
        pages = pool_data.pages(args.pool_pages)
        pool_ids = [f"p{i}" for i in range(len(pages))]
        plain, pooled = PageIndex(args.dims), PageIndex(args.dims, pool_factor=2)
        plain.add(pool_ids, pages)
        t0 = time.perf_counter()
        pooled.add(pool_ids, pages)
        pool_add = time.perf_counter() - t0
        overlap, t_plain, t_pooled = [], [], []
        with Noise() as noise:
            for _ in range(args.queries):
                q = pool_data.query()
                t0 = time.perf_counter()
                a = {i for i, _ in plain.search(q, args.k, exact=True)}
                t1 = time.perf_counter()
                b = {i for i, _ in pooled.search(q, args.k, exact=True)}
                t2 = time.perf_counter()
                overlap.append(len(a & b) / args.k)
                t_plain.append(t1 - t0)
                t_pooled.append(t2 - t1)
        report["pooling"] = {
            "pages": len(pages), "factor": 2, "vectors_plain": plain.n_vectors, "vectors_pooled": pooled.n_vectors,
            "pooled_add_seconds": round(pool_add, 2),
            "recall_at_k_pooled_exact_vs_plain_exact": round(float(np.mean(overlap)), 4),
            "exact_plain": pct(t_plain), "exact_pooled": pct(t_pooled), **noise.result,
        }
        log(f"pooling: {report['pooling']}")

    report["loadavg_end"] = loadavg()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
