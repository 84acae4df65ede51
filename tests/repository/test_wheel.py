"""``pip install .`` / ``pipx install .``: the wheel the project builds installs the ``memlane`` command and
carries the package's data files (the e5 centres, the sample conversation, the dashboard), and the
``memlane`` it installs runs from the wheel's files, not from this checkout.

The wheel is built from a copy of the project (setuptools writes ``build/`` beside the sources), without
build isolation (no download: setuptools is in the development environment)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ["memlane/data/e5_centres.npz", "memlane/data/sample_conversation.jsonl", "memlane/py.typed",
        "memlane/server/ui/index.html", "memlane/server/ui/assets/app.js", "memlane/server/ui/assets/app.css"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("setuptools")
    source = tmp_path_factory.mktemp("project")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src" / "memlane", source / "src" / "memlane",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                    "--quiet", "-w", str(out), str(source)], check=True, timeout=600, capture_output=True)
    return next(out.glob("memlane-*.whl"))


def test_the_wheel_has_the_command_and_the_data_files(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        entry_points = archive.read(info).decode()
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "[console_scripts]" in entry_points and "memlane = memlane.cli:main" in entry_points
    assert set(DATA) <= names, sorted(set(DATA) - names)
    extras = {line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Provides-Extra:")}
    assert {"local", "server", "postgres"} <= extras  # what docs/install.md tells people to install


def test_the_installed_command_runs_from_the_wheel(wheel, tmp_path):
    target = tmp_path / "installed"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", "--target",
                    str(target), str(wheel)], check=True, timeout=600, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(target), MEMLANE_HOME=str(tmp_path / "home"))
    script = target / "bin" / "memlane"
    version = subprocess.run([str(script), "--version"], env=env, capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("memlane "), version.stderr
    where = subprocess.run([sys.executable, "-c", "import memlane, importlib.resources as r; "
                            "print(memlane.__file__); "
                            "print(all((r.files('memlane') / p).is_file() for p in "
                            f"{[p.removeprefix('memlane/') for p in DATA]!r}))"],
                           env=env, capture_output=True, text=True, timeout=120, check=True).stdout.split()
    assert where == [str(target / "memlane" / "__init__.py"), "True"]
