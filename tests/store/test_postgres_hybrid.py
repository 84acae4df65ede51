"""The default (hybrid) search on PostgreSQL, where the rows are (issue 45): the BM25 of ``store/bm25.py``
computed in SQL from the same constants, and the vector candidates with the actor focus in one statement
— with the answers the statements apart gave."""

from __future__ import annotations

import psycopg
import pytest

from memlane import Memory
from memlane.store import bm25, postgres
from memlane.store.sql import SqlMemoryStore
from support.counting import sent_statements
from support.turns import TWO_SPEAKER_TURNS

#: (n memories, df holding the term, tf in the memory, its length, the scope's mean length): a rare and a
#: common term, one in more than half the memories (the idf floor), in every memory, repeated, long, empty
FORMULA = [
    (100, 1, 1, 10, 10.0),
    (100, 3, 2, 4, 12.5),
    (100, 50, 1, 10, 10.0),
    (100, 51, 1, 10, 10.0),
    (100, 100, 3, 40, 8.0),
    (7, 2, 5, 1, 3.25),
    (1451, 700, 1, 9, 11.7),
    (1, 1, 1, 0, 1.0),
]


@pytest.mark.parametrize("n, df, tf, length, avgdl", FORMULA)
def test_the_sql_bm25_is_the_python_one(pg, n, df, tf, length, avgdl):
    """``bm25.sql_idf``/``sql_term`` evaluated by PostgreSQL give ``bm25.idf`` and ``bm25.rank``'s score."""
    hits = [(k, length, "t", tf if k == 0 else 1) for k in range(df)]
    python = dict(bm25.rank(hits, n, avgdl, df))[0]
    expression = bm25.sql_term(bm25.sql_idf("%(n)s", "%(df)s"), "%(tf)s", "%(length)s", "%(avgdl)s")
    with psycopg.connect(pg.url) as con:
        values = {"n": float(max(n, df)), "df": float(df), "tf": float(tf), "length": float(length),
                  "avgdl": float(avgdl)}
        sql, idf = con.execute(f"SELECT {expression}, {bm25.sql_idf('%(n)s', '%(df)s')}", values).fetchone()
    assert idf == pytest.approx(bm25.idf(n, df), rel=1e-12, abs=1e-15)
    assert sql == pytest.approx(python, rel=1e-12, abs=1e-15)


#: two speakers whose turns share words, so the candidates, the actor focus and the keyword matches overlap
TURNS = TWO_SPEAKER_TURNS + [("Melanie", "Caroline and Melanie met at the lake"),
                             ("Caroline", "Melanie's kids love the tent")]
QUERIES = ["Where did Melanie go camping?", "What did Caroline research?", "lake kids tent",
           "When did Caroline and Melanie meet?", "Who painted?"]


def test_a_default_search_is_two_statements_with_the_answers_of_separate_ones(pg, hashing_embedder, monkeypatch):
    """A default search naming a speaker sends two statements (the candidates with the actor focus and
    their records; the keyword matches with theirs), where it sent five (each search's ranking and its
    records apart, then the keyword statement and its records); every answer is what the searches apart
    (``SqlMemoryStore.focused_search``: the vector search alone, the focus its own search) give."""
    monkeypatch.setattr(postgres, "SIZE_CLASS_SECONDS", 1e9)  # the size class counted once, however slow the run
    with Memory(pg.config(), embedder=hashing_embedder) as memory:
        memory.config.retrieval.candidates = 4  # a pool smaller than the scope: the focus adds memories
        for name, text in TURNS:
            memory.add([{"role": "user", "name": name, "content": text}], user_id="chat", infer=False)
        memory.search("warm up", user_id="chat")  # the scope's size class, counted once

        def answers() -> list:
            return [[(h["id"], h["score"]) for h in memory.search(q, user_id="chat", limit=5)["results"]]
                    for q in QUERIES]

        sent = sent_statements(monkeypatch)
        answer = memory.search("Where did Melanie go camping?", user_id="chat", limit=5, keyword_search=True)
        monkeypatch.undo()
        together = answers()
        monkeypatch.setattr(type(memory.store), "focused_search", SqlMemoryStore.focused_search)
        apart = answers()
    assert len(sent) == 2, sent
    assert answer["metadata"]["stages"]["vector"]["actors"]["actors"] == 1
    assert together == apart
    assert all(len(a) == 5 for a in together)

