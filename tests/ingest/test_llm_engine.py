"""The LLM formation engine against a scripted OpenAI-compatible server on 127.0.0.1
(real HTTP, the real ``openai`` SDK client, recorded well-formed and malformed answers)."""

import json

import pytest

from memlane import Memory
from support.hung_endpoint import HungEndpoint
from support.data import data
from support.openai_server import Reply, chat_completion

CHAT = "/v1/chat/completions"
CORPUS = data("llm_outputs_malformed.jsonl")  # origin: tests/data/README.md
MALFORMED = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def answer(content) -> Reply:
    return Reply(json=chat_completion(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False),
                                      model="gpt-test"))


@pytest.fixture
def llm_config(tmp_path, openai_server):
    def make(**llm):
        settings = {"model": "gpt-test", "api_key": "sk-test", "base_url": openai_server.base_url,
                    "max_retries": 0, "timeout": 5.0, **llm}
        custom = {k: settings.pop(k) for k in ("custom_fact_extraction_prompt", "custom_update_memory_prompt") if k in settings}
        return {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "llm.db")}},
                "llm": {"provider": "openai", "config": settings}, **custom}
    return make


@pytest.fixture
def llm_memory(llm_config, embedder):
    with Memory(llm_config(), embedder=embedder) as m:
        yield m


def shown_ids(request) -> dict[str, str]:
    """The small ids the model saw, mapped to memory texts (from the reconciliation prompt)."""
    prompt = request.json["messages"][-1]["content"]
    listing = prompt.split("Existing memories:", 1)[1].split("New facts:", 1)[0]
    return {item["id"]: item["text"] for item in json.loads(listing)}


def test_two_calls_map_small_ids_and_ignore_hallucinated_ones(llm_memory, openai_server):
    berlin = llm_memory.add("Lives in Berlin", user_id="u", infer=False)["results"][0]["id"]
    llm_memory.add("Works as a nurse", user_id="u", infer=False)
    openai_server.script(CHAT, [
        answer({"facts": [{"fact": "Moved to Paris", "type": "event"}, "Has a dog named Rex"]}),
        lambda request: answer({"memory": [
            {"id": next(k for k, v in shown_ids(request).items() if v == "Lives in Berlin"), "text": "Lives in Paris",
             "event": "UPDATE", "old_memory": "Lives in Berlin"},
            {"id": "9", "text": "Has a dog named Rex", "event": "ADD"},
            {"id": "7", "text": "Works as a nurse", "event": "DELETE"},
        ]}),
    ])
    result = llm_memory.add([{"role": "user", "content": "I moved to Paris with my dog Rex"}], user_id="u")
    assert result["status"] == "ok"
    assert {(r["event"], r["memory"]) for r in result["results"]} == {("UPDATE", "Lives in Paris"),
                                                                       ("ADD", "Has a dog named Rex")}
    assert next(r for r in result["results"] if r["event"] == "UPDATE")["id"] == berlin
    assert "Works as a nurse" in {r["memory"] for r in llm_memory.get_all(user_id="u")["results"]}
    requests = openai_server.requests(CHAT)
    assert len(requests) == 2
    assert all(r.json["model"] == "gpt-test" and r.json["response_format"] == {"type": "json_object"} for r in requests)
    assert set(shown_ids(requests[1])) == {"0", "1"} and berlin not in requests[1].json["messages"][-1]["content"]
    assert requests[0].header("authorization") == "Bearer sk-test"
    ad = llm_memory.get(next(r["id"] for r in result["results"] if r["event"] == "ADD"))
    assert ad["memory_type"] == "fact" or ad["memory_type"] in ("profile", "preference", "event")


def test_no_facts_means_one_call_and_no_existing_memories_means_no_reconciliation_call(llm_memory, openai_server):
    openai_server.script(CHAT, [answer({"facts": []}), answer({"facts": ["Likes tea", "Lives in Oslo"]})])
    assert llm_memory.add("ok thanks", user_id="u")["results"] == []
    result = llm_memory.add("I like tea and live in Oslo", user_id="u")
    assert [r["memory"] for r in result["results"]] == ["Likes tea", "Lives in Oslo"]
    assert len(openai_server.requests(CHAT)) == 2  # one per add


def test_at_most_two_calls_however_many_facts(llm_memory, openai_server):
    llm_memory.add([f"existing memory number {i}" for i in range(10)], user_id="u", infer=False)
    facts = [f"New fact {i}" for i in range(8)]
    openai_server.script(CHAT, [answer({"facts": facts}),
                                answer({"memory": [{"id": str(100 + i), "text": f, "event": "ADD"} for i, f in enumerate(facts)]})])
    before = llm_memory.engine.llm.calls
    assert len(llm_memory.add("many things", user_id="u")["results"]) == 8
    assert llm_memory.engine.llm.calls - before == 2


def test_unusable_answer_gets_one_repair_round(llm_memory, openai_server):
    openai_server.script(CHAT, [answer("I'm sorry, I can't do that."), answer('```json\n{"facts": ["Likes jazz"]}\n```')])
    result = llm_memory.add("I like jazz", user_id="u")
    assert result["status"] == "ok" and [r["memory"] for r in result["results"]] == ["Likes jazz"]
    repair = openai_server.requests(CHAT)[1].json["messages"]
    assert repair[-2] == {"role": "assistant", "content": "I'm sorry, I can't do that."}
    assert "could not be used" in repair[-1]["content"]


def test_failure_is_reported_and_messages_are_kept(llm_memory, openai_server):
    openai_server.script(CHAT, [answer('{"facts": ["Lives in Oslo", "Works as a nur'), answer("still not json")])
    result = llm_memory.add("I live in Oslo and work as a nurse", user_id="u")
    assert result["status"] == "failed" and "repair" in result["reason"] and result["results"] == []
    assert [m["content"] for m in llm_memory.get_messages(user_id="u")] == ["I live in Oslo and work as a nurse"]
    assert llm_memory.get_all(user_id="u")["results"] == []


@pytest.mark.parametrize("case", [c for c in MALFORMED if c["stage"] == "extract"], ids=lambda c: c["id"])
def test_malformed_extraction_answers(llm_memory, openai_server, case):
    openai_server.script(CHAT, [answer(case["raw"]), answer(case["raw"])])
    result = llm_memory.add("something about me", user_id="u")
    if case["expect"] == "fail":
        assert result["status"] == "failed" and result["results"] == []
        assert llm_memory.get_all(user_id="u")["results"] == []
    else:
        normalized = case.get("normalized", case["parsed"])
        expected = normalized["facts"] if isinstance(normalized, dict) else normalized
        assert result["status"] == "ok"
        assert sorted(r["memory"] for r in result["results"]) == sorted(dict.fromkeys(expected))
    assert len(llm_memory.get_messages(user_id="u")) == 1


@pytest.mark.parametrize("case", [c for c in MALFORMED if c["stage"] == "update"], ids=lambda c: c["id"])
def test_malformed_reconciliation_answers(llm_memory, openai_server, case):
    existing = ["Likes pizza", "Lives in Berlin", "Prefers tech stocks", "Is vegetarian"][: len(case["known_ids"])]
    llm_memory.add(existing, user_id="u", infer=False)
    before = {r["id"]: r["memory"] for r in llm_memory.get_all(user_id="u")["results"]}
    openai_server.script(CHAT, [answer({"facts": ["a new fact"]}), answer(case["raw"]), answer(case["raw"])])
    result = llm_memory.add("news", user_id="u")
    after = {r["id"]: r["memory"] for r in llm_memory.get_all(user_id="u")["results"]}
    if case["expect"] == "fail":
        assert result["status"] == "failed" and after == before
        return
    assert result["status"] == "ok"
    shown = shown_ids(openai_server.requests(CHAT)[1])
    real = {text: mid for mid, text in before.items()}
    normalized = case.get("normalized", case["parsed"])["memory"]
    for entry in normalized:
        event, short = str(entry.get("event", "")).upper(), str(entry["id"])
        if event == "UPDATE" and short in shown:
            assert after[real[shown[short]]] == entry["text"]
        elif event == "DELETE" and short in shown:
            assert real[shown[short]] not in after
        elif event == "ADD":
            assert entry["text"] in after.values()
        elif short in shown:  # NONE, a missing event, or anything else: unchanged
            assert after[real[shown[short]]] == shown[short]
    assert len(after) >= len(before) - sum(1 for e in normalized if str(e.get("event", "")).upper() == "DELETE")


def test_timeout_is_a_reported_failure(llm_config, embedder, openai_server):
    with Memory(llm_config(timeout=0.5), embedder=embedder) as m:
        openai_server.script(CHAT, [Reply(json=chat_completion('{"facts": []}'), delay=3.0)])
        result = m.add("I like tea", user_id="u")
        assert result["status"] == "failed" and "timed out" in result["reason"].lower()
        assert m.get_messages(user_id="u")


def test_retries_on_429_and_500(llm_config, embedder, openai_server):
    quick = {"retry-after-ms": "1"}
    with Memory(llm_config(max_retries=2), embedder=embedder) as m:
        openai_server.script(CHAT, [Reply.error(429, "slow down", headers=quick), answer({"facts": ["Likes tea"]})])
        assert m.add("I like tea", user_id="u")["status"] == "ok"
        openai_server.script(CHAT, [Reply.error(500, headers=quick), Reply.error(500, headers=quick),
                                    answer({"facts": ["Likes coffee"]}),
                                    answer({"memory": [{"id": "5", "text": "Likes coffee", "event": "ADD"}]})])
        result = m.add("I like coffee", user_id="u")
        assert result["status"] == "ok" and [r["memory"] for r in result["results"]] == ["Likes coffee"]
        assert len(openai_server.requests(CHAT)) == 2 + 4


def test_endpoint_without_json_mode(llm_memory, openai_server):
    openai_server.script(CHAT, [Reply.error(400, "response_format json_object is not supported by this model",
                                            type="invalid_request_error"),
                                answer({"facts": ["Likes tea"]}), answer({"facts": ["Likes coffee"]})])
    assert llm_memory.add("I like tea", user_id="u")["status"] == "ok"
    llm_memory.add("I like coffee", user_id="u", )
    sent = [r.json for r in openai_server.requests(CHAT)]
    assert "response_format" in sent[0] and "response_format" not in sent[1] and "response_format" not in sent[2]


def test_custom_prompts(llm_config, embedder, openai_server):
    config = llm_config(custom_fact_extraction_prompt="EXTRACT CAREFULLY", custom_update_memory_prompt="DECIDE WISELY")
    with Memory(config, embedder=embedder) as m:
        m.add("Lives in Rome", user_id="u", infer=False)
        openai_server.script(CHAT, [answer({"facts": ["Lives in Milan"]}),
                                    answer({"memory": [{"id": "0", "text": "Lives in Milan", "event": "UPDATE"}]})])
        m.add("I moved to Milan", user_id="u")
    extract_request, update_request = openai_server.requests(CHAT)
    assert extract_request.json["messages"][0] == {"role": "system", "content": "EXTRACT CAREFULLY"}
    prompt = update_request.json["messages"][-1]["content"]
    assert prompt.startswith("DECIDE WISELY") and "Lives in Rome" in prompt and "Lives in Milan" in prompt


def test_unicode_escaped_chinese_is_stored_as_characters(llm_memory, openai_server):
    openai_server.script(CHAT, [answer('{"facts": ["\\u559c\\u6b22\\u5403\\u706b\\u9505"]}')])
    assert llm_memory.add("我喜欢吃火锅", user_id="u")["results"][0]["memory"] == "喜欢吃火锅"


def test_forget_fact_never_becomes_a_memory(llm_memory, openai_server):
    llm_memory.add("Lives in Oslo", user_id="u", infer=False)
    openai_server.script(CHAT, [answer({"facts": ["Forget: where the user lives"]}),
                                answer({"memory": [{"id": "0", "text": "Lives in Oslo", "event": "DELETE"},
                                                   {"id": "1", "text": "Forget: where the user lives", "event": "ADD"}]})])
    result = llm_memory.add("Please forget where I live", user_id="u")
    assert [r["event"] for r in result["results"]] == ["DELETE"]
    assert llm_memory.get_all(user_id="u")["results"] == []


def test_procedural_summary_from_the_model(llm_memory, openai_server):
    openai_server.script(CHAT, [answer("Task: book a flight. Steps: searched, booked 9:00 for 120 EUR.")])
    result = llm_memory.add([{"role": "user", "content": "book a flight"}, {"role": "assistant", "content": "done"}],
                            agent_id="bot", memory_type="procedural")
    assert llm_memory.get(result["results"][0]["id"])["memory"].startswith("Task: book a flight")
    assert "response_format" not in openai_server.requests(CHAT)[0].json


def test_a_procedural_prompt_replaces_the_instructions(llm_memory, openai_server):
    """mem0's add(prompt=): the system prompt of the procedural summary, for this call."""
    openai_server.script(CHAT, [answer("Steps: searched, booked.")])
    llm_memory.add([{"role": "user", "content": "book a flight"}], agent_id="bot", memory_type="procedural",
                   prompt="List the agent's steps tersely.")
    sent = openai_server.requests(CHAT)[0].json["messages"]
    assert sent[0] == {"role": "system", "content": "List the agent's steps tersely."}


# -- answer shapes: seed 002's actions, JSON inside a JSON string, two answers in one ---------------


def by_shown_text(request, text: str) -> str:
    """The small id the model was shown for the memory with ``text``."""
    return next(k for k, v in shown_ids(request).items() if v == text)


@pytest.mark.parametrize("shape", ["actions", "single_decision", "memory_as_json_string"])
def test_reconciliation_answer_shapes(llm_memory, openai_server, shape):
    llm_memory.add("Prefers tech stocks", user_id="u", infer=False)

    def decide(request):
        decision = {"event": "UPDATE", "id": by_shown_text(request, "Prefers tech stocks"),
                    "text": "Prefers AI-related tech stocks", "old_memory": "Prefers tech stocks"}
        return answer({"actions": {"actions": [decision]}, "single_decision": decision,
                       "memory_as_json_string": {"memory": json.dumps([decision])}}[shape])

    openai_server.script(CHAT, [answer({"facts": ["Prefers AI-related tech stocks"]}), decide])
    result = llm_memory.add("Now I especially like AI-related tech stocks", user_id="u")
    assert result["status"] == "ok"
    assert [(r["event"], r["memory"], r.get("previous_memory")) for r in result["results"]] == [
        ("UPDATE", "Prefers AI-related tech stocks", "Prefers tech stocks")]


def test_an_answer_sent_as_a_json_string_is_decoded(llm_memory, openai_server):
    openai_server.script(CHAT, [answer(json.dumps(json.dumps({"facts": ["Likes jazz", "Lives in Oslo"]})))])
    result = llm_memory.add("I like jazz and live in Oslo", user_id="u")
    assert result["status"] == "ok" and [r["memory"] for r in result["results"]] == ["Likes jazz", "Lives in Oslo"]
    assert len(openai_server.requests(CHAT)) == 1  # decoded, not repaired


CONFLICTING = [
    '{"facts": ["Lives in Oslo"]}\n{"facts": ["Lives in Bergen"]}',
    '```json\n{"facts": ["Lives in Oslo"]}\n```\nor maybe\n```json\n{"facts": ["Lives in Bergen"]}\n```',
    '{"facts": ["Lives in Oslo"], "facts": ["Lives in Bergen"]}',
]


@pytest.mark.parametrize("raw", CONFLICTING)
def test_two_conflicting_answers_fail_without_a_guess(llm_memory, openai_server, raw):
    openai_server.script(CHAT, [answer(raw), answer(raw)])
    result = llm_memory.add("I live in Oslo, or Bergen", user_id="u")
    assert result["status"] == "failed" and "not guessing" in result["reason"]
    assert llm_memory.get_all(user_id="u")["results"] == []
    assert [m["content"] for m in llm_memory.get_messages(user_id="u")] == ["I live in Oslo, or Bergen"]
    assert "not guessing" in openai_server.requests(CHAT)[1].json["messages"][-1]["content"]  # the repair says why


def test_the_same_answer_twice_is_one_answer(llm_memory, openai_server):
    openai_server.script(CHAT, [answer('{"facts": ["Likes jazz"]}\n\n{"facts": ["Likes jazz"]}')])
    assert [r["memory"] for r in llm_memory.add("I like jazz", user_id="u")["results"]] == ["Likes jazz"]


def test_memory_and_actions_that_disagree_are_not_guessed_at(llm_memory, openai_server):
    llm_memory.add("Lives in Oslo", user_id="u", infer=False)
    both = {"memory": [{"id": "0", "text": "Lives in Bergen", "event": "UPDATE"}],
            "actions": [{"id": "0", "event": "DELETE"}]}
    openai_server.script(CHAT, [answer({"facts": ["Lives in Bergen"]}), answer(both), answer(both)])
    result = llm_memory.add("I moved to Bergen", user_id="u")
    assert result["status"] == "failed" and '"memory" and "actions"' in result["reason"]
    assert [r["memory"] for r in llm_memory.get_all(user_id="u")["results"]] == ["Lives in Oslo"]


# -- a hung endpoint: one deadline per call, retries included ------------------------------------


@pytest.fixture
def hung():
    with HungEndpoint() as endpoint:
        yield endpoint


def test_a_hung_endpoint_is_one_deadline_however_many_retries(tmp_path, embedder, hung):
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "hung.db")}},
              "llm": {"provider": "openai", "config": {"model": "gpt-test", "api_key": "sk-test",
                                                       "base_url": hung.base_url, "timeout": 1.0, "max_retries": 5}}}
    with Memory(config, embedder=embedder) as m:
        result = m.add("I like tea", user_id="u")
        assert result["status"] == "failed"
        assert "timed out" in result["reason"] and "1 s" in result["reason"] and "llm.config.timeout" in result["reason"]
        assert [msg["content"] for msg in m.get_messages(user_id="u")] == ["I like tea"]
    # the first attempt used the whole deadline: no retry was started (without the deadline: 6 attempts)
    assert len(hung.held) == 1


def test_the_llm_deadline_defaults_to_thirty_seconds():
    from memlane.llms.openai import OpenAILLMConfig

    assert OpenAILLMConfig().timeout == 30.0


# -- seed 002's worked example with the LLM engine, in the seed's answer format ------------------

SEED_DAYS = {  # (what the user says, the facts the model extracts) for each of the three days
    "zh-Hant": [("我偏好科技股，風險承受度中等", ["使用者偏好科技股", "使用者風險承受度為中等"]),
                ("我現在特別看好 AI 相關的科技股", ["使用者偏好 AI 相關科技股"]),
                ("我現在不想投資科技股了，想轉向價值股", ["使用者不再偏好科技股", "使用者偏好價值股"])],
    "en": [("I prefer tech stocks and my risk tolerance is medium.", ["Prefers tech stocks", "Risk tolerance is medium"]),
           ("Now I especially like AI-related tech stocks.", ["Prefers AI-related tech stocks"]),
           ("I don't want to invest in tech stocks anymore, I want to switch to value stocks.",
            ["No longer prefers tech stocks", "Prefers value stocks"])],
}


@pytest.mark.parametrize("lang", SEED_DAYS)
def test_seed_002_worked_example_with_the_llm(llm_memory, openai_server, lang):
    (day1, facts1), (day2, facts2), (day3, facts3) = SEED_DAYS[lang]
    openai_server.script(CHAT, [answer({"facts": facts1})])  # nothing stored yet: no reconciliation call
    first = llm_memory.add(day1, user_id="user-123")
    assert [(r["event"], r["memory"]) for r in first["results"]] == [("ADD", facts1[0]), ("ADD", facts1[1])]
    tech_id, risk_id = (r["id"] for r in first["results"])

    openai_server.script(CHAT, [answer({"facts": facts2}), lambda request: answer({"actions": [
        {"event": "UPDATE", "id": by_shown_text(request, facts1[0]), "text": facts2[0], "old_memory": facts1[0]}]})])
    second = llm_memory.add(day2, user_id="user-123")
    assert [(r["event"], r["id"], r["memory"], r["previous_memory"]) for r in second["results"]] == [
        ("UPDATE", tech_id, facts2[0], facts1[0])]

    openai_server.script(CHAT, [answer({"facts": facts3}), lambda request: answer({"actions": [
        {"event": "DELETE", "id": by_shown_text(request, facts2[0]), "old_memory": facts2[0]},
        {"event": "ADD", "text": facts3[1]}]})])
    third = llm_memory.add(day3, user_id="user-123")
    assert {(r["event"], r["memory"]) for r in third["results"]} == {("DELETE", facts2[0]), ("ADD", facts3[1])}

    active = {r["id"]: r["memory"] for r in llm_memory.get_all(user_id="user-123")["results"]}
    assert active[risk_id] == facts1[1] and facts3[1] in active.values() and tech_id not in active
    assert llm_memory.get(tech_id)["valid_to"] is not None  # invalidated, not erased
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in llm_memory.history(tech_id)] == [
        ("ADD", None, facts1[0]), ("UPDATE", facts1[0], facts2[0]), ("DELETE", facts2[0], None)]
