"""Document collections over REST, against a real uvicorn on 127.0.0.1 (``live`` fixture):
every endpoint, the 4xx answers naming the field, and tenants kept apart."""

from __future__ import annotations

import base64

import pytest

from support.pdfs import make_pdf
from support.server_fixtures import live  # noqa: F401  (fixture)

CATS = "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day."
MARKETS = "The stock market fell sharply on Monday as investors sold bank shares."
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def api(live):
    with live.client(live.key("docs-a")) as client:
        yield client


@pytest.fixture(scope="module")
def other(live):
    with live.client(live.key("docs-b")) as client:
        yield client


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def error(response, status, field):
    assert response.status_code == status, response.text
    body = response.json()
    assert body["field"] == field, body
    assert "Traceback" not in response.text
    return body["detail"]


def test_documents_lifecycle(api):
    created = ok(api.post("/collections", json={"name": "papers", "metadata": {"team": "ml"}}), 201)
    assert created["name"] == "papers" and created["metadata"] == {"team": "ml"}
    assert [c["name"] for c in ok(api.get("/collections"))] == ["papers"]
    assert ok(api.get("/collections/papers"))["id"] == created["id"]

    text_doc = ok(api.post("/documents/upsert", json={"name": "cats", "collection_name": "papers", "text": CATS,
                                                      "metadata": {"year": 2024, "tags": ["pets"]}}))
    assert text_doc["created"] is True and text_doc["num_pages"] == 1 and text_doc["kind"] == "text"
    assert created["encoder"] is None  # chosen by the first upsert: English pages, the English model
    assert ok(api.get("/collections/papers"))["encoder"].startswith("local/all-MiniLM-L6-v2/")
    pdf = make_pdf([MARKETS, "", "Neural networks learn representations from data."])
    pdf_doc = ok(api.post("/documents/upsert", json={"name": "report", "collection_name": "papers",
                                                     "file": b64(pdf), "filename": "report.pdf",
                                                     "metadata": {"year": 2023}}))
    assert pdf_doc["kind"] == "pdf" and pdf_doc["num_pages"] == 2 and pdf_doc["source"] == "report.pdf"
    md = "# Pets\n\nCats purr.\n\n# Money\n\nStocks fell."
    md_doc = ok(api.post("/documents/upsert", json={"name": "notes", "collection_name": "papers",
                                                    "base64": b64(md.encode()), "filename": "notes.md"}))
    assert md_doc["kind"] == "markdown" and md_doc["num_pages"] == 2

    listed = ok(api.get("/documents", params={"collection_name": "papers"}))
    assert [d["name"] for d in listed] == ["cats", "notes", "report"] and "pages" not in listed[0]
    expanded = ok(api.get("/documents/report", params={"collection_name": "papers", "expand": "pages"}))
    assert [p["page_number"] for p in expanded["pages"]] == [1, 3]
    assert "stock market" in expanded["pages"][0]["text"]

    found = ok(api.post("/search/documents", json={"query": "does my cat purr?", "top_k": 2}))
    assert found["query"] == "does my cat purr?" and len(found["results"]) == 2
    best = found["results"][0]
    assert best["document_name"] in ("cats", "notes") and best["collection_name"] == "papers"
    assert best["normalized_score"] < best["raw_score"] and best["collection_metadata"] == {"team": "ml"}
    for key in ("document_id", "collection_id", "document_metadata", "page_number", "page_id", "text"):
        assert key in best
    filtered = ok(api.post("/search/documents", json={
        "query": "stock market", "collection_name": "papers", "top_k": 5,
        "query_filter": {"on": "document", "key": "year", "value": 2023, "lookup": "key_lookup"}}))
    assert {r["document_name"] for r in filtered["results"]} == {"report"}
    hybrid = ok(api.post("/search/documents", json={
        "query": "stock market", "top_k": 3, "keyword_search": True,
        "query_filter": {"on": "document", "key": "year", "value": 2023, "lookup": "key_lookup"}}))
    assert hybrid["keyword_matches"] == 1 and hybrid["results"][0]["document_name"] == "report"
    assert hybrid["results"][0]["keyword_score"] > 0 and "hybrid_score" in hybrid["results"][0]

    on_documents = ok(api.post("/filter", json={"key": "tags", "value": ["pets"], "lookup": "contains"}))
    assert on_documents["on"] == "document" and [d["name"] for d in on_documents["results"]] == ["cats"]
    on_collections = ok(api.post("/filter", json={"on": "collection", "key": "team", "lookup": "has_key"}))
    assert [c["name"] for c in on_collections["results"]] == ["papers"]
    by_filter = ok(api.get("/documents", params={"query_filter": '{"key": "year", "lookup": "has_key"}'}))
    assert [d["name"] for d in by_filter] == ["cats", "report"]

    renamed = ok(api.patch("/documents/cats", params={"collection_name": "papers"},
                           json={"name": "felines", "metadata": {"year": 2025}}))
    assert renamed["name"] == "felines" and renamed["metadata"] == {"year": 2025}
    assert ok(api.delete("/documents/felines", params={"collection_name": "papers"}))["pages_deleted"] == 1
    assert "felines" not in {r["document_name"] for r in ok(api.post("/search/documents",
                                                                     json={"query": "cat", "top_k": 10}))["results"]}
    moved = ok(api.patch("/collections/papers", json={"name": "archive", "metadata": {"team": "ops"}}))
    assert moved["name"] == "archive" and moved["num_documents"] == 2
    assert ok(api.delete("/collections/archive"))["pages_deleted"] == 4
    assert ok(api.get("/collections")) == []


def test_names_conflicts_and_unknowns(api):
    ok(api.post("/collections", json={"name": "dup"}), 201)
    assert "exists already" in error(api.post("/collections", json={"name": "dup"}), 409, "name")
    assert "reserved" in error(api.post("/collections", json={"name": "all"}), 422, "name")
    assert "no collection named 'nope'" in error(api.get("/collections/nope"), 404, "collection_name")
    error(api.post("/documents/upsert", json={"name": "d", "collection_name": "nope", "text": "x"}), 404,
          "collection_name")
    error(api.post("/search/documents", json={"query": "x", "collection_name": "nope"}), 404, "collection_name")
    error(api.get("/documents/ghost", params={"collection_name": "dup"}), 404, "document_name")
    error(api.delete("/documents/ghost", params={"collection_name": "dup"}), 404, "document_name")
    ok(api.post("/documents/upsert", json={"name": "a", "collection_name": "dup", "text": "first"}))
    ok(api.post("/documents/upsert", json={"name": "b", "collection_name": "dup", "text": "second"}))
    error(api.patch("/documents/a", params={"collection_name": "dup"}, json={"name": "b"}), 409, "name")
    ok(api.delete("/collections/dup"))


@pytest.mark.parametrize("path, body, status, field", [
    ("/search/documents", {"query": "x", "query_filter": {"key": "a", "lookup": "key_lookup"}}, 422, "query_filter"),
    ("/search/documents", {"query": "x", "query_filter": {"key": "a", "value": 1, "lookup": "has_key"}}, 422,
     "query_filter"),
    ("/search/documents", {"query": "x", "query_filter": {"key": "a", "value": 1, "on": "page"}}, 422,
     "query_filter"),
    ("/search/documents", {"query": "x", "top_k": 0}, 422, "top_k"),
    ("/search/documents", {"query": "x", "keyword_search": "yes"}, 422, "keyword_search"),
    ("/search/documents", {"query": "   "}, 422, "query"),
    ("/search/documents", {"query": "x", "collection": "typo"}, 422, "collection"),
    ("/search/documents/image", {"img_base64": b64(PNG)}, 422, "img_base64"),
    ("/search/documents/image", {"img_base64": "%%% not base64"}, 422, "img_base64"),
    ("/filter", {"key": ["a", "b"], "value": 1, "lookup": "contains"}, 422, "query_filter"),
    ("/filter", {}, 422, "query_filter"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input"}, 422, "text"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "text": "x", "file": b64(b"x")}, 422, "text"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "file": "***"}, 422, "file"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "file": b64(PNG)}, 422, "file"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "file": b64(b"%PDF-1.7 broken")}, 422,
     "file"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "file": b64(b"\xff\xfe\x00bad")}, 422,
     "file"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "text": "   "}, 422, "text"),
    ("/documents/upsert", {"name": "a/b", "collection_name": "bad-input", "text": "x"}, 422, "name"),
    ("/documents/upsert", {"name": "d", "collection_name": "bad-input", "text": "x",
                           "metadata": {"big": "x" * 70_000}}, 422, "metadata"),
    ("/collections", {"name": "ok", "metadata": "not an object"}, 422, "metadata"),
    ("/collections/bad-input/reencode", {"encoder": "klingon"}, 422, "encoder"),
    ("/collections/bad-input/reencode", {"encoding": "english"}, 422, "encoding"),
])
def test_bad_input_is_a_4xx_naming_the_field(api, path, body, status, field):
    if not any(c["name"] == "bad-input" for c in ok(api.get("/collections"))):
        ok(api.post("/collections", json={"name": "bad-input"}), 201)
    detail = error(api.post(path, json=body), status, field)
    assert detail
    assert ok(api.get("/documents", params={"collection_name": "bad-input"})) == []  # nothing half-written


def test_a_collections_encoder_is_chosen_refused_and_changed(api):
    unknown = error(api.post("/collections", json={"name": "langs", "encoder": "klingon"}), 422, "encoder")
    assert all(f"'{name}'" in unknown for name in ("auto", "english", "multilingual")), unknown
    error(api.post("/collections", json={"name": "langs", "encoder": 5}), 422, "encoder")  # the schema's type
    ok(api.post("/collections", json={"name": "empty"}), 201)
    unknown = error(api.post("/documents/upsert", json={"name": "d", "collection_name": "empty", "text": "x",
                                                        "encoder": "e5"}), 422, "encoder")
    assert "'multilingual'" in unknown and ok(api.get("/documents", params={"collection_name": "empty"})) == []
    chosen = ok(api.post("/collections", json={"name": "chosen", "encoder": "multilingual"}), 201)
    assert chosen["encoder"].startswith("e5/")
    ok(api.post("/collections", json={"name": "langs"}), 201)
    first = ok(api.post("/documents/upsert", json={"name": "cats", "collection_name": "langs", "text": CATS}))
    assert "warnings" not in first  # English pages: the English model, chosen automatically
    chinese = ok(api.post("/documents/upsert", json={"name": "tides", "collection_name": "langs",
                                                     "text": "月球的引力牵引着海水，使海面每天涨落两次。"}))
    assert "'multilingual'" in chinese["warnings"][0] and "/collections/langs/reencode" in chinese["warnings"][0]
    english = ok(api.get("/collections/langs"))["encoder"]
    assert english.startswith("local/all-MiniLM-L6-v2/")
    conflict = error(api.post("/documents/upsert", json={"name": "more", "collection_name": "langs", "text": MARKETS,
                                                         "encoder": "multilingual"}), 409, "encoder")
    assert english in conflict and "reencode" in conflict
    assert [d["name"] for d in ok(api.get("/documents", params={"collection_name": "langs"}))] == ["cats", "tides"]
    error(api.post("/collections/nope/reencode", json={"encoder": "english"}), 404, "collection_name")

    out = ok(api.post("/collections/langs/reencode", json={"encoder": "multilingual"}))
    assert out["previous_encoder"] == english and out["encoder"].startswith("e5/") and out["reencoded_pages"] == 2
    assert ok(api.get("/collections/langs"))["encoder"] == out["encoder"]
    found = ok(api.post("/search/documents", json={"query": "海水为什么涨落", "collection_name": "langs", "top_k": 1}))
    assert found["results"][0]["document_name"] == "tides"
    ok(api.post("/documents/upsert", json={"name": "more", "collection_name": "langs", "text": MARKETS,
                                           "encoder": "multilingual"}))
    for name in ("langs", "chosen", "empty"):
        ok(api.delete(f"/collections/{name}"))


def test_oversize_body_is_refused(api):
    response = api.post("/documents/upsert", json={"name": "big", "collection_name": "x",
                                                   "text": "word " * 100_000})
    assert response.status_code == 413


def test_tenants_never_see_each_other(api, other):
    ok(api.post("/collections", json={"name": "private", "metadata": {"owner": "a"}}), 201)
    ok(api.post("/documents/upsert", json={"name": "secret", "collection_name": "private", "text": CATS}))
    error(other.get("/collections/private"), 404, "collection_name")
    assert ok(other.get("/collections")) == []
    assert ok(other.post("/search/documents", json={"query": "cat", "top_k": 10}))["results"] == []
    assert ok(other.post("/filter", json={"on": "collection", "key": "owner", "value": "a"}))["results"] == []
    error(other.delete("/documents/secret", params={"collection_name": "private"}), 404, "collection_name")
    ok(other.post("/collections", json={"name": "private"}), 201)  # the name is free in the other tenant
    assert [r["document_name"] for r in ok(api.post("/search/documents", json={"query": "cat"}))["results"]] \
        == ["secret"]
