"""The local model on ONNX Runtime (the default runtime) against sentence-transformers on torch:
the same vectors and token vectors, the same embedder identity for fp32, another for int8, the
export cache (reuse, re-export, corrupt files), and no torch in a process that searches."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import sqlite_config
from memlane import Memory
from memlane.core.errors import ConfigError, EmbedderMismatchError
from memlane.documents.encoders import LocalTokenEncoder
from memlane.embeddings import local as local_module
from memlane.embeddings import onnx_export
from memlane.embeddings.local import LocalEmbedder, default_model_dir
from memlane.embeddings.model_dir import OnnxPlan, onnx_plan
from memlane.embeddings.onnx_export import INT8

TEXTS = [
    "I love pizza",
    "  leading and trailing spaces  ",
    "",
    "Ünïcödé café 北京 🙂",
    "lift, drag; and (thrust)!",
    "x",
    "word " * 400,  # longer than max_seq_length (256): truncated alike
    "Caroline went to the LGBTQ support group on 7 May 2023 and felt accepted there.",
]


def unit(matrix) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float64)
    return matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def torch_embedder():
    return LocalEmbedder(runtime="torch")


@pytest.fixture(scope="module")
def int8_embedder():
    return LocalEmbedder(quantize="int8")


def test_onnx_is_the_default_runtime_and_keeps_the_embedders_identity(embedder, torch_embedder):
    assert embedder.runtime == "onnx" and torch_embedder.runtime == "torch"
    assert embedder.name == torch_embedder.name == "local/all-MiniLM-L6-v2"
    assert embedder.dims == torch_embedder.dims == 384


def test_sentence_vectors_match_torch_within_1e_4_cosine(embedder, torch_embedder):
    onnx = np.asarray(embedder.embed(TEXTS, "document"))
    torch = np.asarray(torch_embedder.embed(TEXTS, "document"))
    assert onnx.dtype == np.float32 and onnx.shape == torch.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    assert (unit(onnx) * unit(torch)).sum(1).min() > 1 - 1e-4
    single = np.asarray(embedder.embed([TEXTS[0]], "query"))[0]  # alone or in a padded batch: the same vector
    assert float(single @ onnx[0]) > 1 - 1e-5


def test_token_vectors_and_ids_match_torch(embedder, torch_embedder):
    onnx_out, torch_out = embedder.token_outputs(TEXTS), torch_embedder.token_outputs(TEXTS)
    for text, a, b in zip(TEXTS, onnx_out, torch_out):
        assert a.ids.tolist() == b.ids.tolist(), text
        assert a.tokens.shape == b.tokens.shape, text
        assert (unit(a.tokens) * unit(b.tokens)).sum(1).min() > 1 - 1e-4, text
        assert float(unit(a.sentence) @ unit(b.sentence)) > 1 - 1e-4, text
    assert len(onnx_out[6].ids) == 256  # sentence-transformers' max_seq_length, not tokenizer.json's 128
    assert embedder.special_ids == torch_embedder.special_ids
    ids = onnx_out[4].ids.tolist()
    assert embedder.pieces(ids) == torch_embedder.pieces(ids) == ["[CLS]", "lift", ",", "drag", ";", "and", "(",
                                                                   "thrust", ")", "!", "[SEP]"]
    sentences, tokens = embedder.embed_with_tokens(TEXTS[:2])  # what the MaxSim reranker gets
    assert [len(t) for t in tokens] == [len(o.ids) - 2 for o in onnx_out[:2]]  # no [CLS] / [SEP]
    np.testing.assert_allclose(tokens[0], onnx_out[0].tokens[1:-1])
    np.testing.assert_allclose(sentences[1], onnx_out[1].sentence)


def test_documents_encoder_gets_the_same_rows_from_either_runtime(embedder, torch_embedder):
    pages = ["lift, drag; and (thrust)!", "pressure distribution on a swept wing", "?!"]
    for options in ({}, {"skip_punctuation": False, "global_vector": False}):
        onnx = LocalTokenEncoder(embedder, **options)
        torch = LocalTokenEncoder(torch_embedder, **options)
        assert onnx.name == torch.name
        for a, b in zip(onnx.encode_pages(pages) + onnx.encode_queries(pages),
                        torch.encode_pages(pages) + torch.encode_queries(pages)):
            assert a.shape == b.shape and (a * b).sum(1).min() > 1 - 1e-4


def test_a_store_filled_on_torch_is_searched_on_onnx(db_path, embedder, torch_embedder):
    with Memory(sqlite_config(db_path), embedder=torch_embedder) as m:
        m.add("I keep bees on the roof", user_id="alice", infer=False)
        m.add("The meeting moved to Thursday", user_id="alice", infer=False)
        before = m.search("what hobby does she have?", user_id="alice")["results"]
    with Memory(sqlite_config(db_path), embedder=embedder) as m:
        after = m.search("what hobby does she have?", user_id="alice")["results"]
    assert [r["memory"] for r in after] == [r["memory"] for r in before]
    assert after[0]["memory"] == "I keep bees on the roof"
    assert abs(after[0]["score"] - before[0]["score"]) < 1e-4


def test_int8_is_another_embedder_that_the_store_refuses_to_mix(db_path, embedder, int8_embedder):
    assert int8_embedder.name == f"local/all-MiniLM-L6-v2+{INT8.tag}" and int8_embedder.dims == 384
    with Memory(sqlite_config(db_path), embedder=embedder) as m:
        m.add("I like tea", user_id="u", infer=False)
    with pytest.raises(EmbedderMismatchError, match=rf"local/all-MiniLM-L6-v2\+{INT8.tag}"):
        Memory(sqlite_config(db_path), embedder=int8_embedder)


@pytest.mark.model
def test_a_store_filled_by_an_older_int8_recipe_refuses_the_current_one(db_path, int8_embedder, monkeypatch):
    monkeypatch.setattr(int8_embedder, "name", "local/all-MiniLM-L6-v2+int8")  # the name before recipes had tags
    with Memory(sqlite_config(db_path), embedder=int8_embedder) as m:
        m.add("I like tea", user_id="u", infer=False)
    monkeypatch.undo()
    with pytest.raises(EmbedderMismatchError, match=rf"filled by embedder 'local/all-MiniLM-L6-v2\+int8' .* "
                                                    rf"configured with 'local/all-MiniLM-L6-v2\+{INT8.tag}'"):
        Memory(sqlite_config(db_path), embedder=int8_embedder)


def test_int8_vectors_stay_close_to_fp32_and_rank_alike(embedder, int8_embedder):
    texts = TEXTS + ["The meeting moved to Thursday", "She adopted a dog from the shelter last spring",
                     "He is training for a marathon in October", "My sister lives in Lisbon now"]
    fp32, int8 = np.asarray(embedder.embed(texts, "document")), np.asarray(int8_embedder.embed(texts, "document"))
    cosine = (fp32 * int8).sum(1)
    # the recipe's feed-forward layers in fp32: 0.9975 / 0.9928 here (every MatMul quantised: 0.990 / 0.974)
    assert cosine.mean() > 0.995 and cosine.min() > 0.99
    assert not np.allclose(fp32, int8, atol=1e-4)  # really another model: the name must differ
    queries = ["when is the meeting?", "what pet did she get?", "what race is he running?",
               "which city does her sister live in?"]
    documents = texts[-4:]
    for side in (embedder, int8_embedder):
        scores = np.asarray(side.embed(queries, "query")) @ np.asarray(side.embed(documents, "document")).T
        assert scores.argmax(1).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("settings, message", [
    ({"runtime": "torch", "quantize": "int8"}, "quantize 'int8' needs runtime 'onnx'"),
    ({"runtime": "onnx", "device": "cuda"}, "not on device 'cuda'"),
    ({"quantize": "int4"}, "quantize"),
    ({"runtime": "tensorflow"}, "runtime"),
])
def test_runtime_settings_that_cannot_work_are_config_errors(tmp_path, settings, message):
    config = {**sqlite_config(tmp_path / "m.db"), "embedder": {"provider": "local", "config": settings}}
    with pytest.raises(ConfigError, match=message):
        Memory(config)


# -- which models ONNX Runtime runs (read from the model's files; no model is loaded) --------------


def _model_files(tmp_path, *, modules=None, pooling=None, model_type="bert", tokenizer=True, settings=None):
    """A model directory with the bundled model's configuration files (no weights), changed as asked."""
    target = tmp_path / "model-files"
    shutil.copytree(default_model_dir(), target, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    if modules is not None:
        (target / "modules.json").write_text(json.dumps(modules))
    if pooling is not None:
        config = json.loads((target / "1_Pooling/config.json").read_text())
        (target / "1_Pooling/config.json").write_text(json.dumps({**config, **pooling}))
    config = json.loads((target / "config.json").read_text())
    (target / "config.json").write_text(json.dumps({**config, "model_type": model_type}))
    if not tokenizer:
        (target / "tokenizer.json").unlink()
    if settings is not None:
        (target / "sentence_bert_config.json").write_text(json.dumps(settings))
    return target


TRANSFORMER, POOLING, DENSE = ("sentence_transformers.models." + m for m in ("Transformer", "Pooling", "Dense"))


@pytest.mark.parametrize("changes, reason", [
    ({}, None),
    ({"modules": [{"path": "", "type": TRANSFORMER}, {"path": "1_Pooling", "type": POOLING},
                  {"path": "2_Dense", "type": DENSE}]}, "not Transformer, Pooling"),
    ({"pooling": {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}}, "not mean pooling"),
    ({"pooling": {"pooling_mode_max_tokens": True}}, "not mean pooling"),
    ({"model_type": "xlm-roberta"}, "not BERT-style"),
    ({"tokenizer": False}, "no tokenizer.json"),
    ({"settings": {"do_lower_case": False}}, "no max_seq_length"),
])
def test_onnx_plan_accepts_only_mean_pooled_bert_models(tmp_path, changes, reason):
    plan = onnx_plan(_model_files(tmp_path, **changes))
    if reason is None:
        assert isinstance(plan, OnnxPlan) and plan.max_seq_length == 256
    else:
        assert isinstance(plan, str) and reason in plan


def test_auto_falls_back_to_torch_and_onnx_names_the_reason(tmp_path):
    model = _model_files(tmp_path, pooling={"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    assert LocalEmbedder(str(model)).runtime == "torch"  # nothing is loaded to decide
    with pytest.raises(ConfigError, match="cannot run on ONNX Runtime: its pooling is"):
        LocalEmbedder(str(model), runtime="onnx")
    with pytest.raises(ConfigError, match="quantize 'int8', but the model"):
        LocalEmbedder(str(model), quantize="int8")


# -- the export cache ------------------------------------------------------------------------------


@pytest.fixture
def exported(embedder, _model_cache):
    """The session's verified fp32 export (bytes); the session embedder made it or found it."""
    embedder.embed(["warm"], "query")
    files = [f for f in _model_cache.iterdir() if f.name.startswith("all-MiniLM-L6-v2-") and "-fp32." in f.name]
    assert len(files) == 1, files
    return files[0]


@pytest.fixture
def exports(monkeypatch, exported):
    """Counts exports; each hands back the session's real export instead of running torch again."""
    calls = []

    def export(source):
        calls.append(source)
        return exported.read_bytes()

    monkeypatch.setattr(onnx_export, "export_fp32", export)
    loaded = set(local_module._models)
    yield calls
    for spec in set(local_module._models) - loaded:  # each test's session (90 MB) goes with it
        local_module._models.pop(spec, None)


def _vectors(cache, **options):
    embedder = LocalEmbedder(cache_dir=str(cache), **options)  # another cache: a session of its own
    return np.asarray(embedder.embed(["cache check"], "query"))


def test_a_cached_export_is_reused(tmp_path, exported, exports, embedder):
    shutil.copy(exported, tmp_path / exported.name)
    vector = _vectors(tmp_path)
    assert exports == []
    assert float(vector[0] @ np.asarray(embedder.embed(["cache check"], "query"))[0]) > 1 - 1e-6


@pytest.mark.parametrize("damage", ["flip a byte", "truncate", "empty"])
def test_a_corrupt_export_is_detected_and_rebuilt(tmp_path, exported, exports, damage):
    copy = tmp_path / exported.name
    data = bytearray(exported.read_bytes())
    if damage == "flip a byte":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[:len(data) // 3]
    else:
        data = bytearray()
    copy.write_bytes(bytes(data))
    (tmp_path / f".{exported.name}.1234.partial").write_bytes(b"a writer that died")  # never read
    _vectors(tmp_path)
    assert len(exports) == 1
    files = sorted(f.name for f in tmp_path.iterdir() if f.suffix == ".onnx")
    assert files == [exported.name]  # rebuilt under the name its contents check out to
    assert (tmp_path / exported.name).read_bytes() == exported.read_bytes()


def test_a_changed_model_is_exported_again(tmp_path, exported, exports):
    model = tmp_path / "all-MiniLM-L6-v2"
    shutil.copytree(default_model_dir(), model)
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(exported, cache / exported.name)
    _vectors(cache, model=str(model))
    assert exports == []  # the same files under another path: the same checksum, the same export
    with (model / "config.json").open("a") as config:
        config.write("\n")
    for spec in [spec for spec in local_module._models if spec.path == model]:
        local_module._models.pop(spec)  # as in the next process
    _vectors(cache, model=str(model))
    assert exports == [model]
    files = [f.name for f in cache.iterdir()]
    assert len(files) == 1 and "-fp32." in files[0] and files[0] != exported.name  # the old model's export removed


def test_int8_is_quantised_from_the_cached_export_by_the_recipe(tmp_path, exported, exports):
    import onnx

    shutil.copy(exported, tmp_path / exported.name)
    stem = exported.name.split(".")[0]
    older = tmp_path / f"{stem.replace('-fp32', '-int8')}.{'0' * 16}.onnx"  # the recipe before tags
    older.write_bytes(b"an int8 export of an older recipe")
    _vectors(tmp_path, quantize="int8")
    assert exports == []
    names = sorted(f.name.split(".")[0] for f in tmp_path.iterdir())
    assert names == [stem, stem.replace("-fp32", f"-{INT8.tag}")]  # the older recipe's file removed
    graph = onnx.load(str(next(f for f in tmp_path.iterdir() if INT8.tag in f.name))).graph
    ops = {node.name: node.op_type for node in graph.node}
    assert INT8.keep_fp32 and all(ops[name] == "MatMul" for name in INT8.keep_fp32)  # kept in fp32
    assert sum(op in ("MatMulInteger", "DynamicQuantizeMatMul") for op in ops.values()) == 36 - len(INT8.keep_fp32)
    table = next(t for t in graph.initializer if t.name == "model.embeddings.word_embeddings.weight")
    assert table.data_type == onnx.TensorProto.FLOAT  # the word embeddings are not quantised


def test_a_cache_that_cannot_be_written_is_a_config_error(tmp_path, exports):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the cache directory should be")
    with pytest.raises(ConfigError, match="could not write the ONNX export to .*not-a-directory.*cache_dir"):
        _vectors(blocked)
    assert len(exports) == 1 and blocked.read_text() == "a file where the cache directory should be"


@pytest.mark.model
def test_without_torch_and_without_an_export_the_error_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    embedder = LocalEmbedder(cache_dir=str(tmp_path))
    with pytest.raises(ConfigError, match=r"one-time export .* with torch, which is not installed: "
                                          r"pip install 'memlane\[local\]'"):
        embedder.embed(["x"], "query")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.model
def test_int8_without_the_onnx_package_says_what_to_install(tmp_path, exported, monkeypatch):
    shutil.copy(exported, tmp_path / exported.name)
    for name in [m for m in sys.modules if m == "onnx" or m.startswith(("onnx.", "onnxruntime.quantization"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now raises ImportError
    with pytest.raises(ConfigError, match=r"quantize 'int8' needs the onnx package .* pip install 'memlane\[local\]'"):
        _vectors(tmp_path, quantize="int8")
    assert [f.name for f in tmp_path.iterdir()] == [exported.name]


def test_a_search_process_with_an_export_never_imports_torch(exported, tmp_path):
    script = textwrap.dedent(f"""
        import json, sys
        from memlane import Memory
        from memlane.documents import Documents
        config = {{"vector_store": {{"provider": "sqlite", "config": {{"path": {str(tmp_path / "m.db")!r}}}}},
                  "retrieval": {{"reranker": {{"provider": "maxsim"}}}}}}  # the rerank runs: token vectors too
        with Memory(config) as m:
            m.add("I keep bees on the roof", user_id="alice", infer=False)
            plain = m.search("what hobby does she have?", user_id="alice")["results"]
            full = m.search("what hobby does she have?", user_id="alice", keyword_search=True, rerank=True)
            docs = Documents(memory=m)
            docs.create_collection("notes")
            docs.upsert_document("bees", "notes", text="Bees need water near the hive in summer.")
            pages = docs.search("what do bees need?", collection_name="notes")
        heavy = sorted(name for name in ("torch", "transformers", "sentence_transformers") if name in sys.modules)
        print(json.dumps({{"plain": plain[0]["memory"], "full": full["results"][0]["memory"],
                          "pages": len(pages["results"]), "heavy": heavy}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"plain": "I keep bees on the roof", "full": "I keep bees on the roof", "pages": 1, "heavy": []}
