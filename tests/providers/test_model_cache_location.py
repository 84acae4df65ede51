"""One model cache per user: the local model's ONNX export lives in the platform's cache directory
(``$MEMLANE_MODEL_CACHE`` overrides it), so a new memlane home reuses it instead of exporting again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from platformdirs import user_cache_path

from memlane.core.config import MODEL_CACHE_ENV, model_cache

BIN = Path(sys.executable).parent


def test_the_default_cache_is_the_users_not_the_homes(monkeypatch, tmp_path):
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    seen = set()
    for home in ("a", "b"):
        monkeypatch.setenv("MEMLANE_HOME", str(tmp_path / home))
        seen.add(model_cache())
    assert seen == {user_cache_path("memlane", appauthor=False) / "models"}
    assert not any(str(path).startswith(str(tmp_path)) for path in seen)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_CACHE_HOME is the Linux convention")
def test_xdg_cache_home_is_respected(monkeypatch, tmp_path):
    monkeypatch.delenv(MODEL_CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert model_cache() == tmp_path / "xdg" / "memlane" / "models"


def test_the_environment_overrides_it(monkeypatch, tmp_path):
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "mine"))
    assert model_cache() == tmp_path / "mine"
    monkeypatch.setenv(MODEL_CACHE_ENV, "~/somewhere")
    assert model_cache() == Path.home() / "somewhere"


def _listing(directory: Path) -> dict[str, int]:
    return {f.name: f.stat().st_mtime_ns for f in directory.iterdir()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="points the user's cache elsewhere via XDG")
def test_two_new_homes_use_the_one_export(embedder, _model_cache, tmp_path):
    """The user's cache holds the export (as after a first use); two brand-new homes load it from there:
    neither exports the model again (no new file in the cache) nor keeps a models/ copy of its own."""
    embedder.embed(["make sure the session's export exists"], "document")
    cache = tmp_path / "xdg" / "memlane" / "models"
    cache.mkdir(parents=True)
    for export in Path(_model_cache).glob("*.onnx"):
        shutil.copy2(export, cache / export.name)
    before = _listing(cache)
    assert before, "the session's model cache holds no export"
    env = {k: v for k, v in os.environ.items() if k not in (MODEL_CACHE_ENV, "MEMLANE_URL")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    for home in ("first", "second"):
        result = subprocess.run([BIN / "memlane", "--home", tmp_path / home, "--local", "add", "I keep bees",
                                 "--user", "u", "--no-infer", "--json"],
                                capture_output=True, text=True, env=env, timeout=600)
        assert result.returncode == 0, result.stderr
        assert '"ADD"' in result.stdout
        assert not (tmp_path / home / "models").exists()
    assert _listing(cache) == before  # read, never written again
