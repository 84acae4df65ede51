"""The two search paths of the SQLite store agree, and the wide one finds rare matches; the default
search is hybrid and answers as a plain search does."""

import pytest

from memlane import Memory
from memlane.core.config import ProviderSpec
from memlane.core.models import NewMemory

from conftest import sqlite_config


def test_broad_search_widens_until_the_filter_is_satisfied(memory):
    filler = [NewMemory(text=f"Weather report {i}: sunny with light wind", user_id=f"u{i % 7}") for i in range(600)]
    target = NewMemory(text="Quarterly tax filing deadline", user_id="u99", metadata={"tag": "rare"})
    memory.insert(filler + [target])
    results = memory.search("sunny weather", filters={"user_id": "*", "tag": "rare"}, limit=1)["results"]
    assert [r["memory"] for r in results] == ["Quarterly tax filing deadline"]


def test_scoped_and_broad_paths_rank_identically(model_memory):
    texts = ["I play tennis on Sundays", "My sister lives in Rome", "I am allergic to cats",
             "Pasta is my comfort food", "I work night shifts"]
    model_memory.add(texts, user_id="only", infer=False)
    scoped = model_memory.search("what sport do I do?", user_id="only")["results"]
    broad = model_memory.search("what sport do I do?", filters={"user_id": "*"})["results"]
    assert [(r["id"], round(r["score"], 6)) for r in scoped] == [(r["id"], round(r["score"], 6)) for r in broad]
    assert scoped[0]["memory"] == "I play tennis on Sundays"


def test_in_scope_uses_the_scoped_path(memory):
    memory.add("tea", user_id="a", infer=False)
    memory.add("coffee", user_id="b", infer=False)
    memory.add("juice", user_id="c", infer=False)
    results = memory.search("drink", filters={"user_id": {"in": ["a", "b"]}})["results"]
    assert {r["memory"] for r in results} == {"tea", "coffee"}


def test_a_search_is_quick_only_with_a_cached_query_and_no_optional_stage(memory, monkeypatch):
    memory.insert([NewMemory(text="I keep bees on my roof", user_id="u")])
    assert not memory.search_is_quick("who keeps bees?")  # the query vector is not cached yet
    memory.search("who keeps bees?", user_id="u")
    assert memory.search_is_quick("who keeps bees?")  # hybrid on SQLite: the store's own lookups
    assert memory.search_is_quick("who keeps bees?", keyword_search=False)
    assert memory.search_is_quick("who keeps bees?", rerank=True)  # no reranker chosen: the rerank is skipped
    monkeypatch.setattr(memory.config.retrieval, "reranker", ProviderSpec(provider="maxsim"))
    assert not memory.search_is_quick("who keeps bees?", rerank=True)
    assert not memory.search_is_quick("who keeps bees?", filter_memories=True)
    assert memory.search_is_quick("who keeps bees?", keyword_search=True, rerank=False, filter_memories=False)


ORDERS = ["The order status page shows every order status", "Check the order status of a delayed order",
          "Order status emails arrive daily", "An order status question for support",
          "Parcel XJ-9000 waits at the Leeds depot"]
QUESTION = "order status of XJ-9000"


def test_a_search_without_flags_is_hybrid_and_answers_as_a_plain_search(tmp_path, hashing_embedder):
    with Memory(sqlite_config(tmp_path / "m.db"), embedder=hashing_embedder) as memory:
        memory.add(ORDERS, user_id="u", infer=False)
        default = memory.search(QUESTION, user_id="u", limit=5)
        hybrid = memory.search(QUESTION, user_id="u", limit=5, keyword_search=True)
        vector = memory.search(QUESTION, user_id="u", limit=5, keyword_search=False)
    assert [r["id"] for r in default["results"]] == [r["id"] for r in hybrid["results"]]
    assert default["results"][0]["memory"] == ORDERS[-1]  # its rare words lift it
    assert vector["results"][-1]["memory"] == ORDERS[-1]  # by meaning alone it is last
    assert set(default) == {"results"} and "scores" not in default["results"][0]  # mem0's shape, as a plain search
    assert "metadata" in hybrid and "scores" in hybrid["results"][0]  # a flag given: advanced retrieval


def test_a_written_setting_asks_as_a_flag_does(tmp_path, hashing_embedder):
    config = {**sqlite_config(tmp_path / "m.db"), "retrieval": {"keyword_search": True}}
    with Memory(config, embedder=hashing_embedder) as memory:
        memory.add(ORDERS, user_id="u", infer=False)
        found = memory.search(QUESTION, user_id="u")
    assert found["metadata"]["stages_requested"] == ["keyword_search"] and found["metadata"]["advanced_retrieval"]


def test_a_default_search_skips_a_failing_keyword_stage_and_raises_when_the_store_fails(tmp_path, hashing_embedder,
                                                                                         monkeypatch, caplog):
    from memlane.core.errors import StoreError

    with Memory(sqlite_config(tmp_path / "m.db"), embedder=hashing_embedder) as memory:
        memory.add(ORDERS, user_id="u", infer=False)
        vector = memory.search(QUESTION, user_id="u", keyword_search=False)

        def broken(*args, **kwargs):
            raise StoreError("the keyword index is damaged")

        monkeypatch.setattr(type(memory.store), "keyword_search", broken)
        found = memory.search(QUESTION, user_id="u")
        assert [r["id"] for r in found["results"]] == [r["id"] for r in vector["results"]]  # the vector order
        assert set(found) == {"results"} and "keyword index is damaged" in caplog.text
        monkeypatch.setattr(type(memory.store), "search", broken)
        with pytest.raises(StoreError, match="damaged"):
            memory.search(QUESTION, user_id="u")


def test_searches_of_a_sqlite_store_take_turns(tmp_path, hashing_embedder, monkeypatch):
    """Threads searching SQLite stores do their store work one at a time (their query embedding is not
    held up); a search of a store without turns (PostgreSQL) is not limited."""
    import threading
    import time

    from memlane.store.sqlite import SQLiteStore

    config = {**sqlite_config(tmp_path / "m.db"), "retrieval": {"reranker": {"provider": "maxsim"}}}
    with Memory(config, embedder=hashing_embedder) as memory:
        memory.add(ORDERS, user_id="u", infer=False)
        inside, most = [0], [0]
        lock = threading.Lock()
        real = SQLiteStore.search

        def counted(self, *args, **kwargs):
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
            time.sleep(0.01)
            try:
                return real(self, *args, **kwargs)
            finally:
                with lock:
                    inside[0] -= 1

        monkeypatch.setattr(SQLiteStore, "search", counted)

        def searches(**flags) -> int:
            most[0] = 0
            threads = [threading.Thread(target=memory.search, args=(f"{QUESTION} {i}",),
                                        kwargs={"user_id": "u", **flags}) for i in range(8)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            return most[0]

        assert searches() == 1 and searches(keyword_search=False) == 1
        assert searches(rerank=True) > 1  # a search that may wait for a model takes no turn
        monkeypatch.setattr(SQLiteStore, "SEARCH_SLOTS", None)
        assert searches() > 1
