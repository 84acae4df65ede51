"""Nothing beside the repository, unless a test says so.

A test may read the development evaluation sets beside the repository (``../shared/eval``) only when it
is marked ``dev_eval`` (``support.data.needs_dev_eval``): then it is skipped, with the reason, where they
are absent. This guard watches every other test while it runs (its set-up and its call): a file opened,
an SQLite database connected or a subprocess started with a path in the repository's parent directory
but outside the repository fails the test and names the path. So the tests that a clone without
``../shared`` skips are exactly the marked ones, and ``.ci/run``'s second pass, from a copy of the
repository with nothing beside it, runs those (and the README) to prove it.

Seen through Python's audit events (``open``, ``sqlite3.connect``, ``subprocess.Popen``): a read by a
child process of a path it was not given on its command line is out of its sight.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

from support.data import REPOSITORY

EVENTS = frozenset({"open", "sqlite3.connect", "subprocess.Popen"})


#: the temporary directory: what tests make there (pytest's tmp_path, tempfile) is not beside the repository,
#: even when it is inside the repository's parent (a clone in /work beside /work/tmp); a repository copied
#: into it (.ci/standalone's /tmp/tmp.X/memlane) is watched as any other
TEMPORARY = os.path.realpath(tempfile.gettempdir()) + os.sep


def _watched_directory() -> str | None:
    """The repository's parent, unless it is a directory everything lives in (the root, the home, the
    temporary directory: a clone made in /tmp)."""
    parent = REPOSITORY.parent
    if parent in (Path(parent.anchor), Path.home(), Path(TEMPORARY)):
        return None
    return str(parent) + os.sep


class Guard:
    def __init__(self) -> None:
        self.parent = _watched_directory()
        self.repository = str(REPOSITORY) + os.sep
        self.inside = (self.repository,) if self.parent is None or self.parent.startswith(TEMPORARY) \
            else (self.repository, TEMPORARY)  # paths that are not beside it
        self.test: str | None = None
        self.seen: list[str] = []
        if self.parent is not None:
            sys.addaudithook(self._audit)

    def _beside(self, value: object) -> str | None:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if isinstance(value, bytes):
            value = os.fsdecode(value)
        if not isinstance(value, str) or os.sep not in value or "\n" in value:
            return None
        path = os.path.abspath(value)
        if not path.startswith(self.parent):  # type: ignore[arg-type]
            return None
        if (path + os.sep).startswith(self.inside):
            return None
        if path[len(self.parent):].startswith("."):  # type: ignore[arg-type]
            return None  # a hidden directory beside it (a tool's cache), not a sibling project
        return path

    def _audit(self, event: str, args: tuple) -> None:
        if self.test is None or event not in EVENTS:
            return
        if event == "subprocess.Popen":
            _, argv, cwd, _ = args
            candidates = [*(argv if isinstance(argv, (list, tuple)) else [argv]), cwd]
        else:
            candidates = [args[0]]
        for value in candidates:
            path = self._beside(value)
            if path is not None:
                self.seen.append(f"{event}: {path}")

    def watch(self, item: pytest.Item) -> bool:
        if self.parent is None or item.get_closest_marker("dev_eval") is not None:
            return False
        self.test, self.seen = item.nodeid, []
        return True

    def verdict(self) -> str | None:
        self.test = None
        if not self.seen:
            return None
        listed = "\n  ".join(dict.fromkeys(self.seen))
        return (f"this test used what lies beside the repository, which a clone does not have:\n  {listed}\n"
                "Put the data it needs in tests/data (with its origin), or mark the test "
                "support.data.needs_dev_eval so it is skipped where the development sets are absent.")


GUARD = Guard()


def _guarded(item: pytest.Item):
    watching = GUARD.watch(item)
    try:
        result = yield
    finally:
        problem = GUARD.verdict() if watching else None
    if problem is not None:
        pytest.fail(problem, pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guarded(item))
