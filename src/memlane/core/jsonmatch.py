"""Semantics of the JSON operators of the filter language, as plain functions.

Backends without native JSON containment (SQLite) call these; backends with it
(PostgreSQL jsonb ``@>``) compile to the native operator, and the conformance
suite checks that both agree.

- ``json_equal``: JSON equality. ``true`` is not ``1``; ``1`` equals ``1.0``.
- ``json_contains(a, b)``: PostgreSQL's jsonb ``a @> b``, exactly. Objects: every
  key of ``b`` is in ``a`` with a contained value. Arrays: every element of ``b``
  is contained in some element of ``a``. Scalars: equality. As in PostgreSQL, an
  array contains a bare scalar it holds only at the top level of the comparison
  (``["a"] @> "a"``, but not ``{"k": ["a"]} @> {"k": "a"}``).
  ``contained_by(a, b)`` is ``json_contains(b, a)``.
- ``json_text(a)``: PostgreSQL's ``->>``: a string's text, other values as jsonb
  prints them (``2024`` and ``"2024"`` both give ``2024``), JSON null gives None.
  ``key_text(a, b)`` compares two values that way (seed 003's ``key_lookup``).
- ``contains(a, b)`` (the ``contains`` operator): substring when both are
  strings, otherwise ``json_contains``.
- ``icontains(a, b)``: case-insensitive substring of a string, or a string
  element of an array equal to ``b`` ignoring case.
"""

from __future__ import annotations

import json
from decimal import Decimal
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


def json_contains(a: Any, b: Any, *, top: bool = True) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and all(k in a and json_contains(a[k], v, top=False) for k, v in b.items())
    if isinstance(a, list):
        if isinstance(b, list):
            return all(any(json_contains(x, y, top=False) for x in a) for y in b)
        return top and isinstance(b, _SCALARS) and any(json_equal(x, b) for x in a)
    return json_equal(a, b)


def json_text(value: Any) -> str | None:
    """The text PostgreSQL's ``->>`` gives for a JSON value (None for JSON null)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return _jsonb_out(value)


def _jsonb_out(value: Any) -> str:
    """jsonb's output form: ``", "`` and ``": "`` separators, object keys shortest first then by
    bytes, numbers in numeric's plain notation (``1e-07`` -> ``0.0000001``), UTF-8 unescaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format(Decimal(repr(value)), "f")
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_jsonb_out(item) for item in value) + "]"
    keys = sorted(value, key=lambda k: (len(k.encode()), k.encode()))
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {_jsonb_out(value[k])}" for k in keys) + "}"


def key_text(a: Any, b: Any) -> bool:
    """``a ->> = b`` as text (seed 003's key_lookup): a missing or null value never matches."""
    left, right = json_text(a), json_text(b)
    return left is not None and left == right


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
    "key_text": key_text,
}


@lru_cache(maxsize=256)
def _parse_argument(text: str) -> Any:
    return json.loads(text)


def sql_function(stored: str | None, op: str, argument: str) -> int:
    """SQL adapter: ``stored`` and ``argument`` are JSON texts; NULL (missing) never matches."""
    if stored is None:
        return 0
    return int(OPERATIONS[op](json.loads(stored), _parse_argument(argument)))
