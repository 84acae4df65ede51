"""mem0's platform filters (its "Memory filters" v2 docs) sent by the official client
(``mem0.MemoryClient``) to a live memlane: each form gives mem0's answer through search and
get_all, and what the platform does not know is refused with an error naming it, never read as
a metadata key that matches nothing.

mem0 is imported once per session (support/mem0_client.py): telemetry off, its config in a temporary dir.
"""

from __future__ import annotations

import pytest

from support.server_fixtures import live  # noqa: F401  (fixture)
from support.filter_cases import with_ids


@pytest.fixture(scope="module")
def client(mem0, live):
    return mem0.MemoryClient(api_key=live.key("pf-tenant"), host=live.url)


@pytest.fixture(scope="module")
def admin(mem0, live):
    return mem0.MemoryClient(api_key=live.key("pf-tenant", admin=True), host=live.url)


ADDS = {  # name: (text, scope, metadata)
    "teal": ("I painted the fence teal", {"user_id": "pf-alex"},
             {"source": "email", "categories": ["home", "finance"]}),
    "run": ("The invoice is due on Friday", {"user_id": "pf-alex", "run_id": "pf-run-456"},
            {"source": "chat", "categories": ["spam"]}),
    "other": ("Sam likes green tea", {"user_id": "pf-sam", "run_id": "pf-run-456"}, {"categories": ["food"]}),
    "bot": ("The weekly report goes out on Monday", {"agent_id": "pf-bot"}, {"source": "email"}),
}


@pytest.fixture(scope="module")
def ids(client):
    found = {}
    for name, (text, scope, metadata) in ADDS.items():
        [result] = client.add(text, infer=False, metadata=metadata, **scope)["results"]
        found[name] = result["id"]
    return found


def _names(ids, answer):
    by_id = {v: k for k, v in ids.items()}
    return sorted(by_id[m["id"]] for m in answer["results"])


ALEX = {"user_id": "pf-alex"}
# (filters, names found); "@name" is that memory's id
FORMS = [
    ({"OR": [{"user_id": "pf-alex"}, {"run_id": "pf-run-456"}]}, ["other", "run", "teal"]),
    ({"OR": [{"user_id": "pf-sam"}, {"agent_id": "pf-bot"}]}, ["bot", "other"]),
    ({"AND": [ALEX, {"metadata": {"source": "email"}}]}, ["teal"]),
    ({"OR": [{"metadata": {"source": "chat"}}, {"metadata": {"source": "email"}}], **ALEX}, ["run", "teal"]),
    ({"AND": [ALEX, {"NOT": {"categories": {"in": ["spam", "test"]}}}]}, ["teal"]),
    ({"AND": [ALEX, {"keywords": {"icontains": "TEAL"}}]}, ["teal"]),
    ({"AND": [ALEX, {"keywords": {"contains": "Teal"}}]}, []),
    ({"AND": [ALEX, {"categories": {"contains": "FINANCE"}}]}, ["teal"]),
    ({"AND": [ALEX, {"categories": {"in": ["finance", "spam"]}}]}, ["run", "teal"]),
    ({"AND": [ALEX, {"memory_ids": ["@run"]}]}, ["run"]),
    ({"AND": [ALEX, {"run_id": "*"}]}, ["run"]),
    ({"AND": [ALEX, {"created_at": {"gte": "2024-01-01"}}, {"created_at": {"lt": "2999-01-01"}}]}, ["run", "teal"]),
    ({"AND": [ALEX, {"updated_at": {"lt": "2024-01-01T00:00:00Z"}}]}, []),
]


@pytest.mark.parametrize("filters, expected", FORMS, ids=[repr(f)[:70] for f, _ in FORMS])
def test_each_form_gives_mem0s_answer(client, ids, filters, expected):
    filters = with_ids(filters, ids)
    assert _names(ids, client.get_all(filters=filters)) == expected
    assert _names(ids, client.search("what do we know", filters=filters, threshold=0.0)) == expected


REFUSED = [  # (filters, text the error names)
    ({"user_id": "pf-alex", "bogus_key": "z"}, "bogus_key"),
    ({"AND": [ALEX, {"source": "email"}]}, "'metadata.source'"),  # a metadata key: in "metadata" or a path
    ({"AND": [ALEX, {"keywords": "teal"}]}, "keywords takes contains"),
    ({"AND": [ALEX, {"categories": "home"}]}, "categories takes in"),
    ({"AND": [ALEX, {"app_id": "*"}]}, "app_id"),
    ({"OR": [ALEX, {"metadata": {"source": "email"}}]}, "OR each of whose branches"),  # not scoped
]


@pytest.mark.parametrize("filters, named", REFUSED, ids=[repr(f)[:70] for f, _ in REFUSED])
def test_what_the_platform_does_not_know_is_refused_by_name(mem0, client, ids, filters, named):
    for call in (lambda: client.get_all(filters=filters), lambda: client.search("x", filters=filters)):
        with pytest.raises(mem0.exceptions.ValidationError, match=named):
            call()


WIDENING = [  # (filters, names an admin key finds): every user, or a branch of an OR that is every user
    ({"OR": [ALEX, {"user_id": "*"}]}, ["other", "run", "teal"]),
    ({"OR": [ALEX, {"AND": [{"run_id": "*"}, {"keywords": {"icontains": "tea"}}]}]}, ["other", "run", "teal"]),
    ({"AND": [{"user_id": "*"}, {"keywords": {"icontains": "TEA"}}]}, ["other", "teal"]),
]


@pytest.mark.parametrize("filters, expected", WIDENING, ids=[repr(f)[:70] for f, _ in WIDENING])
def test_an_or_does_not_widen_a_key_without_admin(mem0, client, admin, ids, filters, expected):
    for call in (lambda c: c.get_all(filters=filters), lambda c: c.search("tea", filters=filters, threshold=0.0)):
        with pytest.raises(mem0.exceptions.AuthenticationError, match="admin"):
            call(client)
        assert _names(ids, call(admin)) == expected


def test_a_wildcard_beside_a_named_scope_narrows_for_any_key(client, ids):
    """mem0's "user across all runs": alex's memories of some run, no admin key needed."""
    pinned = {"NOT": {"OR": [{"agent_id": "*"}]}, "OR": [ALEX, {"user_id": "pf-sam"}], "run_id": "*"}
    assert _names(ids, client.get_all(filters=pinned)) == ["other", "run"]
