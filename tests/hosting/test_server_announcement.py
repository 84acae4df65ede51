"""``<home>/server.json``: a server takes back only its own announcement, and gives the CLI back the
server it replaced while that one still runs; ``memlane serve`` binds its port before anything else, so
a busy port is reported at once and touches nothing (the end-to-end case: tests/hosting/test_first_run.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from memlane.hosting import local_server
from memlane.hosting.local_server import ServerAddress
from memlane.hosting.listen import ListenError, bind


class _Health(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def live():
    """A server answering /health in this process: an announcement of it is of a running server."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield ServerAddress(url=f"http://127.0.0.1:{server.server_address[1]}", key="ml_local_first", pid=os.getpid())
    server.shutdown()
    server.server_close()


def _dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


SECOND = ServerAddress(url="http://127.0.0.1:1", key="ml_local_second", pid=os.getpid())


def test_a_second_server_gives_the_running_one_back_when_it_stops(tmp_path, live):
    assert local_server.announce(tmp_path, live) is None
    replaced = local_server.announce(tmp_path, SECOND)
    assert replaced == live and local_server.read(tmp_path) == SECOND
    local_server.withdraw(tmp_path, SECOND, replaced)
    assert local_server.read(tmp_path) == live
    assert local_server.find(tmp_path) == live  # the CLI talks to the running server again
    local_server.withdraw(tmp_path, live)
    assert not (tmp_path / local_server.FILE_NAME).exists()


def test_a_replaced_server_that_stopped_is_not_announced_again(tmp_path, live):
    gone = ServerAddress(url=live.url, key="ml_local_gone", pid=_dead_pid())
    local_server.announce(tmp_path, gone)
    replaced = local_server.announce(tmp_path, SECOND)
    local_server.withdraw(tmp_path, SECOND, replaced)
    assert not (tmp_path / local_server.FILE_NAME).exists()


def test_an_announcement_another_server_made_since_is_left_alone(tmp_path, live):
    local_server.announce(tmp_path, SECOND)
    local_server.announce(tmp_path, live)
    local_server.withdraw(tmp_path, SECOND)
    assert local_server.read(tmp_path) == live


def test_a_busy_port_names_what_holds_it(tmp_path, live):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with pytest.raises(ListenError, match=f"cannot listen on 127.0.0.1:{port}: .*Another program"):
            bind("127.0.0.1", port, tmp_path)
    finally:
        taken.close()
    local_server.announce(tmp_path, live)  # this home's server listens on live's port
    live_port = int(live.url.rsplit(":", 1)[1])
    with pytest.raises(ListenError, match=rf"already runs there \(pid {os.getpid()}\).*--port"):
        bind("127.0.0.1", live_port, tmp_path)
    assert local_server.read(tmp_path) == live  # untouched


@pytest.mark.parametrize("host", ["192.0.2.1", "no-such-host.invalid"])  # not this machine's / no address
def test_an_address_that_cannot_be_listened_on_says_so(tmp_path, host):
    with pytest.raises(ListenError, match=f"cannot listen on {host}:18088: .*Check --host"):
        bind(host, 18088, tmp_path)


def test_a_free_port_is_bound_for_the_server_to_use(tmp_path):
    sock = bind("127.0.0.1", 0, tmp_path)
    try:
        assert sock.getsockname()[1] > 0 and sock.get_inheritable()
    finally:
        sock.close()
