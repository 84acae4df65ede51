"""Keyword search on SQLite (issue 6 parity, issue 4 speed): scope-local BM25 (``store/bm25.py``,
the store's ``keyword_search``) against the FTS5 ``bm25()`` statement it replaced, in one run.

Per size in ``--sizes``, a fresh SQLite store holds memories over ``--users`` users (every tenth
also belongs to the agent ``helper``), with templated sentences from a small vocabulary (so query
terms are common: a hard case for gathering term frequencies) and random unit vectors. For each
scope (one user; the agent, 10 % of the store; everyone, as an admin search) the same queries run
through both ways, interleaved, alternating which goes first. Both return the best ``--limit``
(record, score, cosine) as ``Memory.search`` asks for them (limit = ``retrieval.candidates``).
The new way runs twice: warm (the scope's N and avgdl cached, as for any search of a scope
since the last write) and cold (the cache emptied first, as for the first search after a write).

    python benchmarks/bench_keyword.py [--sizes 10000,100000] [--users 1000] [--queries 200] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane.core import filters as flt  # noqa: E402
from memlane.text import keywords
from memlane.core import scope, vectors  # noqa: E402
from memlane.core.models import MemoryRecord  # noqa: E402
from memlane.store import ChangeSet  # noqa: E402
from memlane.store.sqlite import _COMPILER, SQLiteStore, match_expression  # noqa: E402
from memlane.core.timeutil import now_iso  # noqa: E402
from common import MEMORY_QUERIES as QUERIES, MEMORY_TEMPLATES as TEMPLATES  # noqa: E402
from common import pct, sentence, summary, unit_vectors, write_report  # noqa: E402

ACTIVE = flt.Compare(flt.Field(column="valid_to"), "eq", None)  # what Memory.search adds


def fts5_bm25(store: SQLiteStore, query: str, vector: np.ndarray, where: flt.Node, limit: int) -> list[tuple]:
    """The SQLite keyword search before the shared BM25 rule (FTS5's bm25(), file-wide statistics)."""
    expression = match_expression(keywords.query_terms(query), flt.scope_ids(where))
    if expression is None:
        return []
    sql, params = _COMPILER.compile(where)
    with store._snapshot() as con:
        rows = con.execute(
            "SELECT m.rowid, -bm25(memories_fts), m.vector FROM memories_fts JOIN memories m"
            f" ON m.rowid = memories_fts.rowid WHERE memories_fts MATCH ? AND {sql}"
            " ORDER BY bm25(memories_fts) LIMIT ?",
            (expression, *params, limit),
        ).fetchall()
        if not rows:
            return []
        records = store._records_by_rowid(con, [r[0] for r in rows])
    cosines = vectors.from_blobs([r[2] for r in rows], store._dims(), store.dtype) @ vector
    return [(records[r[0]], float(r[1]), float(c)) for r, c in zip(rows, cosines) if r[0] in records]


def fill(store: SQLiteStore, size: int, users: int, rng: random.Random) -> float:
    nprng = np.random.default_rng(7)
    started = time.perf_counter()
    now = now_iso()
    for start in range(0, size, 5000):
        count = min(5000, size - start)
        matrix = unit_vectors(nprng, count)
        store.apply(ChangeSet(inserts=[
            MemoryRecord(id=str(uuid.uuid4()), text=sentence(rng, TEMPLATES), hash="", created_at=now, updated_at=now,
                         user_id=f"user{(start + i) % users}", agent_id="helper" if (start + i) % 10 == 0 else None,
                         vector=matrix[i])
            for i in range(count)]))
    return time.perf_counter() - started


def run_size(size: int, users: int, queries: int, limit: int, rng: random.Random) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(Path(tmp) / "bench.db")
        store.bind_embedder("bench", 384)
        fill_s = fill(store, size, users, rng)
        nprng = np.random.default_rng(3)
        scopes = {
            "user": lambda: scope.scoped_filter({"user_id": f"user{rng.randrange(users)}"}, None),
            "agent_10pct": lambda: scope.scoped_filter({"agent_id": "helper"}, None),
            "everyone": lambda: scope.scoped_filter({}, {"user_id": "*"}),
        }
        out = {"fill_s": round(fill_s, 1)}
        for name, make_where in scopes.items():
            timings: dict[str, list[float]] = {"fts5_bm25_before": [], "shared_bm25_after": [],
                                               "shared_bm25_after_cold": []}
            matches = []
            for n in range(queries + 10):  # the first 10 warm the page cache
                query = sentence(rng, QUERIES)
                vector = nprng.standard_normal(384).astype(np.float32)
                vector /= np.linalg.norm(vector)
                where = flt.conjoin(make_where(), ACTIVE)
                ways = [("fts5_bm25_before", fts5_bm25), ("shared_bm25_after", store.keyword_search),
                        ("shared_bm25_after_cold", store.keyword_search)]
                for label, way in ways if n % 2 else reversed(ways):
                    if label.endswith("_cold"):  # as the first search after a write: statistics not cached
                        store._keyword_stats.clear()
                    t0 = time.perf_counter()
                    hits = way(store, query, vector, where, limit) if way is fts5_bm25 else way(query, vector, where, limit)
                    elapsed = (time.perf_counter() - t0) * 1000
                    if n >= 10:
                        timings[label].append(elapsed)
                if n >= 10:
                    matches.append(len(hits))
            before, after = timings["fts5_bm25_before"], timings["shared_bm25_after"]
            out[name] = {
                "scope_memories": store.count(flt.conjoin(make_where(), ACTIVE)) if name != "user" else size // users,
                "hits_returned_p50": pct(matches, 0.5),
                **{label: summary(values) for label, values in timings.items()},
                "after_over_before_p50": round(pct(after, 0.5) / pct(before, 0.5), 2),
                "after_over_before_p95": round(pct(after, 0.95) / pct(before, 0.95), 2),
                "cold_over_before_p50": round(pct(timings["shared_bm25_after_cold"], 0.5) / pct(before, 0.5), 2),
                "cold_over_before_p95": round(pct(timings["shared_bm25_after_cold"], 0.95) / pct(before, 0.95), 2),
            }
            print(f"size {size} {name}: {out[name]}", file=sys.stderr)
        store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--out")
    args = parser.parse_args()
    rng = random.Random(11)
    load_before = os.getloadavg()
    results = {int(size): run_size(int(size), args.users, args.queries, args.limit, rng)
               for size in args.sizes.split(",")}
    write_report({
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_before": load_before, "load_after": os.getloadavg()},
        "users": args.users, "queries": args.queries, "limit": args.limit, "sizes": results,
    }, args.out)


if __name__ == "__main__":
    main()
