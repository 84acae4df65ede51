"""A full disk: a write that finds no room raises ``StorageFullError`` and stores nothing of itself; reads go
on; once there is room the same add (same idempotency key) happens once, and the file is intact.

SQLite is made full two ways: ``PRAGMA max_page_count`` (portable: the file may not grow, the same
``SQLITE_FULL`` a disk gives) and a real tmpfs filled to the last byte (root only; skipped with the reason
elsewhere). PostgreSQL's ``DiskFull`` is checked at the unit level (raised inside a real transaction of a
real server by the test's own statement: a full disk under PostgreSQL is not made here)."""

from __future__ import annotations

import pytest

from memlane import Memory, StorageFullError, StoreError
from memlane.core import filters as flt
from support.full_store import PageCap, Tmpfs, integrity

TEXT = "I keep a diary about the garden; " * 40  # ~1.3 KB: a few pages per add


def _memory(path, embedder) -> Memory:
    return Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(path)}}}, embedder=embedder)


def _add(memory: Memory, n: int, key: str | None = None) -> list[str]:
    return [r["id"] for r in memory.add(f"note {n}: {TEXT}", user_id="ann", infer=False,
                                        idempotency_key=key)["results"]]


def _until_full(memory: Memory, acked: list[str], start: int = 0) -> int:
    """Add until one add raises ``StorageFullError``; that add's number (free pages are used up first)."""
    for n in range(start, start + 200):
        try:
            acked += _add(memory, n, key=f"key-{n}")
        except StorageFullError:
            return n
    raise AssertionError("the store never got full")


def _messages(memory: Memory) -> list[str]:
    return [m.content for m in memory.store.messages(flt.MATCH_ALL, 10_000)]


def test_a_capped_store_refuses_writes_keeps_reads_and_takes_the_retry_once(tmp_path, hashing_embedder):
    path = tmp_path / "memlane.db"
    memory = _memory(path, hashing_embedder)
    acked = [i for n in range(3) for i in _add(memory, n, key=f"key-{n}")]
    cap = PageCap(memory.store)
    cap.fill()
    failed = _until_full(memory, acked, start=3)

    with pytest.raises(StorageFullError) as refused:
        memory.update(acked[0], "changed: " + TEXT * 10)
    assert isinstance(refused.value, StoreError)  # code catching StoreError catches it
    assert "disk holding the store is full" in str(refused.value) and refused.value.location == str(path)
    assert "database or disk is full" in refused.value.cause
    # reads go on: search, list, get
    assert memory.search("garden diary", user_id="ann", limit=3)["results"]
    assert sorted(m["id"] for m in memory.get_all(user_id="ann", limit=1000)["results"]) == sorted(acked)
    assert memory.get(acked[0])["memory"].startswith("note 0:")
    # nothing of the refused add was stored: no message, no pending journal record
    assert f"note {failed}: {TEXT}" not in _messages(memory)
    assert memory.store.pending_adds() == []

    cap.lift()
    retried = _add(memory, failed, key=f"key-{failed}")
    assert _add(memory, failed, key=f"key-{failed}") == retried  # the key answers the same add again
    memory.update(acked[0], "changed: " + TEXT * 10)
    ids = [m["id"] for m in memory.get_all(user_id="ann", limit=1000)["results"]]
    assert sorted(ids) == sorted(acked + retried)  # nothing acknowledged lost, the retry stored once
    assert _messages(memory).count(f"note {failed}: {TEXT}") == 1
    memory.close()
    assert integrity(path) == "ok"


def test_an_add_whose_formation_finds_no_room_leaves_nothing(tmp_path, hashing_embedder):
    """The messages' transaction committed, the formation's then finds the store full: the add is undone
    (messages and journal record removed), so the error means nothing was stored; the retry adds it once."""
    path = tmp_path / "memlane.db"
    memory = _memory(path, hashing_embedder)
    acked = _add(memory, 0, key="key-0")
    cap = PageCap(memory.store)
    decide = memory.adds.formation.decide

    def full_after_the_journal(*args, **kwargs):
        cap.fill()  # between the two transactions of the add
        return decide(*args, **kwargs)

    memory.adds.formation.decide = full_after_the_journal
    with pytest.raises(StorageFullError):
        _add(memory, 1, key="key-1")
    memory.adds.formation.decide = decide
    assert _messages(memory) == [f"note 0: {TEXT}"]
    assert memory.store.pending_adds() == [] and memory.store.add_record(key="key-1") is None

    cap.lift()
    retried = _add(memory, 1, key="key-1")
    assert [m["id"] for m in memory.get_all(user_id="ann")["results"]] == retried + acked
    assert _messages(memory) == [f"note 0: {TEXT}", f"note 1: {TEXT}"]
    memory.close()
    assert integrity(path) == "ok"


@pytest.fixture
def tmpfs(tmp_path):
    disk = Tmpfs(tmp_path / "small-disk", size="8m")
    why = disk.mount()
    if why is not None:
        pytest.skip(why)
    yield disk
    disk.unmount()


def test_a_real_full_disk(tmpfs, hashing_embedder):
    """A tmpfs filled to its last byte while a store lives on it: writes raise ``StorageFullError``, reads
    go on; once the ballast is removed the refused add and update go through, the file is intact."""
    path = tmpfs.path / "memlane.db"
    memory = _memory(path, hashing_embedder)
    acked = [i for n in range(5) for i in _add(memory, n, key=f"key-{n}")]
    tmpfs.fill_up()
    failed = _until_full(memory, acked, start=5)
    with pytest.raises(StorageFullError) as refused:
        memory.update(acked[0], "changed: " + TEXT * 10)
    assert refused.value.location == str(path)
    assert len(memory.search("garden diary", user_id="ann", limit=100)["results"]) == len(acked)

    tmpfs.free()
    retried = _add(memory, failed, key=f"key-{failed}")
    assert _add(memory, failed, key=f"key-{failed}") == retried
    memory.update(acked[0], "changed: " + TEXT * 10)
    assert sorted(m["id"] for m in memory.get_all(user_id="ann", limit=1000)["results"]) == sorted(acked + retried)
    assert _messages(memory).count(f"note {failed}: {TEXT}") == 1
    assert memory.store.pending_adds() == []
    memory.close()
    assert integrity(path) == "ok"


def test_a_disk_too_full_to_undo_the_add_undoes_it_before_its_retry(tmpfs, hashing_embedder, caplog):
    """The disk fills up between the add's two transactions, to the last byte: neither the formation's
    write nor the undo finds room. The add stays pending in this process until its retry, which undoes it
    and adds it once."""
    path = tmpfs.path / "memlane.db"
    memory = _memory(path, hashing_embedder)
    acked = _add(memory, 0, key="key-0")
    decide = memory.adds.formation.decide

    def full_after_the_journal(*args, **kwargs):
        tmpfs.fill_up()
        return decide(*args, **kwargs)

    memory.adds.formation.decide = full_after_the_journal
    with pytest.raises(StorageFullError):
        _add(memory, 1, key="key-1")
    memory.adds.formation.decide = decide
    assert "could not undo the add" in caplog.text  # not even the undo found room
    with pytest.raises(StorageFullError):  # the disk is still full: the retry is refused too
        _add(memory, 1, key="key-1")

    tmpfs.free()
    retried = _add(memory, 1, key="key-1")
    assert sorted(m["id"] for m in memory.get_all(user_id="ann")["results"]) == sorted(retried + acked)
    assert _messages(memory) == [f"note 0: {TEXT}", f"note 1: {TEXT}"]
    assert memory.store.pending_adds() == []
    memory.close()
    assert integrity(path) == "ok"


@pytest.mark.postgres
def test_postgres_disk_full_is_storage_full(pg):
    """Unit level, labelled so: a ``DiskFull`` (SQLSTATE 53100) raised inside a real write transaction on
    the test server (the statement raises it, PostgreSQL's disk is not filled) becomes ``StorageFullError``;
    the transaction's rows are rolled back and the store works on."""
    import psycopg

    from memlane.core.config import load
    from memlane.store import create_store

    store = create_store(load(pg.config()), 8)
    try:
        store.bind_embedder("test", 8)

        def write_then_full(con):
            con.execute("INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, 'probe', 'x')", (store.tenant,))
            raise psycopg.errors.DiskFull("could not extend file \"base/1/2\": No space left on device")

        with pytest.raises(StorageFullError) as refused:
            store.transaction(write_then_full, write=True)
        assert refused.value.location == store.db.location and "No space left" in refused.value.cause
        assert store.transaction(lambda con: con.execute(
            "SELECT count(*) FROM memlane_meta WHERE tenant = %s AND key = 'probe'", (store.tenant,)).fetchone()[0],
            write=False) == 0
    finally:
        store.close()
