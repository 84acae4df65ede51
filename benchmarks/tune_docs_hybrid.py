"""Hybrid document search on Cranfield (issue 17 item 4): choose the fusion (``documents.fusion``,
``documents.keyword_weight``), then the keyword feedback (``documents.feedback_*``: off, or RM3
pages x terms x query weight from ``--feedback``) on one half of the dev queries, report the
choice on the other half.

The judged dev queries are split by position (even: tuning half, odd: held-out half). Reciprocal
rank fusion (k 60, as memories use it) and weighted fusion at every weight of ``--weights`` are
scored on the tuning half (nDCG@10, exact MaxSim candidates); the best one is
then the feedback settings are scored the same way with that fusion; the best pair is
then reported on both halves and all queries, for MaxSim alone and hybrid, exact and fast path,
all through ``Documents.search`` on one temporary SQLite store (``evaluation.docs.HybridHarness``).

    python benchmarks/tune_docs_hybrid.py [--weights 0.1,0.2,...] [--feedback 3,5,10/10,20/0.4,0.5,0.6] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane.documents.encoders import LocalTokenEncoder  # noqa: E402
from memlane.evaluation import docs as evaluation  # noqa: E402
from common import write_report  # noqa: E402

CRANFIELD = Path(__file__).resolve().parents[2] / "shared" / "eval" / "cranfield"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", default=str(CRANFIELD / "cranfield_docs.jsonl"))
    parser.add_argument("--queries", default=str(CRANFIELD / "cranfield_queries_dev.jsonl"))
    parser.add_argument("--weights", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9")
    parser.add_argument("--feedback", default="3,5,10/10,20/0.4,0.5,0.6",
                        help="feedback pages / terms / query weights to try (comma lists), besides off")
    parser.add_argument("--out")
    args = parser.parse_args()
    weights = [float(w) for w in args.weights.split(",")]
    pages_, terms_, query_weights = ([float(v) for v in part.split(",")] for part in args.feedback.split("/"))
    feedback = [(0, 20, 0.4)] + [(int(p), int(t), w) for p in pages_ for t in terms_ for w in query_weights]
    docs = evaluation.load_jsonl(args.docs)
    ids = {int(d["doc_id"]) for d in docs}
    judged = [(q, g) for q in evaluation.load_jsonl(args.queries) if (g := evaluation.gains(q, ids))]
    halves = {"tuning": judged[0::2], "held_out": judged[1::2], "all": judged}
    encoder = LocalTokenEncoder()
    started = time.perf_counter()
    pages = evaluation._batched(encoder.encode_pages, [d["text"] for d in docs], "pages", None)
    texts = [q["text"] for q, _ in judged]
    queries = dict(zip(texts, encoder.encode_queries(texts)))
    encode_s = time.perf_counter() - started

    with evaluation.HybridHarness(docs, encoder, encoder.embedder, pages, queries) as harness:
        settings = harness.documents.settings

        def mean_ndcg(part: str, *, exact: bool, keyword_search: bool) -> float:
            return round(statistics.fmean(
                evaluation.ndcg(harness.search(q["text"], evaluation.NDCG_K, exact=exact,
                                               keyword_search=keyword_search), g)
                for q, g in halves[part]), 4)

        tuning = {}
        settings.feedback_pages = 0  # the fusion first, on the query's own keywords
        for choice in ["rrf", *weights]:  # reciprocal rank fusion (rrf_k 60, not tuned), weighted by each weight
            settings.fusion = "rrf" if choice == "rrf" else "weighted"
            settings.keyword_weight = 0.5 if choice == "rrf" else choice
            tuning[f"weighted {choice}" if choice != "rrf" else "rrf"] = mean_ndcg("tuning", exact=True,
                                                                                  keyword_search=True)
        best = max(tuning, key=lambda name: tuning[name])
        settings.fusion = "rrf" if best == "rrf" else "weighted"
        settings.keyword_weight = 0.5 if best == "rrf" else float(best.split()[1])
        feedback_tuning = {}
        for choice in feedback:
            settings.feedback_pages, settings.feedback_terms, settings.feedback_query_weight = choice
            feedback_tuning["/".join(map(str, choice)) if choice[0] else "off"] = mean_ndcg(
                "tuning", exact=True, keyword_search=True)
        best_feedback = max(feedback_tuning, key=lambda name: feedback_tuning[name])
        settings.feedback_pages, settings.feedback_terms, settings.feedback_query_weight = \
            feedback[list(feedback_tuning).index(best_feedback)]
        table = {part: {f"{name}_{path}": mean_ndcg(part, exact=path == "exact", keyword_search=name == "hybrid")
                        for name in ("maxsim", "hybrid") for path in ("exact", "fast")}
                 for part in halves}
        latency = _feedback_latency(harness, [q["text"] for q, _ in judged], settings)
    for row in table.values():
        row["hybrid_gain_exact"] = round(row["hybrid_exact"] - row["maxsim_exact"], 4)
        row["fast_minus_exact_hybrid"] = round(row["hybrid_fast"] - row["hybrid_exact"], 4)
    write_report({
        "date": time.strftime("%Y-%m-%d %H:%M"), "docs": len(docs),
        "queries": {part: len(qs) for part, qs in halves.items()}, "encode_s": round(encode_s, 1),
        "pages": harness.pages, "candidates_per_side": settings.keyword_candidates,
        "tuning_half_ndcg10_by_fusion": tuning, "chosen": best,
        "tuning_half_ndcg10_by_feedback": feedback_tuning, "chosen_feedback": best_feedback, "ndcg10": table,
        "hybrid_search_ms_fast_path": latency,
    }, args.out)


def _feedback_latency(harness: evaluation.HybridHarness, texts: list[str], settings) -> dict[str, float]:
    """``Documents.search`` (hybrid, fast path) p50 / p95 in ms with the chosen feedback and without, each
    query run both ways back to back, which one first alternating; and their ratios."""
    chosen, times = settings.feedback_pages, {"off": [], "feedback": []}
    for n, text in enumerate(texts * 2):
        for name in (("off", "feedback") if n % 2 else ("feedback", "off")):
            settings.feedback_pages = chosen if name == "feedback" else 0
            started = time.perf_counter()
            harness.search(text, evaluation.NDCG_K, exact=False)
            times[name].append(1000 * (time.perf_counter() - started))
    settings.feedback_pages = chosen
    out = {}
    for name, ms in times.items():
        ms.sort()
        out[f"{name}_p50"] = round(statistics.median(ms), 2)
        out[f"{name}_p95"] = round(ms[int(0.95 * (len(ms) - 1))], 2)
    out["ratio_p50"] = round(out["feedback_p50"] / out["off_p50"], 2)
    out["ratio_p95"] = round(out["feedback_p95"] / out["off_p95"], 2)
    return out


if __name__ == "__main__":
    main()
