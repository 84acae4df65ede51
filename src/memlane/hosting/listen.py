"""The listening socket of ``memlane serve``, bound before anything else happens.

uvicorn runs the application's start-up (loading the model, announcing the server in
``<home>/server.json``) before it binds its port. A second ``memlane serve`` on a busy port would load
the model for nothing and, failing, take back an announcement that was the running server's. Binding
first makes a busy port the first thing found: a clear error, nothing loaded, nothing announced.
"""

from __future__ import annotations

import errno
import socket
from pathlib import Path

from memlane.core.errors import MemlaneError
from memlane.hosting import local_server


class ListenError(MemlaneError, OSError):
    """``memlane serve`` cannot listen where it was asked to (a busy port, an address not of this machine)."""


def bind(host: str, port: int, home: Path) -> socket.socket:
    """A socket bound to ``host:port`` (as uvicorn binds it), or ``ListenError`` saying what is in the way."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ListenError(_why(host, port, home, exc)) from None
    sock.set_inheritable(True)
    return sock


def _why(host: str, port: int, home: Path, exc: OSError) -> str:
    shown = f"[{host}]" if ":" in host else host
    message = f"cannot listen on {shown}:{port}: {exc.strerror or exc}."
    if exc.errno != errno.EADDRINUSE:
        return f"{message} Check --host (an address of this machine) and --port."
    announced = local_server.read(home)
    if announced is not None and announced.url.endswith(f":{port}") and local_server.running(announced):
        owner = f" (pid {announced.pid})" if announced.pid else ""
        return (f"{message} memlane's server for this home already runs there{owner}: the memlane command "
                f"uses it. Stop it first, or choose another --port.")
    return f"{message} Another program listens there: choose another --port."
