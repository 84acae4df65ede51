"""Where the tests find their data.

The repository's own fixtures are in ``tests/data`` (each file's origin: ``tests/data/README.md``); a
clone of the repository passes its tests with nothing else. The development evaluation sets (LoCoMo,
Cranfield, the labelled reconcile and note cases the offline engine was developed on) live outside the
repository, in ``../shared/eval`` beside it when the project's workspace is there; a test that reads them
is marked ``needs_dev_eval`` (or takes them through ``dev_case_file``) and skips, saying why, when they are
absent; an unmarked test that reaches beside the repository fails (``support/beside.py``). ``.ci/run`` runs
the marked tests and the README a second time from a copy of the repository with nothing beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
DATA = REPOSITORY / "tests" / "data"
DEV_EVAL = REPOSITORY.parent / "shared" / "eval"

ABSENT = ("the development evaluation sets are not beside this repository (../shared/eval); "
          "a clone has only tests/data, whose tests run")

#: the mark of a test that reads the development sets: skipped with ``ABSENT`` where they are absent
#: (tests/conftest.py), and the only kind of test allowed to read beside the repository (support/beside.py)
needs_dev_eval = pytest.mark.dev_eval


def dev_eval_absent() -> bool:
    return not DEV_EVAL.is_dir()


def dev_eval(relative: str) -> Path:
    """A file of the development evaluation sets (it may be absent: mark the test ``needs_dev_eval``)."""
    return DEV_EVAL / relative


def dev_case_file(relative: str, id: str = "dev"):
    """A parameter for a test run on case files: a development set, skipped with the reason when absent."""
    return pytest.param(dev_eval(relative), id=id, marks=needs_dev_eval)


def data(name: str) -> Path:
    """A fixture of the repository (``tests/data/<name>``)."""
    path = DATA / name
    assert path.is_file(), f"{path} is missing: tests/data is part of the repository"
    return path
