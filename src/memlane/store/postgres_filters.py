"""Compile the filter AST to a PostgreSQL WHERE clause with bound parameters only (``%s``).

The boolean skeleton and its NULL rules are ``sql_filters.FilterCompiler``'s; the
semantics are those of the SQLite compiler (``sqlite_filters``) and of
``memlane.core.jsonmatch``, which the conformance suite checks row by row:

- paths step through JSON objects only (``->`` with a text key: ``tags.0`` does not
  index an array, as ``$."tags"."0"`` does not in SQLite);
- JSON equality is jsonb equality (``true`` is not ``1``, ``1`` is ``1.0``); an equality
  is also written as jsonb containment so the GIN index on ``metadata`` can serve it;
- containment is jsonb's own ``@>`` / ``<@`` (jsonmatch follows it); ``key_text`` is
  ``->>`` text equality (seed 003's ``key_lookup``); case folding is the server's Unicode
  case folding when it has one (PostgreSQL 18 ``casefold``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from psycopg.types.json import Jsonb

from memlane.store.sql_filters import SQL_OPS as _SQL_OPS
from memlane.store.sql_filters import FilterCompiler


#: now, as ``timeutil`` writes timestamps (the statement's start, in UTC, with microseconds)
NOW_SQL = """to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')"""


def casefold_sql(server_version: int) -> str:
    """A SQL template (``{}`` is the text) folding case like ``str.casefold`` as closely as the server can."""
    if server_version >= 180000:
        return "casefold(({}) COLLATE pg_unicode_fast)"
    if server_version >= 170000:
        return "lower(({}) COLLATE pg_c_utf8)"
    return "lower({})"


def _nest(path: tuple[str, ...], value: Any) -> Any:
    for segment in reversed(path):
        value = {segment: value}
    return value


class PostgresFilterCompiler(FilterCompiler):
    """Documents are jsonb columns; paths are tuples of keys (``->`` steps). ``casefold`` is a
    SQL template (see ``casefold_sql``)."""

    NOW = NOW_SQL
    TEXT = "%s::text"
    DISTINCT = "IS DISTINCT FROM"

    def __init__(self, columns: Mapping[str, str], documents: Mapping[str, str], casefold: str = "lower({})"):
        super().__init__(columns, documents)
        self.casefold = casefold

    # -- plain text columns (declared COLLATE "C": byte order, as in SQLite) ----

    def _one_of(self, col: str, values: list[Any], params: list[Any]) -> str:
        params.append(values)
        return f"{col} = ANY(%s::text[])"

    def _substring(self, col: str, value: str, params: list[Any], *, fold: bool) -> str:
        params.append(value.casefold() if fold else value)
        return f"strpos({self.casefold.format(col) if fold else col}, %s::text) > 0"

    # -- paths into a jsonb document --------------------------------------------

    def _at(self, doc: str, path: tuple[str, ...], params: list[Any]) -> str:
        params.extend(path)
        return "(" + doc + "".join(" -> %s::text" for _ in path) + ")"

    def _contains(self, doc: str, path: tuple[str, ...], value: Any, params: list[Any]) -> str:
        """jsonb ``@>`` at the path; at the document's root (a lookup) the GIN index can serve it."""
        at = self._at(doc, path, params)
        params.append(Jsonb(value))
        return f"({at} @> %s::jsonb)"

    def _json_exists(self, doc: str, path: tuple[str, ...], params: list[Any]) -> str:
        if len(path) == 1:  # a top-level key: the GIN index answers ``?``
            params.append(path[0])
            return f"({doc} ? %s::text)"
        return f"{self._at(doc, path, params)} IS NOT NULL"

    def _json_compare(self, doc: str, path: tuple[str, ...], op: str, value: Any, params: list[Any]) -> str:
        if op == "eq":
            if value is None:
                return f"COALESCE(jsonb_typeof({self._at(doc, path, params)}), 'null') = 'null'"
            # equal values contain each other: the containment lets the GIN index narrow the rows
            params.append(Jsonb(_nest(path, value)))
            containment = f"{doc} @> %s::jsonb"
            at = self._at(doc, path, params)
            params.append(Jsonb(value))
            return f"({containment} AND {at} = %s::jsonb)"
        if op in ("gt", "gte", "lt", "lte"):
            # each ``_at`` binds its own copy of the path: parameters follow the text's order
            kind = "string" if isinstance(value, str) else "number"
            test = f"jsonb_typeof({self._at(doc, path, params)}) = '{kind}'"
            if kind == "string":
                operand = f"({self._at(doc, path, params)} #>> '{{}}') COLLATE \"C\""
                cast = "text"
            else:
                operand = f"{self._at(doc, path, params)}::numeric"
                cast = "numeric"
            params.append(value)
            return f"CASE WHEN {test} THEN {operand} {_SQL_OPS[op]} %s::{cast} END"
        if op == "contains":
            if not isinstance(value, str):
                return self._contains(doc, path, value, params)
            # a substring of a string, else JSON containment
            test = f"jsonb_typeof({self._at(doc, path, params)}) = 'string'"
            text = f"{self._at(doc, path, params)} #>> '{{}}'"
            params.append(value)
            substring = f"strpos({text}, %s::text) > 0"
            contained = self._contains(doc, path, value, params)
            return f"CASE WHEN {test} THEN {substring} ELSE {contained} END"
        if op == "icontains":
            folded = value.casefold()
            kind = f"jsonb_typeof({self._at(doc, path, params)})"
            text = self.casefold.format(f"{self._at(doc, path, params)} #>> '{{}}'")
            params.append(folded)
            substring = f"strpos({text}, %s::text) > 0"
            elements = f"jsonb_array_elements({self._at(doc, path, params)})"
            params.append(folded)
            element = self.casefold.format("x.e #>> '{}'")
            return (f"CASE {kind} WHEN 'string' THEN {substring}"
                    f" WHEN 'array' THEN EXISTS (SELECT 1 FROM {elements} AS x(e)"
                    f" WHERE jsonb_typeof(x.e) = 'string' AND {element} = %s::text) ELSE FALSE END")
        if op == "json_contains":
            return self._contains(doc, path, value, params)
        if op == "json_contained_by":
            at = self._at(doc, path, params)
            params.append(Jsonb(value))
            return f"({at} <@ %s::jsonb)"
        if op == "key_text":  # ->> on both sides: the filter value printed as jsonb prints it
            at = self._at(doc, path, params)
            params.append(Jsonb(value))
            return f"(({at} #>> '{{}}') = (%s::jsonb #>> '{{}}'))"
        raise ValueError(f"unknown filter operator {op!r}")  # the parser admits no other

    def _json_in(self, doc: str, path: tuple[str, ...], values: tuple[Any, ...], params: list[Any]) -> str:
        present = [v for v in values if v is not None]
        parts = []
        if present:
            at = self._at(doc, path, params)
            params.append([Jsonb(v) for v in present])
            parts.append(f"{at} = ANY(%s::jsonb[])")
        if len(present) < len(values):
            parts.append(self._json(doc, path, "eq", None, params))
        return "(" + " OR ".join(parts) + ")" if parts else "FALSE"
