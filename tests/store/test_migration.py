"""``memlane migrate``: a real SQLite store copied into a real PostgreSQL (tests/support/postgres.py)."""

from __future__ import annotations

import json
import sqlite3

import psycopg
import pytest

from memlane import Documents, Memory, migration
from memlane.core import scope
from memlane.core.errors import EmbedderMismatchError, InvalidInputError, StoreError
from memlane.core.models import NewMemory
from memlane.store import postgres_schema
from memlane.store.sql_project import PROJECT_TABLES
from support.project import check_filled, fill_project, read_project

QUERIES = ("what does she drink", "travel plans", "pets at home", "work schedule")
FACTS = ["Drinks green tea every morning", "Is planning a trip to Lisbon in May", "Has two cats named Miso and Tofu",
         "Works night shifts at the hospital", "Prefers trains to planes", "Is learning to play the cello",
         "Allergic to peanuts", "Her sister lives in Rome", "Runs 10 km on Saturdays", "Reads science fiction"]


GRAPH = ["I live in Paris. I work at Acme and I like jazz.", "I moved to Berlin.", "Actually I like smooth jazz."]
DOCS = {"cats": "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day.",
        "markets": "The stock market fell sharply on Monday as investors sold bank shares.",
        "nets": "Neural networks learn representations from data with gradient descent."}
DOC_QUERIES = ("does a cat purr?", "bank shares", "gradient descent training")
DOC_TABLES = ("doc_collections", "doc_documents", "doc_pages")
SQLITE_TABLES = ("messages", "memories", "history", "applied_keys", "jobs", "memory_tokens", "graph_entities",
                 "graph_relations", *DOC_TABLES, *PROJECT_TABLES)
#: what the source's project holds (``fill_project``), for ``read_project``
PROJECT: dict = {}


def url(path) -> str:
    return f"sqlite:///{path}"  # an absolute path gives sqlite:////abs/path, as SQLAlchemy writes it


@pytest.fixture(scope="module")
def source(tmp_path_factory, embedder):
    """A SQLite store with every kind of row: messages, memories with token vectors in several
    scopes, updates, an invalidation, a deletion, idempotency keys, graph memory (the offline rule
    extractor; relations refined and contradicted) and a document collection (the default local
    token encoder), and a project: settings, webhooks, feedback, exports (support/project.py). Shared by
    the tests of this module: migrating only reads it (test_source_is_opened_read_only)."""
    path = tmp_path_factory.mktemp("migrate") / "source.db"
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(path)}},
              "retrieval": {"store_token_vectors": True}, "enable_graph": True}
    with Memory(config, embedder=embedder) as memory:
        for text in GRAPH:
            memory.add(text, user_id="g1", infer=True)
        for i, fact in enumerate(FACTS):
            memory.add([{"role": "user", "content": fact}], user_id=f"u{i % 3}", infer=False)
        memory.add([{"role": "user", "name": "Ann", "content": "I went hiking in the Alps"},  # a reply's context
                    {"role": "user", "name": "Bo", "content": "Sounds amazing!"}], user_id="c1", infer=False)
        memory.insert([NewMemory(text=f"Imported note {i}", agent_id="helper", metadata={"n": i}) for i in range(25)],
                      idempotency_keys=[f"import:{i}" for i in range(5)])
        ids = [r["id"] for r in memory.get_all(user_id="u0")["results"]]
        memory.update(ids[0], "Drinks black coffee every morning now")
        memory.delete(ids[1])
        memory.store.apply(_invalidation(memory, user_id="u1"))
        memory.background = False  # an async add left queued: migrated with its provisional memory, formed there
        memory.add("I am still waiting to be formed", user_id="q1", async_mode=True)
        with Documents(memory=memory) as documents:
            documents.create_collection("notes", {"team": "ml", "year": 2024})
            documents.create_collection("finance")
            for name, text in DOCS.items():
                collection = "finance" if name == "markets" else "notes"
                documents.upsert_document(name, collection, text=text, metadata={"topic": name})
            documents.upsert_document("cats", "notes", text=DOCS["cats"] + " Kittens play.", metadata={"v": 2})
        PROJECT.update(fill_project(memory, memory.get_all(user_id="u2")["results"][0]["id"], "u2"))
    return path


def sqlite_memory(path, embedder) -> Memory:
    return Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(path)}}, "enable_graph": True},
                  embedder=embedder)


def pg_memory(pg, schema, embedder, **settings) -> Memory:
    return Memory({**pg.config(schema, **settings), "enable_graph": True}, embedder=embedder)


def _invalidation(memory, user_id):
    from memlane.store.base import ChangeSet, Invalidate

    victim = memory.get_all(user_id=user_id)["results"][0]["id"]
    return ChangeSet(invalidations=[Invalidate(id=victim, reason="contradicted")])


def _snapshot(memory: Memory, history_ids: list[str]) -> dict:
    """Everything a user can read back from a store (``history_ids``: deleted memories' too)."""
    every = {"user_id": "*"}
    items = sorted(memory.get_all(filters=every, limit=1000)["results"] +
                   memory.get_all(agent_id="helper", limit=1000)["results"], key=lambda r: r["id"])
    ids = [r["id"] for r in items]
    return {
        "items": items,
        "history": {i: [(e.event, e.old_memory, e.new_memory, e.created_at) for e in memory.store.history(i)]
                    for i in history_ids},
        "messages": [m.to_dict() for m in memory.store.messages(_wide(), 1000)],
        "search": {q: [(r["id"], round(r["score"], 5)) for r in memory.search(q, filters=every, limit=5)["results"]]
                   for q in QUERIES},
        "scoped": {q: [r["id"] for r in memory.search(q, user_id="u0", limit=3)["results"]] for q in QUERIES},
        "keyword": [r["id"] for r in memory.search("tea cats", filters=every, keyword_search=True)["results"]],
        # the reply is a keyword hit for a word only its context holds
        "context_keyword": sorted(r.text for r, _, _ in memory.store.keyword_search(
            "Alps", memory.embeddings.query("Alps"), scope.scoped_filter({"user_id": "c1"}, None), 5)),
        "tokens": {i: v.shape for i, v in memory.store.token_vectors(ids).items()},
        "keys": sorted(memory.store.known_keys([f"import:{i}" for i in range(10)])),
        "relations": memory.get_all(user_id="g1", include_invalid=True)["relations"],
        "graph_search": memory.search("where does the user live", user_id="g1")["relations"],
        "project": read_project(memory, PROJECT),
        **_documents(memory),
    }


def _documents(memory: Memory) -> dict:
    with Documents(memory=memory) as documents:
        return {
            "collections": documents.list_collections(),
            "documents": documents.list_documents(expand_pages=True),
            "doc_search": {q: documents.search(q, top_k=3)["results"] for q in DOC_QUERIES},
            "doc_exact": {q: documents.search(q, top_k=2, collection_name="notes", exact=True)["results"]
                          for q in DOC_QUERIES},
            "doc_filtered": documents.search("cat", top_k=5,
                                             query_filter={"on": "document", "key": "topic", "value": "markets"}),
        }

def _wide():
    from memlane.core.filters import MATCH_ALL

    return MATCH_ALL


def _history_ids(path) -> list[str]:
    con = sqlite3.connect(path)
    try:
        return [r[0] for r in con.execute("SELECT DISTINCT memory_id FROM history ORDER BY memory_id")]
    finally:
        con.close()


def _sqlite_counts(path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in SQLITE_TABLES}
    finally:
        con.close()


def test_migrate_copies_everything_and_reads_back_the_same(source, pg, embedder, cli):
    schema = pg.fresh_schema()
    with sqlite_memory(source, embedder) as m:
        before = _snapshot(m, _history_ids(source))
    result = cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, "--index-memory", "256MB",
                 "--json")
    report = json.loads(result.stdout)
    counts = _sqlite_counts(source)
    assert report["counts"] == {t: [n, n] for t, n in counts.items()}
    assert counts["memory_tokens"] > 30 and counts["history"] > counts["memories"] > 30 and counts["applied_keys"] == 5
    assert counts["graph_relations"] >= 5 and counts["graph_entities"] >= 5 and counts["doc_pages"] == 3
    # the queued async add's two jobs: its formation and the embedding of its provisional memory
    assert report["index"] == "built after the load" and report["resumed"] is False and counts["jobs"] == 2
    assert (counts["project_settings"], counts["webhooks"], counts["feedback"], counts["exports"]) == (4, 2, 2, 2)
    assert report["source_tenant"] == "default"
    with psycopg.connect(pg.url, autocommit=True) as con:  # the pages arrive with their keyword index
        con.execute(f'SET search_path TO "{schema}", public')
        assert con.execute("SELECT count(*) FROM memlane_doc_pages WHERE nterms > 0 AND terms IS NOT NULL"
                           ).fetchone()[0] == 3
    with pg_memory(pg, schema, embedder) as target:
        after = _snapshot(target, _history_ids(source))
        [queued] = target.events()
        assert queued["status"] == "PENDING"
        assert [m.get("provisional") for m in target.get_all(user_id="q1")["results"]] == [True]
    for key in before:
        assert after[key] == before[key], key
    assert [r["context"] for r in after["items"] if r.get("context")] == ["I went hiking in the Alps"]
    check_filled(after["project"])  # settings, webhooks with their secrets, feedback and exports came along
    assert after["context_keyword"] == ["I went hiking in the Alps", "Sounds amazing!"]
    invalid = {(r["destination"], r["invalid_reason"]) for r in after["relations"] if r.get("valid_to")}
    assert invalid == {("Paris", "contradicted"), ("jazz", "refined")}
    assert after["doc_search"]["does a cat purr?"][0]["document_name"] == "cats"
    assert [r["document_name"] for r in after["doc_filtered"]["results"]] == ["markets"]
    source_rows = _raw_rows(source, None, None)
    assert all(row[-2] and row[-1] for row in source_rows["doc_pages"])  # the pages' encodings are copied too
    assert _raw_rows(source, pg, schema) == source_rows  # vectors and blobs byte for byte
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        assert con.execute("SELECT to_regclass(%s) IS NOT NULL", (postgres_schema.index_name(384),)).fetchone()[0]
    again = json.loads(cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, "--json").stdout)
    assert again["resumed"] is True and set(again["copied"].values()) == {0}
    assert again["counts"] == report["counts"]


def test_an_interrupted_migration_resumes_without_duplicates(source, pg, embedder):
    schema = pg.fresh_schema()
    calls = []

    def crash(table, done, total):
        calls.append((table, done))
        if table == "memories" and done >= 10:  # after two committed batches of memories
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migration.migrate(url(source), pg.url, schema_name=schema, batch_size=5, progress=crash)
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        partial = con.execute("SELECT count(*) FROM memlane_memories").fetchone()[0]
        assert partial == 10
    seen = []
    report = migration.migrate(url(source), pg.url, schema_name=schema, batch_size=5,
                               progress=lambda table, done, total: seen.append((table, done, total)))
    counts = _sqlite_counts(source)
    assert report.resumed and report.counts == {t: (n, n) for t, n in counts.items()}
    assert report.copied["memories"] == counts["memories"] - 10 and report.copied["messages"] == 0
    assert ("memories", 10, counts["memories"]) in seen  # progress starts where the first run stopped
    with sqlite_memory(source, embedder) as m:
        before = _snapshot(m, _history_ids(source))
    with pg_memory(pg, schema, embedder) as target:
        after = _snapshot(target, _history_ids(source))
    assert after == before


def test_target_with_another_embedder_or_foreign_data_is_refused(source, pg, embedder):
    schema = pg.fresh_schema()
    from memlane.store.postgres import PostgresDatabase, PostgresStore

    store = PostgresStore(PostgresDatabase(pg.url, schema_name=schema), "other-model", owns_database=True)
    store.bind_embedder("some-other-model", 768)
    store.close()
    with pytest.raises(EmbedderMismatchError, match="some-other-model"):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="other-model")
    with Memory(pg.config(schema, tenant="busy"), embedder=embedder) as busy:
        busy.add("already here", user_id="u", infer=False)
    with pytest.raises(StoreError, match="already holds"):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="busy")
    with Memory(pg.config(schema, tenant="busy"), embedder=embedder) as busy:
        assert [r["memory"] for r in busy.get_all(user_id="u")["results"]] == ["already here"]


def test_the_index_is_built_after_the_first_load_and_kept_for_the_next(source, pg):
    schema = pg.fresh_schema()
    first = migration.migrate(url(source), pg.url, schema_name=schema, tenant="one")
    second = migration.migrate(url(source), pg.url, schema_name=schema, tenant="two")
    assert first.index == "built after the load" and second.index == "kept (rows inserted into it)"
    assert first.counts == second.counts


@pytest.mark.parametrize("source_url, target_url, message", [
    ("mysql://x/y.db", "postgresql://u@h/db", "expected a sqlite:///path/to/file.db URL"),
    ("sqlite:///{tmp}/missing.db", "postgresql://u@h/db", "the file does not exist"),
    ("sqlite:///{tmp}/notes.txt", "postgresql://u@h/db", "is not a SQLite database"),
    ("sqlite:///{tmp}/other.db", "postgresql://u@h/db", "is not a memlane store"),
    ("sqlite:///{source}", "mysql://u@h/db", "--to: expected a postgresql://"),
    ("sqlite:///{source}", "postgresql://nobody:secret@127.0.0.1:1/none?connect_timeout=1",
     "cannot connect to PostgreSQL at postgresql://nobody@127.0.0.1:1/none"),
])
def test_bad_source_or_target_is_a_clear_error(source, tmp_path, cli, source_url, target_url, message):
    (tmp_path / "notes.txt").write_text("not a database, " * 400)
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE t (x)").connection.close()
    args = [a.format(tmp=tmp_path, source=source) for a in (source_url, target_url)]
    result = cli("migrate", "--from", args[0], "--to", args[1], ok=False)
    assert result.exit_code == 1
    output = " ".join(result.output.split())  # the console wraps long lines
    assert message in output and "secret" not in output and "Traceback" not in output


def test_source_is_opened_read_only(source, pg):
    before = source.read_bytes()
    migration.migrate(url(source), pg.url, schema_name=pg.fresh_schema())
    assert source.read_bytes() == before


def test_source_path_forms(source):
    assert migration.sqlite_source(url(source)) == source
    assert migration.sqlite_source(str(source)) == source  # a plain path
    with pytest.raises(InvalidInputError, match="does not exist"):
        migration.sqlite_source("sqlite:///relative/missing.db")
    assert migration.postgres_target("postgres://h/db") == "postgres://h/db"


@pytest.mark.parametrize("size", ["4 GB", "1TB", "0MB", "1GB'; SELECT 1; --", ""])
def test_a_bad_index_memory_is_refused_before_anything_is_copied(source, pg, cli, size):
    schema = pg.fresh_schema()
    result = cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, "--index-memory", size, ok=False)
    assert result.exit_code == 1
    assert "--index-memory must be a size such as 512MB or 4GB" in " ".join(result.output.split())
    with psycopg.connect(pg.url, autocommit=True) as con:
        assert not con.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)).fetchone()


def test_a_count_mismatch_fails_the_run_and_names_the_table(source, pg, embedder, cli):
    schema = pg.fresh_schema()
    cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema)
    with Memory(pg.config(schema), embedder=embedder) as target:  # someone writes into the tenant meanwhile
        target.add("written by a server during the migration", user_id="u0", infer=False)
    result = cli("migrate", "--from", url(source), "--to", pg.url, "--schema", schema, ok=False)
    output = " ".join(result.output.split())
    counts = _sqlite_counts(source)
    assert result.exit_code == 1
    assert f"memories: {counts['memories']} in the source, {counts['memories'] + 1} in the target" in output
    assert f"messages: {counts['messages']} in the source, {counts['messages'] + 1} in the target" in output


_RAW = {
    "graph_entities": "SELECT id, name, key, user_id, agent_id, run_id, created_at, updated_at, vector"
                      " FROM {p}graph_entities",
    "graph_relations": "SELECT id, source_id, relationship, destination_id, user_id, agent_id, run_id, created_at,"
                       " updated_at, valid_from, valid_to, invalid_reason, superseded_by, source_message_ids, vector"
                       " FROM {p}graph_relations",
    "doc_collections": "SELECT id, name, metadata, created_at, updated_at, encoder FROM {p}doc_collections",
    "doc_documents": "SELECT id, collection_id, name, metadata, source, created_at, updated_at FROM {p}doc_documents",
    "doc_pages": "SELECT id, document_id, page_number, text, image, encoder, dims, n_tokens, vectors, fde, fde_config"
                 " FROM {p}doc_pages",
    # the settings' values are compared as read (read_project): SQLite keeps them as JSON text
    "project_settings": "SELECT key, updated_at FROM {p}project_settings",
    "webhooks": "SELECT id, name, url, event_types, secret, is_active, created_at, updated_at FROM {p}webhooks",
    "feedback": "SELECT id, memory_id, feedback, reason, created_at, user_id, agent_id, run_id FROM {p}feedback",
    "exports": "SELECT id, schema, filters, instructions, status, method, result, error, created_at FROM {p}exports",
}


def _raw_rows(path, pg, schema, tenant="default") -> dict:
    """The graph and document rows as stored (JSON decoded, blobs as bytes), from the SQLite file or
    (``pg`` given) from the target tenant."""
    def norm(row):
        return tuple(json.loads(v) if isinstance(v, str) and v[:1] in "[{" else
                     bytes(v) if isinstance(v, (bytes, memoryview)) else v for v in row)

    if pg is None:
        con = sqlite3.connect(path)
        try:
            return {t: sorted(map(norm, con.execute(sql.format(p="") + (" WHERE tenant = 'default'" if t in DOC_TABLES
                                                                         else "")))) for t, sql in _RAW.items()}
        finally:
            con.close()
    with psycopg.connect(pg.url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        return {t: sorted(map(norm, con.execute(sql.format(p="memlane_") + " WHERE tenant = %s", (tenant,))))
                for t, sql in _RAW.items()}


@pytest.mark.parametrize("stop_in", ["graph_relations", "doc_documents", "doc_pages", "project_settings", "exports"])
def test_a_migration_interrupted_in_graph_documents_or_project_resumes_exactly(source, pg, embedder, stop_in):
    schema = pg.fresh_schema()

    def crash(table, done, total):
        if table == stop_in and done >= 1:  # after the first committed batch of that table
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="t", batch_size=1, progress=crash)
    partial = _raw_rows(source, pg, schema, tenant="t")
    assert len(partial[stop_in]) == 1
    report = migration.migrate(url(source), pg.url, schema_name=schema, tenant="t", batch_size=2)
    counts = _sqlite_counts(source)
    assert report.resumed and report.counts == {t: (n, n) for t, n in counts.items()}
    assert report.copied[stop_in] == counts[stop_in] - 1 and report.copied["memories"] == 0
    assert _raw_rows(source, pg, schema, tenant="t") == _raw_rows(source, None, None)
    with sqlite_memory(source, embedder) as m:
        before = _snapshot(m, _history_ids(source))
    with pg_memory(pg, schema, embedder, tenant="t") as target:
        after = _snapshot(target, _history_ids(source))
    for hook in before["project"]["webhooks"]:
        hook["project"] = "t"  # a webhook's project is the tenant it is in
    assert after == before


def test_a_tenant_holding_only_documents_is_refused(source, pg, embedder):
    schema = pg.fresh_schema()
    with Memory({**pg.config(schema, tenant="docs")}, embedder=embedder) as m, Documents(memory=m) as documents:
        documents.create_collection("mine")
    with pytest.raises(StoreError, match="already holds"):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="docs")
    with Memory({**pg.config(schema, tenant="docs")}, embedder=embedder) as m, Documents(memory=m) as documents:
        assert [c["name"] for c in documents.list_collections()] == ["mine"]


def test_a_tenant_holding_only_project_settings_is_refused(source, pg, embedder):
    schema = pg.fresh_schema()
    with Memory(pg.config(schema, tenant="configured"), embedder=embedder) as m:
        m.update_project(custom_instructions="ours")
    with pytest.raises(StoreError, match="project settings, webhooks, feedback or exports"):
        migration.migrate(url(source), pg.url, schema_name=schema, tenant="configured")
    with Memory(pg.config(schema, tenant="configured"), embedder=embedder) as m:
        assert m.get_project(["custom_instructions"]) == {"custom_instructions": "ours"}


def test_documents_of_several_source_tenants_need_a_choice(source, tmp_path, pg, embedder):
    copy = tmp_path / "two-tenants.db"
    copy.write_bytes(source.read_bytes())
    with sqlite_memory(copy, embedder) as m, Documents(memory=m, tenant="acme") as documents:
        documents.create_collection("acme-only")
        documents.upsert_document("plan", "acme-only", text="Acme plans to open an office in Oslo.")
    with pytest.raises(InvalidInputError, match="several tenants \\('acme', 'default'\\)"):
        migration.migrate(url(copy), pg.url, schema_name=pg.fresh_schema())
    with pytest.raises(InvalidInputError, match="not 'nobody'"):
        migration.migrate(url(copy), pg.url, schema_name=pg.fresh_schema(), source_tenant="nobody")
    schema = pg.fresh_schema()
    report = migration.migrate(url(copy), pg.url, schema_name=schema, source_tenant="acme", tenant="acme")
    assert report.source_tenant == "acme"
    assert {t: report.counts[t] for t in DOC_TABLES} == {"doc_collections": (1, 1), "doc_documents": (1, 1),
                                                         "doc_pages": (1, 1)}
    with pg_memory(pg, schema, embedder, tenant="acme") as m, Documents(memory=m) as documents:
        assert [c["name"] for c in documents.list_collections()] == ["acme-only"]
        assert documents.search("office in Oslo", top_k=1)["results"][0]["document_name"] == "plan"
    with pytest.raises(InvalidInputError, match="earlier run copied the documents of source tenant 'acme'"):
        migration.migrate(url(copy), pg.url, schema_name=schema, source_tenant="default", tenant="acme")
    with pg_memory(pg, schema, embedder, tenant="acme") as m, Documents(memory=m) as documents:
        assert [c["name"] for c in documents.list_collections()] == ["acme-only"]


def test_pages_of_a_source_from_before_stored_encodings_are_copied_and_encoded_at_load(source, tmp_path, pg,
                                                                                       embedder):
    """A source file at the schema version before the pages' fast-path encodings (its doc_pages has no
    such columns): the pages are copied with NULL encodings, which the first search computes and stores."""
    from memlane.store import sqlite_schema

    old = tmp_path / "old.db"
    old.write_bytes(source.read_bytes())
    before = next(n for n, statements in enumerate(sqlite_schema.MIGRATIONS)
                  if any("ADD COLUMN fde" in s for s in statements))
    con = sqlite3.connect(old, isolation_level=None)
    con.execute("ALTER TABLE doc_pages DROP COLUMN fde")
    con.execute("ALTER TABLE doc_pages DROP COLUMN fde_config")
    con.execute(f"PRAGMA user_version = {before}")
    con.close()
    schema = pg.fresh_schema()
    report = migration.migrate(url(old), pg.url, schema_name=schema)
    assert report.counts["doc_pages"] == (3, 3)
    assert {row[-2:] for row in _raw_rows(old, pg, schema)["doc_pages"]} == {(None, None)}
    with pg_memory(pg, schema, embedder) as m, Documents(memory=m) as documents:
        assert documents.search("does a cat purr?", top_k=1)["results"][0]["document_name"] == "cats"
    assert all(row[-2] and row[-1] for row in _raw_rows(old, pg, schema)["doc_pages"])


def test_an_emptied_collection_keeps_its_recorded_encoder_and_an_older_source_gives_none(tmp_path, pg, embedder):
    """A collection whose pages were all deleted keeps the encoder its first (English) pages chose: the
    copy carries it, so its next pages are encoded as its earlier ones were. A source from before
    collections recorded their encoder (no such column) gives NULL: its pages' encoder stands for it."""
    from memlane.store import sqlite_schema

    path = tmp_path / "emptied.db"
    with sqlite_memory(path, embedder) as m, Documents(memory=m) as documents:
        documents.create_collection("emptied")
        documents.upsert_document("tides", "emptied", text="The moon's gravity pulls the oceans and makes tides.")
        documents.create_collection("kept")
        documents.upsert_document("bread", "kept", text="Knead the dough for ten minutes before baking the loaf.")
        documents.delete_document("tides", "emptied")
        recorded = {c["name"]: (c["num_documents"], c["encoder"]) for c in documents.list_collections()}
    assert recorded["emptied"][0] == 0 and recorded["emptied"][1].startswith("local/all-MiniLM-L6-v2")
    schema = pg.fresh_schema()
    migration.migrate(url(path), pg.url, schema_name=schema)
    with pg_memory(pg, schema, embedder) as m, Documents(memory=m) as documents:
        assert {c["name"]: (c["num_documents"], c["encoder"]) for c in documents.list_collections()} == recorded
        documents.upsert_document("潮汐", "emptied", text="月球的引力牵引着海水，使海面每天涨落两次。")  # not English
        assert documents.get_collection("emptied")["encoder"] == recorded["emptied"][1]

    con = sqlite3.connect(path, isolation_level=None)  # the same store at the schema before the column
    con.execute("ALTER TABLE doc_collections DROP COLUMN encoder")
    before = next(n for n, statements in enumerate(sqlite_schema.MIGRATIONS)
                  if any("ADD COLUMN encoder" in s for s in statements))
    con.execute(f"PRAGMA user_version = {before}")
    con.close()
    schema = pg.fresh_schema()
    migration.migrate(url(path), pg.url, schema_name=schema)
    assert {row[1]: row[-1] for row in _raw_rows(path, pg, schema)["doc_collections"]} == {"emptied": None,
                                                                                            "kept": None}
    with pg_memory(pg, schema, embedder) as m, Documents(memory=m) as documents:
        assert {c["name"]: (c["num_documents"], c["encoder"]) for c in documents.list_collections()} == {
            "emptied": (0, None), "kept": recorded["kept"]}
