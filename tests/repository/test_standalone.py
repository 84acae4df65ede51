"""The repository stands alone: its test data is its own (each file's origin stated), and a test that
reaches beside it without saying so fails (support/beside.py; .ci/run's second pass proves the rest)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from support.beside import GUARD
from support.data import DATA, REPOSITORY


def test_every_file_in_tests_data_has_its_origin_stated():
    listed = set(re.findall(r"^\| `([^`]+)` \|", (DATA / "README.md").read_text(encoding="utf-8"), re.M))
    present = {p.name for p in DATA.iterdir() if p.name != "README.md"}
    assert listed == present


@pytest.mark.skipif(GUARD.parent is None,
                    reason="the repository's parent is the root, the home or the temporary directory: nothing watched")
def test_an_unmarked_test_that_reads_beside_the_repository_fails(tmp_path):
    beside = REPOSITORY.parent / "not-in-the-repository" / "cases.jsonl"
    (tmp_path / "test_reader.py").write_text(textwrap.dedent(f"""
        import pytest
        from support.data import needs_dev_eval

        def read():
            try:
                open({str(beside)!r}).close()
            except FileNotFoundError:
                pass

        def test_unmarked():
            read()

        @needs_dev_eval
        def test_marked():
            read()

        def test_inside(tmp_path):
            (tmp_path / "x").write_text("fine")
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "support.beside", "-p", "no:cacheprovider",
                             "-m", "", str(tmp_path / "test_reader.py")], capture_output=True, text=True,
                            timeout=300, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPOSITORY / "tests"),
                                                                              os.environ.get("PYTHONPATH", "")])})
    assert "1 failed, 2 passed" in result.stdout, result.stdout + result.stderr
    assert "test_unmarked" in result.stdout and f"open: {beside}" in result.stdout
