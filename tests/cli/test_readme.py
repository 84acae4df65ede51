"""Every code block of README.md and of the docs pages that promise it runs as written (the way
sqlite-utils tests its docs), each page in a fresh MEMLANE_HOME and working directory: its Python blocks
in one interpreter session, in order; its shell blocks in bash with `memlane` on PATH; its server part
(a shell block whose last line is `memlane serve`) with the server started as written, on a free port
(the page's port, 18088, is replaced by it in every block, so a server the reader runs does not stop
the suite), its curl lines and its mem0 client blocks run against it. Every JSON block of every page
parses.

A block the test must not run is preceded by `<!-- not run: why -->` on the page: `make run` /
`make test` (the bootstrap that runs this very suite), `pip install` (would change the environment
under test), a PostgreSQL block naming a server at host `db` (the bundled PostgreSQL paths are tested
in test_bundled_postgres.py).
"""

from __future__ import annotations

import json
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

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
DATA = ROOT / "tests" / "data"
BIN = Path(sys.executable).parent
TIMEOUT = 900
PAGE_PORT = "18088"
ALL_PAGES = [README, *sorted(DOCS.glob("*.md"))]
# the pages whose blocks run, with how many Python and shell blocks each holds (a lost block fails here)
RUN = {"README.md": (1, 1), "python.md": (9, 0), "storage.md": (1, 1), "integrations.md": (1, 0),
       "rest.md": (0, 0), "cli.md": (0, 1)}
BLOCK = re.compile(r"(?:<!-- not run: (?P<why>[^>]*?) -->\n)?^```(?P<lang>\w+)\n(?P<code>.*?)^```", re.M | re.S)


def page_blocks(page: Path, language: str, *, skipped: bool = False) -> list[str]:
    found = BLOCK.finditer(page.read_text(encoding="utf-8"))
    return [m["code"] for m in found if m["lang"] == language and (m["why"] is not None) == skipped]


def serves(code: str) -> bool:
    return any(line.split("#")[0].strip() == "memlane serve" for line in code.splitlines())


def talks_to_server(code: str) -> bool:
    return "curl" in code or "MemoryClient" in code or serves(code)


def test_every_not_run_marker_names_a_reason_and_a_block():
    """A block is left out only with a reason said on the page; a marker not followed by a block is a
    mistake (the block below it would run, or was lost)."""
    for page in ALL_PAGES:
        text = page.read_text(encoding="utf-8")
        for marker in re.finditer(r"<!-- not run: ([^>]*?) -->(\n```)?", text):
            assert marker[1].strip(), f"{page.name}: a not-run marker without a reason"
            assert marker[2], f"{page.name}: '{marker[0]}' is not right above a code block"
    assert page_blocks(README, "bash", skipped=True)[0].startswith("make run")


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda p: p.name)
def test_every_json_block_parses(page):
    for code in page_blocks(page, "json"):
        json.loads(code)


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda p: p.name)
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


def test_the_readme_leads_to_every_docs_page():
    """The front page stays short and every page of docs/ is reachable from it."""
    text = README.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "# memlane" and "make run" in text[:400] and "make test" in text[:400]
    linked = set(re.findall(r"\]\(docs/([\w.-]+\.md)", text))
    assert linked == {p.name for p in DOCS.glob("*.md")}, "pages not linked from the README"
    assert len(text.splitlines()) < 200


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh home; a working directory laid out as a clone of the repository as far as the pages'
    commands read it (tests/data: the eval cases) and the report.pdf the document examples name. Nothing
    outside the repository: the pages must run in a clone with nothing beside it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "tests").mkdir()
    (work / "tests" / "data").symlink_to(DATA)
    (work / "report.pdf").write_bytes(make_pdf(["Annual report", "Revenue in Q4 grew by 12 percent to 4.1 million."]))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MEM0_TELEMETRY", "False")
    for name in [n for n in os.environ if n.startswith("MEMLANE_")]:  # a reader has set none
        monkeypatch.delenv(name)
    monkeypatch.setenv("MEMLANE_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(work)
    return work


def bash(code: str, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", code], capture_output=True, text=True,
                            timeout=TIMEOUT, **kwargs)
    assert result.returncode == 0, f"{code}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
    return result


def test_the_run_table_counts_every_block():
    for name, (python, shell) in RUN.items():
        page = README if name == "README.md" else DOCS / name
        assert len([b for b in page_blocks(page, "python") if not talks_to_server(b)]) == python, name
        assert len([b for b in page_blocks(page, "bash") if not talks_to_server(b)]) == shell, name


PYTHON_CHECKS = {  # what a page's Python session must have produced, beyond running
    "README.md": lambda ns: ns["hits"]["results"] and ns["about"]["metadata"]["query_kind"] == "about_user",
    "python.md": lambda ns: (ns["hits"]["results"] and "total_matches" in ns["found"] and ns["plan"]["results"]
                             and ns["like_mem0"]["results"] and ns["listed"]["results"]),
    "storage.md": lambda ns: ns["again"] == ns["first"],
    "integrations.md": lambda ns: ns["agent_tools"],
}


@pytest.mark.model
@pytest.mark.parametrize("name", [n for n, (python, _) in RUN.items() if python])
def test_python_blocks_run_in_order(workdir, name):
    page = README if name == "README.md" else DOCS / name
    namespace: dict = {"__name__": "__page__"}
    for block in [b for b in page_blocks(page, "python") if not talks_to_server(b)]:
        exec(compile(block, page.name, "exec"), namespace)
    assert PYTHON_CHECKS[name](namespace)


SHELL_CHECKS = {
    "README.md": lambda work, out: "alérgica" in out,
    "cli.md": lambda work, out: (work / "alice.jsonl").exists() and re.search(r"memlane \d", out),
    "storage.md": lambda work, out: (work / "restored-home" / "memlane.db").exists() and out.count("passport") >= 2,
}


@pytest.mark.model
@pytest.mark.parametrize("name", [n for n, (_, shell) in RUN.items() if shell])
def test_shell_blocks_run(workdir, name):
    page = README if name == "README.md" else DOCS / name
    out = "".join(bash(block).stdout for block in page_blocks(page, "bash") if not talks_to_server(block))
    assert SHELL_CHECKS[name](workdir, out), out


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.model
@pytest.mark.parametrize("name", [n for n in RUN if any(serves(b) for b in page_blocks(
    README if n == "README.md" else DOCS / n, "bash"))])
def test_server_part_runs_against_memlane_serve(workdir, name):
    page = README if name == "README.md" else DOCS / name
    port = str(free_port())
    [start] = [b for b in page_blocks(page, "bash") if serves(b)]
    curls = [b.replace(PAGE_PORT, port) for b in page_blocks(page, "bash") if "curl" in b]
    clients = [b.replace(PAGE_PORT, port) for b in page_blocks(page, "python") if "MemoryClient" in b]
    assert curls, f"{name} starts a server and never talks to it"
    lines = [line.split("#")[0].strip() for line in start.strip().splitlines()]
    for line in lines[:-1]:
        bash(line)
    assert lines[-1] == "memlane serve"
    server = subprocess.Popen(["bash", "-c", f"exec {lines[-1]} --port {port}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        home = Path(os.environ["MEMLANE_HOME"])
        deadline = time.monotonic() + TIMEOUT
        while local_server.read(home) is None:
            assert server.poll() is None, "memlane serve exited"
            assert time.monotonic() < deadline
            time.sleep(0.2)
        out = bash("\n".join(curls) + '\necho; echo "KEY=$KEY"')  # curl's answers end without a newline
        assert '"event": "ADD"' in out.stdout.replace('"event":"ADD"', '"event": "ADD"')
        key = out.stdout.strip().splitlines()[-1].removeprefix("KEY=")
        assert key.startswith("ml_"), out.stdout
        # as the pages say: the key's tenant (default) is the memlane command's, in this process and the server's
        for where in ("", "--local "):
            listed = bash(f"memlane {where}list --user alice --json")
            assert "vegetarian" in listed.stdout, (where, listed.stdout)
        for block in clients:
            result = subprocess.run([sys.executable, "-c", block], capture_output=True, text=True,
                                    timeout=TIMEOUT, env={**os.environ, "KEY": key})
            assert result.returncode == 0, result.stderr
    finally:
        server.terminate()
        server.wait(timeout=60)
