"""Multi-vector encoders: the offline local one (the real model) and the HTTP one (a real loopback
server replaying well-formed and malformed replies of the ColPali service protocol)."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from memlane.documents.encoders import (
    EncoderConfig,
    HttpMultiVectorEncoder,
    LocalTokenEncoder,
    MultiVectorEncoder,
    create_encoder,
)
from memlane.documents.late_interaction import maxsim
from memlane.core.errors import ConfigError, EmbeddingError, UnsupportedInputError


@pytest.fixture(scope="module")
def local() -> LocalTokenEncoder:
    return create_encoder()


# ---------------------------------------------------------------------------------------------
# local


@pytest.mark.model
def test_local_encoder_is_the_default_and_meets_the_protocol(local):
    assert isinstance(local, LocalTokenEncoder) and isinstance(local, MultiVectorEncoder)
    assert local.dims == 384 and not local.accepts_images
    out = local.encode_queries(["wing lift in a propeller slipstream", "heat transfer"])
    assert len(out) == 2
    for m in out:
        assert m.dtype == np.float32 and m.ndim == 2 and m.shape[1] == 384
        np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, atol=1e-5)
    assert local.encode_pages([]) == []


def test_local_encoder_shares_the_memory_embedders_model(local):
    from memlane.embeddings import local as local_module
    from memlane.embeddings.local import LocalEmbedder

    before = len(local_module._models)
    LocalTokenEncoder(LocalEmbedder())
    assert len(local_module._models) == before


@pytest.mark.model
def test_local_encoder_drops_special_tokens_and_punctuation(local):
    def tokenize(text):  # the word pieces between [CLS] and [SEP]
        return local.embedder.pieces(local.embedder.token_outputs([text])[0].ids)[1:-1]

    text = "lift, drag; and (thrust)!"
    pieces = tokenize(text)
    content = [p for p in pieces if p.isalnum()]
    tokens_only = LocalTokenEncoder(local.embedder, global_vector=False)
    assert len(tokens_only.encode_pages([text])[0]) == len(content)
    keep_punct = LocalTokenEncoder(local.embedder, skip_punctuation=False, global_vector=False)
    assert len(keep_punct.encode_pages([text])[0]) == len(pieces)  # no [CLS]/[SEP] either way
    # vectors from different settings must not be mixed in a store: the names differ
    assert len({local.name, tokens_only.name, keep_punct.name}) == 3
    # a text of punctuation only keeps its pieces; an empty text still gets one vector
    assert len(tokens_only.encode_pages(["?!"])[0]) == len(tokenize("?!"))
    assert len(tokens_only.encode_queries([""])[0]) == 1


def test_local_encoder_adds_the_pooled_vector_once_per_page_and_weighted_per_query(local, embedder):
    text = "pressure distribution on a swept wing"
    tokens = LocalTokenEncoder(local.embedder, global_vector=False).encode_pages([text])[0]
    page = local.encode_pages([text])[0]
    query = local.encode_queries([text])[0]
    sentence = embedder.embed([text], "query")[0]
    assert len(page) == len(tokens) + 1 and len(query) == len(tokens) + local.query_global_weight == len(tokens) + 8
    np.testing.assert_allclose(page[:-1], tokens, atol=1e-5)
    np.testing.assert_allclose(page[-1], sentence, atol=1e-4)  # the memory embedder's own vector
    np.testing.assert_allclose(query[len(tokens):], np.tile(sentence, (8, 1)), atol=1e-4)
    light = LocalTokenEncoder(local.embedder, query_global_weight=2)
    assert light.name == local.name  # query-side weight does not change stored vectors
    assert len(light.encode_queries([text])[0]) == len(tokens) + 2
    assert len(local.encode_queries([""])[0]) == 8  # an empty query is its pooled vector


@pytest.mark.model
def test_local_encoder_vectors_rank_the_matching_page_first(local):
    pages = local.encode_pages([
        "the boundary layer of a flat plate in supersonic flow",
        "buckling of thin cylindrical shells under axial compression",
        "heat conduction in composite slabs",
    ])
    query = local.encode_queries(["buckling of cylinders under compression"])[0]
    scores = [maxsim(query, p) for p in pages]
    assert int(np.argmax(scores)) == 1


def test_local_encoder_refuses_images_naming_the_fix(local):
    with pytest.raises(UnsupportedInputError, match="accepts images") as info:
        local.encode_images([b"\x89PNG..."])
    assert info.value.field == "image"
    assert isinstance(info.value, ValueError)  # an input error: 4xx over REST


# ---------------------------------------------------------------------------------------------
# configuration


@pytest.mark.parametrize("config, message", [
    ({"provider": "http", "dims": 128}, "needs url"),
    ({"provider": "http", "url": "ftp://x", "dims": 128}, "http://"),
    ({"provider": "http", "url": "http://x"}, "needs dims"),
    ({"provider": "local", "accepts_images": True}, "text only"),
    ({"provider": "colbert"}, "provider"),
    ({"provider": "local", "urll": "x"}, "urll"),
])
def test_bad_encoder_configs_are_config_errors_naming_the_field(config, message):
    with pytest.raises(ConfigError, match=message):
        create_encoder(config)


def test_create_encoder_builds_the_http_encoder_from_config():
    enc = create_encoder({"provider": "http", "url": "http://127.0.0.1:9/embed", "dims": 128,
                          "accepts_images": True, "name": "colpali"})
    assert isinstance(enc, HttpMultiVectorEncoder) and isinstance(enc, MultiVectorEncoder)
    assert (enc.name, enc.dims, enc.accepts_images) == ("colpali", 128, True)
    assert EncoderConfig().provider == "local"


# ---------------------------------------------------------------------------------------------
# http (a real loopback service)

from support.multivector_server import MultiVectorServer, body, vectors_for  # noqa: E402
from support.openai_server import Reply  # noqa: E402

DIMS = 16


def unit_rows(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.fixture()
def service():
    with MultiVectorServer(dims=DIMS) as server:
        yield server


def http_encoder(server, **options) -> HttpMultiVectorEncoder:
    config = {"provider": "http", "url": server.endpoint, "dims": DIMS, "timeout": 2.0, **options}
    return create_encoder(config)


def test_http_encoder_speaks_the_service_protocol(service):
    enc = http_encoder(service, api_key="sk-secret", batch_size=2)
    queries = enc.encode_queries(["machine learning", "wing"])
    pages = enc.encode_pages(["one two three", "four", "five six"])
    for got, task, text in [(queries[0], "query", "machine learning"), (queries[1], "query", "wing"),
                            (pages[0], "document", "one two three"), (pages[2], "document", "five six")]:
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, unit_rows(vectors_for(task, text, DIMS)), atol=1e-6)
    sent = service.requests(service.path)
    assert [r.json for r in sent] == [
        {"input": {"task": "query", "input_data": ["machine learning", "wing"]}},
        {"input": {"task": "document", "input_data": ["one two three", "four"]}},
        {"input": {"task": "document", "input_data": ["five six"]}},
    ]
    assert all(r.header("authorization") == "Bearer sk-secret" for r in sent)
    assert enc.encode_queries([]) == [] and len(service.requests()) == 3  # nothing to send, no request


def test_http_encoder_sends_images_base64_when_configured_to_accept_them(service):
    enc = http_encoder(service, accepts_images=True)
    png = b"\x89PNG\r\n\x1a\nnot-really-an-image"
    [got] = enc.encode_images([png])
    b64 = base64.b64encode(png).decode()
    assert service.requests(service.path)[0].json == {"input": {"task": "image", "input_data": [b64]}}
    np.testing.assert_allclose(got, unit_rows(vectors_for("image", b64, DIMS)), atol=1e-6)


def test_http_encoder_without_images_refuses_them_before_any_request(service):
    enc = http_encoder(service)
    with pytest.raises(UnsupportedInputError, match="configure an encoder that accepts images"):
        enc.encode_images([b"png"])
    assert service.requests() == []


def test_http_encoder_orders_items_by_index(service):
    a, b = vectors_for("query", "a", DIMS), vectors_for("query", "b", DIMS)
    reply = body([b, a])
    reply["output"]["data"][0]["index"], reply["output"]["data"][1]["index"] = 1, 0
    service.script(service.path, [Reply(json=reply)])
    got = http_encoder(service).encode_queries(["a", "b"])
    np.testing.assert_allclose(got[0], unit_rows(a), atol=1e-6)
    np.testing.assert_allclose(got[1], unit_rows(b), atol=1e-6)


def test_http_encoder_retries_once_after_a_server_error_then_succeeds(service):
    service.script(service.path, [Reply(status=503, body="warming up")])
    got = http_encoder(service).encode_queries(["wing"])
    assert len(got) == 1 and len(service.requests(service.path)) == 2


def test_http_encoder_retries_after_a_dropped_connection(service):
    service.script(service.path, [Reply(drop=True)])
    assert len(http_encoder(service).encode_queries(["wing"])) == 1


def test_http_encoder_gives_up_after_its_retries(service):
    service.script(service.path, [Reply(status=500, body="boom")] * 2)
    with pytest.raises(EmbeddingError, match=r"failed after 2 attempt\(s\): HTTP 500: boom"):
        http_encoder(service).encode_queries(["wing"])
    assert len(service.requests(service.path)) == 2


def test_http_encoder_times_out_and_reports_it(service):
    service.script(service.path, [Reply(json=body([np.ones((1, DIMS))]), delay=3.0)] * 2)
    with pytest.raises(EmbeddingError, match="Timeout"):
        http_encoder(service, timeout=0.3).encode_queries(["wing"])


def test_http_encoder_does_not_retry_a_rejected_request(service):
    service.script(service.path, [Reply(status=401, json={"detail": "bad token"})])
    with pytest.raises(EmbeddingError, match="rejected the request.*401.*bad token"):
        http_encoder(service).encode_queries(["wing"])
    assert len(service.requests(service.path)) == 1


GOOD = np.ones((2, DIMS)).tolist()

MALFORMED = [
    ("not json", Reply(body="<html>oops</html>"), "not JSON"),
    ("no output", Reply(json={"data": [{"embedding": GOOD}]}), "without output.data"),
    ("output not a dict", Reply(json={"output": [1, 2]}), "without output.data"),
    ("data not a list", Reply(json={"output": {"data": {"embedding": GOOD}}}), "returned dict items for 1"),
    ("too few items", Reply(json={"output": {"data": []}}), "returned 0 items for 1"),
    ("too many items", Reply(json=body([GOOD, GOOD])), "returned 2 items for 1"),
    ("no embedding key", Reply(json={"output": {"data": [{"vectors": GOOD}]}}), r"data\[0\] has no 'embedding'"),
    ("flat vector", Reply(json=body([[0.1] * DIMS])), r"shape \(16,\)"),
    ("no tokens", Reply(json=body([[]])), "shape"),
    ("wrong dims", Reply(json=body([np.ones((2, 8)).tolist()])), "8-dim vectors; configured dims is 16"),
    ("ragged rows", Reply(json=body([[[0.1] * DIMS, [0.1] * 3]])), "not a matrix of numbers"),
    ("strings", Reply(json=body([[["x"] * DIMS]])), "not a matrix of numbers"),
    ("nan", Reply(body='{"output": {"data": [{"embedding": [[NaN' + ", 1.0" * (DIMS - 1) + "]]}]}}",
                  headers={"content-type": "application/json"}), "NaN or infinite"),
    ("zero vector", Reply(json=body([np.zeros((1, DIMS)).tolist()])), "all-zero"),
    ("bad indexes", Reply(json={"output": {"data": [{"embedding": GOOD, "index": 5}]}}), "indexes"),
]


@pytest.mark.parametrize("name, reply, message", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_http_encoder_reports_malformed_replies(service, name, reply, message):
    service.script(service.path, [reply])
    with pytest.raises(EmbeddingError, match=message):
        http_encoder(service).encode_queries(["wing"])
    assert len(service.requests(service.path)) == 1  # a malformed 200 is not retried


def test_http_encoder_against_a_closed_port_is_an_embedding_error():
    with MultiVectorServer(dims=DIMS) as server:
        url = server.endpoint
    enc = create_encoder({"provider": "http", "url": url, "dims": DIMS, "timeout": 1.0})
    with pytest.raises(EmbeddingError, match="ConnectError"):
        enc.encode_queries(["wing"])
