"""``memlane eval docs``: the metrics (table-driven) and the harness on a slice of Cranfield."""

from __future__ import annotations

import json
import math

import pytest

from memlane.evaluation import docs as evaluation
from support.data import dev_eval, needs_dev_eval

CRANFIELD = dev_eval("cranfield")
DOCS, QUERIES = CRANFIELD / "cranfield_docs.jsonl", CRANFIELD / "cranfield_queries_dev.jsonl"

L2 = math.log2


@pytest.mark.parametrize("ranked, gain, k, expected", [
    ([1, 2, 3], {1: 4}, 10, 1.0),
    ([2, 1], {1: 4}, 10, (4 / L2(3)) / 4),
    ([1, 2], {1: 1, 2: 4}, 10, (1 + 4 / L2(3)) / (4 + 1 / L2(3))),
    ([3, 4], {1: 4}, 10, 0.0),
    ([3, 1], {1: 4}, 1, 0.0),  # the cut-off applies
    ([], {1: 4}, 10, 0.0),
    ([1], {}, 10, 0.0),
])
def test_ndcg(ranked, gain, k, expected):
    assert evaluation.ndcg(ranked, gain, k) == pytest.approx(expected)


@pytest.mark.parametrize("ranked, relevant, k, expected", [
    ([1, 2, 3], {1, 3}, 100, 1.0),
    ([1, 2, 3], {1, 3}, 2, 0.5),
    ([2], {1, 3}, 100, 0.0),
    ([1], set(), 100, 0.0),
])
def test_recall(ranked, relevant, k, expected):
    assert evaluation.recall(ranked, relevant, k) == pytest.approx(expected)


def test_gains_follow_the_readme_and_the_loaded_documents():
    query = {"relevant": [{"doc_id": 1, "rel": 1}, {"doc_id": 2, "rel": 4}, {"doc_id": 3, "rel": -1},
                          {"doc_id": 4, "rel": 5}, {"doc_id": 900, "rel": 2}]}
    assert evaluation.gains(query) == {1: 4, 2: 1, 900: 3}
    assert evaluation.gains(query, {1, 2, 3}) == {1: 4, 2: 1}


@pytest.fixture(scope="module")
def slice_report():
    from memlane.documents.encoders import LocalTokenEncoder

    encoder = LocalTokenEncoder()
    docs = evaluation.load_jsonl(DOCS)[:40]
    seen = []
    report = evaluation.run(docs, evaluation.load_jsonl(QUERIES), encoder=encoder, embedder=encoder.embedder,
                            progress=lambda label, done, total: seen.append((label, done, total)))
    return docs, report, seen


@needs_dev_eval
@pytest.mark.model
def test_slice_report_scores_every_method_on_the_judged_queries(slice_report):
    docs, report, seen = slice_report
    ids = {d["doc_id"] for d in docs}
    judged = [q for q in evaluation.load_jsonl(QUERIES) if evaluation.gains(q, ids)]
    assert report["docs"] == 40 and report["queries"] == len(judged) > 5
    assert set(report["methods"]) == {"single_vector", "maxsim_exact", "maxsim_fast", "hybrid_exact", "hybrid_fast"}
    for values in report["methods"].values():
        assert 0.2 < values["nDCG@10"] <= 1.0
        assert values["R@100"] == 1.0  # 40 documents: the top 100 holds all of them
        assert values["query_ms"]["p95"] >= values["query_ms"]["p50"] > 0
    # with fewer pages than the fast path's candidate count, it scores every page: same as exact
    assert report["fast_path_candidates"]["k=10"] == 40
    assert report["methods"]["maxsim_fast"]["nDCG@10"] == report["methods"]["maxsim_exact"]["nDCG@10"]
    assert report["methods"]["hybrid_fast"]["nDCG@10"] == report["methods"]["hybrid_exact"]["nDCG@10"]
    assert report["fusion"] == {"method": "rrf", "rrf_k": 60}  # documents.fusion's default
    assert report["encoder"].startswith("local/") and report["token_vectors"] > 40
    assert ("queries", len(judged), len(judged)) in seen and ("token vectors", 40, 40) in seen


@needs_dev_eval
@pytest.mark.model
def test_eval_docs_command_prints_the_report_as_json(cli, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(line + "\n" for line in DOCS.read_text().splitlines()[:12]))
    result = cli("eval", "docs", "--docs", docs, "--queries", QUERIES, "--limit", "10", "--json")
    report = json.loads(result.stdout)
    assert report["docs"] == 10 and report["queries"] > 0
    # the encoder a new collection of these (English) documents gets, with the other settings named
    assert (report["model"], report["language"], report["choice"]) == ("auto", "en", "english")
    assert report["encoder"].startswith("local/all-MiniLM-L6-v2/") and report["other_settings"] == ["multilingual",
                                                                                                   "english"]
    assert set(report["methods"]["maxsim_exact"]) == {"nDCG@10", "R@100", "query_ms"}


def test_eval_docs_command_rejects_a_missing_file(cli, tmp_path):
    (tmp_path / "queries.jsonl").write_text("")
    result = cli("eval", "docs", "--docs", tmp_path / "nope.jsonl", "--queries", tmp_path / "queries.jsonl", ok=False)
    assert result.exit_code == 2 and "nope.jsonl" in result.output
    unnamed = cli("eval", "docs", ok=False)  # no default path outside the repository: both files are asked for
    assert unnamed.exit_code == 2 and "--docs" in unnamed.output
