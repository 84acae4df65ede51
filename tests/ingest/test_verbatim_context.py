"""A verbatim memory (``add(infer=False)``) is embedded with the message before it when it answers
it: the message before is another speaker's (role or name). One speaker's consecutive messages (a
list of notes) are each embedded on their own (``retrieval.context_messages``, 1 by default)."""

from __future__ import annotations

import numpy as np
import pytest

from memlane import Memory
from memlane.core import filters as flt

CASES = [
    # (name, messages, expected context of each stored message: the index of the message embedded before it)
    ("a list of one person's notes: no context", ["I play tennis", "My sister lives in Rome", "Pasta is comfort food"],
     [None, None, None]),
    ("a reply reads what it answers", [{"role": "user", "content": "Where do you live?"},
                                       {"role": "assistant", "content": "In Porto, by the river."}], [None, 0]),
    ("named speakers taking turns", [{"role": "user", "name": "Ana", "content": "I went hiking"},
                                     {"role": "user", "name": "Ben", "content": "Where did you go?"},
                                     {"role": "user", "name": "Ben", "content": "And with whom?"}], [None, 0, None]),
]


@pytest.mark.parametrize("name,messages,context_of", CASES, ids=[c[0] for c in CASES])
def test_context_only_for_a_reply(tmp_path, hashing_embedder, name, messages, context_of):
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}},
              "retrieval": {"embed_actor": False}}
    with Memory(config, embedder=hashing_embedder) as m:
        added = m.add(messages, user_id="u", infer=False)["results"]
        texts = [x if isinstance(x, str) else x["content"] for x in messages]
        records, vectors = m.store.with_vectors(flt.Compare(flt.Field(column="user_id"), "eq", "u"))
        vector_of = {r.id: v for r, v in zip(records, vectors)}
        for result, before in zip(added, context_of):
            expected_text = result["memory"] if before is None else f"{texts[before]} {result['memory']}"
            expected = m.embeddings.documents([expected_text])[0]
            assert np.allclose(vector_of[result["id"]], expected, atol=1e-3), (result["memory"], before)
