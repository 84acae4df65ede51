"""A child process for tests/test_concurrency.py: a real ``Memory`` with the real local model.

Protocol (line-based, on stdin/stdout):

1. The worker loads the local model, prints ``READY`` and waits for one line on
   stdin. Loading first lets the parent start several workers at once (a start
   barrier) and keeps model loading out of the part under test.
2. The line is a JSON command ``{"mode": ..., "db": ..., ...}``; the worker opens
   ``Memory`` on ``db`` (the default local embedder, a ``MEMLANE_HOME`` from the
   environment) and runs the mode. Progress lines go to stdout; the last line is
   ``RESULT <json>`` and the exit code 0. Any exception exits 1 with a traceback on
   stderr. An empty line (EOF) exits 0 without doing anything.

The ``kill_*`` modes wrap a ``SQLiteStore`` method that runs inside the open write
transaction (test code, applied in this process only): after the real statements
it prints ``INSIDE <json>`` and sleeps, so the parent's SIGKILL lands inside the
transaction. They also shrink SQLite's page cache so the uncommitted pages spill
into the WAL file before the kill, as a batch larger than the cache would.
"""

from __future__ import annotations

import inspect
import json
import os
import random
import sys
import time
from pathlib import Path

from memlane import Memory
from memlane.embeddings.local import LocalEmbedder
from memlane.store.sqlite import SQLiteStore

HANG_SECONDS = 60
#: ``add`` stores each message verbatim as one memory; memlane versions that form
#: memories (extract facts) do so with ``infer=False``.
VERBATIM = {"infer": False} if "infer" in inspect.signature(Memory.add).parameters else {}


def say(*parts: object) -> None:
    """One line in one write: a SIGKILL cannot cut it in the middle."""
    sys.stdout.write(" ".join(map(str, parts)) + "\n")
    sys.stdout.flush()


def open_memory(command: dict) -> Memory:
    # the model the parent test checks the store with (the session's all-MiniLM-L6-v2), loaded before the barrier
    return Memory({"vector_store": {"provider": "sqlite", "config": {"path": command["db"]}},
                   "embedder": {"provider": "local"}})


def add(m: Memory, sent: list[dict[str, str]], user: str, batch: str, **metadata) -> list[str]:
    """Add the messages verbatim as one batch; return the new ids."""
    added = m.add(sent, user_id=user, metadata={"batch": batch, **metadata}, **VERBATIM)["results"]
    assert [a["memory"] for a in added] == [s["content"] for s in sent], added
    return [a["id"] for a in added]


def messages(prefix: str, count: int) -> list[dict[str, str]]:
    topics = ("tea", "hiking", "jazz", "python", "the sea", "chess", "bread", "trains")
    return [{"role": "user", "content": f"{prefix} #{i}: I care about {topics[i % len(topics)]}"}
            for i in range(count)]


# -- multi-process read/write -------------------------------------------------


def writer(command: dict) -> dict:
    """Add batches to one user's scope, updating and deleting some of them on the way.

    Deletes remove whole batches (``delete_all`` with a batch filter, or ``delete``
    of a one-memory batch) so a reader may check that batches are all-or-nothing.
    """
    user, rounds = command["user"], command["rounds"]
    rng = random.Random(command["seed"])
    m = open_memory(command)
    texts: dict[str, str] = {}             # live memory id -> its current text
    batches: dict[str, list[str]] = {}     # live batch label -> memory ids
    updates: dict[str, int] = {}           # memory id -> UPDATE events made
    deleted: list[str] = []
    for r in range(rounds):
        label = f"{user}-{r}"
        size = rng.choice((1, 1, 2, 3, 5))
        sent = messages(f"{user} round {r}", size)
        batches[label] = add(m, sent, user, label, size=size)
        texts.update((mid, s["content"]) for mid, s in zip(batches[label], sent))

        if r % 3 == 2:  # rewrite one live memory (re-embedded)
            mid = rng.choice(sorted(texts))
            new_text = f"{user} rewrote {mid[:8]} in round {r}"
            item = m.update(mid, text=new_text)
            assert item["memory"] == new_text and item["id"] == mid, item
            texts[mid] = new_text
            updates[mid] = updates.get(mid, 0) + 1
        if r % 4 == 3 and len(batches) > 2:  # delete one older batch, whole
            victim = rng.choice(list(batches)[:-1])  # not the batch just added
            ids = batches.pop(victim)
            if len(ids) == 1 and rng.random() < 0.5:
                assert m.delete(ids[0]) == {"message": "Memory deleted successfully!"}
            else:
                assert m.delete_all(user_id=user, filters={"batch": victim})["deleted"] == len(ids)
            for mid in ids:
                texts.pop(mid)
            deleted.extend(ids)
        if r % 2 == 0:
            hits = m.search(f"{user} round {r}", user_id=user, limit=5)["results"]
            assert hits and all(h["user_id"] == user for h in hits), hits
        assert m.get(batches[label][0])["memory"] == texts[batches[label][0]]
    final = {item["id"] for item in m.get_all(user_id=user, limit=10_000)["results"]}
    assert final == set(texts), (len(final), len(texts))
    m.close()
    return {"texts": texts, "batches": batches, "updates": updates, "deleted": deleted}


def reader(command: dict) -> dict:
    """Search and list every writer's scope until the stop file appears.

    Every listing is checked for half-visible batches: a batch's memories must be
    listed all together or not at all.
    """
    users, stop = command["users"], Path(command["stop_file"])
    m = open_memory(command)
    passes = searches = seen_max = 0
    while not stop.exists() or passes < 3:
        for user in users:
            listed = m.get_all(user_id=user, limit=10_000)["results"]
            seen_max = max(seen_max, len(listed))
            by_batch: dict[str, int] = {}
            for item in listed:
                assert item["user_id"] == user, item
                by_batch[item["metadata"]["batch"]] = by_batch.get(item["metadata"]["batch"], 0) + 1
            sizes = {item["metadata"]["batch"]: item["metadata"]["size"] for item in listed}
            partial = {b: (n, sizes[b]) for b, n in by_batch.items() if n != sizes[b]}
            assert not partial, f"half-visible batches (listed, size): {partial}"
            hits = m.search("I care about tea", user_id=user, limit=10)["results"]
            assert all(h["user_id"] == user and -1.0 <= h["score"] <= 1.0 for h in hits), hits
            searches += 1
        everyone = m.search("what does somebody care about?", filters={"user_id": "*"}, limit=20)["results"]
        assert all(h["user_id"] in users for h in everyone), everyone
        assert [h["score"] for h in everyone] == sorted((h["score"] for h in everyone), reverse=True)
        searches += 1
        passes += 1
        time.sleep(0.01)  # leave the writers some CPU on a small machine
    m.close()
    return {"passes": passes, "searches": searches, "max_listed": seen_max}


# -- killed in the middle of a write ------------------------------------------


def _small_page_cache() -> None:
    connect = SQLiteStore._connect

    def small(self):
        con = connect(self)
        con.execute("PRAGMA cache_size=20")  # pages: a large write spills to the WAL mid-transaction
        return con

    SQLiteStore._connect = small


def _hang_after(method_name: str, what) -> None:
    """After the real ``SQLiteStore.<method_name>``, report and sleep inside the transaction."""
    original = getattr(SQLiteStore, method_name)

    def hooked(self, con, *args):
        result = original(self, con, *args)
        assert con.in_transaction
        say("INSIDE", json.dumps(what(*args)))
        time.sleep(HANG_SECONDS)
        return result

    setattr(SQLiteStore, method_name, hooked)


def kill_insert(command: dict) -> dict:
    m = open_memory(command)
    committed = add(m, messages("committed", command["committed"]), "u", "committed")
    say("COMMITTED", json.dumps(committed))
    _hang_after("_insert", lambda records: [r.id for r in records])
    add(m, messages("doomed", command["doomed"]), "u", "doomed")
    raise SystemExit("not killed")


def kill_update(command: dict) -> dict:
    m = open_memory(command)
    ids = add(m, messages("committed", command["committed"]), "u", "committed")
    say("COMMITTED", json.dumps(ids))
    _hang_after("_update", lambda update: [update.id])
    m.update(ids[0], text="this text must never be stored", metadata={"batch": "rewritten"})
    raise SystemExit("not killed")


def kill_delete(command: dict) -> dict:
    m = open_memory(command)
    ids = add(m, messages("committed", command["committed"]), "u", "committed")
    say("COMMITTED", json.dumps(ids))
    _hang_after("_delete_rows", lambda rows, actor_id, role: [row[0] for row in rows])
    m.delete(ids[0])
    raise SystemExit("not killed")


def kill_delete_all(command: dict) -> dict:
    m = open_memory(command)
    ids = add(m, messages("victim", command["committed"]), "victim", "v")
    ids += add(m, messages("bystander", 5), "bystander", "b")
    say("COMMITTED", json.dumps(ids))
    _hang_after("_delete_rows", lambda rows, actor_id, role: [row[0] for row in rows])
    m.delete_all(user_id="victim")
    raise SystemExit("not killed")


def batches(command: dict) -> dict:
    """Add batches tagged {"batch": label} forever (until killed); every third round
    also delete the batch added two rounds before, whole."""
    m = open_memory(command)
    size, run = command["size"], command["run"]
    deadline = time.monotonic() + 300
    k = 0
    while time.monotonic() < deadline:
        label = f"{run}-{k}"
        add(m, messages(label, size), "u", label)
        say("BATCH", label)
        if k % 3 == 2:
            gone = f"{run}-{k - 2}"
            assert m.delete_all(user_id="u", filters={"batch": gone})["deleted"] == size
            say("DELETED", gone)
        k += 1
    raise SystemExit("not killed")


MODES = {f.__name__: f for f in (writer, reader, kill_insert, kill_update, kill_delete, kill_delete_all, batches)}


def main() -> None:
    LocalEmbedder().embed(["warming up"], "document")  # load the model before the barrier
    say("READY", os.getpid())
    line = sys.stdin.readline()
    if not line.strip():
        return
    command = json.loads(line)
    if command["mode"].startswith("kill_"):
        _small_page_cache()
    result = MODES[command["mode"]](command)
    say("RESULT", json.dumps(result))


if __name__ == "__main__":
    main()
