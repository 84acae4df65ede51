"""Dates a question names reach the memories said on them (retrieval/timeline.py ``join``): the
memories created inside the named day or month join the candidate pool by one more vector search, so
the date bonus lifts a memory of that day even when the question's words and meaning alone rank it
outside the pool."""

from datetime import datetime, timezone

import pytest

from memlane import Memory
from memlane.core.query import Query
from memlane.retrieval import timeline

#: turns of other days share the question's words, one of them most; the one said on 7 May 2023 shares none
OTHER_DAYS = ["What did we do on the trip?", "What did you do?", "We did it", "Did we?", "We do", "What we did"]
SAID_ON_THE_DAY = "We pitched our tent by the lake with the kids"


def _said(memory: Memory) -> None:
    for day, text in enumerate(OTHER_DAYS, start=10):
        memory.add([{"role": "user", "name": "Caroline", "content": text,
                     "created_at": f"2023-06-{day}T10:00:00+00:00"}], user_id="chat", infer=False)
    memory.add([{"role": "user", "name": "Melanie", "content": SAID_ON_THE_DAY,
                 "created_at": "2023-05-07T10:00:00+00:00"}], user_id="chat", infer=False)


@pytest.mark.parametrize("date_weight", [0.0, 1.0])
def test_a_question_naming_a_date_reaches_what_was_said_that_day(backend, hashing_embedder, date_weight):
    settings = dict(candidates=3, rerank_top=3, actor_weight=0.0, neighbour_weight=0.0, date_weight=date_weight)
    with Memory(backend(**settings), embedder=hashing_embedder) as memory:
        _said(memory)
        answer = memory.search("What did we do on 7 May 2023?", user_id="chat", limit=3, keyword_search=True)
    texts = [hit["memory"] for hit in answer["results"]]
    vector = answer["metadata"]["stages"]["vector"]
    if date_weight:
        assert SAID_ON_THE_DAY in texts  # outside the three candidates of words and meaning: joined, lifted
        assert vector["dated"]["dated_added"] == 1  # a step of the vector stage
    else:
        assert SAID_ON_THE_DAY not in texts
        assert "dated" not in vector


@pytest.mark.parametrize("text, spans", [
    ("on 7 May 2023", [("2023-05-07", "2023-05-08")]),
    ("in August 2023", [("2023-08-01", "2023-09-01")]),
    ("what happened?", []),
])
def test_the_window_filter_spans_the_named_dates(text, spans):
    node = timeline.window_filter(Query(text).windows)
    if not spans:
        assert node is None
        return
    bounds = [c.value[:10] for c in node.items]
    assert bounds == [v for span in spans for v in span]
    assert [c.op for c in node.items] == ["gte", "lt"]
    assert datetime.fromisoformat(node.items[0].value).tzinfo == timezone.utc
