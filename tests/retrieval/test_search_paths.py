"""The two search paths of the SQLite store agree, and the wide one finds rare matches."""

from memlane.core.models import NewMemory


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


def test_a_search_is_quick_only_with_a_cached_query_and_no_optional_stage(memory):
    memory.insert([NewMemory(text="I keep bees on my roof", user_id="u")])
    assert not memory.search_is_quick("who keeps bees?")  # the query vector is not cached yet
    memory.search("who keeps bees?", user_id="u")
    assert memory.search_is_quick("who keeps bees?")
    assert not memory.search_is_quick("who keeps bees?", keyword_search=True)
    assert not memory.search_is_quick("who keeps bees?", rerank=True)
    assert not memory.search_is_quick("who keeps bees?", filter_memories=True)
    assert memory.search_is_quick("who keeps bees?", keyword_search=False, rerank=False, filter_memories=False)
    memory.config.retrieval.keyword_search = True  # a configured default counts like a flag
    assert not memory.search_is_quick("who keeps bees?")
    assert memory.search_is_quick("who keeps bees?", keyword_search=False)
