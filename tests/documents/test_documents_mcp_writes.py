"""The MCP tools that write and read document collections (``mcp_server/document_tools.py``), through the
official MCP client on ``/mcp`` of a real server: what they write is what REST and the SDK read (one store per
tenant), a bad argument is a tool error naming it as REST's 4xx names the field, and a key trusted with less
is refused as REST refuses it (table-driven)."""

from __future__ import annotations

import base64

import anyio
import pytest

from support.server_fixtures import call_tool, live, mcp_client  # noqa: F401  (fixture)

CATS = "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day."
DOGS = "# Dogs\n\nA dog barks at the postman and fetches sticks thrown in the park."
TENANT = "mcp-docs-writes"


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def _calls(live, key: str, calls: list[tuple[str, dict]]) -> list[dict]:
    async with mcp_client(live, key) as client:
        return [await call_tool(client, name, arguments) for name, arguments in calls]


def test_a_collection_is_written_read_and_deleted_through_mcp(live):
    key = live.key(TENANT)
    calls = [
        ("create_collection", {"name": "pets", "metadata": {"public": True}}),
        ("upsert_document", {"name": "cats", "collection_name": "pets", "text": CATS, "metadata": {"year": 2024}}),
        ("upsert_document", {"name": "dogs.md", "collection_name": "pets", "file": b64(DOGS),
                             "filename": "dogs.md", "metadata": {"year": 2023}}),
        ("list_collections", {}),
        ("get_collection", {"collection_name": "pets"}),
        ("list_documents", {"collection_name": "pets", "query_filter": {"key": "year", "value": 2024}}),
        ("get_document", {"document_name": "dogs.md", "collection_name": "pets", "expand_pages": True}),
        ("search_documents", {"query": "does a cat purr?", "collection_name": "pets", "top_k": 1}),
        ("update_document", {"document_name": "cats", "collection_name": "pets", "metadata": {"year": 2025}}),
        ("upsert_document", {"name": "cats", "collection_name": "pets", "text": CATS + " Kittens play."}),
        ("update_collection", {"collection_name": "pets", "name": "animals"}),
        ("delete_document", {"document_name": "dogs.md", "collection_name": "animals"}),
        ("list_documents", {"limit": "ten"}),
    ]
    (created, cats, dogs, collections, collection, year_2024, dogs_pages, found, updated, replaced, renamed,
     deleted, remaining) = anyio.run(_calls, live, key, calls)
    assert created["name"] == "pets" and created["metadata"] == {"public": True} and created["num_documents"] == 0
    assert cats["created"] is True and cats["kind"] == "text" and cats["metadata"] == {"year": 2024}
    assert dogs["kind"] == "markdown" and dogs["num_pages"] == 1
    assert [c["name"] for c in collections["results"]] == ["pets"] and collections["count"] == 1
    assert collection["num_documents"] == 2
    assert [d["name"] for d in year_2024["results"]] == ["cats"]
    assert "fetches sticks" in dogs_pages["pages"][0]["text"]
    assert [r["document_name"] for r in found["results"]] == ["cats"]
    assert updated["metadata"] == {"year": 2025}
    assert replaced["created"] is False and replaced["metadata"] == {}  # an upsert replaces pages and metadata
    assert renamed["name"] == "animals"
    assert deleted == {"deleted": "dogs.md", "collection_name": "animals", "pages_deleted": 1}
    assert [d["name"] for d in remaining["results"]] == ["cats"]
    assert remaining["warnings"] == ["invalid limit 'ten' (not a positive integer); using the default 1000"]
    # one store per tenant: REST reads what MCP wrote
    with live.client(key) as api:
        document = api.get("/documents/cats", params={"collection_name": "animals", "expand": "pages"}).json()
        assert "Kittens play" in document["pages"][0]["text"]
    (gone,) = anyio.run(_calls, live, key, [("delete_collection", {"collection_name": "animals"})])
    assert gone == {"deleted": "animals", "pages_deleted": 1}
    with live.client(key) as api:
        assert api.get("/collections").json() == []


# (tool, arguments, what the error says): the documents' own checks (documents/inputs.py), as REST answers them
BAD = [
    ("create_collection", {"name": "all"}, "invalid name: 'all' is reserved"),
    ("create_collection", {"name": "a/b"}, "invalid name: name 'a/b' contains '/'"),
    ("create_collection", {"name": " x"}, "invalid name: name must be non-empty without leading or trailing spaces"),
    ("create_collection", {"name": "n" * 257}, "invalid name: name is longer than 256 characters"),
    ("create_collection", {"name": "taken"}, "invalid name: a collection named 'taken' exists already"),
    ("create_collection", {"name": "c2", "encoder": "klingon"}, "invalid encoder"),
    ("create_collection", {"name": "c3", "metadata": {"blob": "x" * 70_000}},
     "invalid metadata: metadata is 70,012 bytes as JSON; the limit is 65,536"),
    ("upsert_document", {"name": "d", "collection_name": "taken"},
     "invalid text: give exactly one of text, file (base64) or path"),
    ("upsert_document", {"name": "d", "collection_name": "taken", "text": "hi", "file": b64("hi")},
     "invalid text: give exactly one of text, file (base64) or path; got text, file"),
    ("upsert_document", {"name": "d", "collection_name": "taken", "file": "not base64!"},
     "invalid file: file is not valid base64"),
    ("upsert_document", {"name": "d", "collection_name": "taken", "text": "   "},
     "invalid text: the document has no text to index"),
    ("upsert_document", {"name": "d", "collection_name": "nope", "text": CATS}, "no collection named 'nope'"),
    ("upsert_document", {"name": "..", "collection_name": "taken", "text": CATS}, "invalid name: name may not be '..'"),
    ("get_collection", {"collection_name": "nope"},
     "no collection named 'nope'; the create_collection tool makes one, list_collections shows those there are"),
    ("update_collection", {"collection_name": "taken", "name": "ALL"}, "invalid name: 'ALL' is reserved"),
    ("delete_collection", {"collection_name": "nope"}, "no collection named 'nope'"),
    ("get_document", {"document_name": "nope", "collection_name": "taken"},
     "no document named 'nope' in collection 'taken'"),
    ("update_document", {"document_name": "nope", "collection_name": "taken", "metadata": {}},
     "no document named 'nope' in collection 'taken'"),
    ("delete_document", {"document_name": "d", "collection_name": "nope"}, "no collection named 'nope'"),
    ("list_documents", {"query_filter": {"key": "year", "lookup": "has_key", "value": 1}}, "has_key takes no value"),
    ("list_documents", {"collection_name": "nope"}, "no collection named 'nope'"),
    ("list_collections", {"query_filter": {"on": "document", "key": "year", "value": 1}},
     "this call filters on collection metadata"),
]


@pytest.fixture(scope="module")
def bad_answers(live):
    key = live.key("mcp-docs-bad")
    return anyio.run(_calls, live, key, [("create_collection", {"name": "taken"})]
                     + [(tool, arguments) for tool, arguments, _ in BAD])[1:]


@pytest.mark.parametrize("index", range(len(BAD)), ids=[f"{c[0]}:{c[2][:30]}" for c in BAD])
def test_a_refused_argument_is_a_tool_error_naming_it(bad_answers, index):
    _, _, says = BAD[index]
    answer = bad_answers[index]
    assert set(answer) == {"error"}, answer
    assert says in answer["error"] and "\n" not in answer["error"], answer["error"]


def test_refused_writes_leave_the_collections_as_they_were(live, bad_answers):
    memory = live.memory("mcp-docs-bad")
    from memlane.documents import Documents

    assert [c["name"] for c in Documents.for_memory(memory).list_collections()] == ["taken"]
    assert Documents.for_memory(memory).list_documents() == []


OK, WRITE, TENANT_WIDE = "ok", "read-only", "the whole tenant"
KINDS = {"full": {}, "read_only": {"read_only": True}, "alice": {"users": ["alice"]}}
# (tool, arguments) -> what each kind of key gets: full, read_only, alice (REST's rules: server/grants.py)
TRUST = [
    ("create_collection", {"name": "new-{kind}"}, (OK, WRITE, TENANT_WIDE)),
    ("upsert_document", {"name": "note-{kind}", "collection_name": "shared", "text": CATS}, (OK, WRITE, TENANT_WIDE)),
    ("update_document", {"document_name": "base", "collection_name": "shared", "metadata": {"k": "{kind}"}},
     (OK, WRITE, TENANT_WIDE)),
    ("update_collection", {"collection_name": "shared", "metadata": {"k": "{kind}"}}, (OK, WRITE, TENANT_WIDE)),
    ("delete_document", {"document_name": "note-{kind}", "collection_name": "shared"}, (OK, WRITE, TENANT_WIDE)),
    ("delete_collection", {"collection_name": "new-{kind}"}, (OK, WRITE, TENANT_WIDE)),
    ("list_collections", {}, (OK, OK, TENANT_WIDE)),
    ("get_collection", {"collection_name": "shared"}, (OK, OK, TENANT_WIDE)),
    ("list_documents", {}, (OK, OK, TENANT_WIDE)),
    ("get_document", {"document_name": "base", "collection_name": "shared"}, (OK, OK, TENANT_WIDE)),
    ("search_documents", {"query": "cats"}, (OK, OK, TENANT_WIDE)),
]


@pytest.fixture(scope="module")
def trust_answers(live):
    tenant = "mcp-docs-trust"
    keys = {kind: live.app.state.key_store.create(tenant, **options)[0] for kind, options in KINDS.items()}
    with live.client(keys["full"]) as api:
        assert api.post("/collections", json={"name": "shared"}).status_code == 201
        assert api.post("/documents/upsert", json={"name": "base", "collection_name": "shared",
                                                   "text": CATS}).status_code == 200
    answers = {}
    for kind in ("read_only", "alice", "full"):  # the full key last: its deletes would change what the others see
        calls = [(tool, {k: v.replace("{kind}", kind) if isinstance(v, str) else
                         {kk: vv.replace("{kind}", kind) for kk, vv in v.items()} if isinstance(v, dict) else v
                         for k, v in arguments.items()}) for tool, arguments, _ in TRUST]
        answers[kind] = anyio.run(_calls, live, keys[kind], calls)
    return answers, live.memory(tenant)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("index", range(len(TRUST)), ids=[c[0] for c in TRUST])
def test_each_kind_of_key_on_each_document_tool(trust_answers, kind, index):
    tool, _, expected = TRUST[index]
    want = expected[list(KINDS).index(kind)]
    answer = trust_answers[0][kind][index]
    if want == OK:
        assert "error" not in answer, answer
    else:
        assert want in answer["error"], answer


def test_a_refused_key_wrote_nothing(trust_answers):
    from memlane.documents import Documents

    documents = Documents.for_memory(trust_answers[1])
    assert [c["name"] for c in documents.list_collections()] == ["shared"]  # the full key's "new-full" is deleted
    # only the full key's update reached the metadata; the others' were refused
    assert documents.get_collection("shared")["metadata"] == {"k": "full"}
    assert documents.get_document("base", "shared")["metadata"] == {"k": "full"}
    assert [d["name"] for d in documents.list_documents("shared")] == ["base"]
