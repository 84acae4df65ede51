"""A scope searched again before anything is written answers from what the store kept of it
(``store/sqlite_scope_cache.py``: its keyword postings, its rows' ranking records and speakers), with the
answer of a search that reads everything again; any write, by this connection or another, drops it."""

import random
import time
from datetime import datetime, timedelta, timezone

import pytest

from memlane import Memory
from memlane.embeddings.hashing import HashingEmbedder
from memlane.store.sqlite import term_hits
from memlane.store.sqlite_scope_cache import ScopeEntry

from conftest import sqlite_config
from support.turns import TWO_SPEAKER_TURNS

QUERIES = ["Where did Melanie go camping?", "What did Caroline research?", "When did Melanie paint a sunrise?",
           "kids lake tent", "What is the plan?", "Caroline support group first time"]
START = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def _memory(path, cache_rows: int | None = None) -> Memory:
    config = sqlite_config(path)
    if cache_rows is not None:
        config["vector_store"]["config"]["scope_cache_rows"] = cache_rows
    return Memory(config, embedder=HashingEmbedder())


def _fill(memory: Memory) -> None:
    """Two users: the conversation (speakers, times an hour apart, one reply stored with its context) and notes."""
    turns = [{"role": "user", "name": name, "content": text,
              "created_at": (START + timedelta(hours=i)).isoformat()} for i, (name, text) in enumerate(TWO_SPEAKER_TURNS)]
    memory.add(turns, user_id="chat", infer=False)
    memory.add([{"role": "user", "content": f"note {i}: camping gear and a sunrise painting"} for i in range(5)],
               user_id="notes", infer=False)


def _answers(memory: Memory, user_id: str) -> list:
    return [[(hit["memory"], hit.get("actor_id"), hit["score"], hit["scores"]) for hit in
             memory.search(query, user_id=user_id, limit=5, keyword_search=True)["results"]] for query in QUERIES]


@pytest.fixture
def pair(tmp_path):
    """The same memories in a file whose store keeps scopes and in one that keeps none."""
    kept, bare = _memory(tmp_path / "kept.db"), _memory(tmp_path / "bare.db", cache_rows=0)
    for memory in (kept, bare):
        _fill(memory)
    yield kept, bare
    kept.close()
    bare.close()


@pytest.mark.parametrize("user_id", ["chat", "notes"])
def test_searches_of_a_kept_scope_answer_as_reading_it_again(pair, user_id):
    kept, bare = pair
    expected = _answers(bare, user_id)
    assert [_answers(kept, user_id) for _ in range(3)] == [expected] * 3  # first, building, kept
    assert kept.store._scopes.built >= 1
    assert bare.store._scopes.built == 0


def test_the_actor_focus_comes_from_the_scan_of_a_kept_scope(pair):
    kept, bare = pair
    statements: list[str] = []
    for _ in range(3):  # the entry is made by the second search and first used by the third
        kept.search(QUERIES[0], user_id="chat", limit=5)
    kept.store._con.set_trace_callback(statements.append)
    try:
        answer = kept.search(QUERIES[0], user_id="chat", limit=5, keyword_search=True)
    finally:
        kept.store._con.set_trace_callback(None)
    # no scan, no focus scan, no record read: one statement, the scope's generations (no read transaction)
    assert len(statements) == 1 and "scope_generations" in statements[0]
    assert [(h["memory"], h["scores"]) for h in answer["results"]] == [
        (h["memory"], h["scores"]) for h in bare.search(QUERIES[0], user_id="chat", limit=5, keyword_search=True)["results"]]


@pytest.mark.parametrize("change", ["add", "update", "delete", "hide"])
def test_a_write_drops_what_was_kept(pair, change):
    kept, bare = pair
    for _ in range(2):
        _answers(kept, "chat")
    for memory in (kept, bare):
        ids = {h["memory"]: h["id"] for h in memory.get_all(user_id="chat")["results"]}
        target = ids["Caroline is researching adoption agencies"]
        if change == "add":
            memory.add([{"role": "user", "name": "Caroline", "content": "Caroline did research on sunrise camping"}],
                       user_id="chat", infer=False)
        elif change == "update":
            memory.update(target, "Caroline is researching camping stoves")
        elif change == "delete":
            memory.delete(target)
        else:
            memory.update(target, metadata={"searchable": False})
    assert _answers(kept, "chat") == _answers(bare, "chat")


def test_another_connections_write_drops_what_was_kept(tmp_path):
    path = tmp_path / "shared.db"
    with _memory(path) as reader, _memory(path) as writer:
        _fill(writer)
        for _ in range(3):
            before = reader.search("adoption agencies", user_id="chat", limit=20)["results"]
        assert reader.store._scopes.built >= 1
        writer.add([{"role": "user", "name": "Melanie", "content": "Melanie visited adoption agencies too"}],
                   user_id="chat", infer=False)
        after = reader.search("adoption agencies", user_id="chat", limit=20)["results"]
    assert "Melanie visited adoption agencies too" in [h["memory"] for h in after]
    assert len(after) == len(before) + 1


def test_a_kept_record_is_never_changed_by_an_answer_as_of(pair):
    kept, _ = pair
    target = next(h for h in kept.get_all(user_id="chat")["results"] if "adoption" in h["memory"])
    moment = datetime.now(timezone.utc).isoformat()
    kept.update(target["id"], "Caroline adopted a dog")
    for _ in range(2):
        kept.search("Caroline adoption dog", user_id="chat", limit=10)
    for _ in range(3):  # the answer as of then is kept too
        then = kept.search("Caroline adoption dog", user_id="chat", limit=10, as_of=moment)["results"]
    now = kept.search("Caroline adoption dog", user_id="chat", limit=10)["results"]
    stored = dict(kept.store._con.execute("SELECT id, text FROM memories"))
    entries = [entry for _, entry in kept.store._scopes._entries.values()]
    assert len(entries) == 2 and all(r.text == stored[r.id] for e in entries for r in e.records.values())
    assert "Caroline is researching adoption agencies" in [h["memory"] for h in then]
    assert "Caroline adopted a dog" in [h["memory"] for h in now]
    assert "Caroline is researching adoption agencies" not in [h["memory"] for h in now]


def test_a_scope_larger_than_the_budget_is_not_kept(tmp_path):
    with _memory(tmp_path / "small.db", cache_rows=4) as memory, _memory(tmp_path / "bare.db", cache_rows=0) as bare:
        for m in (memory, bare):
            _fill(m)
        answers = [_answers(memory, "chat") for _ in range(3)]
        assert memory.store._scopes.built == 0
        assert answers == [_answers(bare, "chat")] * 3


def test_the_budget_drops_the_least_recently_searched_scope(tmp_path):
    with _memory(tmp_path / "m.db", cache_rows=12) as memory:
        _fill(memory)  # chat: 10 rows, notes: 5
        for user_id in ("chat", "chat", "notes", "notes"):
            memory.search("camping", user_id=user_id, limit=3)
        cache = memory.store._scopes
        assert cache.built == 2 and cache._rows == 5  # the notes' entry pushed the chat's out


def test_a_memory_expiring_between_two_searches_is_not_found_again(pair):
    kept, bare = pair
    for memory in (kept, bare):
        target = next(h for h in memory.get_all(user_id="chat")["results"] if "adoption" in h["memory"])
        memory.set_expiration(target["id"], datetime.now(timezone.utc) + timedelta(seconds=3))
    for _ in range(3):  # made, then first used (its first expiry worked out)
        kept.search("Caroline adoption agencies", user_id="chat", limit=20, keyword_search=True)
    statements: list[str] = []
    kept.store._con.set_trace_callback(statements.append)
    try:  # before the expiry, what was kept is used with no scan
        found = kept.search("Caroline adoption agencies", user_id="chat", limit=20, keyword_search=True)["results"]
    finally:
        kept.store._con.set_trace_callback(None)
    assert len(statements) == 1 and "scope_generations" in statements[0]
    assert "Caroline is researching adoption agencies" in [h["memory"] for h in found]
    time.sleep(3.1)  # the expiry passes: no write tells the store
    answer = kept.search("Caroline adoption agencies", user_id="chat", limit=20, keyword_search=True)["results"]
    assert "Caroline is researching adoption agencies" not in [h["memory"] for h in answer]
    assert [(h["memory"], h["scores"]) for h in answer] == [
        (h["memory"], h["scores"]) for h in
        bare.search("Caroline adoption agencies", user_id="chat", limit=20, keyword_search=True)["results"]]


def test_a_write_to_another_scope_keeps_what_was_kept(pair):
    kept, bare = pair
    for _ in range(2):
        _answers(kept, "chat")
    built = kept.store._scopes.built
    for memory in (kept, bare):
        memory.add([{"role": "user", "content": "Melanie went camping by the lake"}], user_id="notes", infer=False)
        memory.delete(next(h["id"] for h in memory.get_all(user_id="notes")["results"] if h["memory"].startswith("note 0")))
    assert _answers(kept, "chat") == _answers(bare, "chat")
    assert kept.store._scopes.built == built  # the chat's entry outlived the notes' writes
    assert _answers(kept, "notes") == _answers(bare, "notes")


def _generations(memory) -> dict:
    return {(c, v): g for c, v, g in memory.store._con.execute("SELECT col, value, generation FROM scope_generations")}


@pytest.mark.parametrize("write, raised", [
    (lambda m, i: m.add([{"role": "user", "content": "a new note"}], user_id="u", agent_id="a", infer=False),
     {("user_id", "u"), ("agent_id", "a")}),
    (lambda m, i: m.update(i, "the text changed"), {("user_id", "u"), ("run_id", "r")}),
    (lambda m, i: m.update(i, metadata={"searchable": False}), {("user_id", "u"), ("run_id", "r")}),
    (lambda m, i: m.delete(i), {("user_id", "u"), ("run_id", "r")}),
    (lambda m, i: m.add([{"role": "user", "content": "elsewhere"}], user_id="v", infer=False), {("user_id", "v")}),
])
def test_every_change_of_a_memory_raises_its_scope_ids_generations_only(tmp_path, write, raised):
    with _memory(tmp_path / "g.db") as memory:
        memory.add([{"role": "user", "content": "the first note"}], user_id="u", run_id="r", infer=False)
        target = memory.get_all(user_id="u", run_id="r")["results"][0]["id"]
        before = _generations(memory)
        write(memory, target)
        after = _generations(memory)
    assert {key for key in after if after[key] != before.get(key)} == raised


def test_an_answer_is_the_callers_own(tmp_path):
    with _memory(tmp_path / "m.db") as memory:
        memory.add("Caroline keeps a list of adoption agencies", user_id="u", infer=False,
                   metadata={"tags": ["adoption"], "source": {"app": "chat"}})
        for _ in range(3):  # kept from the second search: the third answers from the kept records
            hit = memory.search("adoption agencies", user_id="u", limit=1)["results"][0]
        hit["metadata"]["tags"].append("changed by the caller")
        hit["metadata"]["source"]["app"] = "changed"
        hit["metadata"]["new"] = 1
        again = memory.search("adoption agencies", user_id="u", limit=1)["results"][0]
    assert again["metadata"] == {"tags": ["adoption"], "source": {"app": "chat"}}


def test_a_kept_scope_counts_terms_as_the_keyword_search_does():
    """``ScopeEntry._count`` finds a term's rows in one string of the rows' counted tokens; ``term_hits`` (what an
    unkept scope's search counts with) is the rule: the same rows, counts and order, for texts with repeated,
    empty and uncounted tokens and terms that are parts of tokens or hold a space."""
    rng = random.Random(7)
    words = ["a", "ab", "b", "ba", "abc", "c", ""]
    for _ in range(500):
        rows = []
        for rowid in range(1, rng.randrange(2, 9)):
            tokens = [rng.choice(words) for _ in range(rng.randrange(0, 7))]
            rows.append((rowid * 3, rng.randrange(0, len(tokens) + 1), " ".join(tokens + [f"su{rowid}"])))
        entry = ScopeEntry({rowid: n for rowid, n, _ in rows}, [(rowid, text) for rowid, _, text in rows], {})
        for term in ["a", "ab", "b", "c", "abc", "su3", "a b", "zz"]:
            assert entry.hits([term]) == list(term_hits(rows, [term]))
