"""Relation extraction with an LLM: the real ``openai`` client against the scripted
OpenAI-compatible server on 127.0.0.1 (tests/support/openai_server.py). One extra call per
add, untrusted output (fences, junk items, first person), one repair, then a reported failure
that leaves the memories alone."""

import json

import pytest

from memlane import Memory
from support.openai_server import Reply, chat_completion

CHAT = "/v1/chat/completions"


def answer(content) -> Reply:
    return Reply(json=chat_completion(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
                                      model="gpt-test"))


@pytest.fixture
def llm_graph(tmp_path, openai_server, embedder):
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "g.db")}},
              "llm": {"provider": "openai", "config": {"model": "gpt-test", "api_key": "sk-test",
                                                      "base_url": openai_server.base_url, "max_retries": 0,
                                                      "timeout": 5.0}},
              "enable_graph": True}
    with Memory(config, embedder=embedder) as m:
        yield m


def triples(items):
    return {(r["source"], r["relationship"], r["destination"]) for r in items}


def test_relations_come_from_one_extra_call(llm_graph, openai_server):
    openai_server.script(CHAT, [
        answer('Sure!\n```json\n{"relations": [{"source": "USER", "relationship": "Lives In", "destination": "Lisbon"},'
               ' {"source": "I", "relationship": "works_at", "destination": "Feedzai"},'
               ' {"source": "Marta", "relationship": "friend_of", "destination": "user"},'
               ' {"source": 3, "relationship": "x", "destination": "y"}, "junk",'
               ' {"source": "USER", "relationship": "", "destination": "nothing"},]}\n```'),
        answer({"facts": ["Lives in Lisbon", "Works at Feedzai"]}),
    ])
    out = llm_graph.add("I live in Lisbon and work at Feedzai. Marta is my friend.", user_id="ana")
    assert out["status"] == "ok" and out["relations"]["status"] == "ok"
    # first person is the user entity; malformed items and relations pointing at the user are skipped
    assert triples(out["relations"]["added"]) == {("ana", "lives_in", "Lisbon"), ("ana", "works_at", "Feedzai")}
    assert len(openai_server.requests(CHAT)) == 2  # relations + facts (no memories yet: no reconciliation call)
    prompt = openai_server.requests(CHAT)[0].json["messages"]
    assert "knowledge graph" in prompt[0]["content"] and "Feedzai" in prompt[1]["content"]

    openai_server.script(CHAT, [
        answer({"relations": [{"source": "USER", "relationship": "lives_in", "destination": "Porto"},
                              {"source": "USER", "relationship": "works_at", "destination": "Feedzai",
                               "negated": True}]}),
        answer({"facts": []}),
    ])
    out = llm_graph.add("I moved to Porto and left Feedzai.", user_id="ana")
    assert triples(out["relations"]["added"]) == {("ana", "lives_in", "Porto")}
    assert {(r["destination"], r["reason"]) for r in out["relations"]["invalidated"]} == {
        ("Lisbon", "contradicted"), ("Feedzai", "negated")}
    assert triples(llm_graph.get_all(user_id="ana")["relations"]) == {("ana", "lives_in", "Porto")}


def test_a_malformed_answer_gets_one_repair(llm_graph, openai_server):
    openai_server.script(CHAT, [
        answer('{"relations": [{"source": "USER", "relationship": "likes", "destination": "fa'),  # cut off
        answer('<think>the user likes fado</think>{"relations": [{"source": "USER", "relationship": "likes",'
               ' "destination": "fado"}]}'),
        answer({"facts": ["Likes fado"]}),
    ])
    out = llm_graph.add("I like fado", user_id="ana")
    assert triples(out["relations"]["added"]) == {("ana", "likes", "fado")}
    repair = openai_server.requests(CHAT)[1].json["messages"]
    assert repair[-1]["role"] == "user" and "could not be used" in repair[-1]["content"]


def test_an_unusable_answer_is_reported_and_memories_still_form(llm_graph, openai_server):
    openai_server.script(CHAT, [answer("I'm sorry, I can't help with that."), answer("still no JSON"),
                                answer({"facts": ["Likes fado"]})])
    out = llm_graph.add("I like fado", user_id="ana")
    assert out["status"] == "ok" and [r["memory"] for r in out["results"]] == ["Likes fado"]
    assert out["relations"]["status"] == "failed" and "after one repair attempt" in out["relations"]["reason"]
    assert out["relations"]["added"] == [] and llm_graph.get_all(user_id="ana")["relations"] == []
    assert len(llm_graph.get_messages(user_id="ana")) == 1


def test_an_unreachable_model_fails_both_and_keeps_the_messages(llm_graph, openai_server):
    openai_server.script(CHAT, [Reply.error(500, "boom"), Reply.error(500, "boom")])
    out = llm_graph.add("I like fado", user_id="ana")
    assert out["status"] == "failed" and out["relations"]["status"] == "failed"
    assert llm_graph.get_all(user_id="ana") == {"results": [], "relations": []}
    assert [m["content"] for m in llm_graph.get_messages(user_id="ana")] == ["I like fado"]
