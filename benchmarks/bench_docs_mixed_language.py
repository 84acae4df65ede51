"""Which encoder a collection holding English and Chinese pages should get (docs/documents.md, "Which
encoder a collection uses"): Cranfield's abstracts and the Chinese pages of ``tests/data/documents_zh.jsonl``
in one collection, searched by exact MaxSim with each of the two encoders of the automatic choice
(all-MiniLM-L6-v2's and multilingual-e5-small's token vectors, the product's settings).

Reports, per encoder: Cranfield nDCG@10 and R@100 of the English dev queries over the mixed pages, and
hit@1 / hit@3 of the Chinese questions over the same pages; and for reference the same two figures of
each language's pages alone (what the automatic choice gives a collection of one language).

    HF_HUB_OFFLINE=1 python benchmarks/bench_docs_mixed_language.py \\
        --docs ../shared/eval/cranfield/cranfield_docs.jsonl \\
        --queries ../shared/eval/cranfield/cranfield_queries_dev.jsonl [--out report.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from common import write_report

from memlane.core.config import DocumentsConfig
from memlane.documents.facade import choose_encoders
from memlane.documents.late_interaction import PageIndex
from memlane.evaluation import docs as evaluation

CHINESE = Path(__file__).parents[1] / "tests" / "data" / "documents_zh.jsonl"


def measure(kind: str, docs: list[dict], queries: list[dict], chinese: list[dict]) -> dict:
    encoder = choose_encoders(DocumentsConfig()).of_kind(kind)  # type: ignore[arg-type]
    english_pages = evaluation._batched(encoder.encode_pages, [d["text"] for d in docs], kind, None)
    chinese_pages = encoder.encode_pages([c["text"] for c in chinese])
    judged = [(q, g) for q in queries if (g := evaluation.gains(q, {int(d["doc_id"]) for d in docs}))]
    english_queries = encoder.encode_queries([q["text"] for q, _ in judged])
    questions = [(question, c["name"]) for c in chinese for question in c["queries"]]
    chinese_queries = encoder.encode_queries([q for q, _ in questions])
    out = {"encoder": encoder.name}
    for label, with_english, with_chinese in (("mixed", True, True), ("english_only", True, False),
                                              ("chinese_only", False, True)):
        index = PageIndex(encoder.dims)
        if with_english:
            index.add([f"en:{d['doc_id']}" for d in docs], english_pages)
        if with_chinese:
            index.add([f"zh:{c['name']}" for c in chinese], chinese_pages)
        row: dict = {}
        if with_english:
            ndcg, recall = [], []
            for (query, gain), vectors in zip(judged, english_queries):
                found = [int(k[3:]) if k.startswith("en:") else -1
                         for k, _ in index.search(vectors, evaluation.RECALL_K, exact=True)]
                ndcg.append(evaluation.ndcg(found, gain))
                recall.append(evaluation.recall(found, set(gain)))
            row.update({"cranfield_nDCG@10": round(statistics.mean(ndcg), 4),
                        "cranfield_R@100": round(statistics.mean(recall), 4)})
        if with_chinese:
            firsts = [[k for k, _ in index.search(vectors, 3, exact=True)] for vectors in chinese_queries]
            row.update({"chinese_hit@1": round(float(statistics.mean(f[:1] == [f"zh:{n}"] for f, (_, n) in
                                                               zip(firsts, questions))), 4),
                        "chinese_hit@3": round(float(statistics.mean(f"zh:{n}" in f for f, (_, n) in
                                                               zip(firsts, questions))), 4)})
        out[label] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--limit", type=int, default=None, help="only the first N Cranfield documents")
    parser.add_argument("--out")
    args = parser.parse_args()
    docs = [d for d in evaluation.load_jsonl(args.docs)[:args.limit] if d["text"].strip()]
    queries = evaluation.load_jsonl(args.queries)
    chinese = [json.loads(line) for line in CHINESE.read_text(encoding="utf-8").splitlines() if line.strip()]
    write_report({"docs": len(docs), "chinese_pages": len(chinese),
                  "encoders": {kind: measure(kind, docs, queries, chinese) for kind in ("english", "multilingual")}},
                 args.out)


if __name__ == "__main__":
    main()
