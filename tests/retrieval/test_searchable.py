"""A memory marked ``"searchable": false`` is stored, listed and read as any other and is no search's
result (retrieval/searchable.py), however many of them would outrank the memories that are."""

import pytest


@pytest.fixture
def filled(memory):
    for n in range(40):  # the same words as the query: they would fill every page of results
        memory.add(f"green tea note {n}", user_id="u", infer=False, metadata={"searchable": False})
    memory.add("I drink green tea daily", user_id="u", infer=False)
    memory.add("Green tea with jasmine is my favourite", user_id="u", infer=False, metadata={"searchable": True})
    return memory


@pytest.mark.parametrize("flags", [{}, {"keyword_search": True}, {"keyword_search": True, "rerank": True},
                                   {"filter_memories": True}])
def test_no_search_returns_what_is_kept_out_of_search(filled, flags):
    found = filled.search("green tea note", user_id="u", limit=2, **flags)["results"]
    assert sorted(h["memory"] for h in found) == ["Green tea with jasmine is my favourite", "I drink green tea daily"]


def test_they_are_listed_read_and_counted(filled):
    listed = filled.get_all(user_id="u")["results"]
    assert len(listed) == 42
    hidden = next(m for m in listed if m["memory"] == "green tea note 7")
    assert filled.get(hidden["id"])["metadata"] == {"searchable": False}


def test_agent_context_search_leaves_them_out(filled):
    found = filled.search_memory_with_context([{"role": "user", "content": "Do you remember my green tea?"}],
                                              user_id="u")
    assert found["total_matches"] == 2 and "note" not in str(found)


def test_making_one_searchable_again_brings_it_back(filled):
    hidden = next(m for m in filled.get_all(user_id="u")["results"] if m["memory"] == "green tea note 3")
    filled.update(hidden["id"], metadata={"searchable": True})
    assert hidden["id"] in [h["id"] for h in filled.search("green tea note 3", user_id="u", limit=5)["results"]]
