"""Configuration: mem0-style dicts, where the store lives, helpful errors, embedder binding."""

import shutil

import pytest

from memlane import ConfigError, EmbedderMismatchError, InvalidInputError, Memory
from memlane.embeddings.local import LocalEmbedder, default_model_dir

from conftest import sqlite_config


def test_zero_config_lives_under_memlane_home(_isolated_home, embedder):
    with Memory(embedder=embedder) as m:
        assert m.info()["store"] == str(_isolated_home / "memlane.db")
        assert m.info()["embedder"] == "local/all-MiniLM-L6-v2" and m.info()["dims"] == 384


@pytest.mark.parametrize("config, expected", [
    ({"path": "{tmp}"}, "{tmp}/memlane.db"),
    ({"path": "{tmp}", "collection_name": "prod"}, "{tmp}/prod.db"),
    ({"path": "{tmp}/x/file.sqlite"}, "{tmp}/x/file.sqlite"),
])
def test_store_path(tmp_path, embedder, config, expected):
    config = {k: v.format(tmp=tmp_path) if isinstance(v, str) else v for k, v in config.items()}
    with Memory({"vector_store": {"provider": "sqlite", "config": config}}, embedder=embedder) as m:
        assert m.info()["store"] == expected.format(tmp=tmp_path)


def test_history_db_path_alone_names_the_store_file(tmp_path, embedder):
    with Memory({"history_db_path": str(tmp_path / "hist.db")}, embedder=embedder) as m:
        assert m.info()["store"] == str(tmp_path / "hist.db")


def test_history_db_path_beside_a_store_path_warns(tmp_path, embedder):
    config = {**sqlite_config(tmp_path / "m.db"), "history_db_path": str(tmp_path / "other.db")}
    with pytest.warns(UserWarning, match="keeps history in the store file"):
        Memory(config, embedder=embedder).close()


@pytest.mark.model
def test_from_config_with_local_embedder_settings(tmp_path):
    config = {**sqlite_config(tmp_path), "embedder": {"provider": "huggingface", "config": {"batch_size": 8}},
              "version": "v1.1", "llm": {"provider": "openai", "config": {
                  "model": "gpt-4o-mini", "api_key": "sk-x", "openai_base_url": "http://127.0.0.1:9/v1"}}}
    with Memory.from_config(config) as m:
        assert m.embeddings.embedder.batch_size == 8
        assert m.engine.name == "llm:openai/gpt-4o-mini"
        assert m.add("hello", user_id="u", infer=False)["results"][0]["event"] == "ADD"


def test_without_an_llm_the_offline_engine_forms_memories(tmp_path, embedder, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-set-but-not-configured")
    with Memory(sqlite_config(tmp_path), embedder=embedder) as m:
        assert m.engine.name == "offline"


ERRORS = [
    ({"vectorstore": {}}, "config.vectorstore: unknown setting (known: vector_store, embedder"),
    ({"vector_store": {"provider": "qdrant"}}, "vector_store.provider 'qdrant' is unknown; known providers: sqlite, postgres"),
    ({"vector_store": {"provider": "sqlite", "config": {"paht": "x"}}}, "vector_store.config.paht: unknown setting (known: path"),
    ({"vector_store": {"provider": "sqlite", "config": {"vector_dtype": "int8"}}}, "vector_store.config.vector_dtype"),
    ({"vector_store": {"provider": "sqlite", "config": {"embedding_model_dims": 1536}}}, "embedding_model_dims is 1536 but the embedder produces 384"),
    ({"embedder": {"provider": "gemini"}}, "embedder.provider 'gemini' is unknown; known providers: local"),
    ({"embedder": {"provider": "local", "config": {"modle": "x"}}}, "embedder.config.modle: unknown setting (known: model"),
    ({"embedder": {"provider": "local", "config": {"model": "/no/such/dir"}}}, "is not a directory"),
    ({"embedder": {"provider": "local", "config": {"embedding_dims": 768}}}, "embedding_dims is 768 but local/all-MiniLM-L6-v2 produces 384"),
    ({"embedder": {"provider": "local", "config": {"batch_size": 0}}}, "embedder.config.batch_size"),
    ({"limits": {"max_text_chars": 0}}, "config.limits.max_text_chars"),
    ({"embedder": "local"}, "config.embedder"),
]


@pytest.mark.parametrize("config, message", ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_config_errors_say_what_and_where(config, message):
    with pytest.raises(ConfigError) as info:
        Memory(config)
    assert message in str(info.value)


def test_limits_are_configurable(tmp_path, embedder):
    with Memory({**sqlite_config(tmp_path), "limits": {"max_text_chars": 10}}, embedder=embedder) as m:
        m.add("short", user_id="u", infer=False)
        with pytest.raises(InvalidInputError, match="the limit is 10"):
            m.add("a bit too long", user_id="u", infer=False)


@pytest.fixture(scope="module")
def copied_model(tmp_path_factory):
    """A second, real model under another name: the same weights in another directory."""
    target = tmp_path_factory.mktemp("models") / "MiniLM-copy"
    shutil.copytree(default_model_dir(), target)
    return LocalEmbedder(str(target))


def test_opening_with_another_embedder_fails_naming_both(db_path, embedder, copied_model):
    with Memory(sqlite_config(db_path), embedder=embedder) as m:
        m.add("I like tea", user_id="u", infer=False)
    with pytest.raises(EmbedderMismatchError) as info:
        Memory(sqlite_config(db_path), embedder=copied_model)
    message = str(info.value)
    assert "local/all-MiniLM-L6-v2" in message and "local/MiniLM-copy" in message
    assert "memlane reembed" in message


def test_an_empty_store_accepts_a_new_embedder(db_path, embedder, copied_model):
    with Memory(sqlite_config(db_path), embedder=embedder) as m:
        m.add("x", user_id="u", infer=False)
        m.reset()
    with Memory(sqlite_config(db_path), embedder=copied_model) as m:
        assert m.info()["embedder"] == "local/MiniLM-copy"


def test_reembed_switches_the_store_and_resumes_after_interruption(db_path, embedder, copied_model):
    with Memory(sqlite_config(db_path), embedder=embedder) as m:
        m.add([f"fact {i} about tea" for i in range(30)] + ["I drive a red car"], user_id="u", infer=False)

    class Interrupted(Exception):
        pass

    def stop_after_first_batch(done, total):
        raise Interrupted

    with pytest.raises(Interrupted):
        Memory.reembed(sqlite_config(db_path), embedder=copied_model, batch_size=8, progress=stop_after_first_batch)
    with pytest.raises(EmbedderMismatchError):  # half-done: still bound to the old embedder
        Memory(sqlite_config(db_path), embedder=copied_model)

    seen = []
    m = Memory.reembed(sqlite_config(db_path), embedder=copied_model, batch_size=8,
                       progress=lambda done, total: seen.append((done, total)))
    with m:
        assert seen[-1] == (31, 31) and seen[0][0] > 8  # the first batch was not redone
        assert m.info() | {"store": None} == {"store": None, "embedder": "local/MiniLM-copy", "dims": 384,
                                              "memories": 31, "history_events": 31,
                                              "durability": "synchronous=normal"}
        assert m.search("which vehicle?", user_id="u", limit=1)["results"][0]["memory"] == "I drive a red car"
    with pytest.raises(EmbedderMismatchError):
        Memory(sqlite_config(db_path), embedder=embedder)


def test_float16_vectors_keep_scores_close(tmp_path, embedder):
    half = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "h.db"), "vector_dtype": "float16"}}}
    with Memory(half, embedder=embedder) as h, Memory(sqlite_config(tmp_path / "f.db"), embedder=embedder) as f:
        texts = ["I like tea", "Paris is in France", "my cat sleeps all day"]
        h.add(texts, user_id="u", infer=False)
        f.add(texts, user_id="u", infer=False)
        a = h.search("cats", user_id="u")["results"]
        b = f.search("cats", user_id="u")["results"]
        assert [r["memory"] for r in a] == [r["memory"] for r in b]
        assert [r["score"] for r in a] == pytest.approx([r["score"] for r in b], abs=2e-3)
        size = lambda m: m.store._con.execute("SELECT length(vector) FROM memories LIMIT 1").fetchone()[0]  # noqa: E731
        assert (size(h), size(f)) == (384 * 2, 384 * 4)
    # the dtype chosen at creation wins when the file is reopened
    with Memory(sqlite_config(tmp_path / "h.db"), embedder=embedder) as again:
        assert again.store.dtype.itemsize == 2
        assert len(again.search("cats", user_id="u")["results"]) == 3
