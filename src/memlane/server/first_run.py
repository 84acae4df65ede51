"""The first start of a local server: an admin key for the default tenant, so ``make run`` is usable at once.

Only on a loopback address and only while ``keys.db`` has never held a key: a server reachable from other
machines never makes a key by itself, and a key the operator revoked is not silently replaced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memlane.hosting.keys import open_key_store


def first_start_key(home: Path, *, loopback: bool, tenant: str, config: Any = None) -> dict[str, Any] | None:
    """Create and return ``{"key", "id", "tenant", "admin", ...}`` on a loopback server's first start; else None.
    The key itself is returned only now: ``keys.db`` (or the PostgreSQL database of ``config``) stores its hash."""
    if not loopback:
        return None
    keys = open_key_store(config, home)
    try:
        if keys.list():
            return None
        key, made = keys.create(tenant, admin=True)
        return {"key": key, **made.to_dict()}
    finally:
        keys.close()


def active_keys(home: Path, config: Any = None) -> int:
    keys = open_key_store(config, home)
    try:
        return keys.count()
    finally:
        keys.close()
