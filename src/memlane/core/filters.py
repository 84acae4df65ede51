"""The filter language, parsed once into a small AST that each backend compiles.

Grammar (``docs/filters.md`` has the full table)::

    filter  := { clause, ... }                       -- clauses combine with AND
             | {"lookup": L, "key": K, "value"?: V, "on"?: T}   -- JSON lookup node
    clause  := "AND": [filter, ...] | "OR": [filter, ...] | "NOT": [filter, ...]
             | field: value                          -- equality
             | field: "*"                            -- field present
             | field: {op: arg, ...}                 -- operators, combined with AND
    op      := eq ne gt gte lt lte in nin contains icontains
    L       := key_lookup contains contained_by has_key has_keys has_any_keys

A field is a record column (``user_id``, ``created_at``, ``memory`` …) or a
dotted path into the metadata JSON (``prefs.food``; ``metadata.prefs.food`` is
the same). Anything the parser does not understand raises ``FilterError`` naming
the offending part; nothing is ever silently ignored.

Size limits, checked before anything is parsed or compiled (every database has a
statement it cannot run, and a filter is input from anyone): a filter nests at most
``MAX_DEPTH`` JSON levels (16 levels of AND / OR / NOT), holds at most
``MAX_CONDITIONS`` comparisons and ``MAX_VALUES`` values in its ``in`` / ``nin`` /
key lists, and no string in it holds a NUL character or a lone surrogate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Union

from memlane.core import timeutil
from memlane.core.errors import FilterError, InvalidInputError
from memlane.core.validation import storable

OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
LOOKUPS = ("key_lookup", "contains", "contained_by", "has_key", "has_keys", "has_any_keys")
LOGIC = ("AND", "OR", "NOT")
LOGIC_ALIASES = {"$and": "AND", "$or": "OR", "$not": "NOT"}
#: the key whose value is an object of metadata keys (mem0's ``{"metadata": {"source": "email"}}``)
METADATA = "metadata"

SCOPE_COLUMNS = ("user_id", "agent_id", "run_id")
TIME_COLUMNS = ("created_at", "updated_at", "valid_to")
MEMORY_COLUMNS = ("id", "memory", "hash", *SCOPE_COLUMNS, "actor_id", "role", "memory_type", *TIME_COLUMNS)
MESSAGE_COLUMNS = ("id", *SCOPE_COLUMNS, "role", "name", "content", "created_at")
#: columns memlane's own conditions use and the filter language does not name (a user's key of that
#: name is a metadata path): ``event_id`` marks a provisional memory (core/jobs.py)
INTERNAL_MEMORY_COLUMNS = ("event_id",)

#: A filter's size limits (module docstring): JSON levels (two per AND / OR / NOT: the key and its list),
#: comparisons, and values in lists. SQLite's parser stops at about 90 nested parentheses and its
#: expression trees at 1,000 levels; a long OR of single values is an ``in``.
MAX_DEPTH = 32
MAX_CONDITIONS = 500
MAX_VALUES = 10_000

#: Operators the AST carries beyond the user-facing ones.
#: ``exists``: field present; ``json_contains`` / ``json_contained_by``: jsonb ``@>`` / ``<@``;
#: ``key_text``: ``->>`` text equality (``2024`` equals ``"2024"``).
INTERNAL_OPS = ("exists", "json_contains", "json_contained_by", "key_text")


@dataclass(frozen=True)
class Field:
    """A column of the record, or a path into one of its JSON documents."""

    column: str | None = None
    path: tuple[str, ...] = ()
    target: str = "metadata"

    def __str__(self) -> str:
        return self.column or ".".join(self.path)


@dataclass(frozen=True)
class Compare:
    field: Field
    op: str
    value: Any = None


@dataclass(frozen=True)
class And:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Not:
    item: "Node"


Node = Union[Compare, And, Or, Not]


class _Now:
    """A comparison value: the moment the statement runs, by the database's clock, in the stored
    timestamp form (``timeutil``). Compiled into the SQL, not bound, so a filter holding it reads
    the same on every call (cached keyword statistics stay valid)."""

    def __repr__(self) -> str:
        return "NOW"


#: ``Compare(Field(column="valid_to"), "gt", NOW)``: still valid now (expiry is checked at read time)
NOW = _Now()

#: The empty conjunction: matches every record.
MATCH_ALL = And(())


def conjoin(*nodes: Node) -> Node:
    """AND the nodes together, flattening nested conjunctions."""
    items: list[Node] = []
    for node in nodes:
        items.extend(node.items if isinstance(node, And) else (node,))
    return items[0] if len(items) == 1 else And(tuple(items))


def conjuncts(node: Node) -> tuple[Node, ...]:
    return node.items if isinstance(node, And) else (node,)


def clock_columns(node: Node) -> set[str]:
    """The columns ``node`` compares with ``NOW`` anywhere in it: a row's match can change with the clock
    alone (without a write) only through these columns."""
    if isinstance(node, Compare):
        return {str(node.field)} if node.value is NOW else set()
    if isinstance(node, Not):
        return clock_columns(node.item)
    return set().union(*(clock_columns(item) for item in node.items))


def scope_ids(where: Node) -> dict[str, list[str]]:
    """The scope ids a top-level condition pins (column -> ids): what a scope index, or a keyword
    match on scope tokens, can narrow the rows by. Empty when no scope id is pinned."""
    scope: dict[str, list[str]] = {}
    for c in conjuncts(where):
        if isinstance(c, Compare) and c.field.column in SCOPE_COLUMNS and c.value is not None:
            if c.op == "eq":
                scope[c.field.column] = [c.value]
            elif c.op == "in" and c.value and None not in c.value:
                scope[c.field.column] = list(c.value)
    return scope


def parse(
    filters: Mapping[str, Any] | None,
    *,
    columns: Sequence[str] = MEMORY_COLUMNS,
    targets: Sequence[str] = ("metadata",),
) -> Node:
    """Parse a filter dict into an AST. ``None`` and ``{}`` match everything."""
    if filters is None:
        return MATCH_ALL
    check_size(filters, "filters")
    return _Parser(tuple(columns), tuple(targets)).object(filters, "filters")


def check_size(filters: Any, path: str) -> None:
    """Refuse a filter deeper than ``MAX_DEPTH`` JSON levels, or with a string no store keeps (the
    one rule of ``validation.storable``), before anything walks it recursively."""
    try:
        storable(filters, path, max_depth=MAX_DEPTH)
    except InvalidInputError as exc:
        where = exc.field or path
        raise FilterError(str(exc).removeprefix(f"{where} "), path=where) from None


class _Parser:
    def __init__(self, columns: tuple[str, ...], targets: tuple[str, ...]):
        self.columns = columns
        self.targets = targets
        self.conditions = 0
        self.values = 0

    def _counted(self, node: Compare, path: str, values: int = 0) -> Compare:
        self.conditions += 1
        self.values += values
        if self.conditions > MAX_CONDITIONS:
            raise FilterError(f"a filter holds at most {MAX_CONDITIONS} conditions; for many values of one "
                              "field use {'field': {'in': [...]}}", path=path)
        if self.values > MAX_VALUES:
            raise FilterError(f"a filter's in / nin / key lists hold at most {MAX_VALUES:,} values in all",
                              path=path)
        return node

    # -- objects and logic ---------------------------------------------------

    def object(self, obj: Any, path: str) -> Node:
        if not isinstance(obj, Mapping):
            raise FilterError(f"expected an object (dict), got {_describe(obj)}", path=path)
        if isinstance(obj.get("lookup"), str) and "key" in obj:
            return self.lookup(obj, path)
        nodes: list[Node] = []
        for key, value in obj.items():
            if not isinstance(key, str) or not key:
                raise FilterError(f"keys must be non-empty strings, got {key!r}", path=path)
            logic = LOGIC_ALIASES.get(key, key)
            if logic in LOGIC:
                nodes.append(self.logic(logic, value, f"{path}.{key}"))
            elif key.lower() in ("and", "or", "not") and isinstance(value, list):
                raise FilterError(
                    f"{key!r} is not a logical operator; write it in upper case: {key.upper()!r}",
                    path=f"{path}.{key}",
                )
            else:
                nodes.append(self.field_clause(key, value, f"{path}.{key}"))
        return conjoin(*nodes) if nodes else MATCH_ALL

    def logic(self, op: str, value: Any, path: str) -> Node:
        if op == "NOT" and isinstance(value, Mapping) and value:  # mem0's form: {"NOT": {...}}, one filter object
            value = [value]
        if not isinstance(value, list) or not value:
            raise FilterError(
                f"{op} takes a non-empty list of filter objects, got {_describe(value)}", path=path
            )
        items = tuple(self.object(item, f"{path}[{i}]") for i, item in enumerate(value))
        if op == "AND":
            return conjoin(*items)
        if op == "OR":
            return items[0] if len(items) == 1 else Or(items)
        return Not(conjoin(*items))

    # -- field clauses -------------------------------------------------------

    def field_clause(self, key: str, value: Any, path: str) -> Node:
        if key == METADATA and METADATA in self.targets:
            return self.metadata_object(value, path)
        return self.value_clause(self.field(key, path), key, value, path)

    def value_clause(self, field: Field, key: str, value: Any, path: str) -> Node:
        if isinstance(value, str) and value == "*":
            return self._counted(Compare(field, "exists"), path)
        if isinstance(value, Mapping):
            if not value:
                raise FilterError("empty operator object; give at least one operator", path=path)
            unknown = [op for op in value if op not in OPERATORS]
            if unknown:
                raise FilterError(
                    f"unknown operator {unknown[0]!r} for field {key!r}; known operators: "
                    f"{', '.join(OPERATORS)}. To match a nested key use a dotted path "
                    f"('{key}.{unknown[0]}'); to compare a whole object use {{'eq': {{...}}}}",
                    path=path,
                )
            return conjoin(*(self.compare(field, op, arg, f"{path}.{op}") for op, arg in value.items()))
        return self.compare(field, "eq", value, path)

    def metadata_object(self, value: Any, path: str) -> Node:
        """mem0's ``{"metadata": {key: value or {op: argument}, ...}}``: a clause per key, combined with AND."""
        if not isinstance(value, Mapping) or not value:
            raise FilterError(
                f"metadata takes an object of metadata keys, e.g. {{'metadata': {{'source': 'email'}}}}; got "
                f"{_describe(value) if value != {} else 'an empty object'}. A metadata key called 'metadata' "
                "is 'metadata.metadata'", path=path)
        nodes = []
        for key, clause in value.items():
            if not isinstance(key, str) or not key:
                raise FilterError(f"keys must be non-empty strings, got {key!r}", path=path)
            field = self.field(key, f"{path}.{key}", target=METADATA)
            nodes.append(self.value_clause(field, key, clause, f"{path}.{key}"))
        return conjoin(*nodes)

    def field(self, key: str, path: str, *, target: str | None = None) -> Field:
        if target is None and key in self.columns:
            return Field(column=key)
        if target is None and key.startswith("metadata."):
            key = key[len("metadata."):]
        head = key.split(".", 1)[0]
        if target is None and head in self.columns:
            raise FilterError(f"{head!r} is a plain field and has no nested keys", path=path)
        segments = tuple(key.split("."))
        for segment in segments:
            if not segment:
                raise FilterError(
                    f"empty key segment in {key!r} (check for '..' or a leading/trailing dot)", path=path
                )
            if '"' in segment or any(ord(c) < 32 for c in segment):
                raise FilterError(f"key {key!r} contains a double quote or control character", path=path)
        return Field(path=segments, target=target or self.targets[0])

    def compare(self, field: Field, op: str, arg: Any, path: str) -> Node:
        if field.column is not None:
            arg = self.column_value(field.column, op, arg, path)
        else:
            arg = self.json_value(op, arg, path)
        return self._counted(Compare(field, op, arg), path, len(arg) if op in ("in", "nin") else 0)

    def column_value(self, column: str, op: str, arg: Any, path: str) -> Any:
        def one(value: Any, *, allow_none: bool) -> Any:
            if value is None and allow_none:
                return None
            if column in TIME_COLUMNS:
                if isinstance(value, (str, datetime, date)):
                    try:
                        return timeutil.canonical(value)
                    except ValueError:
                        pass
                raise FilterError(
                    f"{column} takes an ISO-8601 date or datetime (e.g. '2024-05-01T12:00:00Z'), "
                    f"got {value!r}",
                    path=path,
                )
            if isinstance(value, int) and not isinstance(value, bool):
                return str(value)
            if isinstance(value, str):
                return value
            raise FilterError(f"{column} is text; got {_describe(value)}", path=path)

        if op in ("in", "nin"):
            if not isinstance(arg, list):
                raise FilterError(f"{op} takes a list, got {_describe(arg)}", path=path)
            return tuple(one(v, allow_none=True) for v in arg)
        if op in ("eq", "ne"):
            return one(arg, allow_none=True)
        return one(arg, allow_none=False)

    def json_value(self, op: str, arg: Any, path: str) -> Any:
        _check_json(arg, path)
        if op in ("gt", "gte", "lt", "lte"):
            if not (_is_number(arg) or isinstance(arg, str)):
                raise FilterError(f"{op} compares numbers or strings, got {_describe(arg)}", path=path)
        elif op in ("in", "nin"):
            if not isinstance(arg, list):
                raise FilterError(f"{op} takes a list of values, got {_describe(arg)}", path=path)
            bad = [v for v in arg if isinstance(v, (list, dict))]
            if bad:
                raise FilterError(f"{op} takes a list of scalar values, got {_describe(bad[0])} inside", path=path)
            return tuple(arg)
        elif op == "contains":
            if arg is None:
                raise FilterError("contains needs a value, got null", path=path)
        elif op == "icontains":
            if not isinstance(arg, str):
                raise FilterError(f"icontains takes a string, got {_describe(arg)}", path=path)
        return arg

    # -- JSON lookup nodes (seed 003, section 6) -----------------------------

    def lookup(self, obj: Mapping[str, Any], path: str) -> Node:
        extra = sorted(set(obj) - {"on", "key", "value", "lookup"})
        if extra:
            raise FilterError(
                f"a lookup filter takes only on, key, value and lookup; got {extra}. "
                "Combine it with other conditions using AND",
                path=path,
            )
        lookup, key = obj["lookup"], obj["key"]
        if lookup not in LOOKUPS:
            raise FilterError(f"unknown lookup {lookup!r}; known lookups: {', '.join(LOOKUPS)}", path=path)
        target = obj.get("on", self.targets[0])
        if target not in self.targets:
            raise FilterError(f"on must be one of {list(self.targets)}, got {target!r}", path=f"{path}.on")
        has_value = obj.get("value") is not None
        if lookup in ("key_lookup", "contains", "contained_by"):
            if not isinstance(key, str):
                raise FilterError(f"{lookup} takes a single string key, got {_describe(key)}", path=f"{path}.key")
            if not has_value:
                raise FilterError(f"{lookup} needs a value", path=f"{path}.value")
            value = obj["value"]
            _check_json(value, f"{path}.value")
            field = self.field(key, f"{path}.key", target=target)
            if lookup == "key_lookup":  # seed 003: document.metadata->>'key' = 'value'
                return self._counted(Compare(field, "key_text", value), path)
            # seed 003: document.metadata @> {key: value} / document.metadata <@ {key: value}: the whole
            # document is compared (for contained_by, every key of the metadata must be in the value)
            whole = Field(path=(), target=field.target)
            op = "json_contains" if lookup == "contains" else "json_contained_by"
            return self._counted(Compare(whole, op, _nest(field.path, value)), path)
        if has_value:
            raise FilterError(f"{lookup} takes no value", path=f"{path}.value")
        if lookup == "has_key":
            if not isinstance(key, str):
                raise FilterError(f"has_key takes a single string key, got {_describe(key)}", path=f"{path}.key")
            return self._counted(Compare(self.field(key, f"{path}.key", target=target), "exists"), path)
        if not isinstance(key, list) or not key or not all(isinstance(k, str) for k in key):
            raise FilterError(f"{lookup} takes a non-empty list of string keys, got {_describe(key)}", path=f"{path}.key")
        checks = tuple(self._counted(Compare(self.field(k, f"{path}.key", target=target), "exists"), path, 1)
                       for k in key)
        if len(checks) == 1:
            return checks[0]
        return And(checks) if lookup == "has_keys" else Or(checks)


def _nest(path: tuple[str, ...], value: Any) -> Any:
    """``("a", "b"), v`` -> ``{"a": {"b": v}}``."""
    for segment in reversed(path):
        value = {segment: value}
    return value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_json(value: Any, path: str) -> None:
    """Reject values that have no JSON form (sets, objects, NaN …)."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise FilterError(f"{value!r} is not a finite number", path=path)
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]")
        return
    if isinstance(value, Mapping):
        for k, item in value.items():
            if not isinstance(k, str):
                raise FilterError(f"object keys must be strings, got {k!r}", path=path)
            _check_json(item, f"{path}.{k}")
        return
    raise FilterError(f"{_describe(value)} is not a JSON value", path=path)


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"
