"""Document collections behave the same on every store backend: each test runs on SQLite and on
PostgreSQL (``backend`` fixture, tests/conftest.py) through the public ``Documents`` API, with the
real local model's token vectors (no fake encoder)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from memlane import AsyncDocuments, Documents, Memory
from memlane.documents.errors import CollectionNotFoundError, DocumentNotFoundError, DuplicateNameError
from memlane.documents.late_interaction import maxsim
from memlane.core.errors import InvalidInputError, UnsupportedInputError
from memlane.retrieval import feedback, fusion
from memlane.store import bm25
from memlane.text import keywords
from support.document_fixtures import encoder, memory  # noqa: F401  (fixtures)

CATS = "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day."
MARKETS = "The stock market fell sharply on Monday as investors sold bank shares."
NETS = "Neural networks learn representations from data with gradient descent."
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


@pytest.fixture
def docs(memory, encoder):
    with Documents(memory=memory, encoder=encoder) as d:
        yield d


def names(results):
    return [r["document_name"] for r in results["results"]]


def test_collections_crud(docs):
    created = docs.create_collection("papers", {"team": "ml", "year": 2024})
    assert created["name"] == "papers" and created["metadata"] == {"team": "ml", "year": 2024}
    assert created["num_documents"] == 0 and created["created_at"].endswith("+00:00")
    with pytest.raises(DuplicateNameError):
        docs.create_collection("papers")
    for reserved in ("all", "ALL"):
        with pytest.raises(InvalidInputError, match="reserved"):
            docs.create_collection(reserved)
    docs.create_collection("notes")
    assert [c["name"] for c in docs.list_collections()] == ["notes", "papers"]

    renamed = docs.update_collection("papers", new_name="articles", metadata={"team": "nlp"})
    assert renamed["name"] == "articles" and renamed["metadata"] == {"team": "nlp"} and renamed["id"] == created["id"]
    with pytest.raises(CollectionNotFoundError):
        docs.get_collection("papers")
    with pytest.raises(DuplicateNameError):
        docs.update_collection("articles", new_name="notes")
    with pytest.raises(InvalidInputError, match="reserved"):
        docs.update_collection("articles", new_name="all")

    docs.upsert_document("cats", "articles", text=CATS)
    assert docs.get_collection("articles")["num_documents"] == 1
    deleted = docs.delete_collection("articles")
    assert deleted == {"deleted": "articles", "pages_deleted": 1}
    assert [c["name"] for c in docs.list_collections()] == ["notes"]
    assert docs.search("cats", top_k=5)["results"] == []
    with pytest.raises(CollectionNotFoundError):
        docs.delete_collection("articles")


def test_search_scores_are_maxsim_of_the_token_vectors(docs, encoder):
    docs.create_collection("c", {"kind": "mixed"})
    docs.upsert_document("cats", "c", text=CATS, metadata={"topic": "pets"})
    docs.upsert_document("markets", "c", text=MARKETS)
    docs.upsert_document("nets", "c", text=NETS)

    found = docs.search("does a cat purr?", top_k=3)
    assert found["query"] == "does a cat purr?"
    assert names(found)[0] == "cats" and sorted(names(found)) == ["cats", "markets", "nets"]
    best = found["results"][0]
    assert best["collection_name"] == "c" and best["collection_metadata"] == {"kind": "mixed"}
    assert best["document_metadata"] == {"topic": "pets"} and best["page_number"] == 1 and best["text"] == CATS

    query = encoder.encode_queries(["does a cat purr?"])[0]
    for result in found["results"]:
        page = encoder.encode_pages([result["text"]])[0].astype(np.float16).astype(np.float32)
        assert result["raw_score"] == pytest.approx(maxsim(query, page), abs=2e-3)
        assert result["normalized_score"] == pytest.approx(result["raw_score"] / len(query), rel=1e-6)
    scores = [r["raw_score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)
    assert len(docs.search("does a cat purr?", top_k=1)["results"]) == 1
    exact = docs.search("does a cat purr?", top_k=3, exact=True)
    assert [r["page_id"] for r in exact["results"]] == [r["page_id"] for r in found["results"]]


def test_upsert_by_name_replaces_pages_and_metadata(docs):
    docs.create_collection("c")
    first = docs.upsert_document("doc", "c", text=CATS, metadata={"v": 1})
    assert first["created"] is True and first["num_pages"] == 1
    assert names(docs.search("a cat purrs", top_k=1)) == ["doc"]

    second = docs.upsert_document("doc", "c", text=MARKETS + "\n\n" + NETS, metadata={"v": 2},
                                  filename="notes.md")
    assert second["created"] is False and second["id"] == first["id"]
    assert second["metadata"] == {"v": 2}
    got = docs.get_document("doc", "c", expand_pages=True)
    assert [p["text"] for p in got["pages"]] == [MARKETS + "\n\n" + NETS]
    top = docs.search("a cat purrs", top_k=5)["results"]
    assert all(CATS not in r["text"] for r in top) and len(top) == 1
    assert [d["name"] for d in docs.list_documents("c")] == ["doc"]


def test_long_text_is_split_into_numbered_pages(memory, encoder):
    paragraphs = [f"Paragraph {i}: " + ("lorem ipsum dolor sit amet " * 8).strip() + "." for i in range(12)]
    with Documents({"documents": {"page_chars": 400}}, memory=memory, encoder=encoder) as docs:
        docs.create_collection("c")
        out = docs.upsert_document("long", "c", text="\n\n".join(paragraphs))
        pages = docs.get_document("long", "c", expand_pages=True)["pages"]
    assert out["num_pages"] == len(pages) > 3
    assert [p["page_number"] for p in pages] == list(range(1, len(pages) + 1))
    assert all(len(p["text"]) <= 400 for p in pages)
    assert "\n\n".join(p["text"] for p in pages) == "\n\n".join(paragraphs)


def test_collection_scope_and_query_filter_restrict_search(docs):
    docs.create_collection("pets", {"public": True})
    docs.create_collection("finance", {"public": False})
    docs.upsert_document("cats", "pets", text=CATS, metadata={"year": 2024})
    docs.upsert_document("old-cats", "pets", text=CATS, metadata={"year": 2020})
    docs.upsert_document("markets", "finance", text=MARKETS, metadata={"year": 2024})

    assert sorted(names(docs.search("cat", collection_name="pets", top_k=10))) == ["cats", "old-cats"]
    assert names(docs.search("cat", collection_name="finance", top_k=10)) == ["markets"]
    assert sorted(names(docs.search("cat", top_k=10))) == ["cats", "markets", "old-cats"]
    year = {"on": "document", "key": "year", "value": 2024, "lookup": "key_lookup"}
    assert sorted(names(docs.search("cat", top_k=10, query_filter=year))) == ["cats", "markets"]
    public = {"on": "collection", "key": "public", "value": True}
    assert sorted(names(docs.search("cat", top_k=10, query_filter=public))) == ["cats", "old-cats"]
    assert names(docs.search("cat", collection_name="finance", query_filter=public)) == []
    with pytest.raises(CollectionNotFoundError):
        docs.search("cat", collection_name="nope")


ORDER = "Order XJ9000 shipped to Berlin on Monday; the order arrives on Friday."


def _bm25(texts: dict[str, str], query: str | dict[str, float]) -> dict[str, float]:
    """BM25 by store/bm25.py's rule over ``texts`` (the admitted pages), from the analyser's terms;
    ``query`` a text or weighted terms."""
    weights = None if isinstance(query, str) else query
    terms = keywords.query_terms(query) if weights is None else list(weights)
    analysed = {name: keywords.analyze(text) for name, text in texts.items()}
    hits = [(name, len(words), term, words.count(term)) for name, words in analysed.items()
            for term in terms if term in words]
    avgdl = sum(len(words) for words in analysed.values()) / len(analysed)
    return dict(bm25.rank(hits, len(texts), avgdl, 100, weights))


def _fused(results, maxsim_order, fusion):
    """The hybrid scores retrieval/fusion.py gives the results (every page is a MaxSim candidate here)."""
    if fusion == "rrf":
        keyword_order = sorted((r for r in results if r["keyword_score"] is not None), key=lambda r: -r["keyword_score"])
        ranks = [{name: n for n, name in enumerate(order, 1)}
                 for order in (maxsim_order, [r["document_name"] for r in keyword_order])]
        return [sum(1 / (60 + rank[r["document_name"]]) for rank in ranks if r["document_name"] in rank)
                for r in results]
    raw = np.array([r["raw_score"] for r in results])
    bm = np.array([r["keyword_score"] or 0.0 for r in results])
    return list(0.5 * (raw - raw.min()) / (raw.max() - raw.min()) + 0.5 * bm / bm.max())


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_keyword_search_fuses_bm25_of_the_page_text_with_maxsim(memory, encoder, fusion):
    texts = {"cats": CATS, "markets": MARKETS, "nets": NETS, "order": ORDER}
    docs = Documents({"documents": {"fusion": fusion, "feedback_pages": 0}}, memory=memory, encoder=encoder)
    docs.create_collection("c")
    for name, text in texts.items():
        docs.upsert_document(name, "c", text=text)
    query = "When does order XJ9000 arrive, Monday?"
    found = docs.search(query, top_k=10, keyword_search=True)
    maxsim_only = docs.search(query, top_k=10, exact=True)["results"]
    results = found["results"]
    assert names(found)[0] == "order" and found["keyword_matches"] == 2  # order; markets (Monday)
    assert {r["document_name"]: r["keyword_score"] for r in results if r["keyword_score"] is not None} == \
        pytest.approx(_bm25(texts, query))
    assert {r["document_name"]: r["raw_score"] for r in results} == \
        pytest.approx({r["document_name"]: r["raw_score"] for r in maxsim_only})
    expected = _fused(results, [r["document_name"] for r in maxsim_only], fusion)
    assert [r["hybrid_score"] for r in results] == pytest.approx(expected)
    assert [r["hybrid_score"] for r in results] == sorted((r["hybrid_score"] for r in results), reverse=True)
    assert "keyword_score" not in docs.search(query, top_k=10)["results"][0]  # MaxSim alone: as before
    with pytest.raises(InvalidInputError, match="keyword_search"):
        docs.search(query, keyword_search="yes")


def test_feedback_searches_the_keywords_again_with_the_query_expanded_from_the_best_pages(docs):
    shipping = "Parcels shipped from Berlin reach Munich within two days."
    texts = {"cats": CATS, "markets": MARKETS, "nets": NETS, "order": ORDER, "shipping": shipping}
    docs.create_collection("c")
    for name, text in texts.items():
        docs.upsert_document(name, "c", text=text)
    query = "When does order XJ9000 arrive?"
    docs.settings.feedback_pages = 0
    plain = docs.search(query, top_k=10, keyword_search=True)
    docs.settings.feedback_pages, docs.settings.feedback_terms, docs.settings.feedback_query_weight = 1, 10, 0.5
    found = docs.search(query, top_k=10, keyword_search=True)

    best = names(plain)[0]
    assert best == "order"
    expanded = feedback.expand(keywords.analyze(query), [keywords.analyze(texts[best])], terms=10, query_weight=0.5)
    assert set(expanded) > set(keywords.query_terms(query))  # the order page's other terms joined
    scores = {r["document_name"]: r["keyword_score"] for r in found["results"] if r["keyword_score"] is not None}
    assert scores == pytest.approx(_bm25(texts, expanded))
    # the shipping page shares no word with the query, only with the best page: found by its words now
    assert "shipping" in scores
    assert all(r["keyword_score"] is None for r in plain["results"] if r["document_name"] == "shipping")
    assert found["keyword_matches"] == plain["keyword_matches"] == 1  # the query's own matches
    raw = {r["document_name"]: r["raw_score"] for r in found["results"]}
    assert raw == pytest.approx({r["document_name"]: r["raw_score"] for r in plain["results"]})  # exact MaxSim
    # fused by rank with MaxSim's order, as without feedback
    expected = fusion.rrf(sorted(raw, key=lambda n: -raw[n]), sorted(scores, key=lambda n: -scores[n]), k=60)
    assert {r["document_name"]: r["hybrid_score"] for r in found["results"]} == pytest.approx(expected)
    assert names(found) == sorted(expected, key=lambda n: -expected[n])


def test_a_keyword_hit_the_page_index_lacks_is_left_out(docs):
    """A page the keyword index finds but the page index no longer holds (deleted by another process
    between the two reads: ``LiveIndex.score`` leaves it out) is not an answer, and not an error."""
    docs.create_collection("c")
    for name, text in {"cats": CATS, "markets": MARKETS, "nets": NETS, "order": ORDER}.items():
        docs.upsert_document(name, "c", text=text)
    docs.settings.keyword_candidates, docs.settings.feedback_pages = 1, 0
    query = "A kitten dozing on Monday"  # MaxSim's best: cats; only "Monday" is a keyword (markets, order)
    assert names(docs.search(query, top_k=1, exact=True)) == ["cats"]
    score = docs.index.score
    docs.index.score = lambda vectors, page_ids: {}  # every page found by its words only is gone
    try:
        found = docs.search(query, top_k=1, keyword_search=True)
    finally:
        docs.index.score = score
    assert names(found) == ["cats"] and found["results"][0]["keyword_score"] is None


def test_keyword_search_keeps_collection_filter_and_scope_local_statistics(docs):
    docs.settings.feedback_pages = 0  # the query's own BM25 (feedback: its own test)
    docs.create_collection("pets", {"public": True})
    docs.create_collection("finance", {"public": False})
    docs.upsert_document("cats", "pets", text=CATS, metadata={"year": 2024})
    docs.upsert_document("old-cats", "pets", text=CATS + " Old cats sleep more.", metadata={"year": 2020})
    docs.upsert_document("markets", "finance", text=MARKETS + " Cat bonds fell.", metadata={"year": 2024})

    def keyword_scores(**options):
        found = docs.search("cats sleep", top_k=10, keyword_search=True, **options)
        assert found["keyword_matches"] == len([r for r in found["results"] if r["keyword_score"] is not None])
        return {r["document_name"]: r["keyword_score"] for r in found["results"]}

    year = {"on": "document", "key": "year", "value": 2024, "lookup": "key_lookup"}
    public = {"on": "collection", "key": "public", "value": True}
    assert keyword_scores(query_filter=year) == pytest.approx(
        _bm25({"cats": CATS, "markets": MARKETS + " Cat bonds fell."}, "cats sleep"))
    pets = {"cats": CATS, "old-cats": CATS + " Old cats sleep more."}
    assert keyword_scores(collection_name="pets") == pytest.approx(_bm25(pets, "cats sleep"))
    assert keyword_scores(query_filter=public) == pytest.approx(_bm25(pets, "cats sleep"))
    assert keyword_scores(collection_name="finance", query_filter=public) == {}


def test_a_query_without_keyword_terms_ranks_by_maxsim_alone(docs):
    docs.create_collection("c")
    for name, text in {"cats": CATS, "markets": MARKETS, "nets": NETS}.items():
        docs.upsert_document(name, "c", text=text)
    found = docs.search("What is it, and why?", top_k=3, keyword_search=True)  # stop words only
    assert found["keyword_matches"] == 0 and all(r["keyword_score"] is None for r in found["results"])
    assert names(found) == names(docs.search("What is it, and why?", top_k=3))


def test_delete_document_removes_its_pages_from_search(docs):
    docs.create_collection("c")
    docs.upsert_document("cats", "c", text=CATS)
    docs.upsert_document("markets", "c", text=MARKETS)
    assert names(docs.search("cat", top_k=1)) == ["cats"]
    assert docs.delete_document("cats", "c")["pages_deleted"] == 1
    assert names(docs.search("cat", top_k=5)) == ["markets"]
    with pytest.raises(DocumentNotFoundError):
        docs.delete_document("cats", "c")
    with pytest.raises(DocumentNotFoundError):
        docs.get_document("cats", "c")
    with pytest.raises(CollectionNotFoundError):
        docs.get_document("cats", "missing")


def test_another_instance_sees_writes_through_the_store(memory, encoder):
    """Two Documents over one store stand for two processes: each one's index follows the other's writes."""
    with Documents(memory=memory, encoder=encoder) as one, Documents(memory=memory, encoder=encoder) as two:
        one.create_collection("c")
        one.upsert_document("cats", "c", text=CATS)
        assert names(two.search("cat")) == ["cats"]  # loads its index
        index = two.index._index
        one.upsert_document("markets", "c", text=MARKETS)
        assert sorted(names(two.search("cat", top_k=5))) == ["cats", "markets"]
        one.upsert_document("cats", "c", text=NETS)  # replaced: new page ids
        assert sorted(r["text"] for r in two.search("cat", top_k=5)["results"]) == sorted([MARKETS, NETS])
        assert two.index._index is index and len(index) == 2  # caught up by page ids, not re-read
        two.delete_document("cats", "c")
        assert names(one.search("cat", top_k=5)) == ["markets"]


def test_duplicate_document_rename_is_refused(docs):
    docs.create_collection("c")
    docs.upsert_document("a", "c", text=CATS)
    docs.upsert_document("b", "c", text=MARKETS)
    with pytest.raises(DuplicateNameError):
        docs.update_document("a", "c", new_name="b")
    renamed = docs.update_document("a", "c", new_name="a2", metadata={"k": 1})
    assert renamed["name"] == "a2" and renamed["metadata"] == {"k": 1} and renamed["num_pages"] == 1
    assert "a2" in names(docs.search("cat", top_k=2))


def test_failed_upsert_writes_nothing(docs):
    docs.create_collection("c")
    docs.upsert_document("doc", "c", text=CATS, metadata={"v": 1})
    with pytest.raises(UnsupportedInputError) as caught:
        docs.upsert_document("doc", "c", file=PNG, filename="scan.png", metadata={"v": 2})
    assert caught.value.field == "file" and "images" in str(caught.value)
    with pytest.raises(CollectionNotFoundError):
        docs.upsert_document("doc", "missing", text=MARKETS)
    got = docs.get_document("doc", "c", expand_pages=True)
    assert got["metadata"] == {"v": 1} and [p["text"] for p in got["pages"]] == [CATS]
    assert [c["name"] for c in docs.list_collections()] == ["c"]


def test_image_query_needs_an_encoder_that_accepts_images(docs):
    docs.create_collection("c")
    with pytest.raises(UnsupportedInputError) as caught:
        docs.search_image(PNG)
    assert caught.value.field == "img_base64"
    with pytest.raises(InvalidInputError, match="base64"):
        docs.search_image("not base64 !!")


def test_tenants_never_see_each_other(backend, embedder, encoder):
    config = backend()
    if backend.name == "postgres":
        other_config = {"vector_store": {"provider": "postgres",
                                         "config": {**config["vector_store"]["config"], "tenant": "other"}}}
        with Memory(config, embedder=embedder) as m1, Memory(other_config, embedder=embedder) as m2:
            _check_isolation(Documents(memory=m1, encoder=encoder), Documents(memory=m2, encoder=encoder))
    else:
        with Memory(config, embedder=embedder) as m:
            _check_isolation(Documents(memory=m, encoder=encoder, tenant="a"),
                             Documents(memory=m, encoder=encoder, tenant="b"))


def _check_isolation(a: Documents, b: Documents) -> None:
    a.create_collection("shared-name", {"owner": "a"})
    b.create_collection("shared-name", {"owner": "b"})  # the same name in another tenant is fine
    a.upsert_document("cats", "shared-name", text=CATS)
    assert names(b.search("cat", top_k=5)) == []
    assert b.search("cats purr", top_k=5, keyword_search=True)["keyword_matches"] == 0
    assert b.list_documents() == []
    assert b.get_collection("shared-name")["metadata"] == {"owner": "b"}
    assert b.filter({"key": "owner", "value": "a", "on": "collection"})["results"] == []
    with pytest.raises(DocumentNotFoundError):
        b.delete_document("cats", "shared-name")
    assert names(a.search("cat")) == ["cats"]


def test_pages_are_stored_as_float16(docs, encoder):
    docs.create_collection("c")
    docs.upsert_document("cats", "c", text=CATS)
    [batch] = list(docs.store.iter_vectors(encoder.name))
    [(page_id, n_tokens, blob, _encoding)] = batch
    assert n_tokens == len(encoder.encode_pages([CATS])[0])
    assert len(blob) == n_tokens * encoder.dims * 2


def test_async_documents_run_the_same_code(memory, encoder):
    async def scenario():
        async with AsyncDocuments(memory=memory, encoder=encoder) as docs:
            await docs.create_collection("c")
            await docs.upsert_document("cats", "c", text=CATS)
            found = await docs.search("cat", collection_name="c")
            listed = await docs.list_documents("c")
            return found, listed

    found, listed = asyncio.run(scenario())
    assert names(found) == ["cats"] and [d["name"] for d in listed] == ["cats"]


def test_concurrent_writers_and_searchers_keep_the_index_whole(memory, encoder):
    """Threads upserting, re-upserting and searching through one Documents: afterwards the index holds
    exactly the stored pages (a search over everything returns every document once)."""
    from concurrent.futures import ThreadPoolExecutor

    with Documents(memory=memory, encoder=encoder) as docs:
        docs.create_collection("c")
        docs.upsert_document("seed", "c", text=CATS)
        docs.search("cat")  # the index is loaded: writes now go through the incremental path

        def writer(w: int) -> None:
            for i in range(4):
                docs.upsert_document(f"w{w}-{i}", "c", text=f"{MARKETS} number {w} {i}")
                docs.upsert_document(f"w{w}-{i}", "c", text=f"{NETS} number {w} {i}")  # replace its page

        def searcher(_: int) -> int:
            return sum(len(docs.search("stock market", top_k=5)["results"]) for _ in range(6))

        with ThreadPoolExecutor(6) as pool:
            writes = [pool.submit(writer, w) for w in range(3)]
            reads = [pool.submit(searcher, s) for s in range(3)]
            for f in writes + reads:
                f.result()
        everything = docs.search("number", top_k=100)["results"]
        assert sorted(r["document_name"] for r in everything) == sorted(
            ["seed"] + [f"w{w}-{i}" for w in range(3) for i in range(4)])
        assert all(NETS in r["text"] for r in everything if r["document_name"] != "seed")
        assert docs.info()["index_pages"] == 13


def test_size_limits(memory, encoder):
    settings = {"documents": {"max_pages": 2, "page_chars": 100, "max_text_chars": 5000, "max_query_chars": 50,
                              "max_top_k": 10, "max_metadata_bytes": 100}}
    with Documents(settings, memory=memory, encoder=encoder) as docs:
        docs.create_collection("c")
        with pytest.raises(InvalidInputError, match="3 pages; the limit is 2") as caught:
            docs.upsert_document("long", "c", text="\n\n".join(["x" * 90] * 3))
        assert caught.value.field == "file"
        with pytest.raises(InvalidInputError, match="max_text_chars") as caught:
            docs.upsert_document("huge", "c", text="y" * 5001)
        assert caught.value.field == "text"
        with pytest.raises(InvalidInputError, match="max_metadata_bytes"):
            docs.upsert_document("meta", "c", text="ok", metadata={"k": "v" * 200})
        with pytest.raises(InvalidInputError, match="max_query_chars"):
            docs.search("q" * 51)
        with pytest.raises(InvalidInputError, match="top_k is 11; the limit is 10"):
            docs.search("q", top_k=11)
        assert docs.list_documents() == []
