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
from memlane.errors import ConfigError, EmbeddingError, UnsupportedInputError


@pytest.fixture(scope="module")
def local() -> LocalTokenEncoder:
    return create_encoder()


# ---------------------------------------------------------------------------------------------
# local


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


def test_local_encoder_drops_special_tokens_and_punctuation(local):
    tokenizer = local.embedder._model()[0].tokenizer
    text = "lift, drag; and (thrust)!"
    pieces = tokenizer.tokenize(text)
    content = [p for p in pieces if p.isalnum()]
    assert len(local.encode_pages([text])[0]) == len(content)
    keep_punct = LocalTokenEncoder(local.embedder, skip_punctuation=False)
    assert len(keep_punct.encode_pages([text])[0]) == len(pieces)  # no [CLS]/[SEP] either way
    assert keep_punct.name != local.name  # vectors from the two settings must not be mixed in a store
    # a text of punctuation only keeps its pieces; an empty text still gets one vector
    assert len(local.encode_pages(["?!"])[0]) == len(tokenizer.tokenize("?!"))
    assert len(local.encode_queries([""])[0]) == 1


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
