"""How the ``memlane`` command finds a running server: ``<home>/server.json``.

``memlane serve`` on a loopback address writes this file when it starts and removes it when it
stops. It holds the server's URL and a per-process access token (admin of the default tenant), is
readable by its owner only (mode 0600), and the token is valid only while that server process runs:
it is never stored in ``keys.db``. ``MEMLANE_URL`` (with ``MEMLANE_API_KEY``) names a server
explicitly, local or not.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

URL_ENV = "MEMLANE_URL"
KEY_ENV = "MEMLANE_API_KEY"
FILE_NAME = "server.json"
TOKEN_PREFIX = "ml_local_"


@dataclass(frozen=True)
class ServerAddress:
    """Where a running server is and the key to send it (None: a ``--no-auth`` server or no key known)."""

    url: str
    key: str | None = None
    pid: int | None = None


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def announce(home: Path, address: ServerAddress) -> ServerAddress | None:
    """Write ``<home>/server.json`` (owner-only) for the CLI of the same user to find this server.
    Returns the announcement it replaced (another server of the same home), for ``withdraw``."""
    home.mkdir(parents=True, exist_ok=True)
    previous = read(home)
    path = home / FILE_NAME
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.chmod(path, 0o600)  # an existing file keeps its mode on O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(asdict(address), handle)
    return previous if previous != address else None


def withdraw(home: Path, address: ServerAddress, previous: ServerAddress | None = None) -> None:
    """Take this server's announcement back, if ``server.json`` is still its own (another server may
    have replaced it): the server it replaced (``previous``) is announced again while it still runs,
    otherwise the file goes. So a second server of the same home, or one that failed to start, never
    leaves the CLI without the server that still runs."""
    if read(home) != address:
        return
    if previous is not None and running(previous):
        announce(home, previous)
    else:
        (home / FILE_NAME).unlink(missing_ok=True)


def read(home: Path) -> ServerAddress | None:
    try:
        data = json.loads((home / FILE_NAME).read_text(encoding="utf-8"))
        return ServerAddress(url=str(data["url"]), key=data.get("key"), pid=data.get("pid"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def _answers(url: str) -> bool:
    import http.client

    from memlane.hosting import http_client

    try:
        return http_client.request(url, "GET", "/health", connect_timeout=2.0, read_timeout=2.0).status_code == 200
    except (OSError, http.client.HTTPException):
        return False


def find(home: Path) -> ServerAddress | None:
    """The server the CLI should talk to: ``$MEMLANE_URL``, else a live server announced in ``home``
    (a file left by a server that died is ignored)."""
    announced = read(home)
    url = os.environ.get(URL_ENV, "").strip().rstrip("/")
    if url:
        key = os.environ.get(KEY_ENV) or (announced.key if announced and announced.url == url else None)
        return ServerAddress(url=url, key=key)
    return announced if announced is not None and running(announced) else None


def running(address: ServerAddress) -> bool:
    """Whether the announced server's process lives and answers."""
    return _alive(address.pid) and _answers(address.url)
