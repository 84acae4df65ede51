"""Seed 004 (PersonaLab's ``should_search_memory`` / ``search_memory_with_context``): signatures and edge cases.

The seed: "``def search_memory_with_context(conversation: str, system_prompt: str = "", user_id:
Optional[str] = None, max_results: int = 10)``", "``user_id``: Specific user ID to search (if None,
searches all memories)"; "Functions handle empty inputs gracefully", "Invalid user IDs are silently
ignored", "Missing memories return empty result sets"; ``should_search_memory`` "Analyzes user-agent
conversation and system prompt" with "memory_keywords × 3 + question_keywords × 1 + personal_pronouns × 2,
Threshold: >= 3".
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client

from memlane import AsyncMemory, Memory
from memlane.core.config import ContextConfig
from memlane.embeddings.hashing import HashingEmbedder
from memlane.mcp_server.server import build_server
from memlane.mcp_server.tools import Caller
from support.server_fixtures import serving

CATEGORIES = ("agent_profile_matches", "agent_event_matches", "user_profile_matches", "user_event_matches")
EMPTY = {"search_terms": [], **{c: [] for c in CATEGORIES}, "total_matches": 0}


def seed(memory: Memory) -> None:
    memory.add("The tutor explained Python decorators with a caching example", agent_id="tutor", infer=False)
    memory.add("Ana learns Python decorators for work", user_id="ana", memory_type="fact", infer=False)
    memory.add("Ana asked about decorators last Monday", user_id="ana", infer=False)
    memory.add("Ben prefers Python generators over decorators", user_id="ben", memory_type="preference",
               infer=False)


def contents(found: dict, category: str) -> set[str]:
    return {m["content"] for m in found[category]}


@pytest.fixture
def store(backend, hashing_embedder):
    with Memory(backend(), embedder=hashing_embedder) as memory:
        seed(memory)
        yield memory


def test_the_seed_signature_is_callable_positionally(store):
    found = store.search_memory_with_context("Tell me about Python decorators", "You are a tutor", "ana", 1)
    assert contents(found, "user_profile_matches") == {"Ana learns Python decorators for work"}
    assert contents(found, "user_event_matches") == {"Ana asked about decorators last Monday"}
    assert found["agent_event_matches"] == [] and found["total_matches"] == 2  # ana only, 1 per category
    assert set(found) == {"search_terms", *CATEGORIES, "total_matches"}


def test_no_user_and_no_agent_searches_every_memory(store):
    found = store.search_memory_with_context("Python decorators")
    assert contents(found, "agent_event_matches") == {
        "The tutor explained Python decorators with a caching example"}
    assert contents(found, "user_profile_matches") == {"Ana learns Python decorators for work",
                                                       "Ben prefers Python generators over decorators"}
    assert contents(found, "user_event_matches") == {"Ana asked about decorators last Monday"}
    assert found["total_matches"] == 4


@pytest.mark.parametrize("conversation", [None, "", "   ", [], [{"role": "user", "content": ""}],
                                          [{"role": "user", "content": "  "}, "  "], {"role": "user"}])
def test_an_empty_or_missing_conversation_is_no_search_and_the_empty_groups(store, conversation):
    assert store.should_search_memory(conversation) is False
    assert store.should_search_memory(conversation, "Remember everything the user says") is False
    assert store.search_memory_with_context(conversation) == EMPTY
    assert store.search_memory_with_context(conversation, "You are a tutor", "ana") == EMPTY


def test_a_missing_conversation_argument_too(store):
    assert store.should_search_memory() is False and store.search_memory_with_context() == EMPTY


@pytest.mark.parametrize("user_id", ["a b", "", 3.5, ["ana"], {"id": "ana"}, "x" * 300])
def test_an_invalid_user_id_is_ignored(store, user_id):
    """It names nobody: no user memories, and never every memory; an agent's memories still count."""
    alone = store.search_memory_with_context("Python decorators", "", user_id)
    assert alone == {**EMPTY, "search_terms": alone["search_terms"]} and "python" in alone["search_terms"]
    with_agent = store.search_memory_with_context("Python decorators", user_id=user_id, agent_id="tutor")
    assert contents(with_agent, "agent_event_matches") == {
        "The tutor explained Python decorators with a caching example"}
    assert with_agent["user_profile_matches"] == with_agent["user_event_matches"] == []


def test_an_unknown_user_has_empty_results(store):
    assert store.search_memory_with_context("Python decorators", user_id="nobody")["total_matches"] == 0


# (gate, conversation, system prompt, should search)
GATE = [
    # the seed reads the system prompt with the conversation: "Remember" there is a memory keyword (3)
    ("seed", "Can you help with dinner?", "Remember the user's preferences.", True),
    ("tuned", "Can you help with dinner?", "Remember the user's preferences.", False),   # counts half
    # the seed reads the whole conversation, the assistant's turns too
    ("seed", [{"role": "user", "content": "Do you remember my dog?"}, {"role": "assistant", "content": "Yes!"},
              {"role": "user", "content": "Nice weather"}, {"role": "user", "content": "Tell me a joke"}], "", True),
    ("tuned", [{"role": "user", "content": "Do you remember my dog?"}, {"role": "assistant", "content": "Yes!"},
               {"role": "user", "content": "Nice weather"}, {"role": "user", "content": "Tell me a joke"}], "", False),
    ("seed", [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Shall I recall your plan?"}],
     "", True),
    ("tuned", [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Shall I recall your plan?"}],
     "", False),
    # every distinct marker counts in the seed's formula (questions x 1): what, when, where, ? = 4
    ("seed", "what when where?", "", True),
    ("tuned", "what when where?", "", False),  # at most 2 per signal
    # nothing memory-like in either
    ("seed", "What is the capital of France?", "You are a geography tutor.", False),
    ("tuned", "What is the capital of France?", "You are a geography tutor.", False),
]


@pytest.mark.parametrize("gate,conversation,system_prompt,expected", GATE)
def test_the_gate_reads_as_the_seed_when_asked_and_as_memlane_by_default(hashing_embedder, tmp_path, gate,
                                                                          conversation, system_prompt, expected):
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}},
              "context": {"gate": gate}}
    with Memory(config, embedder=hashing_embedder) as memory:
        assert memory.should_search_memory(conversation, system_prompt) is expected


def test_the_default_gate_is_memlanes_and_a_preset_setting_can_be_overridden():
    assert ContextConfig().gate == "tuned"
    seed_gate = ContextConfig(gate="seed")
    assert (seed_gate.system_prompt_factor, seed_gate.max_hits_per_signal, seed_gate.gate_reads) == \
        (1.0, None, "conversation")
    tuned = ContextConfig(gate="tuned", system_prompt_factor=0.8)
    assert (tuned.system_prompt_factor, tuned.max_hits_per_signal, tuned.gate_reads, tuned.reference_weight) == \
        (0.8, 2, "recent_user_turns", 2.0)


def test_async_memory_takes_the_seed_signature(store):
    amem = AsyncMemory(memory=store)

    async def run():
        return (await amem.search_memory_with_context("Python decorators", "", "ana", 5),
                await amem.search_memory_with_context(None), await amem.should_search_memory(""))

    found, empty, decided = anyio.run(run)
    assert found["total_matches"] == 2 and empty == EMPTY and decided is False


# -- the faces -----------------------------------------------------------------------------------------


async def _tool(memory, name, arguments, *, admin=True):
    server = build_server(lambda ctx: Caller(memory=memory, admin=admin, default_user_id=None))
    async with Client(server) as client:
        result = await client.call_tool(name, arguments)
    if result.is_error:
        return {"error": " ".join(getattr(block, "text", "") for block in result.content)}
    return result.structured_content


def test_mcp_tools_take_empty_conversations_invalid_users_and_no_scope(memory):
    seed(memory)
    assert anyio.run(_tool, memory, "should_search_memory", {}) == {"should_search": False}
    assert anyio.run(_tool, memory, "search_memory_with_context", {"conversation": []}) == EMPTY
    everything = anyio.run(_tool, memory, "search_memory_with_context", {"conversation": "Python decorators"})
    assert everything["total_matches"] == 4
    ignored = anyio.run(_tool, memory, "search_memory_with_context",
                        {"conversation": "Python decorators", "user_id": 42.5, "agent_id": "tutor"})
    assert ignored["total_matches"] == 1 and ignored["agent_event_matches"]
    refused = anyio.run(lambda: _tool(memory, "search_memory_with_context", {"conversation": "Python"},
                                      admin=False))
    assert "admin" in refused["error"]


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    with serving(tmp_path_factory.mktemp("seed004-home"), HashingEmbedder()) as live:
        yield live


def test_rest_context_routes(live):
    admin, user = live.key("ctx", admin=True), live.key("ctx")
    seed(live.memory("ctx"))
    with live.client(admin) as api:
        everything = api.post("/context/search", json={"conversation": "Python decorators"})
        empty = api.post("/context/search", json={"user_id": "ana"})
        ignored = api.post("/context/search", json={"conversation": "Python decorators", "user_id": "a b"})
        no_search = api.post("/context/should-search", json={"conversation": []})
        prompted = api.post("/context/should-search", json={"conversation": "Which decorators should I learn next?",
                                                            "system_prompt": "Remember the user's preferences."})
        # with a scope, what it holds counts: nothing to search for a user without memories
        scoped_gate = api.post("/context/should-search", json={"conversation": "Which decorators should I learn "
                                                               "next?", "user_id": "ana", "explain": True})
        nobody = api.post("/context/should-search", json={"conversation": "Which decorators should I learn next?",
                                                          "user_id": "nobody", "explain": True})
    with live.client(user) as api:
        refused = api.post("/context/search", json={"conversation": "Python decorators"})
        scoped = api.post("/context/search", json={"conversation": "Python decorators", "user_id": "ana"})
    assert everything.status_code == 200 and everything.json()["total_matches"] == 4
    assert empty.status_code == 200 and empty.json() == EMPTY
    assert ignored.status_code == 200 and ignored.json()["total_matches"] == 0
    assert no_search.json() == {"should_search": False} and prompted.json() == {"should_search": True}
    terms = next(s for s in scoped_gate.json()["signals"] if s["signal"] == "memory_terms")
    assert scoped_gate.json()["should_search"] is True and terms["hits"] == ["decorators", "learn"]
    assert nobody.json()["should_search"] is False
    assert nobody.json()["signals"][-1]["signal"] == "no_memories"
    assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    assert scoped.status_code == 200 and scoped.json()["total_matches"] == 2
