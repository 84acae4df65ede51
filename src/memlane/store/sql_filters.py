"""What the SQL filter compilers share: the boolean skeleton over the filter AST.

Every predicate evaluates to true, false or NULL where NULL means "no match";
``Not`` is ``(p) IS NOT TRUE``, which folds NULL to false before negating, so NOT is an
exact complement (``ne`` and ``nin`` therefore match records that lack the key). It is
written so rather than ``NOT COALESCE(p, FALSE)`` because a function call costs SQLite's
parser several times the stack of a parenthesis: a filter at ``filters.MAX_DEPTH`` parses. A backend's
compiler says how it writes true and false, how it addresses a path into a JSON
document, and how it compiles one comparison on a column or a JSON path.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from memlane.core.filters import NOW, And, Compare, Node, Not, Or

#: comparisons every SQL dialect writes the same way
SQL_OPS = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class FilterCompiler(ABC):
    """``columns`` maps filter column names to SQL expressions; ``documents`` maps lookup
    targets (e.g. ``metadata``) to the SQL expression of a JSON document column."""

    TRUE = "TRUE"
    FALSE = "FALSE"
    #: a bound text value (PostgreSQL casts it: ``%s::text``)
    TEXT = "?"
    #: NULL-safe inequality (``a IS NOT b`` / ``a IS DISTINCT FROM b``)
    DISTINCT = "IS NOT"
    #: the current time as stored timestamps write it (``filters.NOW``)
    NOW = ""

    def __init__(self, columns: Mapping[str, str], documents: Mapping[str, str]):
        self.columns = columns
        self.documents = documents

    def compile(self, node: Node) -> tuple[str, list[Any]]:
        params: list[Any] = []
        return self._node(node, params), params

    def _node(self, node: Node, params: list[Any]) -> str:
        if isinstance(node, And):
            if not node.items:
                return self.TRUE
            return "(" + " AND ".join(self._node(item, params) for item in node.items) + ")"
        if isinstance(node, Or):
            return "(" + " OR ".join(self._node(item, params) for item in node.items) + ")"
        if isinstance(node, Not):
            return f"({self._node(node.item, params)}) IS NOT TRUE"
        assert isinstance(node, Compare)
        if node.value is NOW:
            return f"{self.columns[node.field.column]} {SQL_OPS[node.op]} {self.NOW}"
        if node.field.column is not None:
            return self._column(self.columns[node.field.column], node.op, node.value, params)
        return self._json(self.documents[node.field.target], self._path(node.field.path), node.op, node.value,
                          params)

    def _path(self, segments: tuple[str, ...]) -> Any:
        """How this dialect's ``_json`` takes a path into a document."""
        return segments

    def _column(self, col: str, op: str, value: Any, params: list[Any]) -> str:
        """One comparison on a (text) column, its value bound in ``params``: NULL-safe ``ne``; ``in`` and
        ``nin`` with None among the values match the NULL column."""
        if op == "exists":
            return f"{col} IS NOT NULL"
        if op == "eq" and value is None:
            return f"{col} IS NULL"
        if op == "ne":
            params.append(value)
            return f"{col} {self.DISTINCT} {self.TEXT}"
        if op in ("in", "nin"):
            present = [v for v in value if v is not None]
            parts = [self._one_of(col, present, params)] if present else []
            if len(present) < len(value):
                parts.append(f"{col} IS NULL")
            clause = "(" + " OR ".join(parts) + ")" if parts else self.FALSE
            return clause if op == "in" else f"NOT COALESCE({clause}, {self.FALSE})"
        if op in ("contains", "icontains"):
            return self._substring(col, value, params, fold=op == "icontains")
        params.append(value)
        return f"{col} {SQL_OPS[op]} {self.TEXT}"

    @abstractmethod
    def _one_of(self, col: str, values: list[Any], params: list[Any]) -> str:
        """``col`` is one of ``values`` (none of them None)."""

    @abstractmethod
    def _substring(self, col: str, value: str, params: list[Any], *, fold: bool) -> str:
        """``value`` occurs in ``col`` (``fold``: after case folding both)."""

    def _json(self, doc: str, path: Any, op: str, value: Any, params: list[Any]) -> str:
        """One comparison (or JSON-document lookup) at ``path`` in the JSON document ``doc``: ``ne`` and
        ``nin`` are the exact complements of ``eq`` and ``in`` (a missing key matches them)."""
        if op == "exists":
            return self._json_exists(doc, path, params)
        if op in ("ne", "nin"):
            positive = self._json(doc, path, "eq" if op == "ne" else "in", value, params)
            return f"NOT COALESCE({positive}, {self.FALSE})"
        if op == "in":
            return self._json_in(doc, path, value, params)
        return self._json_compare(doc, path, op, value, params)

    @abstractmethod
    def _json_exists(self, doc: str, path: Any, params: list[Any]) -> str:
        """``path`` is present in ``doc``."""

    @abstractmethod
    def _json_in(self, doc: str, path: Any, values: Any, params: list[Any]) -> str:
        """The value at ``path`` is one of ``values``."""

    @abstractmethod
    def _json_compare(self, doc: str, path: Any, op: str, value: Any, params: list[Any]) -> str:
        """Any other comparison at ``path``: equality, order, containment, case-folded match."""
