"""A child process for tests/test_postgres_processes.py: one ``PostgresStore`` on a real PostgreSQL.

Usage: ``python pg_worker.py '<json command>'``. The worker opens the store, prints
``READY`` and waits until the file ``command["go"]`` exists (a start barrier across
processes), then runs the mode and prints ``RESULT <json>``. Vectors are real MiniLM
vectors the parent computed and saved (``command["vectors"]``, a .npy file): the
children load no model, so several start quickly on a small machine.

Modes:

- ``update``: update one memory ``count`` times (text and vector), as ``Memory.update`` does.
- ``kill_insert`` / ``kill_update``: run one write, and inside its transaction, after
  the real statements, print ``INSIDE`` and sleep, so the parent's SIGKILL lands there.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

from memlane.core import timeutil
from memlane.core.ids import new_id
from memlane.core.models import MemoryRecord
from memlane.store import postgres
from memlane.store.base import ChangeSet, Update
from memlane.store.postgres import PostgresDatabase, PostgresStore

HANG_SECONDS = 60


def say(*parts: object) -> None:
    sys.stdout.write(" ".join(map(str, parts)) + "\n")
    sys.stdout.flush()


def text_hash(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def hang_after(owner: object, name: str, report: object) -> None:
    """Wrap ``owner.name`` so that, after it ran inside the open transaction, the worker says
    INSIDE and sleeps until it is killed."""
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        result = original(*args, **kwargs)
        say("INSIDE", json.dumps(report))
        time.sleep(HANG_SECONDS)
        return result

    setattr(owner, name, wrapped)


def main() -> int:
    command = json.loads(sys.argv[1])
    vectors = np.load(command["vectors"])
    store = PostgresStore(PostgresDatabase(command["dsn"], schema_name=command["schema"], max_size=1),
                          command.get("tenant", "default"), owns_database=True)
    store.bind_embedder(command["embedder"], vectors.shape[1])
    say("READY")
    go = Path(command["go"])
    while not go.exists():
        time.sleep(0.01)
    mode = command["mode"]
    if mode == "update":
        written = []
        for k in range(command["count"]):
            text = f"process {command['process']} write {k}"
            store.apply(ChangeSet(updates=[Update(id=command["memory_id"], updated_at=timeutil.now_iso(), text=text,
                                                  hash=text_hash(text), vector=vectors[k % len(vectors)],
                                                  actor_id=f"p{command['process']}")]))
            written.append(text)
        say("RESULT", json.dumps(written))
    elif mode == "kill_insert":
        doomed = [MemoryRecord(id=new_id(), text=f"doomed {i}", hash=text_hash(f"doomed {i}"),
                               created_at=timeutil.now_iso(), updated_at=timeutil.now_iso(), user_id="doomed",
                               vector=vectors[i % len(vectors)]) for i in range(command["count"])]
        hang_after(postgres, "copy_history", [r.id for r in doomed])  # rows and history copied, not committed
        store.apply(ChangeSet(inserts=doomed))
    elif mode == "kill_update":
        hang_after(PostgresStore, "_update", [command["memory_id"]])  # row updated and locked, history written
        text = "an update that never commits"
        store.apply(ChangeSet(updates=[Update(id=command["memory_id"], updated_at=timeutil.now_iso(), text=text,
                                              hash=text_hash(text), vector=vectors[0])]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
