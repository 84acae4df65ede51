"""Compile the filter AST to an SQLite WHERE clause with bound parameters only.

Every predicate evaluates to true, false or NULL where NULL means "no match";
``Not`` folds NULL to false before negating, so NOT is an exact complement
(``ne`` and ``nin`` therefore match records that lack the key). Simple
comparisons use SQLite's JSON functions; containment and case folding call the
``ml_json`` function registered on each connection (``memlane.jsonmatch``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memlane.filters import And, Compare, Node, Not, Or

JSON_FUNCTION = "ml_json"

_NUMBER_TYPES = "('integer','real')"
_SQL_OPS = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def json_path(segments: tuple[str, ...]) -> str:
    return "$" + "".join(f'."{segment}"' for segment in segments)


class SqliteFilterCompiler:
    """``columns`` maps filter column names to SQL expressions; ``documents``
    maps lookup targets (e.g. ``metadata``) to the SQL expression of a JSON text column."""

    def __init__(self, columns: Mapping[str, str], documents: Mapping[str, str]):
        self.columns = columns
        self.documents = documents

    def compile(self, node: Node) -> tuple[str, list[Any]]:
        params: list[Any] = []
        return self._node(node, params), params

    def _node(self, node: Node, params: list[Any]) -> str:
        if isinstance(node, And):
            if not node.items:
                return "1"
            return "(" + " AND ".join(self._node(item, params) for item in node.items) + ")"
        if isinstance(node, Or):
            return "(" + " OR ".join(self._node(item, params) for item in node.items) + ")"
        if isinstance(node, Not):
            return f"NOT COALESCE({self._node(node.item, params)}, 0)"
        if node.field.column is not None:
            return self._column(self.columns[node.field.column], node.op, node.value, params)
        document = self.documents[node.field.target]
        return self._json(document, json_path(node.field.path), node.op, node.value, params)

    # -- plain text columns ------------------------------------------------

    def _column(self, col: str, op: str, value: Any, params: list[Any]) -> str:
        if op == "exists":
            return f"{col} IS NOT NULL"
        if op == "eq" and value is None:
            return f"{col} IS NULL"
        if op == "ne":
            params.append(value)
            return f"{col} IS NOT ?"
        if op in ("in", "nin"):
            present = [v for v in value if v is not None]
            parts = []
            if present:
                params.extend(present)
                parts.append(f"{col} IN ({','.join('?' * len(present))})")
            if len(present) < len(value):
                parts.append(f"{col} IS NULL")
            clause = "(" + " OR ".join(parts) + ")" if parts else "0"
            return clause if op == "in" else f"NOT COALESCE({clause}, 0)"
        if op == "contains":
            params.append(value)
            return f"instr({col}, ?) > 0"
        if op == "icontains":
            params.append(json.dumps(value))
            return f"{JSON_FUNCTION}(json_quote({col}), 'icontains', ?)"
        params.append(value)
        return f"{col} {_SQL_OPS[op]} ?"

    # -- paths into a JSON document -----------------------------------------

    def _json(self, doc: str, path: str, op: str, value: Any, params: list[Any]) -> str:
        if op == "exists":
            params.append(path)
            return f"json_type({doc}, ?) IS NOT NULL"
        if op == "ne":
            return f"NOT COALESCE({self._json(doc, path, 'eq', value, params)}, 0)"
        if op == "nin":
            return f"NOT COALESCE({self._json(doc, path, 'in', value, params)}, 0)"
        if op == "in":
            return self._json_in(doc, path, value, params)
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
