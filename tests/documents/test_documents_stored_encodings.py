"""Pages are stored with their fast-path (MUVERA) encodings, so loading a page index reads them instead
of computing them (issue 7 follow-up). Each test runs on SQLite and on PostgreSQL (``backend``
fixture, tests/conftest.py) with the real local model's token vectors.

What a load computes is observed by counting the pages ``FDEEncoder.encode_pages`` encodes (a spy
around the real method; its results are untouched)."""

from __future__ import annotations

import logging
import sqlite3

import numpy as np
import pytest

from memlane import Documents, Memory
from memlane.documents.late_interaction import FDEEncoder, FDEParams, PageIndex, from_fde, from_half
from memlane.documents.live_index import LiveIndex
from memlane.core.errors import StoreError
from memlane.store import sqlite_schema
from memlane.store.sqlite import register_functions
from support.document_fixtures import encoder, memory  # noqa: F401  (fixtures)

TEXTS = {
    "cats": "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day.",
    "dogs": "Dogs are loyal companions; a dog barks at strangers and loves long walks in the park.",
    "markets": "The stock market fell sharply on Monday as investors sold bank shares.",
    "rates": "The central bank raised interest rates to slow inflation, and bond yields climbed.",
    "nets": "Neural networks learn representations from data with gradient descent.",
    "compilers": "A compiler translates source code into machine code through parsing and optimisation.",
    "alps": "The Alps stretch across eight countries; Mont Blanc is their highest summit.",
    "rivers": "The Danube flows through ten countries before it reaches the Black Sea.",
}
QUERIES = ["does a cat purr?", "interest rates and inflation", "how do neural networks learn", "mountains in Europe"]


@pytest.fixture
def encoded(monkeypatch):
    """How many pages ``FDEEncoder.encode_pages`` has encoded (reset by the tests as they go)."""
    count = {"pages": 0}
    real = FDEEncoder.encode_pages

    def spy(self, tokens, offsets):
        count["pages"] += len(offsets)
        return real(self, tokens, offsets)

    monkeypatch.setattr(FDEEncoder, "encode_pages", spy)
    return count


@pytest.fixture
def narrow(monkeypatch):
    """Indexes that score few candidates exactly, so that the encodings decide which pages come back
    (with the defaults, 200 candidates, a store of a few pages is always scored in full)."""
    monkeypatch.setattr(LiveIndex, "_new_index",
                        lambda self: PageIndex(self.encoder.dims, min_candidates=2, candidates_per_result=1))


def close(stored_fde: bytes, other: bytes | np.ndarray) -> bool:
    """The same encoding up to float32 rounding: encoding pages in batches of other sizes (the pages of
    one upsert, 500 at a load) changes the last bits of the random projections' matrix products."""
    other = from_fde(other) if isinstance(other, bytes) else other
    return np.allclose(from_fde(stored_fde), other, rtol=1e-5, atol=1e-6)


def fill(docs: Documents) -> int:
    docs.create_collection("c")
    for name, text in TEXTS.items():
        docs.upsert_document(name, "c", text=text)
    return len(TEXTS)


def results(docs: Documents) -> list:
    """Every query's hits for several top_k, as (page id, raw score): what must not change."""
    return [[(r["page_id"], r["raw_score"]) for r in docs.search(q, top_k=k)["results"]]
            for q in QUERIES for k in (1, 2, 3)]


def stored(docs: Documents, fde_config: str | None) -> dict:
    return {row.id: row for batch in docs.store.iter_vectors(docs.encoder.name, fde_config) for row in batch}


def forget_encodings(docs: Documents) -> None:
    """The pages as a store written before encodings were stored holds them (the migration's NULLs)."""
    sql = docs.store._sql("UPDATE {pages} SET fde = NULL, fde_config = NULL WHERE tenant = %s")
    docs.store._run(lambda con: con.execute(sql, (docs.store.tenant,)), write=True)


def test_upsert_stores_each_pages_encoding_as_the_index_computes_it(memory, encoder):
    with Documents(memory=memory, encoder=encoder) as docs:
        fill(docs)
        config = docs.index._encoding.encoding_id
        rows = stored(docs, config)
        assert len(rows) == len(TEXTS) and all(row.fde is not None for row in rows.values())
        index = PageIndex(encoder.dims)
        assert index.encoding_id == config
        for row in rows.values():
            expected = index.encode([from_half(row.vectors, encoder.dims)])[0]
            assert np.array_equal(from_fde(row.fde), expected)  # bit for bit
        # asked for other parameters, the store gives no encoding
        assert all(row.fde is None for row in stored(docs, config + "-other").values())


def test_a_fresh_documents_loads_the_stored_encodings_and_finds_the_same(memory, encoder, encoded, narrow):
    with Documents(memory=memory, encoder=encoder) as writer:
        fill(writer)
    encoded["pages"] = 0
    with Documents(memory=memory, encoder=encoder) as fresh:
        from_store = results(fresh)
        assert encoded["pages"] == 0 and len(fresh.index._index) == len(TEXTS)
    # today's load: every page encoded from its token vectors
    with Documents(memory=memory, encoder=encoder) as writer:
        forget_encodings(writer)
    with Documents(memory=memory, encoder=encoder) as recomputed:
        assert results(recomputed) == from_store
        assert encoded["pages"] == len(TEXTS)


def test_pages_written_before_the_migration_are_encoded_once_and_written_back(memory, encoder, encoded, narrow):
    with Documents(memory=memory, encoder=encoder) as docs:
        fill(docs)
        expected = results(docs)
        config = docs.index._encoding.encoding_id
        kept = {page_id: row.fde for page_id, row in stored(docs, config).items()}
        forget_encodings(docs)
        assert all(row.fde is None for row in stored(docs, config).values())
    encoded["pages"] = 0
    with Documents(memory=memory, encoder=encoder) as first:
        assert results(first) == expected
        assert encoded["pages"] == len(TEXTS)
        written = {page_id: row.fde for page_id, row in stored(first, config).items()}
        assert written.keys() == kept.keys()
        for page_id, fde in written.items():
            assert close(fde, kept[page_id])
    encoded["pages"] = 0
    with Documents(memory=memory, encoder=encoder) as second:
        assert results(second) == expected
        assert encoded["pages"] == 0


def test_changed_fast_path_parameters_are_detected_and_the_pages_encoded_again(memory, encoder, encoded,
                                                                               monkeypatch):
    with Documents(memory=memory, encoder=encoder) as docs:
        fill(docs)
        old_config = docs.index._encoding.encoding_id
    params = FDEParams(seed=8, repetitions=10)
    monkeypatch.setattr(LiveIndex, "_new_index", lambda self: PageIndex(
        self.encoder.dims, fde=params, min_candidates=2, candidates_per_result=1))
    encoded["pages"] = 0
    with Documents(memory=memory, encoder=encoder) as changed:
        new_config = changed.index._encoding.encoding_id
        assert new_config != old_config
        first = results(changed)
        assert encoded["pages"] == len(TEXTS)  # the stored encodings were not used
        rows = stored(changed, new_config)
        index = PageIndex(encoder.dims, fde=params)
        for row in rows.values():  # written back, made with the new parameters
            assert close(row.fde, index.encode([from_half(row.vectors, encoder.dims)])[0])
    encoded["pages"] = 0
    with Documents(memory=memory, encoder=encoder) as again:
        assert results(again) == first
        assert encoded["pages"] == 0


def test_catching_up_with_another_process_uses_its_stored_encodings(memory, encoder, encoded):
    with Documents(memory=memory, encoder=encoder) as one, Documents(memory=memory, encoder=encoder) as two:
        one.create_collection("c")
        one.upsert_document("cats", "c", text=TEXTS["cats"])
        assert [r["document_name"] for r in two.search("cat")["results"]] == ["cats"]
        one.upsert_document("rates", "c", text=TEXTS["rates"])
        one.upsert_document("alps", "c", text=TEXTS["alps"])
        encoded["pages"] = 0
        found = two.search("interest rates", top_k=3)["results"]
        assert encoded["pages"] == 0 and len(two.index._index) == 3
        assert found[0]["document_name"] == "rates"
        # this process's own upsert goes into its loaded index with the encoding computed for the store
        encoded["pages"] = 0
        two.upsert_document("dogs", "c", text=TEXTS["dogs"])
        assert encoded["pages"] == 1  # at upsert, once
        assert two.search("a dog barks", top_k=1)["results"][0]["document_name"] == "dogs"
        assert encoded["pages"] == 1


def test_a_store_refusing_the_write_back_still_searches(memory, encoder, encoded, monkeypatch, caplog):
    with Documents(memory=memory, encoder=encoder) as docs:
        fill(docs)
        forget_encodings(docs)
    with Documents(memory=memory, encoder=encoder) as docs:
        def refuse(encodings, fde_config):
            raise StoreError("the store is read-only")

        monkeypatch.setattr(docs.store, "save_encodings", refuse)
        with caplog.at_level(logging.WARNING, logger="memlane.documents.live_index"):
            assert docs.search("does a cat purr?", top_k=1)["results"][0]["document_name"] == "cats"
        assert "could not store the fast-path encodings of 8 pages" in caplog.text
        assert all(row.fde is None for row in stored(docs, docs.index._encoding.encoding_id).values())


def test_a_sqlite_file_from_before_the_migration_is_upgraded_and_searched(tmp_path, embedder, encoder, encoded):
    """A real upgrade: a file at the schema version before the encodings' migration, holding pages
    (copied from a current store, without the new columns), opened by this memlane."""
    current = tmp_path / "current.db"
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(current)}}}, embedder=embedder) as m, \
            Documents(memory=m, encoder=encoder) as docs:
        fill(docs)
        expected = results(docs)
    before = next(n for n, statements in enumerate(sqlite_schema.MIGRATIONS)
                  if any("ADD COLUMN fde" in s for s in statements))
    old = tmp_path / "old.db"
    con = sqlite3.connect(old, isolation_level=None)
    register_functions(con)  # as SQLiteStore does on every connection
    for statements in sqlite_schema.MIGRATIONS[:before]:
        for statement in statements:
            con.execute(statement)
    con.execute(f"PRAGMA user_version = {before}")
    con.execute("ATTACH DATABASE ? AS current", (str(current),))
    for table in ("meta", "doc_collections", "doc_documents", "doc_state"):  # the columns the old schema has
        names = ", ".join(row[1] for row in con.execute(f"PRAGMA main.table_info({table})"))
        con.execute(f"INSERT OR REPLACE INTO {table} ({names}) SELECT {names} FROM current.{table}")
    columns = "tenant, id, document_id, page_number, text, image, encoder, dims, n_tokens, vectors"
    con.execute(f"INSERT INTO doc_pages ({columns}) SELECT {columns} FROM current.doc_pages")
    con.execute("DETACH DATABASE current")
    con.close()

    encoded["pages"] = 0
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(old)}}}, embedder=embedder) as m:
        with Documents(memory=m, encoder=encoder) as docs:
            assert results(docs) == expected
            assert encoded["pages"] == len(TEXTS)
            # the keyword index of pages (a later migration) was filled from the rows already there
            assert keyword_matches(docs, "bank shares") == {"markets": 2, "rates": 1}
        encoded["pages"] = 0
        with Documents(memory=m, encoder=encoder) as docs:
            assert results(docs) == expected
            assert encoded["pages"] == 0
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == sqlite_schema.VERSION


def keyword_matches(docs: Documents, query: str) -> dict[str, int]:
    """The pages a keyword search matches, with how many of the query's terms each holds."""
    docs.settings.feedback_pages = 0  # the query's own terms
    found = docs.search(query, top_k=len(TEXTS), keyword_search=True)
    terms = query.lower().split()
    return {r["document_name"]: sum(t.rstrip("s") in r["text"].lower() for t in terms)
            for r in found["results"] if r["keyword_score"] is not None}


def test_postgres_pages_written_before_keyword_search_are_indexed_when_a_documents_opens(pg, embedder, encoder):
    """PostgreSQL's migration adds the keyword columns empty (the analyser is Python): a document store
    opening fills them for the tenant's pages."""
    with Memory(pg.config(), embedder=embedder) as m:
        with Documents(memory=m, encoder=encoder) as docs:
            fill(docs)
            docs.store._run(lambda con: con.execute("UPDATE memlane_doc_pages SET terms = NULL, nterms = NULL"),
                            write=True)
            assert keyword_matches(docs, "bank shares") == {}
        with Documents(memory=m, encoder=encoder) as docs:
            assert keyword_matches(docs, "bank shares") == {"markets": 2, "rates": 1}
