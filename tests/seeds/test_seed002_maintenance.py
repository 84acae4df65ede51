"""Seed 002's memory maintenance: "定期清理舊記憶" (cleanup_old_memories: keep the latest, remove the
oldest) and "定期合併相似記憶" (merge_similar_memories: near-duplicates above a threshold become one
memory, ``update_memory(mem1['id'], merged_text); delete_memory(mem2['id'])``), plus mem0's
``expiration_date``. memlane invalidates instead of erasing: the old texts stay in history."""

from __future__ import annotations

import asyncio
import time
from datetime import date, datetime, timedelta, timezone

import numpy as np
import pytest

from memlane import AsyncMemory, Memory
from memlane.core import timeutil
from memlane.core.errors import InvalidInputError, ScopeError
from memlane.ingest import offline_merge
from memlane.maintenance.similar import Group, groups, similar_pairs

from support.openai_server import OpenAIServer, Reply, chat_completion


@pytest.fixture
def mem(backend, hashing_embedder):
    """A Memory on a fresh store of each backend with the hashing embedder (not about embedding quality)."""
    with Memory(backend(), embedder=hashing_embedder) as m:
        yield m


def add_each(memory, texts, **scope):
    """One memory per text, oldest first (infer=False stores each message as it is)."""
    ids = []
    for text in texts:
        ids.append(memory.add(text, infer=False, **(scope or {"user_id": "u"}))["results"][0]["id"])
    return ids


def valid_texts(memory, **scope):
    return sorted(m["memory"] for m in memory.get_all(**(scope or {"user_id": "u"}))["results"])


# -- cleanup_old_memories --------------------------------------------------------------------------

CLEANUP_CASES = [  # (memories, keep_latest, how many of the oldest are invalidated)
    (5, 2, 3),
    (3, 3, 0),
    (3, 10, 0),
    (4, 0, 4),
]


@pytest.mark.parametrize("count, keep, removed", CLEANUP_CASES)
def test_cleanup_keeps_the_latest_and_invalidates_the_oldest_keeping_their_text(mem, count, keep, removed):
    texts = [f"fact number {i} about topic {chr(97 + i)}" for i in range(count)]
    ids = add_each(mem, texts)
    outcome = mem.cleanup_old_memories("u", keep_latest=keep)  # the seed's positional user_id
    assert [r["id"] for r in outcome["results"]] == ids[:removed]  # oldest first
    assert {r["event"] for r in outcome["results"]} <= {"DELETE"}
    assert outcome["kept"] == count - removed and outcome["dry_run"] is False
    assert valid_texts(mem) == sorted(texts[removed:])
    everything = {m["id"]: m for m in mem.get_all(user_id="u", include_invalid=True)["results"]}
    assert len(everything) == count  # invalidated, not erased
    for memory_id, text in zip(ids[:removed], texts):
        assert everything[memory_id]["memory"] == text and everything[memory_id]["valid_to"]
        assert "cleanup" in everything[memory_id]["invalid_reason"]
        last = mem.history(memory_id)[-1]
        assert (last["event"], last["old_memory"], last["new_memory"]) == ("DELETE", text, None)


def test_cleanup_dry_run_returns_the_plan_and_writes_nothing(mem):
    ids = add_each(mem, ["first thing", "second thing", "third thing"])
    plan = mem.cleanup_old_memories(user_id="u", keep_latest=1, dry_run=True)
    assert plan["dry_run"] is True and [r["id"] for r in plan["results"]] == ids[:2]
    assert valid_texts(mem) == ["first thing", "second thing", "third thing"]
    assert [e["event"] for e in mem.history(ids[0])] == ["ADD"]


@pytest.mark.parametrize("scope", [{"user_id": "u"}, {"agent_id": "a"}, {"run_id": "r"}])
def test_cleanup_and_merge_act_on_their_scope_only(mem, scope):
    add_each(mem, ["alpha note", "beta note", "gamma note"], **scope)
    other = {"user_id": "someone-else"}
    add_each(mem, ["alpha note", "alpha note", "beta note"], **other)
    assert len(mem.cleanup_old_memories(keep_latest=1, **scope)["results"]) == 2
    assert valid_texts(mem, **scope) == ["gamma note"]
    assert valid_texts(mem, **other) == ["alpha note", "alpha note", "beta note"]
    add_each(mem, ["gamma note"], **scope)
    merged = mem.merge_similar_memories(threshold=0.99, **scope)
    assert len(merged["results"]) == 1 and valid_texts(mem, **scope) == ["gamma note"]
    assert valid_texts(mem, **other) == ["alpha note", "alpha note", "beta note"]


def test_cleanup_counts_only_valid_memories(mem):
    ids = add_each(mem, ["one fact", "two fact", "three fact"])
    mem.delete(ids[2])  # gone
    mem.cleanup_old_memories("u", keep_latest=1)
    again = mem.cleanup_old_memories("u", keep_latest=1)
    assert again["results"] == [] and valid_texts(mem) == ["two fact"]


# -- merge_similar_memories ------------------------------------------------------------------------


def test_merge_keeps_the_oldest_id_with_the_more_specific_text_and_both_histories(mem):
    older, dup, specific, other = add_each(mem, [
        "User likes pizza", "User likes pizza", "User likes cheese and chicken pizza", "User plays tennis on Sundays"])
    sources = {i: mem.get(i)["source_message_ids"] for i in (older, dup, specific)}
    outcome = mem.merge_similar_memories("u", threshold=0.6)
    assert outcome["dry_run"] is False and outcome["failed"] == [] and outcome["memories"] == 4
    [result] = outcome["results"]
    assert result["id"] == older and result["event"] == "MERGE"
    assert result["memory"] == "User likes cheese and chicken pizza" and result["previous_memory"] == "User likes pizza"
    assert {m["id"] for m in result["merged"]} == {dup, specific}
    assert all(0.6 <= m["similarity"] <= 1.0 + 1e-6 for m in result["merged"])

    assert valid_texts(mem) == ["User likes cheese and chicken pizza", "User plays tennis on Sundays"]
    survivor = mem.get(older)
    assert set(survivor["source_message_ids"]) == set().union(*sources.values())  # provenance names both
    events = mem.history(older)
    assert [e["event"] for e in events] == ["ADD", "MERGE", "MERGE"]
    assert {e["reason"] for e in events[1:]} == {f"merged {dup}", f"merged {specific}"}
    assert events[-1]["new_memory"] == "User likes cheese and chicken pizza"
    assert "User likes pizza" in {e["old_memory"] for e in events[1:]}
    for absorbed, text in ((dup, "User likes pizza"), (specific, "User likes cheese and chicken pizza")):
        gone = mem.get(absorbed)
        assert gone["superseded_by"] == older and gone["valid_to"] and gone["memory"] == text
        last = mem.history(absorbed)[-1]
        assert (last["event"], last["old_memory"]) == ("MERGE", text)
    # the survivor is found by its new text
    hits = mem.search("cheese and chicken pizza", user_id="u", limit=1)["results"]
    assert hits[0]["id"] == older
    assert mem.get(other)["memory"] == "User plays tennis on Sundays" and "valid_to" not in mem.get(other)


def test_merge_dry_run_returns_the_plan_and_writes_nothing(mem):
    first, second = add_each(mem, ["User drinks green tea", "User drinks green tea"])
    plan = mem.merge_similar_memories(user_id="u", threshold=0.95, dry_run=True)
    assert plan["dry_run"] is True and plan["pairs"] == 1
    assert [(r["id"], [m["id"] for m in r["merged"]], r["memory"]) for r in plan["results"]] == [
        (first, [second], "User drinks green tea")]
    assert valid_texts(mem) == ["User drinks green tea", "User drinks green tea"]
    assert [e["event"] for e in mem.history(second)] == ["ADD"]


def test_merge_leaves_disagreeing_memories_apart(mem):
    likes, dislikes = add_each(mem, ["User likes spicy food", "User does not like spicy food"])
    outcome = mem.merge_similar_memories("u", threshold=0.3)
    assert outcome["results"] == [] and outcome["kept_apart"][0]["ids"] == [likes, dislikes]
    assert valid_texts(mem) == ["User does not like spicy food", "User likes spicy food"]


def test_merge_below_the_threshold_changes_nothing_and_again_is_a_no_op(mem):
    add_each(mem, ["User owns a red bicycle", "User studies Japanese at night"])
    assert mem.merge_similar_memories("u", threshold=0.99) == {
        "results": [], "kept_apart": [], "failed": [], "memories": 2, "pairs": 0, "dry_run": False}
    add_each(mem, ["User owns a red bicycle"])
    assert len(mem.merge_similar_memories("u", threshold=0.99)["results"]) == 1
    assert mem.merge_similar_memories("u", threshold=0.99)["pairs"] == 0


def test_expiring_memories_merge_like_any_other(mem):
    later = (datetime.now(timezone.utc) + timedelta(days=30)).isoformat()
    keep = mem.add("User is travelling in Japan", user_id="u", infer=False, expiration_date=later)["results"][0]["id"]
    add_each(mem, ["User is travelling in Japan"])
    assert len(mem.merge_similar_memories("u", threshold=0.99)["results"]) == 1
    assert mem.get(keep)["valid_to"] == timeutil.canonical(later) and valid_texts(mem) == ["User is travelling in Japan"]


BAD_ARGUMENTS = [  # (method, arguments, field named in the error)
    ("cleanup_old_memories", {"keep_latest": -1}, "keep_latest"),
    ("cleanup_old_memories", {"keep_latest": "10"}, "keep_latest"),
    ("cleanup_old_memories", {"keep_latest": True}, "keep_latest"),
    ("cleanup_old_memories", {"dry_run": "yes"}, "dry_run"),
    ("merge_similar_memories", {"threshold": 0}, "threshold"),
    ("merge_similar_memories", {"threshold": 1.5}, "threshold"),
    ("merge_similar_memories", {"threshold": "0.9"}, "threshold"),
    ("merge_similar_memories", {"threshold": float("nan")}, "threshold"),
    ("merge_similar_memories", {"threshold": True}, "threshold"),
    ("merge_similar_memories", {"dry_run": 1}, "dry_run"),
]


@pytest.mark.parametrize("method, arguments, field", BAD_ARGUMENTS)
def test_bad_maintenance_arguments_are_refused_by_name(memory, method, arguments, field):
    add_each(memory, ["something to keep"])
    with pytest.raises(InvalidInputError, match=field) as raised:
        getattr(memory, method)(user_id="u", **arguments)
    assert raised.value.field == field
    assert valid_texts(memory) == ["something to keep"]


@pytest.mark.parametrize("method", ["cleanup_old_memories", "merge_similar_memories"])
def test_maintenance_needs_a_scope(memory, method):
    with pytest.raises(ScopeError, match="user_id"):
        getattr(memory, method)()


def test_async_maintenance_runs_the_same_implementation(db_path, hashing_embedder):
    async def run():
        async with AsyncMemory({"vector_store": {"provider": "sqlite", "config": {"path": str(db_path)}}},
                               embedder=hashing_embedder) as memory:
            for text in ("User likes jazz", "User likes jazz", "User collects stamps"):
                await memory.add(text, user_id="u", infer=False)
            merged = await memory.merge_similar_memories(user_id="u", threshold=0.99)
            cleaned = await memory.cleanup_old_memories(user_id="u", keep_latest=1)
            left = await memory.get_all(user_id="u")
            return merged, cleaned, [m["memory"] for m in left["results"]]

    merged, cleaned, left = asyncio.run(run())
    assert len(merged["results"]) == 1 and [r["memory"] for r in cleaned["results"]] == ["User likes jazz"]
    assert left == ["User collects stamps"]


def test_progress_is_reported(memory):
    add_each(memory, ["a repeated line", "a repeated line", "a repeated line", "another line", "more lines"])
    seen: list[tuple[int, int]] = []
    memory.merge_similar_memories("u", threshold=0.99, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]
    seen.clear()
    memory.cleanup_old_memories("u", keep_latest=1, progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (2, 2)


# -- the offline merge rule: the more specific text, unless the two disagree -------------------------

SPECIFIC_CASES = [  # (older, newer, kept)
    ("User likes pizza", "User likes cheese and chicken pizza", "User likes cheese and chicken pizza"),
    ("User prefers AI tech stocks", "User prefers tech stocks", "User prefers AI tech stocks"),
    ("用户偏好科技股", "用户偏好AI相关科技股", "用户偏好AI相关科技股"),
    ("User moved to Berlin in 2021", "User moved to Berlin", "User moved to Berlin in 2021"),
    ("User loves pizza", "User likes pizza", "User likes pizza"),  # same content: the newer statement
]


@pytest.mark.parametrize("older, newer, kept", SPECIFIC_CASES)
def test_the_offline_rule_keeps_the_more_specific_text(older, newer, kept):
    assert offline_merge.more_specific(older, newer) == kept


DISAGREE_CASES = [  # (older, newer, disagree?)
    ("User likes cheese pizza", "User doesn't like cheese pizza", True),
    ("User lives in Paris", "User lives in Berlin", True),
    ("用户喜欢起司披萨", "用户不喜欢起司披萨", True),
    ("User likes pizza", "User likes cheese and chicken pizza", False),
    ("User likes pizza", "User loves pizza", False),
]


@pytest.mark.parametrize("older, newer, expected", DISAGREE_CASES)
def test_the_offline_rule_never_merges_a_change_or_a_contradiction(older, newer, expected):
    assert offline_merge.disagree(older, newer, 0.96) is expected


# -- candidate pairs: blocked matrix products agree with all pairs ---------------------------------


def clustered(rng, clusters=12, per=9, dims=16, spread=0.05):
    centres = rng.standard_normal((clusters, dims))
    points = np.repeat(centres, per, axis=0) + spread * rng.standard_normal((clusters * per, dims))
    return points[rng.permutation(len(points))].astype(np.float32)


@pytest.mark.parametrize("block", [1, 7, 64, 1024])
def test_blocked_pairs_equal_every_pair_above_the_threshold(block):
    vectors = clustered(np.random.default_rng(block))
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    full = unit @ unit.T
    expected = {(i, j) for i in range(len(unit)) for j in range(i + 1, len(unit)) if full[i, j] >= 0.97}
    found = similar_pairs(vectors, 0.97, block=block)
    assert {(i, j) for i, j, _ in found} == expected and expected
    scores = [s for _, _, s in found]
    assert scores == sorted(scores, reverse=True)
    assert all(abs(s - full[i, j]) < 1e-5 for i, j, s in found)


def test_groups_never_chain_a_to_c_through_b():
    # A~B 0.99, B~C 0.98, A~C below the threshold: C stays out of A's group
    pairs = [(0, 1, 0.99), (1, 2, 0.98), (3, 4, 0.97), (0, 3, 0.96)]
    assert groups(pairs) == [Group(0, [(1, 0.99)]), Group(3, [(4, 0.97)])]
    assert groups([(0, 2, 0.99), (1, 2, 0.98), (0, 1, 0.97)]) == [Group(0, [(2, 0.99), (1, 0.97)])]


# -- merging with an LLM: one call per pair, failures reported, nothing lost ----------------------------


@pytest.fixture
def chat_server():
    with OpenAIServer() as server:
        yield server
    assert not server.errors, server.errors


def llm_memory(tmp_path, server, embedder, **extra):
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "llm.db")}},
              "llm": {"provider": "openai", "config": {"model": "gpt-test", "api_key": "sk-test",
                                                       "base_url": server.base_url, "timeout": 5.0,
                                                       "max_retries": 0}}, **extra}
    return Memory(config, embedder=embedder)


def test_an_llm_writes_the_merged_text_one_call_per_pair(tmp_path, chat_server, hashing_embedder):
    with llm_memory(tmp_path, chat_server, hashing_embedder) as memory:
        first, second, third = add_each(memory, ["User likes sushi", "User likes sushi", "User likes sushi"])
        plan = memory.merge_similar_memories("u", threshold=0.99, dry_run=True)
        assert plan["results"][0]["memory"] is None and not chat_server.requests("/v1/chat/completions")
        chat_server.script("/v1/chat/completions", [
            Reply(json=chat_completion("User likes sushi, especially salmon nigiri")),
            Reply(json=chat_completion('"User likes sushi, especially salmon nigiri and tuna rolls"')),
        ])
        outcome = memory.merge_similar_memories("u", threshold=0.99)
        calls = chat_server.requests("/v1/chat/completions")
        assert len(calls) == 2
        prompt = calls[1].json["messages"][0]["content"]
        assert "User likes sushi, especially salmon nigiri" in prompt and "User likes sushi" in prompt
        [result] = outcome["results"]
        assert result["id"] == first and {m["id"] for m in result["merged"]} == {second, third}
        assert result["memory"] == "User likes sushi, especially salmon nigiri and tuna rolls"
        assert valid_texts(memory) == ["User likes sushi, especially salmon nigiri and tuna rolls"]
        assert [e["new_memory"] for e in memory.history(first)[1:]] == [
            "User likes sushi, especially salmon nigiri", "User likes sushi, especially salmon nigiri and tuna rolls"]
        hit = memory.search("salmon nigiri tuna rolls", user_id="u", limit=1)["results"][0]
        assert hit["id"] == first  # re-embedded with the merged text


def test_a_failed_llm_call_is_reported_per_pair_and_loses_nothing(tmp_path, chat_server, hashing_embedder):
    with llm_memory(tmp_path, chat_server, hashing_embedder) as memory:
        first, second, third = add_each(memory, ["User owns a cat", "User owns a cat", "User owns a cat"])
        chat_server.script("/v1/chat/completions", [
            Reply.error(500, "model overloaded"),
            Reply(json=chat_completion("User owns a cat named Miso")),
            Reply(json=chat_completion("CONTRADICTION")),
        ])
        outcome = memory.merge_similar_memories("u", threshold=0.99)
        assert len(chat_server.requests("/v1/chat/completions")) == 2 + 0  # one call per pair, no retries
        [failed] = outcome["failed"]
        assert failed["ids"] == [first, second] and "overloaded" in failed["error"]
        [result] = outcome["results"]
        assert [m["id"] for m in result["merged"]] == [third]
        assert valid_texts(memory) == ["User owns a cat", "User owns a cat named Miso"]  # the failed pair's both kept
        second_try = memory.merge_similar_memories("u", threshold=0.3)
        assert second_try["kept_apart"] and second_try["results"] == []  # the model said CONTRADICTION
        assert len(valid_texts(memory)) == 2


def test_a_merged_text_over_the_text_limit_is_a_failed_pair(tmp_path, chat_server, hashing_embedder):
    with llm_memory(tmp_path, chat_server, hashing_embedder, limits={"max_text_chars": 40}) as memory:
        first, second = add_each(memory, ["User rides horses", "User rides horses"])
        chat_server.script("/v1/chat/completions", [Reply(json=chat_completion("User rides horses " * 10))])
        outcome = memory.merge_similar_memories("u", threshold=0.99)
        assert outcome["results"] == [] and outcome["failed"][0]["ids"] == [first, second]
        assert "max_text_chars" in outcome["failed"][0]["error"]
        assert valid_texts(memory) == ["User rides horses", "User rides horses"]


# -- expiration_date (mem0's name) ---------------------------------------------------------------


def in_future(**delta) -> datetime:
    return datetime.now(timezone.utc) + timedelta(**delta)


BAD_EXPIRATIONS = [
    "2001-01-01",
    in_future(days=-1),
    date.today() - timedelta(days=1),
    "next tuesday",
    12345,
]


@pytest.mark.parametrize("value", BAD_EXPIRATIONS)
def test_a_past_or_unreadable_expiration_date_is_refused_and_nothing_is_stored(memory, value):
    with pytest.raises(InvalidInputError, match="expiration_date") as raised:
        memory.add("User is in Lisbon this week", user_id="u", infer=False, expiration_date=value)
    assert raised.value.field == "expiration_date"
    assert memory.get_all(user_id="u")["results"] == [] and memory.get_messages(user_id="u") == []


@pytest.mark.parametrize("value", [in_future(days=3), (date.today() + timedelta(days=3)),
                                   (date.today() + timedelta(days=3)).isoformat()])
def test_a_future_expiration_date_is_the_memorys_valid_to(memory, value):
    added = memory.add("User is in Lisbon this week", user_id="u", infer=False, expiration_date=value)
    item = memory.get(added["results"][0]["id"])
    assert item["valid_to"] == timeutil.canonical(value) and item["invalid_reason"] == "expired"
    assert [m["memory"] for m in memory.get_all(user_id="u")["results"]] == ["User is in Lisbon this week"]
    assert memory.search("Lisbon", user_id="u")["results"][0]["id"] == item["id"]


def wait_until(moment: datetime) -> None:
    while datetime.now(timezone.utc) <= moment:
        time.sleep(0.05)


@pytest.mark.parametrize("infer", [False, True])
def test_a_memory_is_invalid_from_its_expiration_on_and_as_of_stays_right(mem, infer):
    mem.add("I love the sea", user_id="warm-up", infer=infer)  # the first add loads the offline engine
    expires = in_future(seconds=1)
    added = mem.add("I am staying at the Hotel Sol in Lisbon this week", user_id="u", infer=infer,
                    expiration_date=expires)
    [memory_id] = [r["id"] for r in added["results"]]
    kept = mem.add("I love walking by the river", user_id="u", infer=infer)["results"][0]["id"]
    before = timeutil.now_iso()
    assert {m["id"] for m in mem.get_all(user_id="u")["results"]} == {memory_id, kept}
    wait_until(expires)
    assert [m["id"] for m in mem.get_all(user_id="u")["results"]] == [kept]
    assert memory_id not in [m["id"] for m in mem.search("hotel Lisbon", user_id="u")["results"]]
    assert memory_id in [m["id"] for m in mem.search("hotel Lisbon", user_id="u", include_invalid=True)["results"]]
    assert memory_id in [m["id"] for m in mem.get_all(user_id="u", as_of=before)["results"]]
    assert memory_id not in [m["id"] for m in mem.get_all(user_id="u", as_of=timeutil.now_iso())["results"]]
    assert [s for s in mem.scopes()["users"] if s["id"] == "u"] == [{"id": "u", "memories": 2, "valid": 1,
                                                                     "messages": 2}]
    assert mem.cleanup_old_memories("u", keep_latest=0)["results"][0]["id"] == kept  # expired ones are not counted


def test_an_expiring_memory_can_still_be_contradicted_before_it_expires(mem):
    mem.add("I like tea", user_id="u", expiration_date=in_future(days=5))
    outcome = mem.add("I don't like tea anymore", user_id="u")
    assert "DELETE" in [r["event"] for r in outcome["results"]]
    [old] = [m for m in mem.get_all(user_id="u", include_invalid=True)["results"] if m["memory"] == "User likes tea"]
    assert old["invalid_reason"] != "expired" and old["valid_to"] < in_future(days=1).isoformat()
