"""A hung embedding or encoder endpoint (accepts, never answers) costs one deadline per request,
retries included, and a server request that meets one answers 503 with a request id.

The endpoint counts the connections it was sent, so these tests see how many attempts a client
made (one: the first attempt used the whole deadline) without timing anything."""

from __future__ import annotations

import httpx
import pytest

from memlane.documents.encoders import create_encoder
from memlane.embeddings.openai import OpenAIEmbedder, OpenAIEmbedderConfig
from memlane.core.errors import EmbeddingError
from memlane.server import ServerSettings, create_app
from support.hung_endpoint import HungEndpoint
from support.live_server import LiveServer

DIMS = 8


def embedder_at(hung: HungEndpoint):
    config = OpenAIEmbedderConfig(model="embed-test", api_key="sk-test", base_url=hung.base_url, embedding_dims=DIMS,
                                  timeout=1.0, max_retries=5)
    return OpenAIEmbedder(config).embed(["wing"], "query")


def encoder_at(hung: HungEndpoint):
    return create_encoder({"provider": "http", "url": hung.url + "/embed", "dims": DIMS,
                           "timeout": 1.0, "retries": 5}).encode_queries(["wing"])


@pytest.mark.parametrize("call, setting", [
    (embedder_at, "embedder.config.timeout"),
    (encoder_at, "documents.encoder.timeout"),
], ids=["openai-embeddings", "http-multivector-encoder"])
def test_a_hung_endpoint_is_one_deadline_however_many_retries(call, setting):
    with HungEndpoint() as hung:
        with pytest.raises(EmbeddingError) as info:
            call(hung)
        message = str(info.value)
        assert "timed out" in message and "1 s" in message and setting in message
        # five retries allowed, but the first attempt used the whole deadline
        assert len(hung.held) == 1


def test_the_server_answers_503_with_a_request_id_when_the_embedder_hangs(tmp_path):
    with HungEndpoint() as hung:
        config = {"embedder": {"provider": "openai", "config": {
            "model": "embed-test", "api_key": "sk-test", "base_url": hung.base_url, "embedding_dims": DIMS,
            "timeout": 1.0, "max_retries": 3}}}
        app = create_app(ServerSettings(home=tmp_path, auth=False, config=config, warm_up=False))
        with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as client:
            for method, path, body in [("POST", "/memories", {"messages": "I like tea", "user_id": "u", "infer": False}),
                                       ("POST", "/search", {"query": "tea", "user_id": "u"})]:
                before = len(hung.held)
                response = client.request(method, path, json=body)
                assert response.status_code == 503, response.text
                answer = response.json()
                assert answer["request_id"] == response.headers["x-request-id"]
                assert "Traceback" not in response.text
                assert len(hung.held) == before + 1  # one attempt: the request ended at the deadline
            assert client.get("/memories", params={"user_id": "u"}).json()["results"] == []
