"""Where ``memlane serve`` listens: ``--host`` / ``--port``, else ``$MEMLANE_HOST`` / ``$MEMLANE_PORT``, else
127.0.0.1:18088; and ``make run PORT=… HOST=…`` passes them on."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP = 180.0  # generous: the machine is shared; nothing asserts on time


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")
@pytest.mark.parametrize("variables, options", [
    ([], ""),
    (["PORT=8080"], " --port 8080"),
    (["HOST=0.0.0.0"], " --host 0.0.0.0"),
    (["PORT=8080", "HOST=0.0.0.0"], " --port 8080 --host 0.0.0.0"),
])
def test_make_run_passes_port_and_host(variables, options):
    shown = subprocess.run(["make", "-n", "run", *variables], cwd=ROOT, capture_output=True, text=True, timeout=120,
                           env={k: v for k, v in os.environ.items() if k not in ("PORT", "HOST")})
    line = next(line for line in shown.stdout.splitlines() if "memlane serve" in line)
    assert line.strip() == f".venv/bin/memlane serve{options}"


def _answers(url: str, server: subprocess.Popen) -> bool:
    end = time.monotonic() + STARTUP
    while time.monotonic() < end:
        assert server.poll() is None, server.stdout.read()
        try:
            return httpx.get(url + "/health", timeout=5).status_code == 200
        except httpx.TransportError:
            time.sleep(0.2)
    return False


@pytest.mark.parametrize("flag", [False, True], ids=["env", "flag over env"])
def test_serve_reads_its_address_from_the_environment(tmp_path, flag):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    from_env, from_flag = free_port(), free_port()
    env = dict(os.environ, MEMLANE_HOME=str(tmp_path / "home"), MEMLANE_PORT=str(from_env), MEMLANE_HOST="127.0.0.1")
    args = [sys.executable, "-m", "memlane.cli", "--config", str(config), "serve", "--no-auth", "--log-level", "warning",
            *(["--port", str(from_flag)] if flag else [])]
    server = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert _answers(f"http://127.0.0.1:{from_flag if flag else from_env}", server)
    finally:
        server.terminate()
        server.communicate(timeout=STARTUP)
