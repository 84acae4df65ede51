"""The default (hybrid) search on SQLite reads where the data is: the scoped vector search's scan of the
scope gives the keyword stage its BM25 statistics, its rows and its cosines; the candidates' records are read
with what ranking needs of them (``store.base.SearchReads``), and only the results are read whole."""

import pytest

from memlane import Memory
from memlane.core.models import MemoryRecord
from memlane.retrieval import searcher as searcher_module
from memlane.store import SearchReads
from memlane.store.sqlite import SQLiteStore
from support.counting import built_records

#: one conversation's turns; the words of QUERY are in several, so keyword and vector candidates overlap
TURNS = [f"{who} talked about {topic} on day {day}" for day in range(8) for who, topic in
         (("Caroline", "camping by the lake"), ("Melanie", "painting a sunrise"), ("Caroline", "adoption agencies"),
          ("Melanie", "running after work"), ("Caroline", "the support group"))]
QUERY = "When did Melanie talk about painting a sunrise?"
FIELDS = ("id", "memory", "hash", "metadata", "created_at", "updated_at", "user_id", "actor_id", "role")


@pytest.fixture
def memory(tmp_path, hashing_embedder):
    from conftest import sqlite_config

    with Memory(sqlite_config(tmp_path / "m.db"), embedder=hashing_embedder) as memory:
        for n, text in enumerate(TURNS):
            memory.add([{"role": "user", "name": "Melanie" if "Melanie" in text else "Caroline", "content": text}],
                       user_id="chat", infer=False, metadata={"turn": n})
        yield memory


def test_a_default_search_builds_only_the_records_it_returns(memory, monkeypatch):
    memory.store._scopes.budget = 0  # a store keeping no scope (``scope_cache_rows: 0``)
    built = built_records(monkeypatch, SQLiteStore)
    for _ in range(2):  # the first search of the scope, then one that knows the scope is small
        built.clear()
        results = memory.search(QUERY, user_id="chat", limit=3)["results"]
        assert len(results) == 3
        assert sorted(built) == sorted(hit["id"] for hit in results)  # 40 candidates, 3 records built
        for hit in results:  # whole: as the store holds them
            stored = memory.get(hit["id"])
            assert {k: hit.get(k) for k in FIELDS} == {k: stored.get(k) for k in FIELDS}


def test_a_kept_scope_builds_its_records_once(memory, monkeypatch):
    built = built_records(monkeypatch, SQLiteStore)
    answers = []
    for query in (QUERY, "Caroline adoption agencies", "running after work", QUERY):
        built.clear()
        answers.append(memory.search(query, user_id="chat", limit=3)["results"])
        if len(answers) == 1:  # the scope's first search: its results alone
            assert sorted(built) == sorted(hit["id"] for hit in answers[0])
        elif len(answers) == 2:  # its second keeps it: every row's record, once
            assert len(built) == len(set(built)) == len(TURNS)
        else:
            assert built == []
    assert answers[-1] == answers[0]
    for hit in answers[1]:  # whole: as the store holds them
        stored = memory.get(hit["id"])
        assert {k: hit.get(k) for k in FIELDS} == {k: stored.get(k) for k in FIELDS}


def test_the_keyword_stage_takes_its_statistics_from_the_vector_scan(memory, monkeypatch):
    store = memory.store
    store._keyword_stats.clear()
    store._keyword_stats.computed = 0
    shared = memory.search(QUERY, user_id="chat", limit=5, keyword_search=True)["results"]
    assert store._keyword_stats.computed == 0  # N and avgdl came with the scan; no count of the scope
    assert any("keyword" in hit["scores"] for hit in shared)
    monkeypatch.setattr(searcher_module, "SearchReads", lambda: None)  # each stage reads on its own
    apart = memory.search(QUERY, user_id="chat", limit=5, keyword_search=True)["results"]
    assert store._keyword_stats.computed == 1
    assert [(hit["id"], hit["score"], hit["scores"]) for hit in shared] == \
        [(hit["id"], hit["score"], hit["scores"]) for hit in apart]


def _partial(memory_id: str) -> MemoryRecord:
    return MemoryRecord(memory_id, "", "", "2024-01-01T00:00:00+00:00", "")


def test_whole_reads_the_partial_records_once_and_drops_one_deleted_since():
    reads = SearchReads()
    asked: list[list[int]] = []

    def read_whole(given, keys):
        assert given is reads  # the reads are given, not held (no reference cycle)
        asked.append(list(keys))
        return {key: MemoryRecord(f"m{key}", f"text {key}", "h", "2024-01-01T00:00:00+00:00", "u")
                for key in keys if key != 2}  # memory 2 was deleted after ranking

    reads.read_whole = read_whole
    reads.partial = {"m1": 1, "m2": 2}
    complete = MemoryRecord("m3", "already whole", "h", "2024-01-01T00:00:00+00:00", "u")
    whole = reads.whole([_partial("m1"), _partial("m2"), complete])
    assert set(whole) == {"m1", "m3"}
    assert whole["m1"].text == "text 1" and whole["m3"] is complete
    assert asked == [[1, 2]]
    assert reads.whole([whole["m1"]])["m1"].text == "text 1" and asked == [[1, 2]]  # read once
