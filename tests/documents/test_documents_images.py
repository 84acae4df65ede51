"""Image pages and image queries with an encoder that accepts images: the HTTP encoder against a
loopback service speaking the ColPali protocol (tests/support/multivector_server.py)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from memlane import Documents, Memory
from memlane.documents.encoders import create_encoder
from memlane.documents.late_interaction import maxsim
from support.multivector_server import MultiVectorServer, vectors_for

PNG_A = b"\x89PNG\r\n\x1a\n" + b"A" * 64
PNG_B = b"\x89PNG\r\n\x1a\n" + b"B" * 64


def unit(rows: np.ndarray) -> np.ndarray:
    rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float16).astype(np.float32)


@pytest.fixture
def docs(tmp_path, embedder):
    with MultiVectorServer(dims=16) as server:
        encoder = create_encoder({"provider": "http", "url": server.endpoint, "dims": 16, "accepts_images": True})
        config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}}}
        with Memory(config, embedder=embedder) as memory, Documents(memory=memory, encoder=encoder) as d:
            yield d, server


def test_image_pages_are_found_by_image_queries(docs):
    docs, server = docs
    docs.create_collection("scans")
    added = docs.upsert_document("a", "scans", file=PNG_A, filename="a.png", metadata={"kind": "chart"})
    assert added["kind"] == "image" and added["num_pages"] == 1
    docs.upsert_document("b", "scans", file=base64.b64encode(PNG_B).decode(), filename="b.png")
    docs.upsert_document("words", "scans", text="quarterly revenue chart")

    found = docs.search_image(PNG_A, top_k=3)["results"]
    assert found[0]["document_name"] == "a" and found[0]["img_base64"] == base64.b64encode(PNG_A).decode()
    query = unit(vectors_for("image", base64.b64encode(PNG_A).decode(), 16))
    for hit in found:
        if hit["document_name"] == "words":
            page = vectors_for("document", "quarterly revenue chart", 16)
        else:
            page = vectors_for("image", base64.b64encode(PNG_A if hit["document_name"] == "a" else PNG_B).decode(), 16)
        assert hit["raw_score"] == pytest.approx(maxsim(query, unit(page)), abs=5e-3)
        assert hit["normalized_score"] == pytest.approx(hit["raw_score"] / len(query))
    assert found[0]["raw_score"] == pytest.approx(len(query), abs=5e-3)  # the same image: every row matches itself

    text_hits = {h["document_name"]: h for h in docs.search("quarterly revenue chart", top_k=3)["results"]}
    assert text_hits["words"]["img_base64"] is None and text_hits["a"]["img_base64"]
    text_query = unit(vectors_for("query", "quarterly revenue chart", 16))
    words_page = unit(vectors_for("document", "quarterly revenue chart", 16))
    assert text_hits["words"]["raw_score"] == pytest.approx(maxsim(text_query, words_page), abs=5e-3)
    tasks = [r.json["input"]["task"] for r in server.requests(server.path)]
    assert tasks.count("image") == 3 and "document" in tasks and "query" in tasks
    filtered = docs.search_image(PNG_B, top_k=3, query_filter={"key": "kind", "value": "chart"})["results"]
    assert [h["document_name"] for h in filtered] == ["a"]
