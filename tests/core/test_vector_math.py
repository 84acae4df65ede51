"""Pure vector math (synthetic vectors are fine here: no embedding model is involved)."""

import numpy as np
import pytest

from memlane.embeddings.base import unit_rows
from memlane.core.errors import EmbeddingError
from memlane.core.vectors import DTYPES, from_blobs, to_blob, top_k


def test_top_k_orders_best_first_and_breaks_ties_by_position():
    scores = np.array([0.1, 0.9, 0.5, 0.9, -0.2], dtype=np.float32)
    assert top_k(scores, 3).tolist() == [1, 3, 2]
    assert top_k(scores, 10).tolist() == [1, 3, 2, 0, 4]


def test_top_k_threshold_is_inclusive():
    scores = np.array([0.1, 0.5, 0.7], dtype=np.float32)
    assert top_k(scores, 10, threshold=0.5).tolist() == [2, 1]
    assert top_k(scores, 10, threshold=0.8).tolist() == []


def test_top_k_matches_a_full_sort():
    rng = np.random.default_rng(0)
    scores = rng.standard_normal(5000).astype(np.float32)
    for k in (1, 7, 100, 4999, 5000):
        assert top_k(scores, k).tolist() == np.argsort(-scores, kind="stable")[:k].tolist()


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_blobs_round_trip(dtype):
    rng = np.random.default_rng(1)
    matrix = unit_rows(rng.standard_normal((4, 8)), 4, 8, "test")
    restored = from_blobs([to_blob(row, DTYPES[dtype]) for row in matrix], 8, DTYPES[dtype])
    assert restored.dtype == np.float32
    assert np.allclose(restored, matrix, atol=1e-3 if dtype == "float16" else 0)


def test_unit_rows_normalises():
    rows = unit_rows([[3.0, 4.0], [0.0, 2.0]], 2, 2, "test")
    assert np.allclose(rows, [[0.6, 0.8], [0.0, 1.0]]) and rows.dtype == np.float32


@pytest.mark.parametrize("raw, message", [
    ([[1.0, 2.0]], "shape (1, 2); expected (2, 2)"),
    ([[1.0, float("nan")], [1.0, 1.0]], "NaN or infinite"),
    ([[0.0, 0.0], [1.0, 1.0]], "all-zero vector"),
    ([["a", "b"], [1, 2]], "not a matrix of numbers"),
])
def test_unit_rows_rejects_bad_provider_output(raw, message):
    with pytest.raises(EmbeddingError, match=message.replace("(", r"\(").replace(")", r"\)")):
        unit_rows(raw, 2, 2, "test")
