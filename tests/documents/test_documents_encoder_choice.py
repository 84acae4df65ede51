"""Each collection's encoder, chosen from the language of its first pages when none is configured
(``memlane.documents.encoder_choice``): English pages get all-MiniLM-L6-v2's token vectors, other
languages and mixes multilingual-e5-small's; recorded with the collection, used by every later write
and query of it, kept across processes and configuration changes. Every test runs on SQLite and
PostgreSQL (``backend``), with the real models (the memory's own model: multilingual-e5-small, the
default of new stores)."""

from __future__ import annotations

import pytest

from memlane import Documents
from memlane.core.errors import EmbedderMismatchError
from memlane.documents.encoder_choice import kind_for, pages_language
from support.document_fixtures import open_docs  # noqa: F401 (a fixture)

ENGLISH = "The moon's gravity pulls the oceans towards it, which makes the tides rise and fall twice a day."
ENGLISH_2 = "Knead the dough for ten minutes and let it rise in a warm place before baking the loaf."
CHINESE = "月球的引力牵引着海水，使海面每天涨落两次，这就是潮汐。"
CHINESE_2 = "面团揉十分钟，放在温暖的地方发酵，然后再烤面包。"
GERMAN = "Die Anziehungskraft des Mondes zieht die Ozeane an und lässt die Gezeiten zweimal am Tag steigen."
#: a first document of two pages (a Markdown section each), one English and one Chinese
MIXED_MARKDOWN = f"# Tides\n\n{ENGLISH}\n\n# 潮汐\n\n{CHINESE}\n".encode()

MINILM = "local/all-MiniLM-L6-v2/"
E5 = "e5/"
EXPLICIT_MINILM = {"documents": {"encoder": {"provider": "local", "model": "all-MiniLM-L6-v2"}}}


@pytest.mark.parametrize("texts, language, kind", [
    ([ENGLISH, ENGLISH_2], "en", "english"),
    ([CHINESE, CHINESE_2], "zh", "multilingual"),
    ([GERMAN], "de", "multilingual"),
    ([ENGLISH, CHINESE], "mixed", "multilingual"),
    (["", "   "], "en", "english"),  # no text to read (image pages): English's
], ids=["english", "chinese", "german", "mixed", "no-text"])
def test_the_language_of_the_first_pages_names_the_encoder(texts, language, kind):
    assert pages_language(texts) == language and kind_for(language) == kind


@pytest.mark.parametrize("config, first_document, at_create, recorded", [
    ({}, {"text": ENGLISH}, None, MINILM),
    ({}, {"text": CHINESE}, None, E5),
    ({}, {"text": GERMAN}, None, E5),
    ({}, {"file": MIXED_MARKDOWN, "filename": "tides.md"}, None, E5),
    (EXPLICIT_MINILM, {"text": CHINESE}, MINILM, MINILM),  # an explicit encoder wins over the language
], ids=["english", "chinese", "german", "mixed", "explicit-wins"])
def test_a_collection_records_the_encoder_of_its_first_pages(open_docs, config, first_document, at_create, recorded):
    docs = open_docs(config)
    created = docs.create_collection("notes")
    if at_create:  # an explicit encoder is the collection's from the start; else its first pages choose
        assert created["encoder"].startswith(at_create)
    else:
        assert created["encoder"] is None
    docs.upsert_document("first", "notes", **first_document)
    encoder = docs.get_collection("notes")["encoder"]
    assert encoder.startswith(recorded), encoder
    assert docs.store.encoders() == {encoder: docs.get_document("first", "notes")["num_pages"]}
    assert [c["encoder"] for c in docs.list_collections()] == [encoder]


def spy_queries(docs: Documents, monkeypatch) -> dict[str, list[str]]:
    """Which encoder (by name) encoded which queries."""
    calls: dict[str, list[str]] = {}
    for kind in ("english", "multilingual"):
        encoder = docs.encoders.of_kind(kind)
        real = encoder.encode_queries

        def spy(texts, real=real, name=encoder.name):
            calls.setdefault(name, []).extend(texts)
            return real(texts)

        monkeypatch.setattr(encoder, "encode_queries", spy)
    return calls


def fill(docs: Documents) -> dict[str, str]:
    docs.create_collection("english")
    docs.upsert_document("tides", "english", text=ENGLISH)
    docs.upsert_document("bread", "english", text=ENGLISH_2)
    docs.create_collection("chinese")
    docs.upsert_document("潮汐", "chinese", text=CHINESE)
    docs.upsert_document("面包", "chinese", text=CHINESE_2)
    return {c["name"]: c["encoder"] for c in docs.list_collections()}


@pytest.mark.parametrize("keyword_search", [False, True], ids=["maxsim", "hybrid"])
def test_a_query_is_encoded_by_its_collections_encoder(open_docs, monkeypatch, keyword_search):
    docs = open_docs()
    encoders = fill(docs)
    assert encoders["english"].startswith(MINILM) and encoders["chinese"].startswith(E5)
    calls = spy_queries(docs, monkeypatch)

    found = docs.search("why does the sea rise and fall", collection_name="english", top_k=1,
                        keyword_search=keyword_search)
    assert [r["document_name"] for r in found["results"]] == ["tides"]
    assert calls == {encoders["english"]: ["why does the sea rise and fall"]}

    calls.clear()
    found = docs.search("海水为什么涨落", collection_name="chinese", top_k=1, keyword_search=keyword_search)
    assert [r["document_name"] for r in found["results"]] == ["潮汐"]
    assert calls == {encoders["chinese"]: ["海水为什么涨落"]}

    calls.clear()  # every collection: each encoder's pages searched with the query in its vectors
    found = docs.search("why does the sea rise and fall", top_k=4, keyword_search=keyword_search)
    assert calls == {name: ["why does the sea rise and fall"] for name in encoders.values()}
    assert {r["collection_name"] for r in found["results"]} == {"english", "chinese"} and len(found["results"]) == 4
    assert found["results"][0]["document_name"] in ("tides", "潮汐")


def test_a_reopened_store_keeps_each_collections_encoder(open_docs, monkeypatch):
    encoders = fill(open_docs())

    again = open_docs()  # a new process, the same (automatic) configuration
    assert {c["name"]: c["encoder"] for c in again.list_collections()} == encoders
    again.upsert_document("潮汐", "english", text=CHINESE)  # later pages do not change a collection's encoder
    assert again.get_collection("english")["encoder"] == encoders["english"]
    assert again.store.encoders() == {encoders["english"]: 3, encoders["chinese"]: 2}

    explicit = open_docs(EXPLICIT_MINILM)  # configured for English: the Chinese collection keeps e5 (no re-encoding)
    calls = spy_queries(explicit, monkeypatch)
    assert explicit.get_collection("chinese")["encoder"] == encoders["chinese"]
    assert explicit.search("海水为什么涨落", collection_name="chinese", top_k=1)["results"][0]["document_name"] == "潮汐"
    assert calls == {encoders["chinese"]: ["海水为什么涨落"]}
    explicit.upsert_document("月亮", "chinese", text="月亮绕着地球转，一个月转一圈。")
    assert explicit.get_collection("chinese")["encoder"] == encoders["chinese"]
    assert explicit.create_collection("new")["encoder"].startswith(MINILM)  # a new collection: the configured one


def test_a_collection_written_before_encoders_were_recorded_keeps_its_pages_encoder(open_docs):
    docs = open_docs()
    encoders = fill(docs)
    store = docs.store
    store._run(lambda con: con.execute(store._sql("UPDATE {collections} SET encoder = NULL")), write=True)
    assert docs.get_collection("english")["encoder"] == encoders["english"]  # its pages' encoder stands for it
    docs.upsert_document("潮汐", "english", text=CHINESE)
    assert docs.store.encoders()[encoders["english"]] == 3 and docs.get_collection("english")["encoder"] == \
        encoders["english"]


def test_a_collection_never_takes_pages_of_another_encoder(open_docs):
    docs = open_docs()
    encoders = fill(docs)
    with pytest.raises(EmbedderMismatchError, match="keeps the encoder of its first pages"):
        docs.store.upsert_document("english", "other", {}, None, [], "some-other/encoder", 384)
    assert docs.store.encoders() == {encoders["english"]: 2, encoders["chinese"]: 2}
