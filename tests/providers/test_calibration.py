"""Similarity on one scale whichever model made the vectors (embeddings/calibration.py)."""

import numpy as np
import pytest

from memlane import Memory
from memlane.embeddings.calibration import IDENTITY, Calibration, Calibrations, knots

from conftest import sqlite_config

MAP = Calibration(raw=(0.7, 0.8, 0.9), common=(0.0, 0.3, 0.7))


@pytest.mark.parametrize("raw, common", [
    (0.7, 0.0), (0.75, 0.15), (0.8, 0.3), (0.9, 0.7),
    (0.95, 0.85),      # above the last knot: a straight line to (1, 1)
    (1.0, 1.0),
    (0.6, -0.3),       # below the first knot: the first segment's slope goes on
])
def test_the_map(raw, common):
    assert MAP(raw) == pytest.approx(common, abs=1e-6)
    assert MAP.inverse(common) == pytest.approx(raw, abs=1e-6)


def test_arrays_keep_their_shape_and_order():
    raw = np.array([[0.95, 0.7], [0.8, 0.72]], dtype=np.float32)
    mapped = MAP(raw)
    assert mapped.shape == raw.shape and mapped.dtype == np.float32
    assert (np.argsort(mapped, axis=None) == np.argsort(raw, axis=None)).all()


@pytest.mark.parametrize("raw, common", [((0.5,), (0.1,)), ((0.5, 0.4), (0.1, 0.2)), ((0.4, 0.5), (0.2, 0.1)),
                                         ((0.4, 1.0), (0.1, 0.2))])
def test_knots_must_increase_and_stay_below_one(raw, common):
    with pytest.raises(ValueError):
        Calibration(raw, common)


def test_knots_from_quantiles_drop_ties():
    assert knots([0.1, 0.1, 0.2, 0.3], [0.0, 0.05, 0.1, 0.1]) == Calibration((0.1, 0.2), (0.0, 0.1))


def test_identity_leaves_cosines_alone():
    assert IDENTITY.similarity(0.42) == 0.42 and IDENTITY.raw_threshold(0.42) == 0.42
    both = Calibrations(query=MAP)
    assert both.similarity(0.8, "query") == pytest.approx(0.3) and both.similarity(0.8, "document") == 0.8


@pytest.mark.model
@pytest.mark.parametrize("provider", ["multilingual-e5-small", "use-multilingual"])
def test_the_shipped_maps_are_what_the_corpus_gives(provider):
    """The knots in the model's module are a fresh fit over tests/data/calibration_pairs.jsonl."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "calibrate_embedders.py"
    spec = importlib.util.spec_from_file_location("calibrate_embedders", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    from memlane.core.config import ProviderSpec
    from memlane.embeddings import create_embedder

    rows = module.english_rows()
    reference = module.cosines(create_embedder(ProviderSpec(provider="local")), rows)
    embedder = create_embedder(ProviderSpec(provider=provider))
    fitted = module.fit(module.cosines(embedder, rows), reference)
    for kind in ("query", "document"):
        shipped, fresh = getattr(embedder.calibrations, kind), getattr(fitted, kind)
        probe = np.linspace(shipped.raw[0], shipped.raw[-1], 50)
        assert np.abs(shipped(probe) - fresh(probe)).max() < 0.02, kind


@pytest.mark.model
def test_a_threshold_means_the_same_with_the_multilingual_model(tmp_path, e5_embedder, embedder):
    """threshold=0.3 keeps a memory a question is about and drops one it is not about, with either model;
    scores are on one scale (the raw e5 cosine of the unrelated memory is about 0.75)."""
    texts = ["User is allergic to penicillin", "User's favourite band is Radiohead"]
    for model in (embedder, e5_embedder):
        with Memory(sqlite_config(tmp_path / f"{model.name.replace('/', '_')}.db"), embedder=model) as m:
            m.add(texts, user_id="u", infer=False)
            kept = m.search("Which antibiotics should I avoid?", user_id="u", threshold=0.3)["results"]
            assert [r["memory"] for r in kept] == [texts[0]], model.name
            everything = m.search("Which antibiotics should I avoid?", user_id="u")["results"]
            assert everything[-1]["score"] < 0.2 < 0.3 < everything[0]["score"], (model.name, everything)
