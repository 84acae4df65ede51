"""A process that queues one async add and forms it (tests/facade/test_background.py kills it mid-way).

Usage: ``python async_child.py '{"config": {...}, "text": "..."}'``; prints ``{"event_id": ...}`` and
forms until it is killed."""

from __future__ import annotations

import json
import sys
import time

from memlane import Memory


def main() -> None:
    command = json.loads(sys.argv[1])
    memory = Memory(command["config"])
    answer = memory.add(command["text"], user_id="alice", async_mode=True)
    sys.stdout.write(json.dumps({"event_id": answer["event_id"]}) + "\n")
    sys.stdout.flush()
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
