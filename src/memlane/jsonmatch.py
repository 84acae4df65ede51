"""Semantics of the JSON operators of the filter language, as plain functions.

Backends without native JSON containment (SQLite) call these; backends with it
(PostgreSQL jsonb ``@>``) compile to the native operator, and the conformance
suite checks that both agree.

- ``json_equal``: JSON equality. ``true`` is not ``1``; ``1`` equals ``1.0``.
- ``json_contains(a, b)``: jsonb ``a @> b``. Objects: every key of ``b`` is in
  ``a`` with a contained value. Arrays: every element of ``b`` is contained in
  some element of ``a``; an array also contains a bare scalar it holds.
  Scalars: equality. ``contained_by(a, b)`` is ``json_contains(b, a)``.
- ``contains(a, b)`` (the ``contains`` operator): substring when both are
  strings, otherwise ``json_contains``.
- ``icontains(a, b)``: case-insensitive substring of a string, or a string
  element of an array equal to ``b`` ignoring case.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


def json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def json_contains(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and all(k in a and json_contains(a[k], v) for k, v in b.items())
    if isinstance(a, list):
        if isinstance(b, list):
            return all(any(json_contains(x, y) for x in a) for y in b)
        return isinstance(b, _SCALARS) and any(json_equal(x, b) for x in a)
    return json_equal(a, b)


def contains(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return b in a
    return json_contains(a, b)


def icontains(a: Any, b: Any) -> bool:
    if not isinstance(b, str):
        return False
    needle = b.casefold()
    if isinstance(a, str):
        return needle in a.casefold()
    if isinstance(a, list):
        return any(isinstance(x, str) and x.casefold() == needle for x in a)
    return False


OPERATIONS = {
    "eq": json_equal,
    "contains": contains,
    "icontains": icontains,
    "json_contains": json_contains,
    "json_contained_by": lambda a, b: json_contains(b, a),
}


@lru_cache(maxsize=256)
def _parse_argument(text: str) -> Any:
    return json.loads(text)


def sql_function(stored: str | None, op: str, argument: str) -> int:
    """SQL adapter: ``stored`` and ``argument`` are JSON texts; NULL (missing) never matches."""
    if stored is None:
        return 0
    return int(OPERATIONS[op](json.loads(stored), _parse_argument(argument)))
