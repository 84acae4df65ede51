"""The provider registry: names, aliases, unknown names, third-party registration, entry points."""

import numpy as np
import pytest

from memlane.core.config import ProviderSpec, load
from memlane.documents.encoders import ENCODERS
from memlane.embeddings import EMBEDDERS, Embeddings, create_embedder
from memlane.embeddings.hashing import HashingEmbedder
from memlane.core.errors import ConfigError
from memlane.llms import LLMS
from memlane.core.registry import Registry
from memlane.retrieval.rerank import RERANKERS
from memlane.store import STORES

BUILT_INS = [
    (EMBEDDERS, ["local", "huggingface", "sentence_transformers", "openai", "ollama", "lmstudio", "vllm",
                 "multilingual-e5-small", "e5", "multilingual-e5", "use-multilingual", "use", "universal-sentence-encoder",
                 "hashing"]),
    (LLMS, ["openai", "ollama", "lmstudio", "vllm"]),
    (RERANKERS, ["maxsim", "cross_encoder", "llm"]),
    (ENCODERS, ["local", "http"]),
    (STORES, ["sqlite", "postgres", "postgresql", "pgvector"]),
]


@pytest.mark.parametrize("registry,names", BUILT_INS, ids=lambda v: getattr(v, "kind", ""))
def test_built_ins_are_registered_under_their_names_and_aliases(registry, names):
    assert registry.known()[:len(names)] == names
    for name in names:
        assert name in registry and callable(registry.get(name))


@pytest.mark.parametrize("registry", [r for r, _ in BUILT_INS], ids=lambda r: r.kind)
def test_an_unknown_name_is_a_config_error_listing_the_known_ones(registry):
    with pytest.raises(ConfigError) as error:
        registry.get("no-such-provider")
    message = str(error.value)
    assert f"{registry.setting} 'no-such-provider' is unknown; known providers: " in message
    assert registry.known()[0] in message


def test_aliases_share_one_factory_and_name_their_provider():
    assert EMBEDDERS.get("huggingface") is EMBEDDERS.get("local")
    assert EMBEDDERS.canonical("sentence_transformers") == "local"
    assert STORES.canonical("pgvector") == "postgres"


def test_a_third_party_registers_like_a_built_in_and_memory_uses_it(tmp_path):
    registry = Registry("embedders", "embedder.provider")

    @registry.register("mine", aliases=("my-alias",))
    def create(spec):
        return HashingEmbedder(spec.config["dims"])

    assert registry.get("my-alias")(ProviderSpec(provider="my-alias", config={"dims": 16})).dims == 16
    # and through the real registry, reaching Memory from configuration only
    EMBEDDERS.register("test-third-party", create)
    try:
        from memlane import Memory

        config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path)}},
                  "embedder": {"provider": "test-third-party", "config": {"dims": 32}}}
        with Memory(config) as m:
            assert m.info()["embedder"] == "hashing/32" and m.info()["dims"] == 32
    finally:
        EMBEDDERS._names.pop("test-third-party")
        EMBEDDERS._factories.pop("test-third-party")


def test_a_name_taken_by_another_provider_cannot_be_registered_again():
    registry = Registry("things", "thing.provider")
    registry.register("a", lambda: 1, aliases=("b",))
    with pytest.raises(ConfigError, match="'b' is registered already \\(by provider 'a'\\)"):
        registry.register("c", lambda: 2, aliases=("b",))
    assert registry.known() == ["a", "b"]


class _Point:
    """An entry point as importlib.metadata gives it."""

    def __init__(self, name, value, target):
        self.name, self.value, self._target = name, value, target

    def load(self):
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


def test_entry_points_are_found_by_name_and_loaded_only_when_asked_for(monkeypatch):
    import memlane.core.registry as registry_module

    loaded = []

    def factory():
        return "made"

    points = [_Point("plugged", "pkg.mod:factory", factory), _Point("broken", "pkg.bad:f", ImportError("no pkg.bad"))]
    monkeypatch.setattr(registry_module, "entry_points",
                        lambda group: loaded.append(group) or (points if group == "memlane.things" else []))
    registry = Registry("things", "thing.provider")
    registry.register("builtin", lambda: "b")
    assert registry.get("builtin")() == "b" and loaded == []  # registered names need no entry point scan
    assert registry.known() == ["builtin", "plugged", "broken"] and loaded == ["memlane.things"]
    assert registry.get("plugged")() == "made"
    with pytest.raises(ConfigError, match="provider 'broken' \\(entry point pkg.bad:f\\) could not be loaded: no pkg"):
        registry.get("broken")


def test_each_openai_compatible_server_is_a_provider_of_embedders_and_llms():
    """One table of servers (openai_endpoint.SERVERS) names the providers of both kinds."""
    from memlane.openai_endpoint import SERVERS

    for server in SERVERS:
        assert server in EMBEDDERS and server in LLMS


@pytest.mark.parametrize("kind,spec,message", [
    ("embedder", {"provider": "openai", "config": {"model": "m", "embedding_dims": 8}},
     "the openai embedder needs an API key: set embedder.config.api_key or OPENAI_API_KEY"),
    ("llm", {"provider": "openai", "config": {}}, "the openai llm needs an API key: set llm.config.api_key"),
])
def test_endpoint_settings_are_checked_alike_for_embedders_and_llms(monkeypatch, kind, spec, message):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    from memlane.llms import create_llm

    create = create_embedder if kind == "embedder" else create_llm
    with pytest.raises(ConfigError, match=message):
        create(ProviderSpec(**spec))


@pytest.mark.parametrize("alias,server,url", [
    ("ollama_base_url", "ollama", "http://127.0.0.1:9/v1"),
    ("vllm_base_url", "vllm", "http://127.0.0.1:9/v1/"),
])
def test_mem0_base_url_aliases_reach_the_client_of_both_kinds(alias, server, url):
    from memlane.llms import create_llm

    embedder = create_embedder(ProviderSpec(provider=server, config={alias: url, "embedding_dims": 8}))
    llm = create_llm(ProviderSpec(provider=server, config={alias: url}))
    assert str(embedder.client.base_url).rstrip("/") == str(llm.client.base_url).rstrip("/") == url.rstrip("/")


# -- the hashing embedder ---------------------------------------------------------------------------


def test_hashing_embedder_is_deterministic_and_word_based():
    embeddings = Embeddings(create_embedder(load({"embedder": {"provider": "hashing", "config": {"dims": 256}}})
                                            .embedder))
    a, b, c, again = embeddings.documents(["I like pizza", "pizza I like", "the dog barks", "I like pizza"])
    assert embeddings.name == "hashing/256" and embeddings.dims == 256
    assert np.array_equal(a, again)  # the same text, the same vector (no process-seeded hash)
    assert float(a @ b) == pytest.approx(1.0)  # word order does not matter
    assert float(a @ c) == pytest.approx(0.0, abs=0.35)  # no shared word: near orthogonal
    assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-6


@pytest.mark.parametrize("text", ["?!", "火锅", "a", "x" * 5000, "Ünïcödé wörds"])
def test_hashing_embedder_gives_a_unit_vector_for_any_text(text):
    embeddings = Embeddings(HashingEmbedder(64))
    vector = embeddings.documents([text])[0]
    assert vector.shape == (64,) and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-6
    sentences, tokens = embeddings.documents_and_tokens([text], 16)
    assert tokens[0].shape[1] == 64 and len(tokens[0]) >= 1


def test_hashing_embedder_config_is_validated():
    with pytest.raises(ConfigError, match="embedder.config.dims"):
        create_embedder(ProviderSpec(provider="hashing", config={"dims": 2}))
