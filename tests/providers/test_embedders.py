"""Embedder providers: the local sentence-transformers model and OpenAI-compatible servers.

The OpenAI-compatible tests run against ``tests/support/openai_server.py``, a
scripted server whose /v1/embeddings answers with the REAL local model, so
ranking assertions mean something and the vectors memlane stores can be
checked against the model's own.
"""

import dataclasses
import time

import numpy as np
import pytest

from memlane import ConfigError, Memory
from memlane.embeddings import Embeddings
from memlane.embeddings import local as local_module
from memlane.embeddings.local import LocalEmbedder
from memlane.core.errors import EmbeddingError

from conftest import sqlite_config
from support.openai_server import EmbeddingsHandler, Reply, Request

EMBEDDINGS = "/v1/embeddings"
FAST_RETRY = {"retry-after-ms": "1"}  # the SDK would otherwise back off ~0.5 s per retry


def openai_config(tmp_path, base_url: str | None, *, provider: str = "openai", **overrides) -> dict:
    config = {"model": "test-embed", "embedding_dims": 384, "api_key": "sk-test"}
    if base_url is not None:
        config["base_url"] = base_url
    config.update(overrides)
    config = {k: v for k, v in config.items() if v is not None}
    return {**sqlite_config(tmp_path / "memlane.db"), "embedder": {"provider": provider, "config": config}}


@pytest.fixture
def no_openai_env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def texts_of(result) -> list[str]:
    return [r["memory"] for r in result["results"]]


def unit(matrix) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    return matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)


# -- local ------------------------------------------------------------------


def test_local_name_and_dims_come_from_the_model_files(monkeypatch):
    def no_loading(*args):
        raise AssertionError("reading name and dims must not load the model")

    monkeypatch.setattr(local_module, "_load", no_loading)
    embedder = LocalEmbedder()
    assert embedder.name == "local/all-MiniLM-L6-v2"
    assert embedder.dims == 384
    assert LocalEmbedder(embedding_dims=384).dims == 384


def test_local_output_is_unit_norm_float32(embedder):
    texts = ["I love pizza", "The meeting moved to Thursday", "x"]
    raw = np.asarray(embedder.embed(texts, "document"))
    assert raw.dtype == np.float32 and raw.shape == (3, 384)
    np.testing.assert_allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-5)

    rows = Embeddings(embedder).documents(texts)
    assert rows.dtype == np.float32 and rows.shape == (3, 384) and rows.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    query = Embeddings(embedder).query("I love pizza")
    assert query.dtype == np.float32 and not query.flags.writeable
    np.testing.assert_allclose(query, rows[0], atol=1e-6)


def test_local_threads_setting_applies_to_the_runtime(embedder, tmp_path):
    import torch

    default = torch.get_num_threads()
    try:
        onnx = {**sqlite_config(tmp_path / "o.db"), "embedder": {"provider": "local", "config": {"threads": 1}}}
        with Memory(onnx) as m:
            assert m.embeddings.embedder.runtime == "onnx"
            m.embeddings.embedder.embed(["one thread is enough"], "query")
            session = m.embeddings.embedder._model()[0].session
            assert session.get_session_options().intra_op_num_threads == 1
        config = {**sqlite_config(tmp_path / "t.db"),
                  "embedder": {"provider": "local", "config": {"threads": 1, "runtime": "torch"}}}
        with Memory(config) as m:
            assert m.embeddings.embedder.threads == 1
            vector = m.embeddings.embedder.embed(["one thread is enough"], "query")[0]
            assert torch.get_num_threads() == 1
        np.testing.assert_allclose(vector, embedder.embed(["one thread is enough"], "query")[0], atol=1e-5)
        with pytest.raises(ConfigError, match="threads"):
            Memory({**sqlite_config(tmp_path / "u.db"), "embedder": {"provider": "local", "config": {"threads": 0}}})
    finally:
        torch.set_num_threads(default)


def test_local_model_path_that_is_not_a_directory(tmp_path):
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"not a model directory")
    for path in (weights, tmp_path / "missing"):
        with pytest.raises(ConfigError) as info:
            LocalEmbedder(str(path))
        message = str(info.value)
        assert "embedder.config.model" in message and repr(str(path)) in message
        assert "is not a directory" in message and "never downloads" in message
    with pytest.raises(ConfigError, match="is not a directory"):
        Memory({**sqlite_config(tmp_path / "m.db"), "embedder": {"provider": "local", "config": {"model": str(weights)}}})


def test_local_embedding_dims_mismatch():
    with pytest.raises(ConfigError, match="embedding_dims is 768 but local/all-MiniLM-L6-v2 produces 384"):
        LocalEmbedder(embedding_dims=768)


# -- openai-compatible: the happy path -------------------------------------------


def test_openai_add_and_search_end_to_end(tmp_path, openai_server, embedder):
    with Memory(openai_config(tmp_path, openai_server.base_url)) as m:
        assert (m.info()["embedder"], m.info()["dims"]) == ("openai/test-embed", 384)
        assert openai_server.requests() == []  # creating a Memory does not call the server
        m.add(["I love pizza", "I work at a bank", "My dog is called Rex"], user_id="u", infer=False)

        results = m.search("favourite food", user_id="u")["results"]
        assert texts_of({"results": results})[0] == "I love pizza"
        assert results[0]["score"] > max(r["score"] for r in results[1:])
        assert texts_of(m.search("what is my job?", user_id="u"))[0] == "I work at a bank"
        assert texts_of(m.search("pets", user_id="u"))[0] == "My dog is called Rex"

        # The scores are the real model's cosine similarities: the vectors survived the trip.
        expected = unit(embedder.embed(["favourite food", "I love pizza"], "document"))
        assert results[0]["score"] == pytest.approx(float(expected[0] @ expected[1]), abs=1e-5)

    requests = openai_server.requests()
    assert [r.path for r in requests] == [EMBEDDINGS] * 4
    for request in requests:
        assert request.method == "POST"
        assert request.header("authorization") == "Bearer sk-test"
        assert request.json["model"] == "test-embed"
        assert "dimensions" not in request.json
    assert requests[0].json["input"] == ["I love pizza", "I work at a bank", "My dog is called Rex"]
    assert [r.json["input"] for r in requests[1:]] == [["favourite food"], ["what is my job?"], ["pets"]]


def test_openai_batches_keep_input_order_when_the_server_shuffles(tmp_path, openai_server, embedder):
    openai_server.route(EMBEDDINGS, EmbeddingsHandler(lambda t: embedder.embed(t, "document"), shuffle=True))
    texts = [f"Note {i}: my locker number is {i} and I visited city number {i * 7 % 300}" for i in range(300)]
    with Memory(openai_config(tmp_path, openai_server.base_url, batch_size=128)) as m:
        added = m.add(texts, user_id="u", infer=False)
        assert texts_of(added) == texts
        assert m.info()["memories"] == 300

        requests = openai_server.requests(EMBEDDINGS)
        assert [len(r.json["input"]) for r in requests] == [128, 128, 44]
        assert [t for r in requests for t in r.json["input"]] == texts

        # Each memory got its own text's vector: every score matches the model's cosine.
        local = unit(embedder.embed(texts, "document"))
        for query in ("which locker is mine?", "Note 5"):
            q = unit(embedder.embed([query], "document"))[0]
            scores = {r["memory"]: r["score"] for r in m.search(query, user_id="u", limit=300, keyword_search=False)["results"]}
            assert len(scores) == 300
            np.testing.assert_allclose([scores[t] for t in texts], local @ q, atol=1e-4)


def test_shuffling_really_happens(embedder):
    handler = EmbeddingsHandler(lambda t: embedder.embed(t, "document"), shuffle=True)
    body = {"model": "m", "input": ["a", "b", "c", "d"], "encoding_format": "float"}
    reply = handler(Request("POST", EMBEDDINGS, {}, {}, b"", body, 0.0))
    indices = [item["index"] for item in reply.json["data"]]
    assert sorted(indices) == [0, 1, 2, 3] and indices != [0, 1, 2, 3]


def test_mem0_openai_base_url_alias(tmp_path, openai_server):
    config = openai_config(tmp_path, None, openai_base_url=openai_server.base_url)
    with Memory(config) as m:
        m.add("I love pizza", user_id="u", infer=False)
        assert texts_of(m.search("food", user_id="u")) == ["I love pizza"]
    assert len(openai_server.requests(EMBEDDINGS)) == 2

    clash = openai_config(tmp_path, "http://127.0.0.1:1/v1", openai_base_url=openai_server.base_url)
    with pytest.raises(ConfigError, match="give either base_url or openai_base_url"):
        Memory(clash)


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_ollama_base_url_gets_v1(tmp_path, openai_server, no_openai_env, suffix):
    config = openai_config(tmp_path, None, provider="ollama", model="nomic-embed-text", api_key=None,
                           ollama_base_url=openai_server.url + suffix)
    with Memory(config) as m:
        m.add("I love pizza", user_id="u", infer=False)
    (request,) = openai_server.requests()
    assert request.path == EMBEDDINGS
    assert request.json["model"] == "nomic-embed-text"
    assert request.header("authorization") == "Bearer unused"  # local servers need no key


def test_openai_variables_do_not_leak_to_local_servers(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-for-openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/never")
    config = openai_config(tmp_path, None, provider="ollama", model="nomic-embed-text", api_key=None,
                           ollama_base_url=openai_server.url)
    with Memory(config) as m:
        m.add("I love pizza", user_id="u", infer=False)
    assert openai_server.requests()[0].header("authorization") == "Bearer unused"


def test_no_api_key_and_no_base_url(tmp_path, no_openai_env):
    with pytest.raises(ConfigError, match="needs an API key.*OPENAI_API_KEY"):
        Memory(openai_config(tmp_path, None, api_key=None))


def test_api_key_from_the_environment(tmp_path, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with Memory(openai_config(tmp_path, openai_server.base_url, api_key=None)) as m:
        m.add("hello", user_id="u", infer=False)
    assert openai_server.requests()[0].header("authorization") == "Bearer sk-from-env"


def test_unknown_model_needs_embedding_dims(tmp_path, openai_server):
    with pytest.raises(ConfigError, match="embedding_dims is required for model 'test-embed'"):
        Memory(openai_config(tmp_path, openai_server.base_url, embedding_dims=None))
    with Memory(openai_config(tmp_path, openai_server.base_url, model="text-embedding-3-large",
                              embedding_dims=None)) as m:
        assert m.info()["dims"] == 3072  # known models need none
    assert openai_server.requests() == []


# -- openai-compatible: failures ------------------------------------------------------


def test_server_error_raises_and_stores_nothing(tmp_path, openai_server):
    with Memory(openai_config(tmp_path, openai_server.base_url, max_retries=1)) as m:
        m.add("I love pizza", user_id="u", infer=False)
        openai_server.route(EMBEDDINGS, Reply.error(500, "the model crashed", headers=FAST_RETRY))
        with pytest.raises(EmbeddingError, match="500.*the model crashed"):
            m.add(["I work at a bank", "My dog is called Rex"], user_id="u", infer=False)
        assert len(openai_server.requests(EMBEDDINGS)) == 3  # 1 good + 1 failed + 1 retry
        assert m.info()["memories"] == 1
        assert texts_of(m.get_all(user_id="u")) == ["I love pizza"]
        with pytest.raises(EmbeddingError):
            m.search("food", user_id="u")


def test_connection_dropped(tmp_path, openai_server):
    openai_server.route(EMBEDDINGS, Reply(drop=True))
    with Memory(openai_config(tmp_path, openai_server.base_url, max_retries=0)) as m:
        with pytest.raises(EmbeddingError, match="Connection error"):
            m.add("I love pizza", user_id="u", infer=False)
        assert m.info()["memories"] == 0


def test_wrong_dimension_vectors(tmp_path, openai_server, embedder):
    openai_server.route(EMBEDDINGS, EmbeddingsHandler(lambda t: embedder.embed(t, "document"), truncate_to=383))
    with Memory(openai_config(tmp_path, openai_server.base_url)) as m:
        with pytest.raises(EmbeddingError, match=r"returned shape \(2, 383\); expected \(2, 384\)"):
            m.add(["I love pizza", "I work at a bank"], user_id="u", infer=False)
        assert m.info()["memories"] == 0


def test_fewer_vectors_than_texts(tmp_path, openai_server, embedder):
    openai_server.route(EMBEDDINGS, EmbeddingsHandler(lambda t: embedder.embed(t, "document"), drop_items=1))
    with Memory(openai_config(tmp_path, openai_server.base_url, batch_size=2)) as m:
        with pytest.raises(EmbeddingError, match="returned 1 embeddings for 2 texts"):
            m.add(["I love pizza", "I work at a bank", "My dog is called Rex"], user_id="u", infer=False)
        assert m.info()["memories"] == 0


def test_slow_server_times_out(tmp_path, openai_server, embedder):
    handler = EmbeddingsHandler(lambda t: embedder.embed(t, "document"))
    openai_server.script(EMBEDDINGS, [lambda request: dataclasses.replace(handler(request), delay=3.0)])
    with Memory(openai_config(tmp_path, openai_server.base_url, timeout=0.5, max_retries=0)) as m:
        start = time.monotonic()
        with pytest.raises(EmbeddingError, match="timed out"):
            m.add("I love pizza", user_id="u", infer=False)
        assert time.monotonic() - start < 2.5
        assert m.info()["memories"] == 0
        m.add("I love pizza", user_id="u", infer=False)  # the next (prompt) answer works
        assert m.info()["memories"] == 1


def test_rate_limit_then_success_is_retried(tmp_path, openai_server):
    openai_server.script(EMBEDDINGS, [Reply.error(429, "rate limited", type="rate_limit_exceeded", headers=FAST_RETRY)])
    with Memory(openai_config(tmp_path, openai_server.base_url, max_retries=2)) as m:
        m.add("I love pizza", user_id="u", infer=False)
        assert m.info()["memories"] == 1
    first, second = openai_server.requests(EMBEDDINGS)
    assert first.json == second.json  # the same batch, sent again after the 429 (memlane's retry, not the SDK's)
    assert openai_server.pending() == 0


def test_rate_limit_with_no_retries_left(tmp_path, openai_server):
    openai_server.script(EMBEDDINGS, [Reply.error(429, "rate limited", headers=FAST_RETRY)] * 2)
    with Memory(openai_config(tmp_path, openai_server.base_url, max_retries=1)) as m:
        with pytest.raises(EmbeddingError, match="429"):
            m.add("I love pizza", user_id="u", infer=False)
        assert m.info()["memories"] == 0


# Answers with status 200 that are not an embeddings list. memlane should raise
# EmbeddingError for each; today the SDK's and memlane's own parsing errors leak.
def _mutate_data(embedder, change):
    handler = EmbeddingsHandler(lambda t: embedder.embed(t, "document"))

    def answer(request):
        reply = handler(request)
        change(reply.json["data"])
        return reply

    return answer


def _without_index(data):
    for item in data:
        del item["index"]


def _reversed_all_index_zero(data):
    data.reverse()
    for item in data:
        item["index"] = 0


MALFORMED = [
    pytest.param(lambda embedder: Reply(json={"object": "list", "data": [], "model": "test-embed"}), id="empty data"),
    pytest.param(lambda embedder: Reply(json={"object": "list", "model": "test-embed"}), id="no data key"),
    pytest.param(lambda embedder: Reply(body="upstream proxy says hello"), id="plain text body"),
    pytest.param(lambda embedder: Reply(json=None), id="json null"),
    pytest.param(lambda embedder: _mutate_data(embedder, _without_index), id="items without index"),
    # would otherwise store the two texts with each other's vectors
    pytest.param(lambda embedder: _mutate_data(embedder, _reversed_all_index_zero), id="duplicate indices"),
]


@pytest.mark.parametrize("answer", MALFORMED)
def test_malformed_success_answers_are_embedding_errors(tmp_path, openai_server, embedder, answer):
    openai_server.route(EMBEDDINGS, answer(embedder))
    with Memory(openai_config(tmp_path, openai_server.base_url, max_retries=0)) as m:
        with pytest.raises(EmbeddingError):
            m.add(["I love pizza", "I work at a bank"], user_id="u", infer=False)


# -- the query cache ----------------------------------------------------------------


def test_repeated_query_text_is_embedded_once(tmp_path, openai_server):
    with Memory(openai_config(tmp_path, openai_server.base_url)) as m:
        m.add(["I love pizza", "I work at a bank"], user_id="u", infer=False)
        openai_server.clear_requests()

        first = m.search("favourite food", user_id="u")
        second = m.search("favourite food", user_id="u", limit=1)
        assert texts_of(first)[0] == texts_of(second)[0] == "I love pizza"
        assert first["results"][0]["score"] == second["results"][0]["score"]
        assert len(openai_server.requests(EMBEDDINGS)) == 1

        m.search("favourite food ", user_id="u")  # a different text
        m.search("where do I work?", user_id="u")
        assert [r.json["input"] for r in openai_server.requests(EMBEDDINGS)] == [
            ["favourite food"], ["favourite food "], ["where do I work?"]]
        assert m.embeddings.cache_info().hits == 1


def test_query_cache_can_be_turned_off(tmp_path, openai_server):
    with Memory({**openai_config(tmp_path, openai_server.base_url), "query_cache_size": 0}) as m:
        m.add("I love pizza", user_id="u", infer=False)
        for _ in range(3):
            m.search("favourite food", user_id="u")
    assert len(openai_server.requests(EMBEDDINGS)) == 4


def test_failed_query_is_not_cached(tmp_path, openai_server):
    with Memory(openai_config(tmp_path, openai_server.base_url, max_retries=0)) as m:
        m.add("I love pizza", user_id="u", infer=False)
        openai_server.script(EMBEDDINGS, [Reply.error(503, "warming up")])
        with pytest.raises(EmbeddingError, match="503"):
            m.search("favourite food", user_id="u")
        assert texts_of(m.search("favourite food", user_id="u")) == ["I love pizza"]
    assert len(openai_server.requests(EMBEDDINGS)) == 3


# -- the dimensions argument ----------------------------------------------------------


def test_text_embedding_3_with_embedding_dims_sends_dimensions(tmp_path, openai_server):
    with Memory(openai_config(tmp_path, openai_server.base_url, model="text-embedding-3-small")) as m:
        assert m.info()["dims"] == 384
        m.add(["I love pizza", "I work at a bank"], user_id="u", infer=False)
        assert texts_of(m.search("favourite food", user_id="u"))[0] == "I love pizza"
    assert [r.json["dimensions"] for r in openai_server.requests(EMBEDDINGS)] == [384, 384]
    assert {r.json["model"] for r in openai_server.requests(EMBEDDINGS)} == {"text-embedding-3-small"}


def test_text_embedding_3_shortened_vectors(tmp_path, openai_server):
    # The server cuts the model's vectors to `dimensions` and re-normalises them, as OpenAI does.
    config = openai_config(tmp_path, openai_server.base_url, model="text-embedding-3-large", embedding_dims=256)
    with Memory(config) as m:
        assert m.info()["dims"] == 256
        m.add(["I love pizza", "I work at a bank"], user_id="u", infer=False)
        assert texts_of(m.search("favourite food", user_id="u"))[0] == "I love pizza"
    assert [r.json["dimensions"] for r in openai_server.requests(EMBEDDINGS)] == [256, 256]


@pytest.mark.parametrize("provider, model", [
    ("openai", "test-embed"),
    ("openai", "text-embedding-ada-002"),
    ("ollama", "nomic-embed-text"),
    ("vllm", "BAAI/bge-small-en-v1.5"),
])
def test_other_models_never_send_dimensions(tmp_path, openai_server, provider, model):
    with Memory(openai_config(tmp_path, openai_server.base_url, provider=provider, model=model)) as m:
        m.add("I love pizza", user_id="u", infer=False)
        m.search("food", user_id="u")
    requests = openai_server.requests(EMBEDDINGS)
    assert len(requests) == 2
    assert all("dimensions" not in r.json and r.json["model"] == model for r in requests)


def test_text_embedding_3_without_embedding_dims_sends_none(tmp_path, openai_server):
    # Without embedding_dims memlane expects the model's full 1536 numbers and does not ask
    # for fewer; the (MiniLM-backed) server's 384 are then reported as wrong.
    config = openai_config(tmp_path, openai_server.base_url, model="text-embedding-3-small", embedding_dims=None)
    with Memory(config) as m:
        assert m.info()["dims"] == 1536
        with pytest.raises(EmbeddingError, match=r"shape \(1, 384\); expected \(1, 1536\)"):
            m.add("I love pizza", user_id="u", infer=False)
    (request,) = openai_server.requests(EMBEDDINGS)
    assert "dimensions" not in request.json


def test_the_installed_model_by_name():
    by_name, default = LocalEmbedder("all-MiniLM-L6-v2"), LocalEmbedder()
    assert by_name.name == default.name == "local/all-MiniLM-L6-v2" and by_name.path == default.path
    assert LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2").path == default.path
