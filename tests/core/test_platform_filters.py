"""mem0's platform filter language (its "Memory filters" v2 docs), every form, read by
``core.platform_filters``: one table of filter -> the memories it matches, checked on every store
backend through get_all and search; what it refuses, naming the part; and the scope rule it keeps
(an OR each of whose branches names a scope is scoped, one without is not)."""

import pytest

from memlane import Memory
from memlane.core import platform_filters
from memlane.core.errors import FilterError, ScopeError
from memlane.core.models import NewMemory

from conftest import sqlite_config
from support.filter_cases import with_ids


def _when(day: str) -> str:
    return f"{day}T00:00:00.000000+00:00"


RECORDS = {
    "a": dict(text="teal invoice from the bank", user_id="alex", created="2024-01-15",
              metadata={"source": "email", "categories": ["food", "finance"]}),
    "b": dict(text="Invoice paid", user_id="alex", run_id="run_456", created="2024-03-10",
              metadata={"source": "chat", "categories": ["spam"]}),
    "c": dict(text="TEAL walls in the kitchen", user_id="sam", run_id="run_456", created="2024-06-01",
              updated="2024-07-01", metadata={"categories": "health"}),  # one category, as a string
    "d": dict(text="quarterly report", agent_id="finance_bot", created="2024-02-01",
              metadata={"source": "email"}, valid_to="2030-01-01"),  # an expiry (expiration_date)
    "e": dict(text="train trip to Oslo", user_id="sam", agent_id="finance_bot", created="2023-12-31",
              metadata={"categories": ["test", "travel"], "priority": 2}),
    "f": dict(text="Teal and more tEaL", user_id="bob", created="2024-01-20", metadata={}),
}

# (platform filter, names it matches among a..f); "@a" is the id of a
CASES = [
    # entity fields: eq, ne, in, "*" (not null)
    ({"OR": [{"user_id": "alex"}, {"run_id": "run_456"}]}, "abc"),
    ({"OR": [{"user_id": "sam"}, {"agent_id": "finance_bot"}]}, "cde"),
    ({"user_id": "*"}, "abcef"),
    ({"AND": [{"agent_id": "*"}]}, "de"),
    ({"user_id": {"in": ["alex", "bob"]}}, "abf"),
    ({"user_id": {"ne": "alex"}}, "cdef"),  # a null user_id is "not equal", as mem0's
    ({"AND": [{"agent_id": "*"}, {"agent_id": {"ne": "old_agent"}}]}, "de"),
    ({"AND": [{"user_id": "sam"}, {"run_id": "*"}]}, "c"),
    ({"AND": [{"agent_id": "finance_bot"}, {"run_id": "*"}]}, ""),
    # metadata: an object of keys, bare value / eq, ne, contains; a dotted path
    ({"metadata": {"source": "email"}}, "ad"),
    ({"AND": [{"user_id": "alex"}, {"metadata": {"source": "email"}}]}, "a"),
    ({"metadata": {"source": {"ne": "email"}}}, "bcef"),
    ({"metadata": {"source": {"contains": "mai"}}}, "ad"),
    ({"metadata": {"source": "email", "priority": 2}}, ""),
    ({"metadata": {"priority": 2}}, "e"),
    ({"OR": [{"metadata": {"source": "email"}}, {"metadata": {"source": "chat"}}]}, "abd"),
    ({"metadata.source": "chat"}, "b"),
    # keywords: the memory's text, contains (case-sensitive) / icontains
    ({"keywords": {"icontains": "teal"}}, "acf"),
    ({"keywords": {"contains": "teal"}}, "a"),
    ({"AND": [{"user_id": "alex"}, {"keywords": {"icontains": "INVOICE"}}]}, "ab"),
    ({"text": {"icontains": "TRIP"}}, "e"),
    # categories: in (any of them), contains (one, ignoring case; in a single string: a part of it)
    ({"categories": {"in": ["finance", "health"]}}, "ac"),
    ({"AND": [{"user_id": "alex"}, {"categories": {"in": ["finance"]}}]}, "a"),
    ({"categories": {"in": []}}, ""),
    ({"categories": {"contains": "FOOD"}}, "a"),
    ({"categories": {"contains": "heal"}}, "c"),
    ({"NOT": {"categories": {"in": ["spam", "test"]}}}, "acdf"),
    ({"AND": [{"user_id": "alex"}, {"NOT": {"categories": {"in": ["spam", "test"]}}}]}, "a"),
    ({"AND": [{"user_id": "sam"}, {"NOT": {"OR": [{"categories": {"in": ["spam"]}},
                                                  {"categories": {"in": ["test"]}}]}}]}, "c"),
    ({"AND": [{"user_id": "sam"}, {"OR": [{"categories": {"in": ["finance"]}},
                                          {"categories": {"in": ["health"]}}]}]}, "c"),
    ({"user_id": "alex", "categories": {"in": ["spam"]}}, "b"),  # flat: implicit AND
    # memory_ids: a list, or {"in": [...]}
    ({"memory_ids": ["@a", "@c"]}, "ac"),
    ({"AND": [{"user_id": "alex"}, {"memory_ids": ["@a", "@c"]}]}, "a"),
    ({"memory_ids": {"in": ["@b"]}}, "b"),
    # time fields: ISO dates, timestamp also as Unix seconds, expiration_date
    ({"created_at": {"gte": "2024-01-01T00:00:00Z"}}, "abcdf"),
    ({"AND": [{"created_at": {"gte": "2024-01-01"}}, {"created_at": {"lt": "2024-02-01"}}]}, "af"),
    ({"created_at": "2024-03-10"}, "b"),
    ({"created_at": {"ne": "2024-03-10"}}, "acdef"),
    ({"updated_at": {"gte": "2024-07-01"}}, "c"),
    ({"updated_at": {"lt": "2024-01-01"}}, "e"),
    ({"timestamp": {"lt": "2024-01-01"}}, "e"),
    ({"timestamp": {"gte": 1717200000}}, "c"),  # 2024-06-01T00:00:00Z
    ({"expiration_date": {"lte": "2030-12-31"}}, "d"),
    ({"expiration_date": "*"}, "d"),
    # the docs' multi-dimensional example
    ({"AND": [{"user_id": "alex"}, {"categories": {"in": ["finance"]}}, {"keywords": {"icontains": "invoice"}},
              {"created_at": {"gte": "2024-01-01T00:00:00Z"}}, {"created_at": {"lt": "2024-04-01T00:00:00Z"}}]}, "a"),
    # AND and OR side by side: memlane ANDs them (mem0 drops the OR today)
    ({"AND": [{"user_id": "alex"}], "OR": [{"metadata": {"source": "chat"}}, {"run_id": "nope"}]}, "b"),
]

#: every record has a user or an agent: this scopes a case that names no scope itself
EVERYONE = {"OR": [{"user_id": "*"}, {"agent_id": "*"}]}


@pytest.fixture(scope="module", params=["sqlite", "postgres", "postgres-hnsw"])
def populated(request, tmp_path_factory, embedder):
    if request.param == "sqlite":
        config = sqlite_config(tmp_path_factory.mktemp("platform-filters") / "m.db")
    else:  # postgres-hnsw: every unscoped search asks the HNSW index instead of scanning
        limit = {"exact_search_limit": 0} if request.param == "postgres-hnsw" else {}
        config = request.getfixturevalue("pg").config(**limit)
    memory = Memory(config, embedder=embedder)
    drafts = []
    for name, fields in RECORDS.items():
        fields = dict(fields)
        created = _when(fields.pop("created"))
        updated = _when(fields.pop("updated")) if "updated" in fields else created
        valid_to = _when(fields.pop("valid_to")) if "valid_to" in fields else None
        drafts.append(NewMemory(text=f"memory {name}: {fields.pop('text')}", created_at=created, updated_at=updated,
                                valid_to=valid_to, **fields))
    records = memory.insert(drafts)
    ids = {r.text.split(":")[0].removeprefix("memory "): r.id for r in records}
    yield memory, ids
    memory.close()


def names(results):
    return "".join(sorted(item["memory"].split(":")[0].removeprefix("memory ") for item in results["results"]))


@pytest.mark.parametrize("filters, expected", CASES, ids=[repr(f)[:70] for f, _ in CASES])
def test_platform_filter_semantics(populated, filters, expected):
    memory, ids = populated
    scoped = platform_filters.read({"AND": [EVERYONE, with_ids(filters, ids)]})
    assert names(memory.get_all(filters=scoped)) == expected
    assert names(memory.search("memory", filters=scoped, threshold=0.0)) == expected


#: the cases that name their scope (an id, an ``in`` list or a wildcard of a scope, or an OR of such)
SCOPED_ALONE = [(f, e) for f, e in CASES
                if any(s in repr(f) for s in ("{'user_id': '", "{'agent_id': '", "'user_id': {'in'"))]


@pytest.mark.parametrize("filters, expected", SCOPED_ALONE, ids=[repr(f)[:70] for f, _ in SCOPED_ALONE])
def test_a_filter_naming_its_scopes_needs_no_other(populated, filters, expected):
    memory, ids = populated
    read = platform_filters.read(with_ids(filters, ids))
    assert names(memory.get_all(filters=read)) == expected
    assert names(memory.search("memory", filters=read, threshold=0.0)) == expected


# memlane's own form (the SDK, REST /memories, CLI, MCP) reads the forms the two share the same way;
# there a key memlane does not know is a metadata key, as in mem0's open-source SDK
SDK_CASES = [
    ({"OR": [{"user_id": "alex"}, {"run_id": "run_456"}]}, "abc"),
    ({"user_id": "alex", "metadata": {"source": "email"}}, "a"),
    ({"user_id": "alex", "source": "email"}, "a"),
    ({"AND": [{"user_id": "alex"}, {"NOT": {"source": "email"}}]}, "b"),
    ({"OR": [{"user_id": "sam"}, {"agent_id": "finance_bot"}], "metadata": {"categories": {"contains": "test"}}}, "e"),
]


@pytest.mark.parametrize("filters, expected", SDK_CASES, ids=[repr(f)[:70] for f, _ in SDK_CASES])
def test_the_sdk_form_reads_the_shared_forms_alike(populated, filters, expected):
    memory, _ = populated
    assert names(memory.get_all(filters=filters)) == expected
    assert names(memory.search("memory", filters=filters, threshold=0.0)) == expected


UNSCOPED = [
    {"OR": [{"user_id": "alex"}, {"metadata": {"source": "email"}}]},  # one branch names no scope
    {"OR": [{"user_id": "alex"}, {"NOT": {"user_id": "sam"}}]},
    {"NOT": {"user_id": "alex"}},
    {"user_id": {"ne": "alex"}},
    {"metadata": {"source": "email"}},
]


@pytest.mark.parametrize("filters", UNSCOPED, ids=[repr(f)[:70] for f in UNSCOPED])
def test_an_or_with_an_unscoped_branch_is_refused(populated, filters):
    memory, _ = populated
    with pytest.raises(ScopeError, match="OR each of whose branches"):
        memory.get_all(filters=platform_filters.read(filters))


# -- what the reader builds, and what it refuses -------------------------------------------------------

READS = [
    (None, None),
    ({"user_id": "u"}, {"user_id": "u"}),
    ({"NOT": {"user_id": "u"}}, {"NOT": {"user_id": "u"}}),
    ({"keywords": {"icontains": "x"}}, {"memory": {"icontains": "x"}}),
    ({"keywords": {"icontains": "x"}, "text": "y"}, {"memory": {"icontains": "x"}, "AND": [{"memory": "y"}]}),
    ({"text": "y", "AND": [{"user_id": "u"}], "keywords": {"contains": "x"}},
     {"memory": "y", "AND": [{"user_id": "u"}, {"memory": {"contains": "x"}}]}),
    ({"memory_ids": ["i"]}, {"id": {"in": ["i"]}}),
    ({"timestamp": 0}, {"created_at": "1970-01-01T00:00:00+00:00"}),
    ({"expiration_date": {"lte": "2030-01-01"}}, {"valid_to": {"lte": "2030-01-01"}}),
    ({"categories": {"contains": "x"}}, {"metadata.categories": {"icontains": "x"}}),
    ({"metadata": {"a": 1}, "metadata.b": 2}, {"metadata": {"a": 1}, "metadata.b": 2}),
    ({"$or": [{"role": "user"}]}, {"OR": [{"role": "user"}]}),
]


@pytest.mark.parametrize("filters, expected", READS, ids=[repr(f)[:60] for f, _ in READS])
def test_reads(filters, expected):
    assert platform_filters.read(filters) == expected


REFUSALS = [
    ({"user_id": "user_123", "bogus_key": "z"}, "filters.bogus_key", "unknown filter field 'bogus_key'"),
    ({"AND": [{"user_id": "u"}, {"category": "food"}]}, "filters.AND[1].category",
     "{'metadata': {'category': ...}} or 'metadata.category'"),
    ({"NOT": {"OR": [{"tags": 1}]}}, "filters.NOT.OR[0].tags", "unknown filter field 'tags'"),
    ({"app_id": {"in": ["app1"]}}, "filters.app_id", "app_id is not supported"),
    ({"keywords_search": True}, "filters.keywords_search", "keyword_search: true"),
    ({"keywords": "teal"}, "filters.keywords", "keywords takes contains"),
    ({"keywords": {"eq": "teal"}}, "filters.keywords", "keywords takes contains"),
    ({"keywords": {"icontains": 3}}, "filters.keywords.icontains", "takes a string"),
    ({"categories": "food"}, "filters.categories", "categories takes in"),
    ({"categories": {"eq": "food"}}, "filters.categories", "categories takes in"),
    ({"categories": {"in": "food"}}, "filters.categories.in", "list of categories"),
    ({"categories": {"contains": ["food"]}}, "filters.categories.contains", "takes a string"),
    ({"memory_ids": "id1"}, "filters.memory_ids", "memory_ids takes a list"),
    ({"timestamp": {"gt": 1e20}}, "filters.timestamp.gt", "not a time"),
    ({"timestamp": {">=": "2024-01-01"}}, "filters.timestamp", "unknown operator '>=' for field 'timestamp'"),
    ({"text": {"like": "x"}}, "filters.text", "unknown operator 'like' for field 'text'"),
    ({"or": [{"user_id": "u"}]}, "filters.or", "upper case: 'OR'"),
    ({"OR": {"user_id": "u"}}, "filters.OR", "non-empty list"),
    ({"NOT": {}}, "filters.NOT", "non-empty list"),
    (["user_id"], "filters", "expected an object"),
]


@pytest.mark.parametrize("filters, path, message", REFUSALS, ids=[repr(f)[:60] for f, _, _ in REFUSALS])
def test_refuses_naming_the_part(filters, path, message):
    with pytest.raises(FilterError) as info:
        platform_filters.read(filters)
    assert info.value.path == path
    assert message in str(info.value)
