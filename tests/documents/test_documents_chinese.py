"""Chinese pages found by Chinese questions (simplified and traditional, in either direction), with
the default encoder: the token vectors of multilingual-e5-small, the default memory model.
The pages and questions (tests/data/documents_zh.jsonl) were written for memlane; the answer of each
question is in its page in other words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlane import Documents, Memory

DATA = Path(__file__).parents[1] / "data" / "documents_zh.jsonl"
CASES = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]

pytestmark = pytest.mark.model


def _hits(embedder, tmp_path, keyword_search: bool) -> dict[str, list[str]]:
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "docs.db")}}}
    with Memory(config, embedder=embedder) as memory:
        docs = Documents(memory=memory)
        docs.create_collection("handbook")
        for case in CASES:
            docs.upsert_document(case["name"], "handbook", text=case["text"])
        return {q: [r["document_name"] for r in docs.search(q, collection_name="handbook", top_k=3,
                                                             keyword_search=keyword_search)["results"]]
                for case in CASES for q in case["queries"]}


@pytest.mark.parametrize("keyword_search", [False, True], ids=["maxsim", "hybrid"])
def test_chinese_questions_find_their_pages(e5_embedder, tmp_path, keyword_search):
    found = _hits(e5_embedder, tmp_path, keyword_search)
    expected = {q: case["name"] for case in CASES for q in case["queries"]}
    first = sum(found[q][:1] == [name] for q, name in expected.items()) / len(expected)
    top3 = sum(name in found[q] for q, name in expected.items()) / len(expected)
    print(f"\nChinese documents ({'hybrid' if keyword_search else 'MaxSim'}): hit@1 {first:.2f}, hit@3 {top3:.2f}")
    assert top3 >= 0.9 and first >= 0.75, {q: found[q] for q, name in expected.items() if found[q][:1] != [name]}


def test_an_english_collection_can_choose_the_english_model_by_name(e5_embedder, tmp_path):
    """``documents.encoder.model: all-MiniLM-L6-v2`` (the English model installed with memlane, better
    on English documents) beside a multilingual memory: the pages are encoded by it, not by e5."""
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "docs.db")}},
              "documents": {"encoder": {"provider": "local", "model": "all-MiniLM-L6-v2"}}}
    with Memory(config, embedder=e5_embedder) as memory:
        docs = Documents(memory=memory)
        assert docs.encoder.name.startswith("local/all-MiniLM-L6-v2") and memory.embeddings.name != docs.encoder.name
        docs.create_collection("notes")
        docs.upsert_document("tides", "notes", text="The moon's gravity pulls the oceans and makes the tides.")
        docs.upsert_document("bread", "notes", text="Knead the dough and let it rise before baking the loaf.")
        assert docs.search("why does the sea rise and fall", top_k=1)["results"][0]["document_name"] == "tides"
        assert set(docs.store.encoders()) == {docs.encoder.name}
