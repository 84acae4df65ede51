"""The public Memory API: shapes, CRUD, search, history (mem0-compatible)."""

from datetime import datetime

import pytest

from memlane import MemoryNotFoundError
from memlane.core.models import HistoryEvent, MemoryItem


def iso_aware(value: str) -> bool:
    return datetime.fromisoformat(value).tzinfo is not None


def test_add_accepts_string_dict_and_list(memory):
    assert [r["event"] for r in memory.add("I like tea", user_id="u", infer=False)["results"]] == ["ADD"]
    assert len(memory.add({"role": "user", "content": "I like coffee"}, user_id="u", infer=False)["results"]) == 1
    result = memory.add(
        [
            {"role": "system", "content": "You are helpful"},
            {"role": "user", "content": "I live in Oslo", "name": "ana"},
            {"role": "assistant", "content": "Oslo is lovely"},
        ],
        user_id="u", infer=False)
    assert [r["memory"] for r in result["results"]] == ["I live in Oslo", "Oslo is lovely"]  # system skipped
    assert result["skipped"] == [{"message_id": result["message_ids"][0],
                                  "reason": "a system message: instructions, not facts"}]  # and said so
    assert set(result["results"][0]) == {"id", "memory", "event"}
    items = {i["memory"]: i for i in memory.get_all(user_id="u")["results"]}
    assert items["I live in Oslo"]["actor_id"] == "ana" and items["I live in Oslo"]["role"] == "user"
    assert items["Oslo is lovely"]["role"] == "assistant" and "actor_id" not in items["Oslo is lovely"]


def test_memory_item_shape(memory):
    added = memory.add("I like tea", user_id="u", agent_id="bot", run_id="r1", metadata={"category": "drink"}, infer=False)
    item = memory.get(added["results"][0]["id"])
    MemoryItem.model_validate(item)
    assert item["memory"] == "I like tea"
    assert item["metadata"] == {"category": "drink"}
    assert item["score"] is None
    assert (item["user_id"], item["agent_id"], item["run_id"], item["role"]) == ("u", "bot", "r1", "user")
    assert len(item["hash"]) == 32
    assert iso_aware(item["created_at"]) and iso_aware(item["updated_at"])


def test_metadata_actor_and_role_are_promoted(memory):
    added = memory.add("noted", user_id="u", metadata={"actor_id": "planner", "role": "assistant", "k": 1}, infer=False)
    item = memory.get(added["results"][0]["id"])
    assert item["actor_id"] == "planner" and item["role"] == "assistant"
    assert item["metadata"] == {"k": 1}


def test_get_unknown_is_none(memory):
    assert memory.get("no-such-id") is None


def test_search_ranks_by_cosine_and_respects_limit_and_threshold(model_memory):
    model_memory.add(["I adore Italian pizza", "My car is a red Volvo", "Sushi is my favourite dinner"], user_id="u", infer=False)
    results = model_memory.search("what food do I like?", user_id="u")["results"]
    assert [r["memory"] for r in results][-1] == "My car is a red Volvo"
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0 for s in scores)
    for r in results:
        MemoryItem.model_validate(r)
    assert len(model_memory.search("food", user_id="u", limit=1)["results"]) == 1
    cut = (scores[0] + scores[-1]) / 2
    kept = model_memory.search("what food do I like?", user_id="u", threshold=cut)["results"]
    assert kept and all(r["score"] >= cut for r in kept) and len(kept) < len(results)


def test_search_score_is_cosine_similarity(model_memory, embedder):
    import numpy as np

    model_memory.add("The quick brown fox", user_id="u", infer=False)
    score = model_memory.search("a fast fox", user_id="u")["results"][0]["score"]
    a, b = embedder.embed(["The quick brown fox", "a fast fox"], "document")
    assert score == pytest.approx(float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b)), abs=1e-5)


def test_scopes_are_isolated_and_combine_with_and(memory):
    memory.add("alice likes tea", user_id="alice", infer=False)
    memory.add("bob likes tea", user_id="bob", infer=False)
    memory.add("alice with bot", user_id="alice", agent_id="bot", infer=False)
    assert {r["memory"] for r in memory.search("tea", user_id="bob")["results"]} == {"bob likes tea"}
    assert {r["memory"] for r in memory.get_all(user_id="alice", agent_id="bot")["results"]} == {"alice with bot"}
    assert len(memory.get_all(filters={"user_id": "alice"})["results"]) == 2  # v2 style
    assert memory.get_all(user_id=7)["results"] == []  # integers are ids too


def test_get_all_newest_first_and_limit(memory):
    for text in ("first", "second", "third"):
        memory.add(text, user_id="u", infer=False)
    assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["third", "second", "first"]
    assert [r["memory"] for r in memory.get_all(user_id="u", limit=2)["results"]] == ["third", "second"]


def test_update_text_reembeds_and_keeps_id(memory):
    mid = memory.add("I live in Paris", user_id="u", infer=False)["results"][0]["id"]
    memory.add("My dog is called Rex", user_id="u", infer=False)
    updated = memory.update(mid, text="I moved to Tokyo, Japan")
    assert updated["id"] == mid and updated["memory"] == "I moved to Tokyo, Japan"
    assert updated["updated_at"] > updated["created_at"]
    top = memory.search("Which city in Japan?", user_id="u", limit=1)["results"][0]
    assert top["id"] == mid  # found through the new vector


def test_update_metadata_only(memory):
    mid = memory.add("tea", user_id="u", metadata={"a": 1}, infer=False)["results"][0]["id"]
    updated = memory.update(mid, metadata={"b": 2})
    assert updated["metadata"] == {"b": 2} and updated["memory"] == "tea"
    assert memory.get_all(user_id="u", filters={"b": 2})["results"][0]["id"] == mid


def test_update_and_delete_unknown_id(memory):
    with pytest.raises(MemoryNotFoundError):
        memory.update("missing", text="x")
    with pytest.raises(MemoryNotFoundError):
        memory.delete("missing")
    with pytest.raises(LookupError):  # MemoryNotFoundError is a LookupError
        memory.delete("missing")


def test_delete_and_history_outlives_the_memory(memory):
    mid = memory.add("I like tea", user_id="u", metadata={"actor_id": "ana"}, infer=False)["results"][0]["id"]
    memory.update(mid, text="I like green tea")
    assert memory.delete(mid) == {"message": "Memory deleted successfully!"}
    assert memory.get(mid) is None
    events = memory.history(mid)
    for event in events:
        HistoryEvent.model_validate(event)
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in events] == [
        ("ADD", None, "I like tea"),
        ("UPDATE", "I like tea", "I like green tea"),
        ("DELETE", "I like green tea", None),
    ]
    assert events[0]["actor_id"] == "ana" and events[0]["role"] == "user"
    assert all(e["memory_id"] == mid and e["user_id"] == "u" and iso_aware(e["created_at"]) for e in events)
    assert [e["created_at"] for e in events] == sorted(e["created_at"] for e in events)


def test_delete_all_only_touches_the_scope(memory):
    memory.add(["a", "b"], user_id="alice", infer=False)
    keep = memory.add("c", user_id="bob", infer=False)["results"][0]["id"]
    mixed = memory.add("d", user_id="alice", agent_id="bot", infer=False)["results"][0]["id"]
    assert memory.delete_all(user_id="alice", agent_id="bot")["deleted"] == 1
    assert memory.get(mixed) is None
    assert memory.delete_all(user_id="alice") == {"message": "Memories deleted successfully!", "deleted": 2}
    assert memory.get_all(user_id="alice")["results"] == []
    assert memory.get(keep) is not None
    assert memory.history(mixed)[-1]["event"] == "DELETE"


def test_delete_all_with_filters(memory):
    memory.add("a", user_id="u", metadata={"tmp": True}, infer=False)
    memory.add("b", user_id="u", infer=False)
    assert memory.delete_all(user_id="u", filters={"tmp": True})["deleted"] == 1
    assert [r["memory"] for r in memory.get_all(user_id="u")["results"]] == ["b"]


def test_reset_erases_everything_and_store_stays_usable(memory):
    mid = memory.add("x", user_id="u", infer=False)["results"][0]["id"]
    memory.reset()
    assert memory.get(mid) is None and memory.history(mid) == []
    assert memory.info()["memories"] == 0
    memory.add("y", user_id="u", infer=False)
    assert len(memory.search("y", user_id="u")["results"]) == 1


def test_unicode_and_chinese_round_trip(memory):
    mid = memory.add("我喜欢吃火锅", user_id="用户1", metadata={"城市": "成都"}, infer=False)["results"][0]["id"]
    item = memory.get(mid)
    assert item["memory"] == "我喜欢吃火锅" and item["user_id"] == "用户1" and item["metadata"] == {"城市": "成都"}
    assert memory.get_all(user_id="用户1", filters={"城市": "成都"})["results"][0]["id"] == mid


def test_content_parts_are_joined(memory):
    result = memory.add({"role": "user", "content": [{"type": "text", "text": "part one"},
                                                     {"type": "text", "text": "part two"}]}, user_id="u", infer=False)
    assert result["results"][0]["memory"] == "part one\npart two"


def test_unscoped_wildcard_search_spans_users(memory):
    memory.add("alice likes tea", user_id="alice", infer=False)
    memory.add("bob likes tea", user_id="bob", infer=False)
    results = memory.search("tea", filters={"user_id": "*"})["results"]
    assert {r["user_id"] for r in results} == {"alice", "bob"}
    # the in-memory matrix sees writes made after it was built
    memory.add("carol likes tea", user_id="carol", infer=False)
    assert len(memory.search("tea", filters={"user_id": "*"})["results"]) == 3
    memory.delete_all(user_id="bob")
    assert {r["user_id"] for r in memory.search("tea", filters={"user_id": "*"})["results"]} == {"alice", "carol"}


def test_context_manager_closes(db_path, embedder):
    from memlane import Memory, StoreError

    from conftest import sqlite_config

    with Memory(sqlite_config(db_path), embedder=embedder) as m:
        m.add("x", user_id="u", infer=False)
    with pytest.raises(StoreError, match="closed"):
        m.get_all(user_id="u")


def test_new_memories_get_time_ordered_uuid_ids(memory):
    import uuid

    first = memory.add(["one", "two", "three"], user_id="ids", infer=False)["results"]
    second = memory.add("four", user_id="ids", infer=False)["results"]
    ids = [r["id"] for r in first + second]
    assert all(uuid.UUID(i).version == 7 for i in ids)  # ordinary UUID strings
    assert ids == sorted(ids) and len(set(ids)) == 4  # later memories sort after earlier ones
    message_ids = [m["id"] for m in memory.get_messages(user_id="ids")]
    assert all(uuid.UUID(i).version == 7 for i in message_ids)
