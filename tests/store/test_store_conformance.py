"""One behaviour on every store backend: each test runs on SQLite and on PostgreSQL
(``backend`` fixture, tests/conftest.py) through the public ``Memory`` API with the real
local model. A difference between the backends is a bug of the newer backend.

The filter table runs on both backends in tests/test_filter_semantics.py.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from memlane import Memory, MemoryNotFoundError
from memlane.core.errors import EmbedderMismatchError, ScopeError, StoreError
from memlane.core.models import NewMemory
from memlane.core.models import MemoryRecord
from memlane.core.changes import Invalidate
from memlane.store import ChangeSet, Delete, Update
from support.notes import NOTES
from support.counting import TokenCounting


@pytest.fixture
def memory(backend, hashing_embedder):
    """A fresh store on each backend with the hashing embedder: these tests are about the store."""
    with Memory(backend(), embedder=hashing_embedder) as m:
        yield m


@pytest.fixture
def model_memory(backend, embedder):
    """The same with the real model, for tests of what the model's vectors mean."""
    with Memory(backend(), embedder=embedder) as m:
        yield m


def texts(result):
    return [r["memory"] for r in result["results"]]


# -- CRUD ------------------------------------------------------------------------------------------


def test_crud_round_trip(memory):
    added = memory.add([{"role": "user", "content": "I like green tea"}], user_id="alice", infer=False,
                       metadata={"topic": "drinks", "level": 2, "nested": {"ok": True}})
    mid = added["results"][0]["id"]
    item = memory.get(mid)
    assert item["memory"] == "I like green tea" and item["user_id"] == "alice"
    assert item["metadata"] == {"topic": "drinks", "level": 2, "nested": {"ok": True}}
    assert item["created_at"].endswith("+00:00") and item["source_message_ids"] == added["message_ids"]

    updated = memory.update(mid, "I like oolong tea", metadata={"topic": "drinks", "level": 3})
    assert updated["memory"] == "I like oolong tea" and updated["metadata"]["level"] == 3
    assert memory.search("oolong", user_id="alice")["results"][0]["id"] == mid
    memory.delete(mid)
    assert memory.get(mid) is None
    with pytest.raises(MemoryNotFoundError):
        memory.delete(mid)
    with pytest.raises(MemoryNotFoundError):
        memory.update(mid, "gone")
    assert memory.info()["memories"] == 0


def test_get_all_is_newest_first_with_limit(memory):
    for i in range(5):
        memory.add(f"note number {i}", user_id="u", infer=False)
    assert texts(memory.get_all(user_id="u", limit=3)) == ["note number 4", "note number 3", "note number 2"]


def test_search_scores_are_cosine_similarities(model_memory, embedder):
    model_memory.add(["I play tennis on Sundays", "My sister lives in Rome", "Pasta is my comfort food"],
               user_id="u", infer=False)
    results = model_memory.search("what sport do I play?", user_id="u", keyword_search=False)["results"]
    assert results[0]["memory"] == "I play tennis on Sundays"
    query = embedder.embed(["what sport do I play?"], "query")[0]
    for r in results:
        expected = float(query @ embedder.embed([r["memory"]], "document")[0])
        assert r["score"] == pytest.approx(expected, abs=1e-4)
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    cut = results[1]["score"]
    assert texts(model_memory.search("what sport do I play?", user_id="u", threshold=cut, keyword_search=False)) == texts(
        {"results": results[:2]})
    assert len(model_memory.search("what sport do I play?", user_id="u", limit=1)["results"]) == 1


# -- scope rules -----------------------------------------------------------------------------------


def test_scopes_are_isolated_and_combine_with_and(memory):
    memory.add("alice likes cats", user_id="alice", infer=False)
    memory.add("alice's bot likes dogs", user_id="alice", agent_id="bot", infer=False)
    memory.add("bob likes birds", user_id="bob", infer=False)
    assert sorted(texts(memory.get_all(user_id="alice"))) == ["alice likes cats", "alice's bot likes dogs"]
    assert texts(memory.get_all(user_id="alice", agent_id="bot")) == ["alice's bot likes dogs"]
    assert texts(memory.search("pets", user_id="bob")) == ["bob likes birds"]
    assert len(memory.search("pets", filters={"user_id": "*"})["results"]) == 3
    assert sorted(texts(memory.search("pets", filters={"user_id": {"in": ["alice", "bob"]}, "agent_id": None}))) == [
        "alice likes cats", "bob likes birds"]
    with pytest.raises(ScopeError):
        memory.search("pets")
    with pytest.raises(ScopeError):
        memory.get_all()


def test_delete_all_and_purge_touch_only_the_scope(memory):
    a = memory.add("alice likes cats", user_id="alice", infer=False)["results"][0]["id"]
    b = memory.add("bob likes birds", user_id="bob", infer=False)["results"][0]["id"]
    assert memory.delete_all(user_id="alice")["deleted"] == 1
    assert memory.get(a) is None and memory.get(b) is not None
    assert [e["event"] for e in memory.history(a)] == ["ADD", "DELETE"]  # history outlives the memory
    assert memory.delete_all(user_id="bob", purge=True)["deleted"] == 1
    assert memory.history(b) == [] and memory.get_messages(user_id="bob") == []
    assert [m["content"] for m in memory.get_messages(user_id="alice")] == ["alice likes cats"]


def test_messages_are_the_latest_oldest_first(memory):
    memory.add([f"message {i}" for i in range(6)], user_id="u", infer=False)
    assert [m["content"] for m in memory.get_messages(user_id="u", limit=3)] == ["message 3", "message 4", "message 5"]


# -- history, validity, as_of ----------------------------------------------------------------------


def test_history_records_every_change(memory):
    mid = memory.add("I live in Paris", user_id="u", infer=False)["results"][0]["id"]
    memory.update(mid, "I live in Lyon")
    memory.update(mid, metadata={"moved": True})
    memory.delete(mid)
    events = memory.history(mid)
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in events] == [
        ("ADD", None, "I live in Paris"), ("UPDATE", "I live in Paris", "I live in Lyon"),
        ("UPDATE", "I live in Lyon", "I live in Lyon"), ("DELETE", "I live in Lyon", None)]
    assert all(e["user_id"] == "u" for e in events)
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)


def test_validity_include_invalid_and_as_of(memory):
    pizza = memory.add("I love cheese pizza.", user_id="u")["results"][0]["id"]
    moment = memory.get(pizza)["updated_at"]
    changed = memory.add("I don't like cheese pizza anymore.", user_id="u")
    assert {r["event"] for r in changed["results"]} == {"DELETE", "ADD"}
    old = memory.get(pizza)  # invalidated, not erased
    assert old["valid_to"] and "contradicted" in old["invalid_reason"] and old["superseded_by"]

    def ids(result):
        return {r["id"] for r in result["results"]}

    assert pizza not in ids(memory.get_all(user_id="u"))
    assert pizza not in ids(memory.search("pizza", user_id="u"))
    assert pizza in ids(memory.get_all(user_id="u", include_invalid=True))
    assert pizza in ids(memory.search("pizza", user_id="u", include_invalid=True))
    then = memory.get_all(user_id="u", as_of=moment)["results"]
    assert [r["id"] for r in then] == [pizza] and "valid_to" not in then[0]
    assert [r["id"] for r in memory.search("pizza", user_id="u", as_of=moment)["results"]] == [pizza]
    assert memory.get_all(user_id="u", as_of="2000-01-01")["results"] == []
    assert memory.history(pizza)[-1]["event"] == "DELETE"


# -- hybrid keyword search -------------------------------------------------------------------------

@pytest.fixture
def hybrid(backend, embedder):
    with Memory(backend(keyword_search=True), embedder=embedder) as m:
        m.add(NOTES, user_id="u", infer=False, metadata={"kind": "note"})
        m.add(["Order XJ-9000 was cancelled by another customer"], user_id="other", infer=False)
        yield m


def test_keyword_search_english_and_chinese(hybrid):
    result = hybrid.search("XJ-9000", user_id="u", limit=3)
    assert result["results"][0]["memory"] == "Order XJ-9000 shipped to the Berlin warehouse"
    assert result["results"][0]["scores"]["keyword"] > 0
    assert all("cancelled" not in r["memory"] for r in result["results"])  # another user's memory
    assert hybrid.search("火锅", user_id="u", limit=1)["results"][0]["memory"] == "我喜欢吃四川火锅"
    assert hybrid.search("龙井", user_id="u", limit=1)["results"][0]["memory"] == "我住在杭州，每天喝龍井茶"
    stemmed = hybrid.search("rotating passwords", user_id="u", limit=1)["results"][0]
    assert stemmed["memory"].startswith("The staging server") and stemmed["scores"]["keyword"] > 0
    wide = hybrid.search("XJ-9000", filters={"user_id": "*"}, limit=2)
    assert sorted(texts(wide)) == ["Order XJ-9000 shipped to the Berlin warehouse",
                                   "Order XJ-9000 was cancelled by another customer"]


def test_keyword_index_follows_updates_and_deletes(hybrid):
    mid = hybrid.get_all(user_id="u", filters={"memory": {"contains": "XJ-9000"}})["results"][0]["id"]
    hybrid.update(mid, "Order QZ-7 shipped to Hamburg")
    top = hybrid.search("QZ-7", user_id="u", limit=1)["results"][0]
    assert top["id"] == mid and top["scores"]["keyword"] > 0
    assert all("keyword" not in r["scores"] for r in hybrid.search("XJ-9000", user_id="u")["results"])
    hybrid.delete(mid)
    assert all(r["id"] != mid for r in hybrid.search("QZ-7", user_id="u")["results"])


def test_both_backends_rank_alike(pg, tmp_path, embedder):
    """The same memories and queries give the same order on SQLite and PostgreSQL."""
    from conftest import sqlite_config

    corpus = NOTES + ["Berlin has a great techno scene", "The warehouse in Berlin closes at 6pm",
                      "Password managers keep passwords safe", "My brother works as a nurse in Berlin"]
    queries = ["Berlin warehouse", "nurse", "password", "火锅", "sister in Toronto"]
    results = {}
    for name, config in (("sqlite", sqlite_config(tmp_path / "a.db")), ("postgres", pg.config())):
        with Memory(config, embedder=embedder) as m:
            m.insert([NewMemory(text=t, user_id="u", id=f"m{i:02d}", created_at=f"2026-01-01T00:00:{i:02d}+00:00")
                      for i, t in enumerate(corpus)])
            results[name] = [
                [(r["id"], round(r["score"], 4)) for r in m.search(q, user_id="u", limit=5)["results"]]
                + [r["id"] for r in m.search(q, user_id="u", limit=5, keyword_search=True)["results"]]
                + [(r["id"], round(r["score"], 4)) for r in m.search(q, filters={"user_id": "*"}, limit=5)["results"]]
                for q in queries]
    assert results["postgres"] == results["sqlite"]


# -- one BM25 rule (store/bm25.py): scope-local statistics, the same scores on both backends ---------

BM25_CORPUS = [  # (text, user, agent, metadata); two identical texts tie, so insertion order decides
    *[(text, "u", None, {"kind": "note"}) for text in NOTES],
    ("Berlin has a great techno scene", "u", None, {"kind": "travel"}),
    ("The warehouse in Berlin closes at 6pm", "u", "a", {"kind": "work"}),
    ("Password managers keep passwords safe and passwords short", "u", None, {"kind": "note"}),
    ("My brother works as a nurse in Berlin", "u", "a", {"kind": "travel"}),
    ("Berlin in winter: Berlin is grey, Berlin is cold", "v", "a", {"kind": "travel"}),
    ("We ate 火锅 in Berlin with the team", "v", "a", {"kind": "travel"}),
    ("The techno scene in Berlin", "u", "a", {"kind": "travel"}),
    ("The techno scene in Berlin", "u", "a", {"kind": "travel"}),
    ("四川火锅很辣，火锅店在杭州", "v", None, {"kind": "food"}),
]

BM25_QUERIES = [  # (query, scope keyword arguments of Memory.search / the filter)
    ("Berlin warehouse", {"user_id": "u"}),
    ("passwords", {"user_id": "u"}),
    ("techno scene Berlin", {"agent_id": "a"}),
    ("Berlin", {"user_id": "u", "filters": {"kind": "travel"}}),
    ("Berlin", {"user_id": "u", "agent_id": "a"}),
    ("火锅", {"user_id": "u"}),
    ("四川火锅", {"agent_id": "a"}),
    ("龍井茶 杭州", {"filters": {"user_id": "*"}}),
    ("Berlin nurse 火锅", {"filters": {"user_id": "*"}}),
]


def test_keyword_scores_are_equal_on_both_backends(pg, tmp_path, embedder):
    """Every query x scope of the table gives the same keyword scores (to 1e-9) in the same order,
    at the store and in the scores["keyword"] users see."""
    from conftest import sqlite_config

    seen = {}
    for name, config in (("sqlite", sqlite_config(tmp_path / "a.db")), ("postgres", pg.config())):
        with Memory(config, embedder=embedder) as m:
            m.insert([NewMemory(text=t, user_id=u, agent_id=a, metadata=meta, id=f"m{i:02d}",
                                created_at=f"2026-01-01T00:00:{i:02d}+00:00")
                      for i, (t, u, a, meta) in enumerate(BM25_CORPUS)])
            seen[name] = [_keyword_scores(m, q, **kw) for q, kw in BM25_QUERIES]
    for (query, kw), sqlite, postgres in zip(BM25_QUERIES, seen["sqlite"], seen["postgres"]):
        ranked_sqlite, shown_sqlite = sqlite
        ranked_postgres, shown_postgres = postgres
        assert ranked_sqlite, (query, kw)  # every row of the table finds something
        assert [i for i, _ in ranked_postgres] == [i for i, _ in ranked_sqlite], (query, kw)
        for (_, a), (_, b) in zip(ranked_sqlite, ranked_postgres):
            assert abs(a - b) <= 1e-9, (query, kw, a, b)
        assert shown_postgres.keys() == shown_sqlite.keys(), (query, kw)
        for i in shown_sqlite:
            assert abs(shown_sqlite[i] - shown_postgres[i]) <= 1e-9, (query, kw, i)
    # the tie: identical texts in one scope rank by insertion order
    techno = [i for i, _ in seen["sqlite"][2][0]]
    assert techno.index("m12") < techno.index("m13")


def _keyword_scores(m, query, **kw):
    """(the store's [(id, bm25)] best first, {id: scores["keyword"]} of the hybrid search)."""
    from memlane.core import scope

    # the search's own filter (no memory of the corpus is invalidated, so validity adds nothing)
    where = scope.scoped_filter(scope.scope_ids(kw.get("user_id"), kw.get("agent_id"), None), kw.get("filters"))
    ranked = [(r.id, score) for r, score, _ in m.store.keyword_search(query, m.embeddings.query(query), where, 50)]
    shown = {r["id"]: r["scores"]["keyword"] for r in m.search(query, limit=50, keyword_search=True, **kw)["results"]
             if "keyword" in r["scores"]}
    return ranked, shown


def test_another_users_memories_do_not_move_keyword_scores(backend, embedder):
    with Memory(backend(keyword_search=True), embedder=embedder) as m:
        m.add(NOTES + ["The Berlin warehouse ships on Mondays"], user_id="u", infer=False)

        def scores():
            return {r["id"]: r["scores"].get("keyword") for r in m.search("Berlin warehouse XJ-9000", user_id="u",
                                                                         limit=20)["results"]}

        before = scores()
        assert sum(1 for v in before.values() if v) == 2
        # many memories holding the query's terms, and long ones, for other users and agents
        m.add([f"Berlin warehouse order XJ-9000 number {i} " + "filler words " * i for i in range(30)],
              user_id="other", infer=False)
        m.add(["Berlin warehouse"] * 5, agent_id="robot", infer=False)
        assert scores() == before


def test_another_tenants_memories_do_not_move_keyword_scores(backend, embedder, tmp_path):
    """The server's tenants (tenancy.py): files of their own on SQLite, one table on PostgreSQL."""
    from memlane.hosting.tenancy import Tenants

    tenants = Tenants(tmp_path / "home", backend(keyword_search=True), embedder=embedder)
    try:
        acme, globex = tenants.memory("acme"), tenants.memory("globex")
        acme.add(NOTES + ["The Berlin warehouse ships on Mondays"], user_id="u", infer=False)

        def scores():
            return {r["id"]: r["scores"].get("keyword") for r in acme.search("Berlin warehouse", user_id="u",
                                                                            limit=20)["results"]}

        before = scores()
        assert sum(1 for v in before.values() if v) == 2
        globex.add([f"Berlin warehouse number {i} " + "filler " * i for i in range(30)], user_id="u", infer=False)
        assert scores() == before
        assert "keyword" in globex.search("Berlin warehouse", user_id="u", limit=1)["results"][0]["scores"]
    finally:
        tenants.close()


# -- concurrency -----------------------------------------------------------------------------------


def test_threads_write_and_read_at_once(memory):
    def work(i):
        memory.add([f"thread {i} fact {j}" for j in range(3)], user_id=f"user{i % 4}", infer=False)
        return len(memory.search("fact", user_id=f"user{i % 4}")["results"])

    with ThreadPoolExecutor(8) as pool:
        assert all(n >= 3 for n in pool.map(work, range(16)))
    assert memory.info()["memories"] == 48
    assert sum(len(memory.get_all(user_id=f"user{k}")["results"]) for k in range(4)) == 48


def test_concurrent_updates_of_one_memory_lose_no_write(memory):
    mid = memory.add("version 0", user_id="u", infer=False)["results"][0]["id"]
    store = memory.store
    start = threading.Barrier(6)

    def append(i):
        start.wait()
        for j in range(5):  # each update appends a source id: a lost write would lose one
            store.apply(ChangeSet(updates=[Update(id=mid, updated_at=f"2026-01-01T00:00:{i}{j}+00:00",
                                                  text=f"version {i}-{j}", source_message_ids=[f"s{i}-{j}"])]))

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(append, range(6)))
    record = store.get(mid)
    assert sorted(record.source_message_ids[1:]) == sorted(f"s{i}-{j}" for i in range(6) for j in range(5))
    events = memory.history(mid)[1:]
    assert len(events) == 30
    # each update saw the text the previous one wrote: the chain has no gap
    assert [e["old_memory"] for e in events[1:]] == [e["new_memory"] for e in events[:-1]]
    assert events[-1]["new_memory"] == record.text


# -- bad input leaves nothing half-written ---------------------------------------------------------


def test_a_failing_change_set_writes_nothing(memory, embedder):
    keep = memory.add("kept memory", user_id="u", infer=False)["results"][0]["id"]
    before = (memory.info(), memory.history(keep), memory.get(keep))
    vector = embedder.embed(["new"], "document")[0]
    new = MemoryRecord(id="fresh", text="new", hash="h", created_at="2026-01-01T00:00:00+00:00",
                       updated_at="2026-01-01T00:00:00+00:00", user_id="u", vector=vector)
    with pytest.raises(MemoryNotFoundError):
        memory.store.apply(ChangeSet(inserts=[new], updates=[Update(id=keep, updated_at="2026-01-02T00:00:00+00:00",
                                                                    text="changed")],
                                     deletes=[Delete("no-such-id")], keys=["k1"]))
    assert (memory.info(), memory.history(keep), memory.get(keep)) == before
    assert memory.get("fresh") is None and memory.store.known_keys(["k1"]) == set()


def test_duplicate_ids_are_refused_whole(memory):
    memory.insert([NewMemory(text="first", user_id="u", id="same")])
    with pytest.raises(StoreError):
        memory.insert([NewMemory(text="second", user_id="u", id="other"), NewMemory(text="third", user_id="u", id="same")])
    assert texts(memory.get_all(user_id="u")) == ["first"] and memory.get("other") is None
    assert memory.info()["history_events"] == 1


def test_idempotency_keys(memory):
    memory.insert([NewMemory(text="a", user_id="u")], idempotency_keys=["line-1", "line-2"])
    assert memory.store.known_keys(["line-1", "line-3"]) == {"line-1"}


def test_token_vectors_round_trip(backend, embedder):
    with Memory(backend(store_token_vectors=True), embedder=embedder) as m:
        mid = m.add("Late interaction keeps token vectors", user_id="u", infer=False)["results"][0]["id"]
        tokens = m.store.token_vectors([mid, "missing"])
        assert list(tokens) == [mid] and tokens[mid].ndim == 2 and tokens[mid].shape[1] == 384
        assert np.allclose(np.linalg.norm(tokens[mid], axis=1), 1, atol=1e-2)
        m.update(mid, "Completely different words now")
        assert m.store.token_vectors([mid]) == {}




TEA = ["green tea in the morning", "black tea with milk", "tea ceremony in Kyoto", "coffee is not tea"]


def _reranked(m, query):
    result = m.search(query, user_id="u", limit=10, rerank=True)
    assert result["metadata"]["stages"]["rerank"]["ran"]
    return [(r["id"], round(r["scores"]["rerank"], 2)) for r in result["results"]]


def test_a_rerank_keeps_the_token_vectors_it_computes(backend, hashing_embedder):
    counting = TokenCounting(hashing_embedder)
    # maxsim chosen, its token vectors not stored at insert: the first rerank computes them
    with Memory(backend(reranker={"provider": "maxsim"}, store_token_vectors=False), embedder=counting) as m:
        ids = [r["id"] for r in m.add(TEA, user_id="u", infer=False)["results"]]
        assert m.store.token_vectors(ids) == {} and counting.token_texts == []
        first = _reranked(m, "tea")
        assert sorted(counting.token_texts) == sorted(TEA + ["tea"])  # the candidates' and the query's
        assert set(m.store.token_vectors(ids)) == set(ids)
        counting.token_texts.clear()
        assert _reranked(m, "tea") == first  # the same order and scores from the kept vectors
        assert _reranked(m, "milk tea") and counting.token_texts == ["milk tea"]  # the query's only
        m.update(ids[1], "oolong tea with milk")
        assert set(m.store.token_vectors(ids)) == set(ids) - {ids[1]}  # the new text's are not the old's
        counting.token_texts.clear()
        _reranked(m, "tea")
        assert counting.token_texts == ["oolong tea with milk"]
        assert set(m.store.token_vectors(ids)) == set(ids)


@pytest.mark.parametrize("change, kept", [
    (None, 1),  # unchanged since read: kept
    ("update text", 0),
    ("update metadata", 0),  # updated_at moved: the read may be stale
    ("invalidate", 0),
    ("delete", 0),
])
def test_token_vectors_are_kept_only_for_memories_unchanged_since_read(memory, change, kept):
    mid = memory.add("green tea in the morning", user_id="u", infer=False)["results"][0]["id"]
    read = memory.store.get(mid)
    if change == "update text":
        memory.update(mid, "black coffee at noon")
    elif change == "update metadata":
        memory.update(mid, metadata={"mood": "calm"})
    elif change == "invalidate":
        memory.store.apply(ChangeSet(invalidations=[Invalidate(id=mid, reason="retracted")]))
    elif change == "delete":
        memory.delete(mid)
    tokens = np.ones((3, memory.embeddings.dims), dtype=np.float32) / np.sqrt(memory.embeddings.dims)
    assert memory.store.keep_token_vectors([(read, tokens)]) == kept
    assert len(memory.store.token_vectors([mid])) == kept


def test_the_maxsim_reranker_chosen_stores_token_vectors_at_insert(backend, hashing_embedder):
    # rerank on by default without a reranker chosen reranks nothing (rerank.unchosen_reason): no token vectors
    table = [({}, False), ({"rerank": True}, False), ({"reranker": {"provider": "maxsim"}}, True),
             ({"rerank": True, "reranker": {"provider": "maxsim"}}, True),
             ({"reranker": {"provider": "maxsim"}, "store_token_vectors": False}, False),
             ({"store_token_vectors": True}, True),
             ({"rerank": True, "reranker": {"provider": "llm", "config": {}}}, False)]
    for settings, at_insert in table:
        with Memory(backend(**settings), embedder=hashing_embedder) as m:
            mid = m.add("green tea in the morning", user_id="u", infer=False)["results"][0]["id"]
            assert (mid in m.store.token_vectors([mid])) is at_insert, settings


def test_reembed_drops_the_old_embedders_token_vectors(backend):
    from memlane.embeddings.hashing import HashingEmbedder

    config = backend(reranker={"provider": "maxsim"})
    with Memory(config, embedder=HashingEmbedder(384)) as m:
        ids = [r["id"] for r in m.add(TEA, user_id="u", infer=False)["results"]]
        assert set(m.store.token_vectors(ids)) == set(ids)
    with Memory.reembed(config, embedder=HashingEmbedder(256)) as m:
        assert m.store.token_vectors(ids) == {}
        _reranked(m, "tea")  # computed again with the new embedder (384-dim ones would fail MaxSim)
        assert {t.shape[1] for t in m.store.token_vectors(ids).values()} == {256}


# -- provenance and re-embedding -------------------------------------------------------------------


@pytest.mark.parametrize("inserted, updates, expected", [
    (["m1", "m1", "m2"], [], ["m1", "m2"]),
    (["m1"], [["m2", "m2"]], ["m1", "m2"]),
    (["m1", "m2"], [["m2", "m1", "m3"], ["m3", "m4", "m4"]], ["m1", "m2", "m3", "m4"]),
    ([], [["m1", "m1"]], ["m1"]),
])
def test_source_message_ids_are_kept_once_in_order(memory, inserted, updates, expected):
    memory.insert([NewMemory(text="I like tea", user_id="u", id="tea", source_message_ids=inserted)])
    for i, sources in enumerate(updates):
        memory.store.apply(ChangeSet(updates=[Update(id="tea", updated_at=f"2026-01-0{i + 1}T00:00:00+00:00",
                                                     source_message_ids=sources)]))
    assert memory.store.get("tea").source_message_ids == expected
    assert memory.get("tea")["source_message_ids"] == expected


class _Negated:
    """The real model's vectors negated, under another name: a search only ranks right once every
    stored vector was replaced by this embedder's (with the old ones, scores flip sign)."""

    def __init__(self, embedder):
        self.inner, self.name, self.dims = embedder, "test/negated-minilm", embedder.dims

    def embed(self, texts, purpose):
        return -np.asarray(self.inner.embed(texts, purpose))


def test_reembed_swaps_every_vector_and_resumes_after_interruption(backend, embedder):
    config = backend()
    facts = [f"fact {i} about green tea" for i in range(20)] + ["I drive a red car"]
    with Memory(config, embedder=embedder) as m:
        m.add(facts, user_id="u", infer=False)
    negated = _Negated(embedder)

    class Interrupted(Exception):
        pass

    def stop(done, total):
        raise Interrupted

    with pytest.raises(Interrupted):
        Memory.reembed(config, embedder=negated, batch_size=8, progress=stop)
    with pytest.raises(EmbedderMismatchError):  # half done: still bound to the old embedder
        Memory(config, embedder=negated)

    seen = []
    with Memory.reembed(config, embedder=negated, batch_size=8, progress=lambda done, total: seen.append(done)) as m:
        assert seen[0] > 8 and seen[-1] == len(facts)  # the first batch was not embedded again
        info = m.info()
        assert (info["embedder"], info["memories"], info["history_events"]) == ("test/negated-minilm", 21, 21)
        best = m.search("which vehicle do I drive?", user_id="u", limit=1)["results"][0]
        assert best["memory"] == "I drive a red car" and best["score"] > 0.3
    with pytest.raises(EmbedderMismatchError):
        Memory(config, embedder=embedder)


def test_a_store_refusing_the_token_write_back_still_reranks(backend, hashing_embedder, monkeypatch, caplog):
    with Memory(backend(reranker={"provider": "maxsim"}, store_token_vectors=False), embedder=hashing_embedder) as memory:
        ids = [r["id"] for r in memory.add(TEA, user_id="u", infer=False)["results"]]

        def refuse(items):
            raise StoreError("the store is read-only")

        monkeypatch.setattr(memory.store, "keep_token_vectors", refuse)
        with caplog.at_level("WARNING", logger="memlane.retrieval"):
            assert _reranked(memory, "tea")  # the rerank ran on the vectors it computed
        assert "could not keep the token vectors of 4 memories" in caplog.text
        assert memory.store.token_vectors(ids) == {}
