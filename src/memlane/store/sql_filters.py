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

    @abstractmethod
    def _column(self, col: str, op: str, value: Any, params: list[Any]) -> str:
        """One comparison on a column, its value bound in ``params``."""

    @abstractmethod
    def _json(self, doc: str, path: Any, op: str, value: Any, params: list[Any]) -> str:
        """One comparison (or JSON-document lookup) at ``path`` in the JSON document ``doc``."""
