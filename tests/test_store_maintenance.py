"""Derived data the SQLite store keeps beside the memories: the keyword index (filled by the
store in bulk, not by a trigger) must match every memory's text after any sequence of writes."""

import sqlite3

import numpy as np
import pytest

from memlane import keywords, scope
from memlane.errors import StoreError
from memlane.ids import new_id
from memlane.models import MemoryRecord
from memlane.store import ChangeSet
from memlane.store.base import Delete, Update
from memlane.store.sqlite import SQLiteStore
from memlane.store.sqlite_schema import MIGRATIONS

DIMS = 8


def unit(rng, n=None):
    v = rng.standard_normal((n or 1, DIMS)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v if n else v[0]


def record(rng, text, user="u1", **extra):
    return MemoryRecord(id=new_id(), text=text, hash=text, created_at="2026-01-01T00:00:00+00:00",
                        updated_at="2026-01-01T00:00:00+00:00", user_id=user, vector=unit(rng), **extra)


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "s.db")
    s.bind_embedder("test", DIMS)
    yield s
    s.close()


def assert_keyword_index_matches(store):
    """Every memory has exactly its analyzer terms in the index, and nothing else is indexed."""
    con = store._con
    rows = con.execute(
        "SELECT m.text, m.user_id, m.agent_id, m.run_id, f.terms FROM memories m"
        " LEFT JOIN memories_fts f ON f.rowid = m.rowid").fetchall()
    assert [r[4] for r in rows] == [keywords.index_text(*r[:4]) for r in rows]
    assert con.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == len(rows)
    con.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")


def keyword_hits(store, query, user="u1"):
    where = scope.scoped_filter({"user_id": user}, None)
    return [r.text for r, _, _ in store.keyword_search(query, unit(np.random.default_rng(0)), where, 10)]


def test_batch_inserts_are_indexed_and_a_reused_rowid_gets_the_new_text(store):
    rng = np.random.default_rng(1)
    store.apply(ChangeSet(inserts=[record(rng, f"alpha note {i}") for i in range(50)]))
    newest = store._con.execute("SELECT id FROM memories ORDER BY rowid DESC LIMIT 1").fetchone()[0]
    store.apply(ChangeSet(deletes=[Delete(newest)]))
    # SQLite hands the freed highest rowid to the next insert: the index must describe the new row
    store.apply(ChangeSet(inserts=[record(rng, "bravo walrus sighting"), record(rng, "zulu 火锅 dinner", user="u2")]))
    assert_keyword_index_matches(store)
    assert keyword_hits(store, "walrus") == ["bravo walrus sighting"]
    assert keyword_hits(store, "火锅", user="u2") == ["zulu 火锅 dinner"]
    assert keyword_hits(store, "火锅") == []


def test_updates_deletes_and_failed_batches_keep_the_index_exact(store):
    rng = np.random.default_rng(2)
    records = [record(rng, f"charlie item {i}") for i in range(10)]
    store.apply(ChangeSet(inserts=records))
    store.apply(ChangeSet(updates=[Update(records[3].id, "2026-01-02T00:00:00+00:00", text="delta penguin")]))
    store.delete_matching(scope.scoped_filter({"user_id": "u1"}, {"memory": "charlie item 5"}))
    duplicate = record(rng, "echo never stored")
    duplicate.id = records[0].id
    with pytest.raises(StoreError, match="could not insert"):
        store.apply(ChangeSet(inserts=[record(rng, "foxtrot half batch"), duplicate]))
    assert_keyword_index_matches(store)
    assert keyword_hits(store, "penguin") == ["delta penguin"]
    assert keyword_hits(store, "foxtrot") == []
    store.purge(scope.scoped_filter({"user_id": "u1"}, None))
    assert_keyword_index_matches(store)


def test_a_store_made_with_the_insert_trigger_upgrades_without_double_indexing(tmp_path):
    path = tmp_path / "old.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.create_function("ml_index_terms", 4, keywords.index_text, deterministic=True)
    con.execute("BEGIN")
    for statement in [s for migration in MIGRATIONS[:3] for s in migration]:
        con.execute(statement)
    con.execute("PRAGMA user_version = 3")
    con.execute("INSERT INTO meta(key, value) VALUES ('vector_dtype', 'float32'), ('embedder', 'test'), ('dims', ?)",
                (str(DIMS),))
    con.execute("INSERT INTO memories(id, text, hash, user_id, created_at, updated_at, vector)"
                " VALUES ('old', 'golf course booking', 'h', 'u1', 'x', 'x', ?)",
                (np.ones(DIMS, dtype=np.float32).tobytes(),))
    con.execute("COMMIT")
    con.close()
    store = SQLiteStore(path)
    try:
        store.apply(ChangeSet(inserts=[record(np.random.default_rng(3), "hotel golf weekend")]))
        assert_keyword_index_matches(store)
        assert sorted(keyword_hits(store, "golf")) == ["golf course booking", "hotel golf weekend"]
    finally:
        store.close()
