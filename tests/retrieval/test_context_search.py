"""``search_memory_with_context`` over a real store and the real local model: categories,
paraphrases found by meaning, the ``user_id=None`` rule, per-category limits, validity,
the async face, and the same behaviour on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from memlane import AsyncMemory, Memory
from memlane.core.errors import InvalidInputError, ScopeError

CATEGORIES = ("agent_profile_matches", "agent_event_matches", "user_profile_matches", "user_event_matches")


@pytest.fixture
def memory(model_memory):
    """These tests are about what the real model finds similar."""
    return model_memory


def _seed(memory):
    add = memory.add
    add("I am a patient Python tutor who explains with small examples", agent_id="tutor", infer=False,
        memory_type="profile")
    add("Helped a student fix a broken Python decorator", agent_id="tutor", infer=False, memory_type="event")
    add("Prefers short answers with Python code", user_id="ana", agent_id="tutor", infer=False,
        memory_type="preference")
    add("Asked about decorators for caching last Monday", user_id="ana", agent_id="tutor", infer=False,
        memory_type="event")
    add("Wants to learn Python decorators for work", user_id="ben", agent_id="tutor", infer=False,
        memory_type="fact")
    add("Uses Python decorators daily at the bank", user_id="ana", agent_id="other-bot", infer=False,
        memory_type="fact")
    add("Is allergic to peanuts", user_id="ana", infer=False, memory_type="fact")
    add("Studies Python decorators with a private teacher", user_id="carl", infer=False, memory_type="fact")


def _texts(result, category):
    return [m["content"] for m in result[category]]


def _all(result):
    return {m["content"] for c in CATEGORIES for m in result[c]}


def test_matches_are_grouped_by_scope_and_type(memory):
    _seed(memory)
    result = memory.search_memory_with_context(
        [{"role": "user", "content": "Can you explain Python decorators again?"}],
        "You are a Python tutor", user_id="ana", agent_id="tutor")
    assert set(result) == {"search_terms", *CATEGORIES, "total_matches"}
    assert result["search_terms"][:2] == ["python", "decorators"]
    assert "I am a patient Python tutor who explains with small examples" in _texts(result, "agent_profile_matches")
    assert _texts(result, "agent_event_matches") == ["Helped a student fix a broken Python decorator"]
    assert "Prefers short answers with Python code" in _texts(result, "user_profile_matches")
    assert _texts(result, "user_event_matches") == ["Asked about decorators for caching last Monday"]
    assert result["total_matches"] == sum(len(result[c]) for c in CATEGORIES)
    match = result["agent_event_matches"][0]
    assert match["matched_terms"] == ["python", "decorators"] and match["agent_id"] == "tutor"
    assert match["score"] == match["match_score"] > 0 and match["memory"] == match["content"]
    assert set(match["scores"]) == {"terms", "vector"}
    for category in CATEGORIES:   # best first within each category
        scores = [m["match_score"] for m in result[category]]
        assert scores == sorted(scores, reverse=True)


def test_a_users_memories_with_another_agent_stay_out(memory):
    _seed(memory)
    result = memory.search_memory_with_context("Python decorators", user_id="ana", agent_id="tutor")
    assert "Uses Python decorators daily at the bank" not in _all(result)        # told to other-bot
    alone = memory.search_memory_with_context("Python decorators", user_id="ana")
    assert "Uses Python decorators daily at the bank" in _all(alone)             # the user's own call sees all
    assert alone["agent_profile_matches"] == [] and alone["agent_event_matches"] == []


def test_agent_without_user_sees_itself_and_the_users_it_met(memory):
    _seed(memory)
    result = memory.search_memory_with_context("Which Python decorators questions came up?", agent_id="tutor")
    users = {m["user_id"] for m in result["user_profile_matches"] + result["user_event_matches"]}
    assert users == {"ana", "ben"}                       # carl never talked to the tutor
    assert "Studies Python decorators with a private teacher" not in _all(result)
    assert "Uses Python decorators daily at the bank" not in _all(result)
    assert _texts(result, "agent_event_matches") == ["Helped a student fix a broken Python decorator"]


def test_a_paraphrase_is_found_by_meaning_without_a_shared_term(memory):
    memory.add(["Every morning I have oatmeal with blueberries", "My car is a red Toyota",
                "I work night shifts at the hospital"], user_id="dee", infer=False)
    result = memory.search_memory_with_context("What do I usually eat for breakfast?", user_id="dee")
    assert result["search_terms"] == ["usually", "eat", "breakfast"]
    top = result["user_event_matches"][0]
    assert top["content"] == "Every morning I have oatmeal with blueberries" and top["matched_terms"] == []
    assert top["scores"]["terms"] == 0.0 and top["scores"]["vector"] >= memory.config.context.min_similarity
    assert "My car is a red Toyota" not in _all(result)


def test_chinese_conversation_finds_chinese_and_traditional_memories(memory):
    memory.add("我在北京的一家互聯網公司工作", user_id="li", infer=False, memory_type="fact")
    memory.add("我女儿下个月参加钢琴比赛", user_id="li", infer=False, memory_type="event")
    memory.add("我喜欢喝乌龙茶", user_id="li", infer=False, memory_type="preference")
    result = memory.search_memory_with_context(
        [{"role": "user", "content": "你还记得我在哪家公司工作吗？"}], user_id="li")
    assert result["search_terms"] == ["公司", "工作"]
    top = result["user_profile_matches"][0]
    assert top["content"] == "我在北京的一家互聯網公司工作" and top["matched_terms"] == ["公司", "工作"]
    piano = memory.search_memory_with_context("我女儿的钢琴比赛是什么时候？", user_id="li")
    assert _texts(piano, "user_event_matches")[0] == "我女儿下个月参加钢琴比赛"


#: (memories of one user, a conversation in their language, its search terms, the memory it must find first
#: and the terms they share): the shared words carry it, whatever the model makes of the language
OTHER_LANGUAGES = [
    (["Su hermano Pablo es piloto", "Es alérgico a los frutos secos", "Tiene una gata llamada Luna"],
     "¿Te acuerdas de lo que te conté sobre mi hermano?", ["hermano"], "Su hermano Pablo es piloto", ["hermano"]),
    (["Seine Schwester Julia ist Ärztin", "Hat einen Dackel namens Bruno", "Lernt abends Italienisch"],
     "Erinnerst du dich, was ich dir über meine Schwester erzählt habe?", ["schwester"],
     "Seine Schwester Julia ist Ärztin", ["schwester"]),
    (["柴犬のコタロウを飼っている", "姉の由美は看護師", "好きな作家は村上春樹"],
     "コタロウの予防接種っていつだったっけ？", ["コタロウ", "予防接種"], "柴犬のコタロウを飼っている", ["コタロウ"]),
    (["남편 민수와 부산에 산다", "고양이 두부를 키운다", "땅콩 알레르기가 있다"],
     "두부 예방접종 언제였더라?", ["두부", "예방접종"], "고양이 두부를 키운다", ["두부"]),
    (["남편 민수와 부산에 산다", "고양이 두부를 키운다", "땅콩 알레르기가 있다"],
     "남편이랑 갈 만한 곳 추천해 줘", ["남편"], "남편 민수와 부산에 산다", ["남편"]),
]


@pytest.mark.parametrize("memories,turn,terms,first,shared", OTHER_LANGUAGES)
def test_a_conversation_in_another_language_finds_the_memory_sharing_its_words(memory, memories, turn, terms,
                                                                                 first, shared):
    memory.add(memories, user_id="lu", infer=False, memory_type="fact")
    result = memory.search_memory_with_context([{"role": "user", "content": turn}], user_id="lu")
    assert result["search_terms"] == terms
    top = result["user_profile_matches"][0]
    assert top["content"] == first and top["matched_terms"] == shared
    assert top["scores"]["terms"] > 0


def test_max_results_applies_per_category(memory):
    memory.add([f"Python decorator note {i}" for i in range(6)], user_id="max", infer=False)
    memory.add([f"Python decorator lesson {i}" for i in range(6)], user_id="max", agent_id="bot", infer=False,
               memory_type="fact")
    result = memory.search_memory_with_context("python decorator", user_id="max", max_results=2)
    assert len(result["user_event_matches"]) == 2 and len(result["user_profile_matches"]) == 2
    assert result["total_matches"] == 4


def test_invalidated_memories_and_unrelated_ones_are_not_matches(memory):
    kept = memory.add("Plays chess on Sundays", user_id="eve", infer=False)["results"][0]["id"]
    gone = memory.add("Plays chess with a club", user_id="eve", infer=False)["results"][0]["id"]
    memory.add("Owns a sailboat", user_id="eve", infer=False)
    memory.delete(gone)
    result = memory.search_memory_with_context("chess tournament plans", user_id="eve")
    assert [m["id"] for m in result["user_event_matches"]] == [kept]


def test_limit_and_agent_errors(memory):
    with pytest.raises(InvalidInputError) as raised:
        memory.search_memory_with_context("hello there", agent_id="a b")
    assert raised.value.field == "agent_id"  # seed 004 ignores an invalid user id, not an agent id
    for bad in (0, -1, "5", 10**9):
        with pytest.raises(InvalidInputError) as raised:
            memory.search_memory_with_context("hello there", user_id="a", max_results=bad)
        assert raised.value.field == "max_results"


def test_async_memory_offloads_both(memory):
    memory.add("Keeps bees on the roof", user_id="fay", infer=False)
    amem = AsyncMemory(memory=memory)

    async def run():
        return (await amem.should_search_memory("Do you remember my bees?"),
                await amem.search_memory_with_context("Do you remember my bees?", user_id="fay"))

    decided, found = asyncio.run(run())
    assert decided is True and _texts(found, "user_event_matches") == ["Keeps bees on the roof"]


def test_same_matches_on_both_backends(backend, embedder):
    memory = Memory(backend(), embedder=embedder)
    try:
        _seed(memory)
        result = memory.search_memory_with_context("Python decorators", agent_id="tutor", max_results=5)
        got = {c: _texts(result, c) for c in CATEGORIES}
    finally:
        memory.close()
    assert got["agent_event_matches"] == ["Helped a student fix a broken Python decorator"]
    assert set(got["user_profile_matches"]) == {"Wants to learn Python decorators for work",
                                                "Prefers short answers with Python code"}
    assert got["user_event_matches"] == ["Asked about decorators for caching last Monday"]
