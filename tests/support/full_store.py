"""A SQLite store made full on purpose, without filling a disk: ``PRAGMA max_page_count`` caps the file
at its size now, so a write that needs one more page fails with ``SQLITE_FULL`` ("database or disk is
full"), the error a full disk gives. The cap is a connection setting: ``PageCap`` sets it on every
connection the store has and on each it opens later (a server's threads).

    cap = PageCap(memory.store)
    cap.fill()     # full from now on
    cap.lift()     # room again

``Tmpfs`` is a real small disk (a tmpfs mounted for the test; root only), with ``fill_up`` writing a
ballast file until the disk has no byte left and ``free`` removing it.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import uuid
from pathlib import Path

#: SQLite's own ceiling of max_page_count: no cap
UNCAPPED = 4294967294


class PageCap:
    def __init__(self, store):
        self.store = store
        self.limit = UNCAPPED
        opened = store._connect

        def connect() -> sqlite3.Connection:
            con = opened()
            con.execute(f"PRAGMA max_page_count = {self.limit}")
            return con

        store._connect = connect  # the store's later connections (one per thread) are capped too

    def _set(self, limit: int) -> None:
        self.limit = limit
        for con in list(self.store._connections):
            con.execute(f"PRAGMA max_page_count = {limit}")

    def fill(self) -> None:
        """No page more than the file has now (SQLite keeps a cap below that at the file's size)."""
        self._set(1)

    def lift(self) -> None:
        self._set(UNCAPPED)


def integrity(path: Path) -> str:
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        con.close()


class Tmpfs:
    """A tmpfs of ``size`` mounted at ``path`` for a test (``mount -t tmpfs``: root; a container may refuse)."""

    def __init__(self, path: Path, size: str = "8m"):
        self.path = Path(path)
        self.size = size
        self.ballast = self.path / f"ballast-{uuid.uuid4().hex}"

    def mount(self) -> str | None:
        """None when mounted, else why it could not be."""
        self.path.mkdir(parents=True, exist_ok=True)
        if os.geteuid() != 0:
            return "mounting a tmpfs needs root"
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)],
                              capture_output=True, text=True, check=False)
        return None if done.returncode == 0 else f"mount -t tmpfs was refused: {done.stderr.strip()}"

    def unmount(self) -> None:
        subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)

    def fill_up(self) -> None:
        """Write the ballast until the disk refuses a byte more (ENOSPC)."""
        with open(self.ballast, "ab", buffering=0) as handle:
            for size in (1 << 20, 1 << 16, 1 << 12, 1 << 8, 1):
                while True:
                    try:
                        handle.write(b"\0" * size)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break

    def free(self) -> None:
        self.ballast.unlink(missing_ok=True)
