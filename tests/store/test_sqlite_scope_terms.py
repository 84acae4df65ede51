"""A default (hybrid) search of a small scope in a larger SQLite file counts its keyword matches in the
scope's own indexed terms, which its vector search's scan names, instead of a MATCH that walks the query
terms' doclists over the whole file; a scope holding a large share of the file keeps the MATCH. Both give
the same answer (``store/sqlite.py``: ``SCOPE_TERMS``)."""

import pytest

from memlane import Memory
from memlane.store import sqlite as sqlite_store

TOPICS = ("hiking in the alps", "baking sourdough bread", "learning the cello", "a trip to Lisbon",
          "painting a sunrise", "the support group")
#: 120 users of 3 memories each (3 rows: under 1 % of 360), and one user holding 12 (over 3 %)
SMALL_USERS = 120
#: a word of each query that some topics hold
KEY_WORDS = ("hiking", "bread", "lisbon", "cello", "sunrise")
QUERIES = ["Who went hiking in the alps?", "What bread does she bake?", "Lisbon trip", "cello lessons sunrise"]


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    from conftest import sqlite_config
    from memlane.embeddings.hashing import HashingEmbedder

    path = tmp_path_factory.mktemp("scope_terms") / "m.db"
    config = sqlite_config(path)
    config["vector_store"]["config"]["scope_cache_rows"] = 0  # each search reads (test_sqlite_scope_cache.py: kept)
    with Memory(config, embedder=HashingEmbedder()) as memory:
        for u in range(SMALL_USERS):
            memory.add([{"role": "user", "content": f"User {u} talked about {TOPICS[(u + k) % len(TOPICS)]}"}
                        for k in range(3)], user_id=f"u{u}", infer=False)
        memory.add([{"role": "user", "content": f"Big talked about {topic} again"} for topic in TOPICS * 2],
                   user_id="big", infer=False)
        yield memory


def _answer(memory, query, user_id):
    """The default search's results (id, score) and whether any statement it ran was a MATCH."""
    statements: list[str] = []
    con = memory.store._con
    con.set_trace_callback(statements.append)
    try:
        results = memory.search(query, user_id=user_id, limit=5, keyword_search=True)["results"]
    finally:
        con.set_trace_callback(None)
    return [(hit["id"], hit["score"], hit["scores"]) for hit in results], any("MATCH" in s for s in statements)


@pytest.mark.parametrize("user_id, matches", [("u7", False), ("u42", False), ("big", True)])
@pytest.mark.parametrize("query", QUERIES)
def test_a_small_scope_counts_its_own_terms_with_the_answer_of_a_match(memory, monkeypatch, query, user_id, matches):
    answer, matched = _answer(memory, query, user_id)
    assert matched is matches
    monkeypatch.setattr(sqlite_store, "SCOPE_TERMS_SHARE", 0.0)  # every scope MATCHes
    expected, matched = _answer(memory, query, user_id)
    assert matched
    assert answer == expected
    held = [t.lower() for t in TOPICS] if user_id == "big" else [TOPICS[(int(user_id[1:]) + k) % len(TOPICS)].lower() for k in range(3)]
    named = any(word in topic for topic in held for word in KEY_WORDS if word in query.lower())
    assert any("keyword" in scores for _, _, scores in answer) is named  # the keyword stage found its words
