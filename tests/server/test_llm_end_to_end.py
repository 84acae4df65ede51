"""An LLM for formation, end to end: a real HTTP server speaking OpenAI's chat-completions protocol
(``support/openai_server.py``, answering memlane's extraction and reconciliation prompts as a model
does) behind ``Memory.from_config``, behind a real ``memlane serve --config FILE`` process, and behind
one configured by ``MEMLANE_LLM_*`` variables alone. Then what each failure of the endpoint gives: the
SDK's result and REST's status and body, as docs/llm.md's table says (the messages are kept)."""

from __future__ import annotations

import json

import httpx
import pytest

from memlane import Memory
from memlane.core.config import llm_from_env
from support.openai_server import OpenAIServer, Reply, chat_completion
from support.serve_process import ServeProcess

CHAT = "/v1/chat/completions"
MODEL = "qwen-plus"
KEY = "sk-e2e-4f7a"
TIMEOUT = 5.0

#: what the model answers: a conversation's facts (a reasoning model's <think> block before one of them)
FACTS = {
    "I'm Ana, I live in Berlin and I'm vegetarian.":
        '{"facts": [{"fact": "Name is Ana", "type": "profile"}, {"fact": "Lives in Berlin", "type": "profile"}, '
        '{"fact": "Is vegetarian", "type": "preference"}]}',
    "We moved to Paris last month!":
        '<think>\nThe user says they moved. That changes where they live.\n</think>\n\n'
        '{"facts": [{"fact": "Lives in Paris", "type": "profile"}]}',
}


def model(request) -> Reply:
    """The scripted model: memlane's extraction prompt gets the conversation's facts; its reconciliation
    prompt gets mem0's answer shape, the memory about where the user lives UPDATEd."""
    messages = request.json["messages"]
    if messages[0]["content"].startswith("You extract durable facts"):
        said = messages[-1]["content"].split(": ", 1)[1]
        return Reply(json=chat_completion(FACTS[said], model=MODEL))
    prompt = messages[-1]["content"]
    listing = json.loads(prompt.split("Existing memories:", 1)[1].split("New facts:", 1)[0])
    decisions = [{"id": item["id"], "text": "Lives in Paris", "event": "UPDATE", "old_memory": item["text"]}
                 if item["text"] == "Lives in Berlin" else {"id": item["id"], "text": item["text"], "event": "NONE"}
                 for item in listing]
    return Reply(json=chat_completion(json.dumps({"memory": decisions}), model=MODEL))


@pytest.fixture
def llm_server():
    with OpenAIServer() as server:
        server.route(CHAT, model)
        yield server
    assert not server.errors, server.errors


def config(tmp_path, base_url: str, **llm) -> dict:
    return {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "memories.db")}},
            "embedder": {"provider": "hashing"},
            "llm": {"provider": "openai", "config": {"model": MODEL, "api_key": KEY, "base_url": base_url,
                                                     "timeout": TIMEOUT, "max_retries": 1, **llm}}}


def assert_formed_by_the_model(first: dict, second: dict, listed: list[str], server: OpenAIServer) -> None:
    assert first["status"] == "ok" and sorted(r["memory"] for r in first["results"]) == [
        "Is vegetarian", "Lives in Berlin", "Name is Ana"]
    assert second["status"] == "ok"
    assert [(r["event"], r["memory"], r.get("previous_memory")) for r in second["results"]] == [
        ("UPDATE", "Lives in Paris", "Lives in Berlin")]
    assert sorted(listed) == ["Is vegetarian", "Lives in Paris", "Name is Ana"]
    calls = server.requests(CHAT)
    assert len(calls) == 3  # extraction; extraction and reconciliation (the first add had nothing to reconcile)
    assert {c.json["model"] for c in calls} == {MODEL}
    assert {c.header("authorization") for c in calls} == {f"Bearer {KEY}"}


def test_memory_from_config_forms_memories_through_the_llm(tmp_path, llm_server):
    with Memory.from_config(config(tmp_path, llm_server.base_url)) as memory:
        first = memory.add("I'm Ana, I live in Berlin and I'm vegetarian.", user_id="ana")
        second = memory.add("We moved to Paris last month!", user_id="ana")
        listed = [m["memory"] for m in memory.get_all(user_id="ana")["results"]]
    assert_formed_by_the_model(first, second, listed, llm_server)


def _rest_adds(server: ServeProcess) -> tuple[dict, dict, list[str]]:
    key = server.create_key("default")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
        first = client.post("/memories", json={"messages": "I'm Ana, I live in Berlin and I'm vegetarian.",
                                               "user_id": "ana"})
        second = client.post("/memories", json={"messages": "We moved to Paris last month!", "user_id": "ana"})
        listed = client.get("/memories", params={"user_id": "ana"})
    assert (first.status_code, second.status_code, listed.status_code) == (200, 200, 200), first.text
    return first.json(), second.json(), [m["memory"] for m in listed.json()["results"]]


def test_memlane_serve_with_a_config_file_forms_memories_through_the_llm(tmp_path, llm_server):
    path = tmp_path / "memlane.json"
    path.write_text(json.dumps(config(tmp_path, llm_server.base_url)))
    with ServeProcess(tmp_path / "home", serve_args=["--config", str(path)]) as server:
        first, second, listed = _rest_adds(server)
    assert_formed_by_the_model(first, second, listed, llm_server)


def test_memlane_serve_with_the_llm_in_environment_variables(tmp_path, llm_server):
    path = tmp_path / "store.json"  # the file names no llm: the variables do
    path.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    env = {"MEMLANE_LLM_BASE_URL": llm_server.base_url, "MEMLANE_LLM_MODEL": MODEL, "MEMLANE_LLM_API_KEY": KEY}
    with ServeProcess(tmp_path / "home", serve_args=["--config", str(path)], env=env) as server:
        first, second, listed = _rest_adds(server)
    assert_formed_by_the_model(first, second, listed, llm_server)


@pytest.mark.parametrize("given,env,expected", [
    # no llm in the config: the model or the base URL switches one on (provider openai unless named)
    ({}, {"MEMLANE_LLM_MODEL": "m", "MEMLANE_LLM_BASE_URL": "http://h/v1", "MEMLANE_LLM_API_KEY": "k"},
     {"provider": "openai", "config": {"model": "m", "base_url": "http://h/v1", "api_key": "k"}}),
    ({}, {"MEMLANE_LLM_PROVIDER": "ollama", "MEMLANE_LLM_MODEL": "qwen3:8b"},
     {"provider": "ollama", "config": {"model": "qwen3:8b"}}),
    ({}, {"MEMLANE_LLM_API_KEY": "k"}, None),  # a key alone never switches the LLM on
    ({}, {}, None),
    # the config's llm wins; the variables fill in what it leaves out (a key kept out of the file)
    ({"llm": {"provider": "openai", "config": {"model": "a", "base_url": "http://a/v1"}}},
     {"MEMLANE_LLM_MODEL": "b", "MEMLANE_LLM_BASE_URL": "http://b/v1", "MEMLANE_LLM_API_KEY": "k"},
     {"provider": "openai", "config": {"model": "a", "base_url": "http://a/v1", "api_key": "k"}}),
    ({"llm": {"provider": "ollama", "config": {"ollama_base_url": "http://o:11434"}}},
     {"MEMLANE_LLM_BASE_URL": "http://b/v1"}, {"provider": "ollama", "config": {"ollama_base_url": "http://o:11434"}}),
    ({"llm": None}, {"MEMLANE_LLM_MODEL": "m"}, None),  # "llm": null says: no LLM
])
def test_llm_settings_from_the_environment(given, env, expected):
    from memlane.core.config import MemoryConfig

    resolved = llm_from_env(given, env).get("llm")
    assert resolved == expected
    assert (MemoryConfig.model_validate(llm_from_env(given, env)).llm is None) == (expected is None)


# -- what each failure of the endpoint gives ---------------------------------------------------

def answer(text: str) -> Reply:
    return Reply(json=chat_completion(text, model=MODEL))


#: (case, the endpoint's replies, what the add's reason says): docs/llm.md's table
FAILURES = [
    ("hung (accepts, never answers)", [Reply(json=chat_completion("{}"), delay=60)],
     f"timed out: no answer within {TIMEOUT:g} s (llm.config.timeout"),
    ("401 key refused", [Reply.error(401, "Incorrect API key provided: sk-e2e***4f7a", type="invalid_request_error",
                                     code="invalid_api_key")],
     "was refused (401 Unauthorized): the endpoint did not accept the API key; check llm.config.api_key; "
     "the endpoint said: 'Incorrect API key provided: sk-e2e***4f7a'"),
    ("404 unknown model", [Reply.error(404, f"The model `{MODEL}` does not exist", type="invalid_request_error",
                                       code="model_not_found")],
     "found nothing (404 Not Found): check llm.config.model and llm.config.base_url"),
    ("429 without Retry-After", [Reply.error(429, "Rate limit reached", type="requests")] * 2,
     "failed (429 Too Many Requests) after 2 attempts (llm.config.max_retries is 1); "
     "the endpoint said: 'Rate limit reached'"),
    ("429 with Retry-After past the deadline", [Reply.error(429, "Rate limit reached", headers={"Retry-After": "60"})],
     "failed (429 Too Many Requests) after 1 attempt; it asked to wait 60 s (Retry-After), past the 5 s deadline "
     "(llm.config.timeout)"),
    ("500 twice", [Reply.error(500, "upstream crashed")] * 2,
     "failed (500 Internal Server Error) after 2 attempts (llm.config.max_retries is 1)"),
    ("a body that is not JSON", [Reply(body="<html>502 Bad Gateway</html>", headers={"content-type": "text/html"})],
     "answered the chat request with a body that is not JSON: '<html>502 Bad Gateway</html>'"),
    ("JSON without choices", [Reply(json={"id": "chatcmpl-1", "object": "chat.completion", "model": MODEL})],
     "answered the chat request without a message (its JSON has no choices[0].message)"),
    ("a reply that is not the expected JSON", [answer("Sure! You like tea."), answer("You like tea.")],
     "the model's answer could not be used (no complete JSON object or array in the model's answer: "
     "'Sure! You like tea.'); after one repair attempt"),
]
SAID = "I like green tea"


def _check_failed(outcome: dict, reason: str, kept: list[str]) -> None:
    assert outcome["status"] == "failed" and outcome["results"] == [], outcome
    assert reason in outcome["reason"], outcome["reason"]
    assert kept == [SAID]  # the messages are kept: nothing said is lost


@pytest.mark.parametrize("case,replies,reason", FAILURES, ids=[f[0] for f in FAILURES])
def test_an_endpoint_failure_through_the_sdk(tmp_path, llm_server, case, replies, reason):
    llm_server.script(CHAT, replies)
    with Memory.from_config(config(tmp_path, llm_server.base_url)) as memory:
        outcome = memory.add(SAID, user_id="u")
        kept = [m["content"] for m in memory.get_messages(user_id="u")]
        assert memory.get_all(user_id="u")["results"] == []
    _check_failed(outcome, reason, kept)
    assert llm_server.pending(CHAT) == 0  # every scripted reply was asked for: no more, no fewer attempts


def test_an_endpoint_failure_through_rest(tmp_path, llm_server):
    """The same table through a ``memlane serve`` process: 200, ``status: "failed"`` and the same reason."""
    path = tmp_path / "memlane.json"
    path.write_text(json.dumps(config(tmp_path, llm_server.base_url)))
    with ServeProcess(tmp_path / "home", serve_args=["--config", str(path)]) as server:
        key = server.create_key("default")
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=120) as client:
            for n, (case, replies, reason) in enumerate(FAILURES):
                llm_server.script(CHAT, replies)
                user = f"u{n}"
                answered = client.post("/memories", json={"messages": SAID, "user_id": user})
                assert answered.status_code == 200, (case, answered.text)
                kept = [m["content"] for m in client.get("/messages", params={"user_id": user}).json()]
                _check_failed(answered.json(), reason, kept)
                assert llm_server.pending(CHAT) == 0, case


@pytest.mark.parametrize("llm,says", [
    ({"provider": "openaai", "config": {"model": MODEL}},
     "llm.provider 'openaai' is unknown; known providers: openai, ollama, lmstudio, vllm"),
    ({"provider": "openai", "config": {"model": MODEL, "base_url": "http://127.0.0.1:9/v1", "temprature": 0.2}},
     "llm.config.temprature: unknown setting"),
    ({"provider": "openai", "config": {"model": MODEL}},
     "the openai llm needs an API key: set llm.config.api_key or OPENAI_API_KEY"),
])
def test_memlane_serve_refuses_to_start_with_a_wrong_llm_block(tmp_path, llm, says):
    """Not a server that answers every add with a 500: the start fails, saying what is wrong."""
    path = tmp_path / "memlane.json"
    path.write_text(json.dumps({"embedder": {"provider": "hashing"}, "llm": llm}))
    with pytest.raises(RuntimeError, match=r"memlane serve exited \(1\)") as failed:
        with ServeProcess(tmp_path / "home", serve_args=["--config", str(path)], env={"OPENAI_API_KEY": ""}):
            pass
    assert says in " ".join(str(failed.value).split())
