"""Which filters reach past the scopes they name (``widens_scope``: admin keys only), as a table:
a wildcard beside a scope named by id narrows it; one that an OR, or nothing, holds in widens it;
a filter that does not parse widens when a scope key is "*" anywhere in it."""

import pytest

from memlane.hosting.tenancy import widens_scope

CASES = [
    (None, False),
    ({"user_id": "alex"}, False),
    ({"OR": [{"user_id": "alex"}, {"run_id": "run_456"}]}, False),
    ({"user_id": {"in": ["alex", "sam"]}, "run_id": "*"}, False),
    ({"AND": [{"user_id": "alex"}, {"run_id": "*"}]}, False),  # mem0's "user across all runs"
    ({"user_id": "alex", "NOT": {"agent_id": "*"}}, False),
    ({"OR": [{"user_id": "alex"}, {"AND": [{"user_id": "*"}, {"run_id": "r"}]}]}, False),
    ({"user_id": "*"}, True),
    ({"$or": [{"user_id": "*"}]}, True),
    ({"OR": [{"user_id": "alex"}, {"user_id": "*"}]}, True),
    ({"OR": [{"user_id": "alex"}, {"run_id": "*", "category": "x"}]}, True),
    ({"agent_id": "*", "user_id": {"ne": "alex"}}, True),
    ({"NOT": {"user_id": "alex"}, "run_id": "*"}, True),
    ({"user_id": "*", "level": {"gtee": 1}}, True),  # does not parse: "*" under a scope key
    ({"OR": [{"run_id": "*"}], "level": {"gtee": 1}}, True),
    ({"user_id": "alex", "level": {"gtee": 1}}, False),
]


@pytest.mark.parametrize("filters, widens", CASES, ids=[repr(f)[:60] for f, _ in CASES])
def test_widens_scope(filters, widens):
    assert widens_scope(filters) is widens
