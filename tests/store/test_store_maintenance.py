"""Derived data the SQLite store keeps beside the memories: the keyword index (filled by the
store in bulk, not by a trigger) must match every memory's text after any sequence of writes."""

import sqlite3

import numpy as np
import pytest

from memlane.text import keywords
from memlane.core import scope
from memlane.core.errors import StoreError
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord
from memlane.store import ChangeSet
from memlane.core.filters import Compare, Field, conjoin
from memlane.store.base import Delete, Invalidate, Update
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
    """Every memory has exactly its analyzer terms (its text's, its context's, its speaker's) in the index, and
    nothing else is indexed; its BM25 length (``nterms``) is the number of those terms."""
    con = store._con
    rows = con.execute(
        "SELECT m.text, m.user_id, m.agent_id, m.run_id, m.context, m.actor_id, f.terms, m.nterms FROM memories m"
        " LEFT JOIN memories_fts f ON f.rowid = m.rowid").fetchall()
    assert [r[6] for r in rows] == [keywords.index_text(*r[:6]) for r in rows]
    assert [r[7] for r in rows] == [len(keywords.memory_terms(r[0], r[4], r[5])) for r in rows]
    assert con.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == len(rows)
    con.execute("INSERT INTO memories_fts(memories_fts) VALUES ('integrity-check')")


def keyword_hits(store, query, user="u1"):
    where = scope.scoped_filter({"user_id": user}, None)
    return [r.text for r, _, _ in store.keyword_search(query, unit(np.random.default_rng(0)), where, 10)]


def matched_texts(memory, embedder, query, limit=10, user="u1"):
    """The texts a ``Memory``'s store matches by keyword in ``user``'s scope, best first (the query embedded
    by the memory's model, as a search does)."""
    where = scope.scoped_filter({"user_id": user}, None)
    return [r.text for r, _, _ in memory.store.keyword_search(query, embedder.embed([query], "query")[0], where, limit)]


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


def test_a_store_made_before_memory_lengths_gets_them_and_scores_like_a_new_one(tmp_path):
    """The migration adding ``memories.nterms`` (BM25's document length) fills it for existing rows."""
    before = next(i for i, migration in enumerate(MIGRATIONS) if any("nterms" in s for s in migration))
    texts = ["golf course booking for the golf club", "我喜欢吃四川火锅", "golf", "Tea: green tea, black tea"]
    path = tmp_path / "old.db"
    con = sqlite3.connect(path, isolation_level=None)
    con.create_function("ml_index_terms", 4, keywords.index_text, deterministic=True)
    con.execute("BEGIN")
    for statement in [s for migration in MIGRATIONS[:before] for s in migration]:
        con.execute(statement)
    con.execute(f"PRAGMA user_version = {before}")
    con.execute("INSERT INTO meta(key, value) VALUES ('vector_dtype', 'float32'), ('embedder', 'test'), ('dims', ?)",
                (str(DIMS),))
    rng = np.random.default_rng(5)
    records = [record(rng, text) for text in texts]
    con.executemany("INSERT INTO memories(rowid, id, text, hash, user_id, created_at, updated_at, vector)"
                    " VALUES (?, ?, ?, 'h', 'u1', 'x', 'x', ?)",
                    [(n, r.id, r.text, r.vector.tobytes()) for n, r in enumerate(records, 1)])
    con.executemany("INSERT INTO memories_fts(rowid, terms) VALUES (?, ml_index_terms(?, 'u1', NULL, NULL))",
                    [(n, r.text) for n, r in enumerate(records, 1)])
    con.execute("COMMIT")
    con.close()
    old, new = SQLiteStore(path), SQLiteStore(tmp_path / "new.db")
    try:
        new.bind_embedder("test", DIMS)
        new.apply(ChangeSet(inserts=records))
        assert_keyword_index_matches(old)
        for query in ("golf", "火锅", "green tea"):
            scored = [[(r.id, bm) for r, bm, _ in s.keyword_search(query, records[0].vector,
                                                                  scope.scoped_filter({"user_id": "u1"}, None), 10)]
                      for s in (old, new)]
            assert scored[0] and scored[0] == scored[1]
    finally:
        old.close()
        new.close()


# -- cached keyword statistics (store/sqlite_keyword_stats.py) ------------------------------

def keyword_scores(store, query, user="u1"):
    where = scope.scoped_filter({"user_id": user}, None)
    return [(r.id, bm) for r, bm, _ in store.keyword_search(query, unit(np.random.default_rng(0)), where, 10)]


def test_keyword_statistics_are_reused_until_any_connection_writes(tmp_path):
    rng = np.random.default_rng(6)
    a, b = SQLiteStore(tmp_path / "s.db"), SQLiteStore(tmp_path / "s.db")  # b stands for another process
    try:
        a.bind_embedder("test", DIMS)
        records = [record(rng, text) for text in ("kiwi jam", "kiwi and lime jam on toast", "lime soda")]
        a.apply(ChangeSet(inserts=records))
        first = keyword_scores(a, "kiwi jam")
        assert keyword_scores(a, "kiwi jam") == first and a._keyword_stats.computed == 1
        steps = [  # each write changes N or the lengths of u1's memories, from either connection
            (b, ChangeSet(updates=[Update(records[2].id, "2026-01-02T00:00:00+00:00",
                                          text="lime soda with ice and mint and sugar")])),
            (b, ChangeSet(inserts=[record(rng, "plain water")])),
            (a, ChangeSet(deletes=[Delete(records[2].id)])),
        ]
        seen = [first]
        for writer, changes in steps:
            writer.apply(changes)
            fresh = SQLiteStore(tmp_path / "s.db")  # no cache: the figures as they are now
            try:
                assert keyword_scores(a, "kiwi jam") == keyword_scores(fresh, "kiwi jam")
            finally:
                fresh.close()
            seen.append(keyword_scores(a, "kiwi jam"))
        assert all(x != y for x, y in zip(seen, seen[1:]))  # every step moved the scores
    finally:
        a.close()
        b.close()


def test_invalidating_a_memory_refreshes_the_statistics(store):
    rng = np.random.default_rng(7)
    records = [record(rng, "kiwi jam")] + [record(rng, f"lime soda number {i}") for i in range(7)]
    store.apply(ChangeSet(inserts=records))
    where = conjoin(scope.scoped_filter({"user_id": "u1"}, None), Compare(Field(column="valid_to"), "eq", None))
    before = store.keyword_search("kiwi", records[0].vector, where, 10)
    store.apply(ChangeSet(invalidations=[Invalidate(records[3].id, reason="test")]))
    after = store.keyword_search("kiwi", records[0].vector, where, 10)
    assert [r.id for r, _, _ in after] == [r.id for r, _, _ in before] == [records[0].id]
    assert after[0][1] < before[0][1]  # N fell from 8 to 7: "kiwi" is less rare


ACTIVE = Compare(Field(column="valid_to"), "eq", None)
COVERING_CASES = [  # (filter of a search, counted from the memories_lengths index); "big" owns 40 of 60 rows
    (conjoin(scope.scoped_filter({}, {"user_id": "*"}), ACTIVE), True),  # no scope narrows it
    (scope.scoped_filter({}, {"agent_id": "*"}), True),
    (conjoin(scope.scoped_filter({"user_id": "big"}, None), ACTIVE), True),  # a large share of the rows
    (conjoin(scope.scoped_filter({"agent_id": "a"}, None), ACTIVE), True),
    (conjoin(scope.scoped_filter({"user_id": "s1"}, None), ACTIVE), False),  # 1 row: its scope index is better
    (conjoin(scope.scoped_filter({"user_id": "big"}, {"kind": "a"}), ACTIVE), False),  # metadata: not in the index
    (conjoin(scope.scoped_filter({}, {"user_id": "*", "kind": "a"}), ACTIVE), False),
]


@pytest.mark.parametrize("where, covering", COVERING_CASES)
def test_large_scopes_count_statistics_from_the_lengths_index_and_agree(store, where, covering):
    rng = np.random.default_rng(8)
    store.apply(ChangeSet(inserts=[
        record(rng, f"kiwi {'jam ' * (i % 4)}", user="big" if i < 40 else f"s{i - 40}", metadata={"kind": "ab"[i % 2]},
               agent_id="a" if i % 3 == 0 else None) for i in range(60)]))
    first = store.list(scope.scoped_filter({"user_id": "big"}, None), 1)[0].id
    store.apply(ChangeSet(invalidations=[Invalidate(first, reason="test")]))
    from memlane.store.sqlite import _COMPILER

    con = store._con
    assert store._lengths_index_pays(con, where) == covering
    sql, params = _COMPILER.compile(where)
    plain = con.execute(f"SELECT count(*), avg(m.nterms) FROM memories m NOT INDEXED WHERE {sql}", params).fetchone()
    assert plain[0] > 0
    assert store._keyword_stats.get(con, sql, params, covering=lambda: covering) == plain
    if covering:
        plan = con.execute(f"EXPLAIN QUERY PLAN SELECT count(*) FROM memories m INDEXED BY memories_lengths WHERE {sql}",
                           params).fetchall()
        assert "COVERING INDEX memories_lengths" in str(plan)


# -- the in-memory matrix of unscoped searches ----------------------------------------------

EVERYONE = scope.scoped_filter({}, {"user_id": "*"})


def wide(store, query, limit=5, where=EVERYONE):
    return [(r.id, score) for r, score in store.search(query, where, limit, None)]


def assert_exact(store, query, limit=5):
    """The wide search finds what scoring every stored vector now finds."""
    rows = store._con.execute("SELECT id, vector FROM memories").fetchall()
    scored = sorted(((float(np.frombuffer(v, dtype="<f4") @ query), i) for i, v in rows), reverse=True)[:limit]
    found = wide(store, query, limit)
    assert [i for i, _ in found] == [i for _, i in scored]
    assert np.allclose([s for _, s in found], [s for s, _ in scored], atol=1e-5)


@pytest.fixture
def filled(store):
    rng = np.random.default_rng(4)
    store.apply(ChangeSet(inserts=[record(rng, f"memory {i}", user=f"u{i % 7}") for i in range(300)]))
    wide(store, unit(rng))  # reads the matrix
    assert store._matrix.rebuilds == 1
    return store


def test_inserts_updates_and_deletes_reach_the_matrix_without_a_full_read(filled):
    store, rng = filled, np.random.default_rng(5)
    fresh = record(rng, "just added")
    store.apply(ChangeSet(inserts=[fresh]))
    assert [i for i, _ in wide(store, fresh.vector, 1)] == [fresh.id]

    target = store.list(scope.scoped_filter({"user_id": "u3"}, None), 1)[0]
    old_vector, new_vector = store._con.execute("SELECT vector FROM memories WHERE id = ?", (target.id,)).fetchone()[0], unit(rng)
    store.apply(ChangeSet(updates=[Update(target.id, "2026-01-02T00:00:00+00:00", text="moved", vector=new_vector)]))
    assert [i for i, _ in wide(store, new_vector, 1)] == [target.id]
    assert target.id not in dict(wide(store, np.frombuffer(old_vector, dtype="<f4"), 3))

    store.apply(ChangeSet(deletes=[Delete(fresh.id)]))
    assert fresh.id not in dict(wide(store, fresh.vector, 300))
    late = record(rng, "after the delete")  # takes no rowid a row had before
    store.apply(ChangeSet(inserts=[late]))
    assert [i for i, _ in wide(store, late.vector, 1)] == [late.id]
    for query in unit(rng, 20):
        assert_exact(store, query)
    assert store._matrix.rebuilds == 1


def test_a_text_or_validity_change_alone_is_not_logged(filled):
    store = filled
    target = store.list(EVERYONE, 1)[0]
    before = store._con.execute("SELECT count(*) FROM memory_changes").fetchone()[0]
    store.apply(ChangeSet(updates=[Update(target.id, "2026-01-02T00:00:00+00:00", text="new words only")]))
    assert store._con.execute("SELECT count(*) FROM memory_changes").fetchone()[0] == before


def test_writes_through_another_connection_are_seen(filled, tmp_path):
    store, rng = filled, np.random.default_rng(6)
    other = SQLiteStore(tmp_path / "s.db")  # separate connections: what another process does
    try:
        ids = [r.id for r in other.list(EVERYONE, 300)]
        added = [record(rng, f"from elsewhere {i}") for i in range(40)]
        other.apply(ChangeSet(inserts=added, deletes=[Delete(i) for i in ids[:30]],
                              updates=[Update(i, "2026-01-03T00:00:00+00:00", vector=unit(rng)) for i in ids[30:60]]))
        for query in [*unit(rng, 20), added[0].vector]:
            assert_exact(store, query)
        assert [i for i, _ in wide(store, added[0].vector, 1)] == [added[0].id]
        assert store._matrix.rebuilds == 1
        # the filter is still applied to candidates from the matrix
        only_u2 = scope.scoped_filter({}, {"user_id": "u2"})
        assert {r.user_id for r, _ in store.search(added[0].vector, only_u2, 10, None)} == {"u2"}
    finally:
        other.close()


def test_a_matrix_behind_the_pruned_log_reads_everything_again(filled, tmp_path, monkeypatch):
    import memlane.store.sqlite as sqlite_module

    store, rng = filled, np.random.default_rng(7)
    monkeypatch.setattr(sqlite_module, "CHANGE_LOG_KEEP", 5)
    ids = [r.id for r in store.list(EVERYONE, 300)]
    for i in ids[:12]:  # one transaction each: the log keeps only the last 5 entries
        store.apply(ChangeSet(deletes=[Delete(i)]))
    assert store._con.execute("SELECT count(*) FROM memory_changes").fetchone()[0] <= 6
    for query in unit(rng, 10):
        assert_exact(store, query)
    assert store._matrix.rebuilds == 2
    assert not set(ids[:12]) & {i for i, _ in wide(store, unit(rng), 300)}


def test_random_writes_and_wide_searches_agree_with_an_exact_scan(filled, tmp_path):
    """Many small steps by two stores on one file (inserts, vector updates, deletes, purges),
    each followed by a wide search from the first store, compared with scoring every row."""
    store, rng = filled, np.random.default_rng(8)
    other = SQLiteStore(tmp_path / "s.db")
    try:
        for step in range(60):
            writer = store if step % 3 else other
            ids = [r[0] for r in writer._con.execute("SELECT id FROM memories").fetchall()]
            kind = rng.integers(0, 4)
            if kind == 0 or len(ids) < 20:
                writer.apply(ChangeSet(inserts=[record(rng, f"step {step}", user=f"u{step % 7}")
                                                for _ in range(rng.integers(1, 30))]))
            elif kind == 1:
                chosen = rng.choice(ids, size=5, replace=False)
                writer.apply(ChangeSet(updates=[Update(str(i), "2026-01-04T00:00:00+00:00", vector=unit(rng))
                                                for i in chosen]))
            elif kind == 2:
                writer.apply(ChangeSet(deletes=[Delete(str(i)) for i in rng.choice(ids, size=8, replace=False)]))
            else:
                writer.purge(scope.scoped_filter({"user_id": f"u{step % 7}"}, None))
            query = unit(rng)
            assert_exact(store, query)
        assert store._matrix.rebuilds < 10  # most steps caught up from the log
    finally:
        other.close()


# -- a change of the keyword analyzer (text/keywords.py VERSION) re-indexes a store when it opens -------------


def test_a_store_indexed_by_the_previous_analyzer_is_indexed_again_when_it_opens(backend, e5_embedder):
    """Memories and document pages whose text is not plain ASCII get the current analyzer's terms (Chinese
    words instead of characters and pairs); plain ASCII ones were analysed alike and are left as they are."""
    from memlane import Documents, Memory

    texts = ["我喜欢吃四川火锅", "Café au lait every morning", "golf course booking"]
    config = backend()
    with Memory(config, embedder=e5_embedder) as m:
        m.add(texts, user_id="u1", infer=False)
        documents = Documents(memory=m)
        documents.create_collection("c")
        documents.upsert_document("d", "c", text="青霉素是一种抗生素")
        _pretend_old_analyzer(m.store, backend.name)
        assert not matched_texts(m, e5_embedder, "火锅", 5)
    with Memory(config, embedder=e5_embedder) as m:  # opening migrates
        for query, found in (("火锅", "我喜欢吃四川火锅"), ("cafe", "Café au lait every morning"), ("golf", "golf course booking")):
            assert matched_texts(m, e5_embedder, query, 5) == [found], query
        if backend.name == "sqlite":
            assert_keyword_index_matches(m.store)
        pages = Documents(memory=m).search("抗生素", keyword_search=True, top_k=1)
        assert pages["keyword_matches"] >= 1 and "抗生素" in pages["results"][0]["text"]


def _pretend_old_analyzer(store, backend):
    """Give non-ASCII memories and pages the terms of analyzer 1 (characters and pairs) and roll the schema back
    to the version before analyzer 2."""
    def old(text):
        import re
        return " ".join(t for run in re.findall(r"[\u4e00-\u9fff]+|[a-z]+", text.lower())
                        for t in ([*run, *(run[i:i + 2] for i in range(len(run) - 1))] if not run.isascii() else [run]))

    if backend == "sqlite":

        con = store._con
        con.execute("BEGIN")
        for rowid, text in con.execute("SELECT rowid, text FROM memories WHERE text GLOB '*[^ -~]*'").fetchall():
            con.execute("UPDATE memories_fts SET terms = ? WHERE rowid = ?", (old(text), rowid))
        for rowid, text in con.execute("SELECT rowid, text FROM doc_pages WHERE text GLOB '*[^ -~]*'").fetchall():
            con.execute("UPDATE doc_pages_fts SET terms = ? WHERE rowid = ?", (old(text), rowid))
        # back to the version before analyzer 2, the five migrations after it undone (background formation's
        # jobs, the add journal, memories' context, speakers in the keyword terms, analyzer 3)
        con.execute("DROP TRIGGER memories_fts_update")
        con.execute("ALTER TABLE memories DROP COLUMN context")
        con.execute("""CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
            UPDATE memories_fts SET terms = ml_index_terms(new.text, new.user_id, new.agent_id, new.run_id)
            WHERE rowid = new.rowid;
        END""")
        con.execute("DROP TABLE jobs")
        con.execute("DROP INDEX memories_event")
        con.execute("ALTER TABLE memories DROP COLUMN event_id")
        con.execute("DROP TABLE adds")
        _drop_later_columns(con)
        con.execute(f"PRAGMA user_version = {_before_migration('GLOB')}")  # before analyzer 2
        con.execute("COMMIT")
        return
    from memlane.store import postgres_schema

    with store.db.pool.connection() as con, con.transaction():
        con.execute("UPDATE memlane_memories SET terms = to_tsvector('simple', %s) WHERE text ~ '[^ -~]'", ("x",))
        con.execute("UPDATE memlane_doc_pages SET terms = to_tsvector('simple', 'x') WHERE text ~ '[^ -~]'")
        con.execute("DELETE FROM memlane_schema_version WHERE version >= %s", (postgres_schema.KEYWORD_ANALYZER_2,))


def _drop_later_columns(con) -> None:
    """Undo, on a SQLite store rolled back to an older version, the columns later migrations add (re-adding an
    existing column fails, as it would never in a store really that old)."""
    con.execute("ALTER TABLE doc_collections DROP COLUMN encoder")


def _before_migration(marker: str) -> int:
    """The SQLite schema version just before the first migration with a statement holding ``marker``."""
    from memlane.store import sqlite_schema

    return next(i for i, steps in enumerate(sqlite_schema.MIGRATIONS) if any(marker in s for s in steps))


def _pretend_analyzer_2(store, backend):
    """Index every memory and page by the keyword analyzer 2 and roll the schema back to before analyzer 3."""
    from support import keywords_v2

    def terms(text, context=None, actor=None):
        return [t for part in (text, context, actor) if part for t in keywords_v2.analyze(part)]

    if backend == "sqlite":

        con = store._con
        con.execute("BEGIN")
        for rowid, text, user, agent, run, context, actor in con.execute(
                "SELECT rowid, text, user_id, agent_id, run_id, context, actor_id FROM memories").fetchall():
            old = terms(text, context, actor)
            con.execute("UPDATE memories_fts SET terms = ? WHERE rowid = ?",
                        (keywords.index_text(text, user, agent, run, terms=old), rowid))
            con.execute("UPDATE memories SET nterms = ? WHERE rowid = ?", (len(old), rowid))
        for rowid, text in con.execute("SELECT rowid, text FROM doc_pages").fetchall():
            con.execute("UPDATE doc_pages_fts SET terms = ? WHERE rowid = ?", (" ".join(terms(text)), rowid))
        _drop_later_columns(con)
        con.execute(f"PRAGMA user_version = {_before_migration('ml_terms_3')}")
        con.execute("COMMIT")
        return
    from memlane.store import postgres, postgres_schema

    with store.db.pool.connection() as con, con.transaction():
        con.adapters.register_dumper(postgres.Tsvector, postgres.TsvectorDumper)
        rows = con.execute("SELECT seq, tenant, text, user_id, agent_id, run_id, context, actor_id"
                           " FROM memlane_memories").fetchall()
        current = keywords.memory_terms
        keywords.memory_terms = terms  # postgres._terms builds the tsvector of the analyzer 2's terms
        try:
            updates = [(*postgres._terms(text, user, agent, run, keywords.scope_token("tenant", tenant), context, actor),
                        seq) for seq, tenant, text, user, agent, run, context, actor in rows]
        finally:
            keywords.memory_terms = current
        con.cursor().executemany("UPDATE memlane_memories SET terms = %s, nterms = %s WHERE seq = %s", updates)
        con.execute("UPDATE memlane_doc_pages SET terms = to_tsvector('simple', 'x')")
        con.execute("DELETE FROM memlane_schema_version WHERE version >= %s", (postgres_schema.KEYWORD_ANALYZER_3,))


def test_a_store_indexed_by_the_analyzer_2_is_indexed_again_when_it_opens(backend, e5_embedder):
    """Memories in Spanish, German and Russian (plain ASCII Spanish too), Korean and Japanese get the terms
    of the analyzer 3 when their store opens: another inflection of their words finds them by keyword.
    English memories, analysed alike by both, keep their terms."""
    from memlane import Documents, Memory

    texts = ["Vivo en Sevilla con mi novia", "Sie wohnt seit 2019 in Hamburg", "Я работаю бухгалтером",
             "저는 서울에서 살고 있어요", "図書館で本を読みます", "I went hiking with my sister"]
    config = backend()
    with Memory(config, embedder=e5_embedder) as m:
        m.add(texts, user_id="u1", infer=False)
        Documents(memory=m).create_collection("c")
        Documents(memory=m).upsert_document("d", "c", text="Der Kessel wird jeden Herbst gewartet")
        if backend.name == "sqlite":
            english = m.store._con.execute("SELECT f.terms FROM memories_fts f JOIN memories m ON m.rowid = f.rowid"
                                           " WHERE m.text LIKE 'I went%'").fetchone()[0]
        _pretend_analyzer_2(m.store, backend.name)
        assert matched_texts(m, e5_embedder, "¿Dónde vive?", 5) == []
        assert matched_texts(m, e5_embedder, "Wo wohne ich?", 5) == []
    with Memory(config, embedder=e5_embedder) as m:  # opening migrates
        for query, found in (("¿Dónde vive?", texts[0]), ("Wo wohne ich?", texts[1]), ("Кем работает он?", texts[2]),
                             ("서울에 살아요?", texts[3]), ("図書", texts[4]), ("hike", texts[5])):
            assert matched_texts(m, e5_embedder, query, 5)[:1] == [found], query
        if backend.name == "sqlite":
            assert_keyword_index_matches(m.store)
            assert m.store._con.execute("SELECT f.terms FROM memories_fts f JOIN memories m ON m.rowid = f.rowid"
                                        " WHERE m.text LIKE 'I went%'").fetchone()[0] == english
        pages = Documents(memory=m).search("gewartet Kessel", keyword_search=True, top_k=1)
        assert pages["keyword_matches"] >= 1 and "Kessel" in pages["results"][0]["text"]


# -- who said a memory is among its keyword terms (a migration indexes older memories again) ---------------


def _pretend_no_speakers(store, backend):
    """Index every memory as before speakers joined the keyword terms, and roll the schema back to then."""
    if backend == "sqlite":

        con = store._con
        con.execute("BEGIN")
        for rowid, text, user, agent, run, context in con.execute(
                "SELECT rowid, text, user_id, agent_id, run_id, context FROM memories").fetchall():
            con.execute("UPDATE memories_fts SET terms = ? WHERE rowid = ?",
                        (keywords.index_text(text, user, agent, run, context), rowid))
            con.execute("UPDATE memories SET nterms = ? WHERE rowid = ?",
                        (len(keywords.memory_terms(text, context)), rowid))
        con.execute("DROP TRIGGER memories_fts_update")
        con.execute("""CREATE TRIGGER memories_fts_update AFTER UPDATE OF text, context ON memories BEGIN
            UPDATE memories_fts SET terms = ml_index_terms(new.text, new.user_id, new.agent_id, new.run_id, new.context)
            WHERE rowid = new.rowid;
        END""")
        _drop_later_columns(con)
        con.execute(f"PRAGMA user_version = {_before_migration('new.context, new.actor_id')}")  # before speakers
        con.execute("COMMIT")
        return
    from memlane.store import postgres, postgres_schema

    with store.db.pool.connection() as con, con.transaction():
        con.adapters.register_dumper(postgres.Tsvector, postgres.TsvectorDumper)
        rows = con.execute("SELECT seq, tenant, text, user_id, agent_id, run_id, context FROM memlane_memories").fetchall()
        con.cursor().executemany(
            "UPDATE memlane_memories SET terms = %s, nterms = %s WHERE seq = %s",
            [(*postgres._terms(text, user, agent, run, keywords.scope_token("tenant", tenant), context), seq)
             for seq, tenant, text, user, agent, run, context in rows])
        con.execute("DELETE FROM memlane_schema_version WHERE version >= %s", (postgres_schema.KEYWORD_SPEAKERS,))
        for table in ("project_settings", "webhooks", "feedback", "exports"):  # made by a later migration
            con.execute(f"DROP TABLE memlane_{table}")
        # keys trusted with less: columns of a later migration
        con.execute("ALTER TABLE memlane_api_keys DROP COLUMN read_only, DROP COLUMN users, DROP COLUMN last_used_at")
        con.execute("ALTER TABLE memlane_doc_collections DROP COLUMN encoder")  # a later migration's column


def test_a_speakers_name_finds_what_they_said_and_older_stores_are_indexed_again(backend, e5_embedder):
    """A memory's keyword terms hold who said it (a message's ``name``), as its embedded text does: a
    query naming Melanie meets what she said, though her words never name her, and keeps meeting it after
    its text changes. Memories indexed before that are indexed again when their store opens."""
    from memlane import Memory

    config = backend()

    def said_by_name(m):
        return sorted(matched_texts(m, e5_embedder, "Melanie"))

    with Memory(config, embedder=e5_embedder) as m:
        added = m.add([{"role": "user", "name": "Melanie", "content": "We went camping by the lake last weekend"},
                       {"role": "user", "name": "Caroline", "content": "Melanie, that sounds lovely!"},
                       {"role": "user", "name": "Caroline", "content": "I painted a sunrise"}],
                      user_id="u1", infer=False)["results"]
        everyone = sorted(r["memory"] for r in added[:2])
        assert said_by_name(m) == everyone
        _pretend_no_speakers(m.store, backend.name)
        assert said_by_name(m) == ["Melanie, that sounds lovely!"]  # her own words never name her
    with Memory(config, embedder=e5_embedder) as m:  # opening migrates
        assert said_by_name(m) == everyone
        assert matched_texts(m, e5_embedder, "Caroline sunrise")[0] == "I painted a sunrise"  # both terms: the speaker's and hers
        m.update(added[0]["id"], "We went hiking in the hills")
        assert said_by_name(m) == ["Melanie, that sounds lovely!", "We went hiking in the hills"]
        if backend.name == "sqlite":
            assert_keyword_index_matches(m.store)


def test_db_upgrade_and_a_restore_index_speakers_again_on_postgres(pg, cli, e5_embedder, tmp_path):
    """``memlane db upgrade`` (a deployment that migrates on purpose, not on open) and the restore of a backup
    taken before the speaker terms both compute the terms again, as opening the store does."""
    from memlane import Memory
    from memlane.hosting import backup
    from memlane.store import postgres_schema

    schema = pg.fresh_schema()
    config = pg.config(schema)

    def said_by(m):
        return sorted(matched_texts(m, e5_embedder, "Melanie"))

    with Memory(config, embedder=e5_embedder) as m:
        m.add([{"role": "user", "name": "Melanie", "content": "We went camping by the lake"},
               {"role": "user", "name": "Caroline", "content": "Sounds lovely"}], user_id="u1", infer=False)
        _pretend_no_speakers(m.store, "postgres")
    upgraded = cli("db", "upgrade", "--dsn", pg.url, "--schema", schema)
    assert f"-> {postgres_schema.VERSION}" in upgraded.output
    with Memory(config, embedder=e5_embedder) as m:  # already current: nothing migrates on open
        assert said_by(m) == ["We went camping by the lake"]
        _pretend_no_speakers(m.store, "postgres")
        assert said_by(m) == []
    old = tmp_path / "old.tar.gz"
    assert backup.backup(old, home=tmp_path / "home", config=config).schema_version == postgres_schema.KEYWORD_SPEAKERS - 1
    restored = pg.config()
    backup.restore(old, home=tmp_path / "restored", config=restored)
    with Memory(restored, embedder=e5_embedder) as m:
        assert said_by(m) == ["We went camping by the lake"]
