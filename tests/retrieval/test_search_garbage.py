"""A search leaves nothing for the garbage collector: what it read (its ``SearchReads``, the scope's scan, the
records) is freed by reference counting when it answers. A reference cycle among them made every hybrid search
garbage that only a collection frees, and each collection walk the server's long-lived objects
(``server/garbage.py``)."""

import gc

import pytest

from memlane import Memory
from memlane.embeddings.hashing import HashingEmbedder
from memlane.store import SearchReads
from memlane.store.sqlite_keyword_stats import ScopeScan

from conftest import sqlite_config
from support.turns import TWO_SPEAKER_TURNS

SEARCHES = [  # (flags, what the search runs)
    ({}, "hybrid, scope kept"),
    ({"keyword_search": True, "rerank": False}, "hybrid with its stages reported"),
    ({"keyword_search": False}, "vector only"),
]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    memory = Memory(sqlite_config(tmp_path_factory.mktemp("garbage") / "m.db"), embedder=HashingEmbedder())
    memory.add([{"role": "user", "name": name, "content": text} for name, text in TWO_SPEAKER_TURNS],
               user_id="chat", infer=False)
    for _ in range(2):  # the second search since the last write keeps the scope
        memory.search("Where did Melanie go camping?", user_id="chat")
    yield memory
    memory.close()


def _garbage_of(search) -> list:
    """The objects only a collection frees that ``search()`` left."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        search()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.mark.parametrize("flags,_what", SEARCHES, ids=[what for _, what in SEARCHES])
def test_a_search_leaves_no_reference_cycle(memory, flags, _what):
    answer = None

    def search():
        nonlocal answer
        answer = memory.search("What did Caroline research?", user_id="chat", **flags)

    left = _garbage_of(search)
    assert answer["results"]
    assert not [o for o in left if isinstance(o, (SearchReads, ScopeScan))], \
        f"the search's reads are cyclic garbage: {sorted({type(o).__name__ for o in left})}"
