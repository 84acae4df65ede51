"""Bad input: a clear, typed error naming the problem, and nothing stored or changed."""

import pytest

from memlane import FilterError, InvalidInputError, ScopeError

BIG = "x" * 1_000_001  # a 1 MB text
OK = {"role": "user", "content": "fine"}

# (id, call, error type, text the message must contain)
CASES = [
    ("empty query", lambda m, mid: m.search("", user_id="u"), InvalidInputError, "query must not be empty"),
    ("blank query", lambda m, mid: m.search(" \n\t", user_id="u"), InvalidInputError, "query must not be empty"),
    ("None query", lambda m, mid: m.search(None, user_id="u"), InvalidInputError, "query must be a string"),
    ("1 MB query", lambda m, mid: m.search(BIG, user_id="u"), InvalidInputError, "query has 1,000,001 characters"),
    ("no scope", lambda m, mid: m.search("q"), ScopeError, "At least one of 'user_id', 'agent_id', or 'run_id'"),
    ("id with space", lambda m, mid: m.search("q", user_id="a b"), InvalidInputError, "user_id must not contain whitespace"),
    ("empty id", lambda m, mid: m.search("q", agent_id=""), InvalidInputError, "agent_id must not be empty"),
    ("float id", lambda m, mid: m.search("q", run_id=1.5), InvalidInputError, "run_id must be a string, got float"),
    ("bool id", lambda m, mid: m.search("q", user_id=True), InvalidInputError, "user_id must be a string, got bool"),
    ("conflicting scope", lambda m, mid: m.search("q", user_id="a", filters={"user_id": "b"}), ScopeError, "conflicts"),
    ("limit str", lambda m, mid: m.search("q", user_id="u", limit="10"), InvalidInputError, "limit must be an integer"),
    ("limit 0", lambda m, mid: m.search("q", user_id="u", limit=0), InvalidInputError, "limit must be between 1"),
    ("limit neg", lambda m, mid: m.get_all(user_id="u", limit=-5), InvalidInputError, "limit must be between 1"),
    ("limit huge", lambda m, mid: m.search("q", user_id="u", limit=10**9), InvalidInputError, "limit must be between 1"),
    ("limit bool", lambda m, mid: m.search("q", user_id="u", limit=True), InvalidInputError, "limit must be an integer"),
    ("limit and top_k", lambda m, mid: m.search("q", user_id="u", limit=3, top_k=4), InvalidInputError,
     "give limit or top_k"),
    ("text and data", lambda m, mid: m.update(mid, text="a", data="b"), InvalidInputError, "give text or data"),
    ("threshold str", lambda m, mid: m.search("q", user_id="u", threshold="0.5"), InvalidInputError, "threshold must be a number"),
    ("threshold 2", lambda m, mid: m.search("q", user_id="u", threshold=2), InvalidInputError, "must lie in [-1, 1]"),
    ("threshold nan", lambda m, mid: m.search("q", user_id="u", threshold=float("nan")), InvalidInputError, "must lie in [-1, 1]"),
    ("unknown operator", lambda m, mid: m.search("q", user_id="u", filters={"level": {"gtee": 1}}), FilterError, "unknown operator 'gtee'"),
    ("filters not a dict", lambda m, mid: m.get_all(user_id="u", filters="category"), FilterError, "expected an object"),
    ("metadata str", lambda m, mid: m.add("x", user_id="u", metadata="food", infer=False), InvalidInputError, "metadata must be a dict"),
    ("metadata object", lambda m, mid: m.add("x", user_id="u", metadata={"x": object()}, infer=False), InvalidInputError, "not JSON-serialisable"),
    ("metadata nan", lambda m, mid: m.add("x", user_id="u", metadata={"x": float("nan")}, infer=False), InvalidInputError, "not JSON-serialisable"),
    ("metadata set", lambda m, mid: m.add("x", user_id="u", metadata={"x": {1, 2}}, infer=False), InvalidInputError, "not JSON-serialisable"),
    ("metadata int key", lambda m, mid: m.add("x", user_id="u", metadata={1: "a"}, infer=False), InvalidInputError, "keys must be non-empty strings"),
    ("metadata reserved", lambda m, mid: m.add("x", user_id="u", metadata={"user_id": "v"}, infer=False), InvalidInputError, "pass it as the user_id argument"),
    ("metadata too big", lambda m, mid: m.add("x", user_id="u", metadata={"blob": "y" * 70_000}, infer=False), InvalidInputError, "the limit is 65,536"),
    ("1 MB message", lambda m, mid: m.add(BIG, user_id="u", infer=False), InvalidInputError, "has 1,000,001 characters"),
    ("1 MB in a batch", lambda m, mid: m.add([OK, {"role": "user", "content": BIG}], user_id="u", infer=False), InvalidInputError, "messages[1].content has 1,000,001"),
    ("no messages", lambda m, mid: m.add([], user_id="u", infer=False), InvalidInputError, "messages is empty"),
    ("messages int", lambda m, mid: m.add(42, user_id="u", infer=False), InvalidInputError, "messages must be a string"),
    ("bad role", lambda m, mid: m.add([OK, {"role": "wizard", "content": "x"}], user_id="u", infer=False), InvalidInputError, "messages[1].role must be one of"),
    ("no content", lambda m, mid: m.add([{"role": "user"}], user_id="u", infer=False), InvalidInputError, "messages[0].content must be a string"),
    ("empty content", lambda m, mid: m.add([OK, {"role": "user", "content": " "}], user_id="u", infer=False), InvalidInputError, "messages[1].content must not be empty"),
    ("unknown message key", lambda m, mid: m.add([{"role": "user", "content": "x", "extra": 1}], user_id="u", infer=False), InvalidInputError, "unknown keys ['extra']"),
    ("add without scope", lambda m, mid: m.add("x", infer=False), ScopeError, "At least one of"),
    ("add bad agent", lambda m, mid: m.add("x", user_id="u", agent_id="a b", infer=False), InvalidInputError, "agent_id must not contain whitespace"),
    ("get id with space", lambda m, mid: m.get("a b"), InvalidInputError, "memory_id must not contain whitespace"),
    ("get None", lambda m, mid: m.get(None), InvalidInputError, "memory_id is required"),
    ("update nothing", lambda m, mid: m.update(mid), InvalidInputError, "update needs text, metadata or timestamp"),
    ("update empty text", lambda m, mid: m.update(mid, text=""), InvalidInputError, "text must not be empty"),
    ("update 1 MB", lambda m, mid: m.update(mid, text=BIG), InvalidInputError, "text has 1,000,001 characters"),
    ("update metadata list", lambda m, mid: m.update(mid, metadata=[1]), InvalidInputError, "metadata must be a dict"),
    ("update role via metadata", lambda m, mid: m.update(mid, metadata={"role": "x"}), InvalidInputError, "role cannot be changed"),
    ("delete_all no scope", lambda m, mid: m.delete_all(), ScopeError, "At least one of"),
    ("delete_all bad filter", lambda m, mid: m.delete_all(user_id="u", filters={"OR": []}), FilterError, "non-empty list"),
]


def _snapshot(memory, mid):
    con = memory.store._con
    rows = con.execute("SELECT id, text, metadata, updated_at FROM memories ORDER BY id").fetchall()
    history = con.execute("SELECT count(*) FROM history").fetchone()[0]
    return rows, history


@pytest.mark.parametrize("call, error, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_rejected_and_nothing_changes(memory, call, error, message):
    mid = memory.add("existing memory", user_id="u", metadata={"k": 1}, infer=False)["results"][0]["id"]
    before = _snapshot(memory, mid)
    with pytest.raises(error) as info:
        call(memory, mid)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)
    assert _snapshot(memory, mid) == before


def test_errors_name_the_field(memory):
    with pytest.raises(InvalidInputError) as info:
        memory.search("q", user_id="u", limit="x")
    assert info.value.field == "limit"
    with pytest.raises(InvalidInputError) as info:
        memory.add("x", user_id="u", metadata=[1], infer=False)
    assert info.value.field == "metadata"
