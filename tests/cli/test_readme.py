"""Every code block of README.md runs as written (the way sqlite-utils tests its docs), each kind in a
fresh MEMLANE_HOME: the Python blocks in one interpreter session, in order; the shell blocks in bash
with `memlane` on PATH; the server section with `memlane serve` started as written (port 18088) and
stopped by the test, its curl lines and the mem0 client block run against it.

Not run, and why (SKIPPED below): `make run` / `make test` (the bootstrap that runs this very suite),
`pip install` (would change the environment under test), the PostgreSQL block (names a server at host
`db`; the bundled PostgreSQL paths are tested in test_bundled_postgres.py) and the Development block
(`make test` is this suite, `make test-fast` part of it, `make fuzz` its fuzz tests with more examples,
`make bench` an hour).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlane.hosting import local_server
from support.pdfs import make_pdf

README = Path(__file__).resolve().parents[2] / "README.md"
DATA = README.parent / "tests" / "data"
BIN = Path(sys.executable).parent
TIMEOUT = 900

SKIPPED = {  # a block's first line -> why it is not run here
    "make run": "bootstraps .venv and runs this test suite",
    "pip install 'memlane[local]'": "installs from PyPI into the environment under test",
    "export MEMLANE_DATABASE_URL": "names a PostgreSQL server at host 'db'",
    "make test     # full suite": "is this test suite (make test-fast: part of it; make fuzz reruns two of its "
                                   "files longer; make bench runs for an hour)",
}


def blocks(language: str) -> list[str]:
    found = re.findall(r"^```(\w+)\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)
    return [code for lang, code in found if lang == language and not any(code.startswith(s) for s in SKIPPED)]


def test_every_skipped_block_still_exists():
    """A renamed block must not silently escape the test."""
    text = README.read_text(encoding="utf-8")
    for first_line in SKIPPED:
        assert f"```bash\n{first_line}" in text, first_line


@pytest.mark.parametrize("page", [README, *sorted((README.parent / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_the_pages_name_nothing_outside_the_repository(page):
    """A reader of a clone has only the repository: no path out of it, no name of a development document
    ("seed 001"), no link that leaves it."""
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text
    seed = re.search(r".{0,40}\bseeds? ?0\d\d\b.{0,20}", text, re.I)
    assert seed is None, seed[0]
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (page.parent / target).exists(), f"{page.name} links to {target}, which is not in the repository"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh home; a working directory laid out as a clone of the repository as far as the README's
    commands read it (tests/data: the eval cases) and the report.pdf the document examples name. Nothing
    outside the repository: the README must run in a clone with nothing beside it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests").mkdir()
    (work / "tests" / "data").symlink_to(DATA)
    (work / "report.pdf").write_bytes(make_pdf(["Annual report", "Revenue in Q4 grew by 12 percent to 4.1 million."]))
    monkeypatch.setenv("MEMLANE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    monkeypatch.delenv("MEMLANE_URL", raising=False)
    monkeypatch.chdir(work)
    return work


def bash(code: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", code], capture_output=True, text=True,
                            timeout=TIMEOUT, **kwargs)
    assert result.returncode == 0, f"{code}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    return result


@pytest.mark.model
def test_python_blocks_run_in_order(workdir):
    code = [b for b in blocks("python") if "MemoryClient" not in b]  # the mem0 client needs the server below
    assert len(code) == 10  # a new block is run too; a lost one fails here
    namespace: dict = {"__name__": "__readme__"}
    for block in code:
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["hits"]["results"], "the first sample's search found nothing"
    assert "total_matches" in namespace["found"]  # the agent-context block searched
    assert namespace["plan"]["results"], "the maintenance block's dry run planned no merge"
    assert namespace["like_mem0"]["results"] and namespace["listed"]["results"]  # mem0's names (seed 000)


@pytest.mark.model
def test_shell_blocks_run(workdir):
    shell = [b for b in blocks("bash") if "memlane serve" not in b and "curl" not in b]
    assert shell and any("memlane add" in b for b in shell)
    for block in shell:
        out = bash(block)
    assert "memlane " in out.stdout  # the last line: memlane --version
    assert (workdir / "alice.jsonl").exists()


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.mark.model
def test_server_section_runs_against_memlane_serve(workdir):
    if not _port_free(18088):
        pytest.skip("port 18088, which the README's commands name, is in use on this machine")
    [start] = [b for b in blocks("bash") if "memlane serve  " in b]
    [curls] = [b for b in blocks("bash") if "curl" in b]
    [mem0_block] = [b for b in blocks("python") if "MemoryClient" in b]
    lines = [line.split("#")[0].strip() for line in start.strip().splitlines()]
    for line in lines[:-1]:
        bash(line)
    assert lines[-1] == "memlane serve"
    server = subprocess.Popen(["bash", "-c", "exec " + lines[-1]], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        home = Path(os.environ["MEMLANE_HOME"])
        deadline = time.monotonic() + TIMEOUT
        while local_server.read(home) is None:
            assert server.poll() is None, "memlane serve exited"
            assert time.monotonic() < deadline
            time.sleep(0.2)
        out = bash(curls + '\necho; echo "KEY=$KEY"')  # curl's answers end without a newline
        assert '"event": "ADD"' in out.stdout.replace('"event":"ADD"', '"event": "ADD"')
        key = out.stdout.strip().splitlines()[-1].removeprefix("KEY=")
        assert key.startswith("ml_"), out.stdout
        # as the README says: the key's tenant (default) is the memlane command's, in this process and the server's
        for where in ("", "--local "):
            listed = bash(f"memlane {where}list --user alice --json")
            assert "vegetarian" in listed.stdout, (where, listed.stdout)
        result = subprocess.run([sys.executable, "-c", mem0_block], capture_output=True, text=True,
                                timeout=TIMEOUT, env={**os.environ, "KEY": key})
        assert result.returncode == 0, result.stderr
    finally:
        server.terminate()
        server.wait(timeout=60)
