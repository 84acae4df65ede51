"""Filter cases written before the memories exist: ``"@name"`` stands for the id of the memory called
``name``, resolved once the memories are stored (tests/core/test_platform_filters.py and its mem0 client
twin share the cases)."""

from __future__ import annotations

from typing import Any


def with_ids(value: Any, ids: dict[str, str]) -> Any:
    """``value`` with every ``"@name"`` string replaced by ``ids[name]``, at any depth."""
    if isinstance(value, str) and value.startswith("@"):
        return ids[value[1:]]
    if isinstance(value, dict):
        return {k: with_ids(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [with_ids(v, ids) for v in value]
    return value
