"""The ``memlane`` command imports only what a command needs: ``--help`` and the commands a running server
answers load neither the engine nor numpy, pydantic, httpx or a model runtime (what made ``--help`` take
seconds). Timings: benchmarks/bench_cli.py; here, which modules a process loaded."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pydantic", "httpx", "torch", "onnxruntime", "fastapi", "memlane.memory", "memlane.documents",
         "memlane.store", "memlane.embeddings", "markdown_it", "typer.rich_utils", "rich")

RUN = """
import json, sys
from memlane.cli.app import app
try:
    app({args!r})
except SystemExit:
    pass
print("MODULES=" + json.dumps(sorted(sys.modules)))
"""


def loaded(args: list[str], env: dict | None = None) -> set[str]:
    result = subprocess.run([sys.executable, "-c", RUN.format(args=args)], capture_output=True, text=True,
                            timeout=300, env=env)
    line = next(line for line in result.stdout.splitlines() if line.startswith("MODULES="))
    return set(json.loads(line.removeprefix("MODULES=")))


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["search", "--help"], ["keys", "--help"]])
def test_help_loads_no_engine(args):
    modules = loaded(args)
    heavy = HEAVY if len(args) == 1 else tuple(m for m in HEAVY if m != "pydantic")  # typer itself coerces a
    loaded_heavy = sorted(m for m in modules if m.split(".")[0] in heavy or m in heavy)  # command's options with it
    assert not loaded_heavy, (f"{args} loaded {loaded_heavy[:8]}: import them inside the commands that use them "
                              "(for rich: cli.render.escape, cli.base.console / errors are made on first print)")
    assert "memlane.cli.memories" in modules  # the commands are all there, their bodies' imports are not


def test_the_sdk_still_imports_from_the_package_root():
    code = ("import sys, memlane; assert 'memlane.memory' not in sys.modules; from memlane import Memory, "
            "Documents, AsyncMemory, AsyncDocuments, MemlaneError; import memlane.memory; "
            "assert Memory is memlane.memory.Memory and memlane.Memory is Memory; "
            "assert set(memlane.__all__) <= set(dir(memlane))")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
