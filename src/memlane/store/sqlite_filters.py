"""Compile the filter AST to an SQLite WHERE clause with bound parameters only.

The boolean skeleton and its NULL rules are ``sql_filters.FilterCompiler``'s. Simple
comparisons use SQLite's JSON functions; containment and case folding call the
``ml_json`` function registered on each connection (``memlane.core.jsonmatch``).
"""

from __future__ import annotations

import json
from typing import Any

from memlane.store.sql_filters import SQL_OPS as _SQL_OPS
from memlane.store.sql_filters import FilterCompiler

JSON_FUNCTION = "ml_json"
#: now: ``timeutil.now_iso``, the clock every write of the store uses (SQLite's own has milliseconds only)
NOW_SQL = "ml_now()"

_NUMBER_TYPES = "('integer','real')"


def json_path(segments: tuple[str, ...]) -> str:
    return "$" + "".join(f'."{segment}"' for segment in segments)


class SqliteFilterCompiler(FilterCompiler):
    """Documents are JSON text columns; paths are SQLite JSON paths (``$."a"."b"``)."""

    TRUE = "1"
    FALSE = "0"
    NOW = NOW_SQL

    def _path(self, segments: tuple[str, ...]) -> str:
        return json_path(segments)

    # -- plain text columns ------------------------------------------------

    def _one_of(self, col: str, values: list[Any], params: list[Any]) -> str:
        params.extend(values)
        return f"{col} IN ({','.join('?' * len(values))})"

    def _substring(self, col: str, value: str, params: list[Any], *, fold: bool) -> str:
        if fold:
            params.append(json.dumps(value))
            return f"{JSON_FUNCTION}(json_quote({col}), 'icontains', ?)"
        params.append(value)
        return f"instr({col}, ?) > 0"

    # -- paths into a JSON document -----------------------------------------

    def _json_exists(self, doc: str, path: str, params: list[Any]) -> str:
        params.append(path)
        return f"json_type({doc}, ?) IS NOT NULL"

    def _json_compare(self, doc: str, path: str, op: str, value: Any, params: list[Any]) -> str:
        if op == "eq" and isinstance(value, (list, dict)):
            op = "eq_json"
        if op in ("eq", "gt", "gte", "lt", "lte"):
            return self._json_scalar(doc, path, _SQL_OPS[op], value, params)
        # containment, case folding and structural equality: ml_json on the JSON text of the value
        params.extend((path, json.dumps(value)))
        name = "eq" if op == "eq_json" else op
        return f"{JSON_FUNCTION}({doc} -> ?, '{name}', ?)"

    def _json_scalar(self, doc: str, path: str, sql_op: str, value: Any, params: list[Any]) -> str:
        if value is None:
            params.append(path)
            return f"COALESCE(json_type({doc}, ?), 'null') = 'null'"
        if isinstance(value, bool):
            params.append(path)
            return f"json_type({doc}, ?) = '{'true' if value else 'false'}'"
        kind = f"IN {_NUMBER_TYPES}" if isinstance(value, (int, float)) else "= 'text'"
        params.extend((path, path, value))
        return f"(json_type({doc}, ?) {kind} AND json_extract({doc}, ?) {sql_op} ?)"

    def _json_in(self, doc: str, path: str, values: tuple[Any, ...], params: list[Any]) -> str:
        strings = [v for v in values if isinstance(v, str)]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        parts = []
        for group, kind in ((strings, "= 'text'"), (numbers, f"IN {_NUMBER_TYPES}")):
            if group:
                params.extend((path, path, *group))
                marks = ",".join("?" * len(group))
                parts.append(f"(json_type({doc}, ?) {kind} AND json_extract({doc}, ?) IN ({marks}))")
        for special in dict.fromkeys(v for v in values if v is None or isinstance(v, bool)):
            parts.append(self._json_scalar(doc, path, "=", special, params))
        return "(" + " OR ".join(parts) + ")" if parts else "0"
