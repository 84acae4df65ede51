"""The scripted OpenAI-compatible test server itself, driven by the official SDK
(so later LLM tests can rely on scripts, retries, streams and recording)."""

import threading
import time

import openai
import pytest

from support.openai_server import OpenAIServer, Reply, chat_completion

CHAT = "/v1/chat/completions"


@pytest.fixture
def server():
    with OpenAIServer() as s:  # no embed function: no /v1/embeddings route
        yield s
    assert not s.errors


def client(server, **options):
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", **{"max_retries": 0, **options})


def test_scripted_replies_in_order_then_the_default(server):
    server.script(CHAT, [
        Reply.error(429, "slow down", type="rate_limit_exceeded", headers={"retry-after-ms": "1"}),
        Reply(json=chat_completion("first")),
    ]).route(CHAT, Reply(json=chat_completion("default")))
    c = client(server, max_retries=1)
    messages = [{"role": "user", "content": "hi"}]
    assert c.chat.completions.create(model="gpt-test", messages=messages).choices[0].message.content == "first"
    assert c.chat.completions.create(model="gpt-test", messages=messages).choices[0].message.content == "default"
    assert server.pending() == 0

    requests = server.requests(CHAT)
    assert len(requests) == 3 and requests[0].json == requests[1].json
    assert requests[0].json["messages"] == messages and requests[0].json["model"] == "gpt-test"
    assert requests[0].header("Authorization") == "Bearer sk-test"
    assert requests[1].header("x-stainless-retry-count") == "1"


def test_tool_calls_and_streams_parse(server):
    call = {"id": "call_1", "type": "function", "function": {"name": "save", "arguments": '{"fact": "x"}'}}
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
             "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}
    server.script(CHAT, [
        Reply(json=chat_completion(None, tool_calls=[call])),
        Reply.sse([chunk, {**chunk, "choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}]),
    ])
    c = client(server)
    choice = c.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "x"}]).choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls[0].function.name == "save"
    stream = c.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "x"}], stream=True)
    assert "".join(part.choices[0].delta.content or "" for part in stream) == "Hello"
    assert server.requests(CHAT)[1].json["stream"] is True


def test_errors_delays_drops_and_unknown_paths(server):
    c = client(server, timeout=0.3)
    with pytest.raises(openai.NotFoundError, match="no scripted reply for POST /v1/chat/completions"):
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    server.script(CHAT, [Reply(json=chat_completion(), delay=5.0), Reply(drop=True),
                         Reply.error(400, "bad", type="invalid_request_error")])
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert time.monotonic() - start < 2
    with pytest.raises(openai.APIConnectionError):
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(openai.BadRequestError, match="bad"):
        c.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    server.clear_requests()
    assert server.requests() == []


def test_handler_exceptions_are_reported():
    def broken(request):
        raise RuntimeError("boom")

    with OpenAIServer() as s:
        s.route(CHAT, broken)
        with pytest.raises(openai.InternalServerError, match="boom"):
            client(s).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert [str(e) for e in s.errors] == ["boom"]


def test_stop_is_prompt_with_a_reply_still_delayed():
    s = OpenAIServer().start()
    s.route(CHAT, Reply(json=chat_completion(), delay=30.0))
    outcome = []

    def call():
        try:
            client(s).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
            outcome.append("answered")
        except openai.APIConnectionError:
            outcome.append("hung up")

    caller = threading.Thread(target=call)
    caller.start()
    while not s.requests():
        time.sleep(0.01)
    start = time.monotonic()
    s.stop()
    caller.join(timeout=5)
    assert time.monotonic() - start < 2 and outcome == ["hung up"]
