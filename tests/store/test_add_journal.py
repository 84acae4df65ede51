"""The add journal (store/sql_adds.py), on both backends: a pending record written with its messages,
completed once in the transaction that writes what it formed, found by id or idempotency key."""

import pytest

from memlane.core import timeutil
from memlane.core.changes import AddDone, AddRecord, ChangeSet
from memlane.core.errors import AddAlreadyDone, AddKeyTaken
from memlane.core.filters import MATCH_ALL
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord, MessageRecord, text_hash
from memlane.store import create_store
from memlane.core.config import load

DIMS = 8


@pytest.fixture
def store(backend):
    made = create_store(load(backend()), DIMS)
    made.bind_embedder("test", DIMS)
    yield made
    made.close()


def journaled(key=None, user="u"):
    now = timeutil.now_iso()
    message = MessageRecord(id=new_id(), role="user", content="I like tea", created_at=now, user_id=user)
    record = AddRecord(id=new_id(), fingerprint="f", request={"infer": False, "metadata": {"k": 1}},
                       message_ids=[message.id], created_at=now, key=key, user_id=user, owner="host:1:1",
                       lease_until=now)
    return message, record


def memory_of(message):
    import numpy as np

    now = timeutil.now_iso()
    return MemoryRecord(id=new_id(), text=message.content, hash=text_hash(message.content), created_at=now,
                        updated_at=now, user_id=message.user_id, source_message_ids=[message.id],
                        vector=np.ones(DIMS, dtype=np.float32) / DIMS ** 0.5)


def test_journal_then_complete_once(store):
    message, record = journaled(key="k-1")
    store.apply(ChangeSet(messages=[message], journal=record))
    pending = store.pending_adds({"user_id": "u"})
    assert [p.id for p in pending] == [record.id] and pending[0].request == record.request
    assert pending[0].message_ids == [message.id] and pending[0].status == "pending"
    outcome = {"results": [{"id": "m1", "event": "ADD"}], "status": "ok"}
    store.apply(ChangeSet(inserts=[memory_of(message)], done=AddDone(record.id, outcome)))
    assert store.pending_adds() == []
    done = store.add_record(key="k-1")
    assert done.status == "done" and done.outcome == outcome and done.owner is None
    # a second completion is void and writes nothing of its own
    with pytest.raises(AddAlreadyDone):
        store.apply(ChangeSet(inserts=[memory_of(message)], done=AddDone(record.id, outcome)))
    assert store.count(MATCH_ALL) == 1


def test_a_taken_key_writes_nothing(store):
    message, record = journaled(key="k-2")
    store.apply(ChangeSet(messages=[message], journal=record))
    again, second = journaled(key="k-2")
    with pytest.raises(AddKeyTaken):
        store.apply(ChangeSet(messages=[again], journal=second))
    assert [m.id for m in store.messages(MATCH_ALL, 100)] == [message.id]


def test_an_add_without_key_is_removed_once_done(store):
    message, record = journaled()
    store.apply(ChangeSet(messages=[message], journal=record))
    store.apply(ChangeSet(done=AddDone(record.id, {"status": "ok"}, keep=False)))
    assert store.add_record(add_id=record.id) is None


def test_claim_is_compare_and_set(store):
    message, record = journaled()
    store.apply(ChangeSet(messages=[message], journal=record))
    later = timeutil.now_iso()
    assert not store.claim_add(record.id, "someone:else:0", "me:2:2", later)
    assert store.claim_add(record.id, "host:1:1", "me:2:2", later)
    assert not store.claim_add(record.id, "host:1:1", "third:3:3", later)
    assert store.add_record(add_id=record.id).owner == "me:2:2"


def test_pending_adds_by_exact_scope_and_purge(store):
    from memlane.core import filters as flt

    _, mine = journaled(user="a")
    store.apply(ChangeSet(messages=[_], journal=mine))
    other_message, other = journaled(user="b")
    store.apply(ChangeSet(messages=[other_message], journal=other))
    assert [p.id for p in store.pending_adds({"user_id": "a"})] == [mine.id]
    assert [p.id for p in store.pending_adds({"user_id": "a", "agent_id": "x"})] == []
    store.purge(flt.parse({"user_id": "a"}))
    assert [p.id for p in store.pending_adds()] == [other.id]
    store.reset()
    assert store.pending_adds() == []


def test_forget_frees_old_keys(store):
    message, record = journaled(key="k-3")
    store.apply(ChangeSet(messages=[message], journal=record))
    store.apply(ChangeSet(done=AddDone(record.id, {"status": "ok"})))
    assert store.forget_adds("2000-01-01T00:00:00+00:00") == 0
    assert store.forget_adds("9999-01-01T00:00:00+00:00") == 1
    assert store.add_record(key="k-3") is None
