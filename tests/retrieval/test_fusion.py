"""Weighted fusion (retrieval/fusion.py): memories bring keyword shares of the query, taken as they
are up to 1; document pages bring raw BM25, divided by the pool's best."""

from __future__ import annotations

import numpy as np
import pytest

from memlane.retrieval import fusion

CASES = [
    # (name, dense, keyword, weight, shares, expected fused)
    ("a weak share (a common word) does not lift a far memory above a close one",
     [0.6, 0.4], [0.0, 0.1], 0.6, True, [0.4, 0.06]),
    ("a strong share (the question's rare words) does",
     [0.6, 0.4], [0.0, 0.9], 0.6, True, [0.4, 0.54]),
    ("a share above 1 (a short memory repeating the words) counts as 1",
     [0.6, 0.4], [0.0, 1.7], 0.6, True, [0.4, 0.6]),
    ("raw BM25 (document pages): the pool's best counts as 1, however weak",
     [0.6, 0.4], [0.0, 0.1], 0.6, False, [0.4, 0.6]),
    ("no keyword match anywhere: the dense order alone",
     [0.6, 0.4, 0.5], [0.0, 0.0, 0.0], 0.6, False, [0.4, 0.0, 0.2]),
]


@pytest.mark.parametrize("name,dense,keyword,weight,shares,expected", CASES, ids=[c[0] for c in CASES])
def test_weighted(name, dense, keyword, weight, shares, expected):
    got = fusion.weighted(dense, keyword, weight, shares=shares)
    assert np.allclose(got, expected), got
