"""A collection's encoder chosen by its user (``encoder``: ``english``, ``multilingual``, ``auto``) at its
creation or first upsert, refused when unknown (naming the allowed ones) or when it differs from the
encoder of a collection holding documents; ``reencode_collection`` gives an existing collection another
encoder in one transaction; a warning when pages that are not English go into a collection whose English
encoder was chosen automatically. Every test runs on SQLite and PostgreSQL (``backend``), with the
real models."""

from __future__ import annotations

import asyncio

import pytest

from memlane import AsyncDocuments, Documents
from memlane.core.errors import InvalidInputError
from memlane.documents.errors import CollectionChangedError, EncoderConflictError
from support.document_fixtures import open_docs  # noqa: F401 (a fixture)

ENGLISH = "The moon's gravity pulls the oceans towards it, which makes the tides rise and fall twice a day."
ENGLISH_2 = "Knead the dough for ten minutes and let it rise in a warm place before baking the loaf."
CHINESE = "月球的引力牵引着海水，使海面每天涨落两次，这就是潮汐。"
CHINESE_2 = "面团揉十分钟，放在温暖的地方发酵，然后再烤面包。"

MINILM = "local/all-MiniLM-L6-v2/"
E5 = "e5/"
EXPLICIT_MINILM = {"documents": {"encoder": {"provider": "local", "model": "all-MiniLM-L6-v2"}}}
#: an encoder service (never called here: nothing listens on port 9, the discard port)
HTTP = {"documents": {"encoder": {"provider": "http", "url": "http://127.0.0.1:9/embed", "dims": 128}}}


def state(docs: Documents) -> dict:
    """What a collection holds: its encoder, pages by encoder, and every page's document, number and text."""
    pages = sorted((p.document_id, p.page_number, p.text) for p in docs.store.collection_pages("notes"))
    return {"encoder": docs.get_collection("notes")["encoder"], "by_encoder": docs.store.encoders(), "pages": pages}


@pytest.mark.parametrize("config, encoder, first_text, at_create, recorded", [
    ({}, "english", CHINESE, MINILM, MINILM),  # the user's choice wins over the pages' language
    ({}, "multilingual", ENGLISH, E5, E5),
    ({}, " Multilingual ", ENGLISH, E5, E5),  # case and spaces do not matter
    ({}, "auto", CHINESE, None, E5),  # auto: chosen by the first pages, as without the option
    ({}, None, ENGLISH, None, MINILM),
    (EXPLICIT_MINILM, "multilingual", ENGLISH, E5, E5),  # wins over the configured encoder too
    (EXPLICIT_MINILM, "auto", CHINESE, MINILM, MINILM),  # auto: the configured one
    (HTTP, "english", ENGLISH, MINILM, MINILM),  # a local model chosen beside a configured service
], ids=["english", "multilingual", "spelling", "auto", "none", "over-config", "auto-config", "over-http"])
def test_the_encoder_chosen_at_creation_is_the_collections(open_docs, config, encoder, first_text, at_create,
                                                           recorded):
    docs = open_docs(config)
    created = docs.create_collection("notes", encoder=encoder)["encoder"]
    assert created is None if at_create is None else created.startswith(at_create)
    docs.upsert_document("first", "notes", text=first_text)
    assert state(docs)["encoder"].startswith(recorded)
    again = open_docs(config)  # another process: the store kept it, and searches with it
    assert again.get_collection("notes")["encoder"] == state(docs)["encoder"]
    assert again.search(first_text, collection_name="notes", top_k=1)["results"][0]["document_name"] == "first"


@pytest.mark.parametrize("call", ["create", "upsert", "reencode"])
@pytest.mark.parametrize("encoder", ["klingon", "e5", "", 7])
def test_an_unknown_encoder_is_refused_naming_the_allowed_ones(open_docs, call, encoder):
    docs = open_docs()
    docs.create_collection("notes")
    docs.upsert_document("first", "notes", text=ENGLISH)
    before = state(docs)
    with pytest.raises(InvalidInputError) as raised:
        if call == "create":
            docs.create_collection("other", encoder=encoder)
        elif call == "upsert":
            docs.upsert_document("second", "notes", text=CHINESE, encoder=encoder)
        else:
            docs.reencode_collection("notes", encoder)
    assert raised.value.field == "encoder"
    assert all(f"'{name}'" in str(raised.value) for name in ("auto", "english", "multilingual")), raised.value
    assert state(docs) == before and [c["name"] for c in docs.list_collections()] == ["notes"]


def test_the_first_upsert_may_choose_and_a_collection_with_documents_refuses_another(open_docs):
    docs = open_docs()
    assert docs.create_collection("notes", encoder="english")["encoder"].startswith(MINILM)
    # no documents yet: the upsert's choice replaces the one made at creation
    docs.upsert_document("tides", "notes", text=ENGLISH, encoder="multilingual")
    recorded = state(docs)["encoder"]
    assert recorded.startswith(E5) and docs.store.encoders() == {recorded: 1}
    docs.upsert_document("bread", "notes", text=ENGLISH_2, encoder="multilingual")  # the same: fine
    before = state(docs)
    with pytest.raises(EncoderConflictError) as raised:
        docs.upsert_document("潮汐", "notes", text=CHINESE, encoder="english")
    assert raised.value.field == "encoder" and "reencode" in str(raised.value) and recorded in str(raised.value)
    assert state(docs) == before  # nothing written
    # another writer's check: the store refuses it too, in the write's transaction
    english = docs.encoders.of_kind("english")
    with pytest.raises(EncoderConflictError):
        docs.store.upsert_document("notes", "x", {}, None, [], english.name, english.dims, chosen=True)
    docs.delete_document("tides", "notes")
    docs.delete_document("bread", "notes")  # empty again: it may choose anew
    docs.upsert_document("潮汐", "notes", text=CHINESE, encoder="english")
    assert state(docs)["encoder"].startswith(MINILM)


def test_reencode_gives_a_collection_another_encoder_and_keeps_every_page(open_docs):
    docs = open_docs()
    docs.create_collection("notes")
    docs.upsert_document("tides", "notes", text=ENGLISH)  # English first: the English model
    docs.upsert_document("潮汐", "notes", text=CHINESE)
    docs.upsert_document("bread", "notes", text=ENGLISH_2)
    assert docs.search("海水为什么涨落", collection_name="notes", top_k=3)["results"]  # the old index is loaded
    before = state(docs)
    assert before["encoder"].startswith(MINILM)
    old_ids = {p.id for p in docs.store.collection_pages("notes")}

    out = docs.reencode_collection("notes", "multilingual")
    after = state(docs)
    assert out["previous_encoder"] == before["encoder"] and out["encoder"] == after["encoder"]
    assert after["encoder"].startswith(E5) and out["reencoded_pages"] == 3 and out["num_documents"] == 3
    assert after["pages"] == before["pages"] and after["by_encoder"] == {after["encoder"]: 3}
    assert not old_ids & {p.id for p in docs.store.collection_pages("notes")}  # new pages, as an upsert writes

    for reader in (docs, open_docs()):  # this process's index and another process's
        found = reader.search("海水为什么涨落", collection_name="notes", top_k=3)["results"]
        assert found[0]["document_name"] == "潮汐" and len(found) == 3
        everywhere = reader.search("bread dough", top_k=10)["results"]  # the old encoder's index has none left
        assert sorted(r["document_name"] for r in everywhere) == ["bread", "tides", "潮汐"]
    assert docs.reencode_collection("notes", "multilingual")["reencoded_pages"] == 0  # has it already
    assert docs.reencode_collection("notes", "auto")["encoder"].startswith(E5)  # auto: a mix gets e5
    docs.upsert_document("more", "notes", text=CHINESE_2)  # later upserts use the new encoder
    assert docs.store.encoders() == {after["encoder"]: 4}

    docs.create_collection("empty")
    assert docs.reencode_collection("empty")["encoder"] is None  # auto without pages: its first upsert chooses
    out = docs.reencode_collection("empty", "english")  # chosen without pages: recorded
    assert out["encoder"].startswith(MINILM) and out["reencoded_pages"] == 0 and out["previous_encoder"] is None
    assert docs.get_collection("empty")["encoder"] == out["encoder"]


def test_a_failed_reencode_changes_nothing(open_docs, monkeypatch):
    docs = open_docs()
    docs.create_collection("notes")
    docs.upsert_document("tides", "notes", text=ENGLISH)
    docs.upsert_document("潮汐", "notes", text=CHINESE)
    before = state(docs)
    store = type(docs.store)
    insert = store._insert_pages

    def fail_halfway(self, con, pages, encoder, dims):
        insert(self, con, pages[:1], encoder, dims)  # the old pages deleted, one new written, then a failure
        raise RuntimeError("the database went away")

    monkeypatch.setattr(store, "_insert_pages", fail_halfway)
    with pytest.raises(RuntimeError):
        docs.reencode_collection("notes", "multilingual")
    monkeypatch.undo()
    assert state(docs) == before  # one transaction: rolled back whole
    assert docs.search("海水为什么涨落", collection_name="notes", top_k=1)["results"][0]["document_name"] == "潮汐"


def test_a_reencode_overtaken_by_another_write_reads_the_pages_again(open_docs, monkeypatch):
    docs = open_docs()
    writer = open_docs()  # another process
    docs.create_collection("notes")
    docs.upsert_document("tides", "notes", text=ENGLISH)
    read = docs.store.collection_pages
    writes = iter([lambda: writer.upsert_document("潮汐", "notes", text=CHINESE)])

    def read_then_overtaken(name):
        pages = read(name)
        next(writes, lambda: None)()  # the first read is overtaken by another process's upsert
        return pages

    monkeypatch.setattr(docs.store, "collection_pages", read_then_overtaken)
    out = docs.reencode_collection("notes", "multilingual")
    assert out["reencoded_pages"] == 2 and docs.store.encoders() == {out["encoder"]: 2}

    def always_overtaken(name):
        pages = read(name)
        writer.upsert_document("bread", "notes", text=ENGLISH_2)
        return pages

    monkeypatch.setattr(docs.store, "collection_pages", always_overtaken)
    before = docs.get_collection("notes")["encoder"]
    with pytest.raises(CollectionChangedError):
        docs.reencode_collection("notes", "english")
    assert docs.get_collection("notes")["encoder"] == before and set(docs.store.encoders()) == {before}


@pytest.mark.parametrize("config, create_with, upsert_with, first, later, warned", [
    ({}, None, None, ENGLISH, CHINESE, True),  # chosen automatically from English pages, then Chinese ones
    ({}, None, "english", ENGLISH, CHINESE, False),  # the upsert says English is meant
    ({}, None, None, ENGLISH, ENGLISH_2, False),
    ({}, None, None, CHINESE, ENGLISH, False),  # e5 reads English too
    (EXPLICIT_MINILM, None, None, ENGLISH, CHINESE, False),  # configured: chosen by the user
], ids=["auto-english-gets-chinese", "said-english", "english", "e5-gets-english", "configured"])
def test_pages_not_in_english_into_an_automatic_english_collection_are_warned_of(open_docs, config, create_with,
                                                                                 upsert_with, first, later, warned):
    docs = open_docs(config)
    docs.create_collection("notes", encoder=create_with)
    assert "warnings" not in docs.upsert_document("first", "notes", text=first)
    out = docs.upsert_document("later", "notes", text=later, encoder=upsert_with)
    if not warned:
        assert "warnings" not in out
        return
    [warning] = out["warnings"]
    assert "all-MiniLM-L6-v2" in warning and "'multilingual'" in warning and "reencode" in warning
    assert "detected: zh" in warning and out["num_pages"] == 1  # written all the same


def test_async_documents_reencode_with_the_same_code(open_docs):
    docs = open_docs()
    docs.create_collection("notes")
    docs.upsert_document("tides", "notes", text=ENGLISH)

    async def main():
        adocs = AsyncDocuments(documents=docs)
        with pytest.raises(InvalidInputError):
            await adocs.reencode_collection("notes", "klingon")
        return await adocs.reencode_collection("notes", "multilingual")

    out = asyncio.run(main())
    assert out["encoder"].startswith(E5) and docs.store.encoders() == {out["encoder"]: 1}
