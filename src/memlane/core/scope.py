"""Scope rules: which memories a call may touch.

``search``, ``get_all`` and ``delete_all`` need at least one of ``user_id``,
``agent_id``, ``run_id``: as arguments (mem0 v1 style) or as top-level
conditions inside ``filters`` (mem0 v2 style), or an ``OR`` each of whose branches names one
(``{"OR": [{"user_id": "alex"}, {"run_id": "run_456"}]}``). Several ids combine with AND. A
scope key set to ``"*"`` in filters (``{"user_id": "*"}``) is an explicit
request to search across every user (the admin-wide search).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from memlane.core import filters as flt
from memlane.core import validation
from memlane.core.defaults import DEFAULT_USER_ID  # noqa: F401  (re-exported; its home imports nothing)
from memlane.core.errors import ScopeError

SCOPE_KEYS = flt.SCOPE_COLUMNS

#: the memories a read sees by default: those not invalidated, and not expired yet (an expiry is a
#: ``valid_to`` in the future, checked against the database's clock when the read runs)
ACTIVE = flt.Or((flt.Compare(flt.Field(column="valid_to"), "eq", None),
                 flt.Compare(flt.Field(column="valid_to"), "gt", flt.NOW)))
#: formed memories: not the provisional ones an ``add(async_mode=True)`` keeps until its formation ends
#: (what formation and maintenance read; reads show both)
FORMED = flt.Compare(flt.Field(column="event_id"), "eq", None)

Moment = str | datetime | date | None


def scope_ids(user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> dict[str, str]:
    """Validate the id arguments; return the ones given."""
    given = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    return {key: v for key, value in given.items() if (v := validation.identifier(value, key)) is not None}


def require_ids(ids: Mapping[str, str]) -> None:
    if not ids:
        raise ScopeError(
            "At least one of 'user_id', 'agent_id', or 'run_id' must be specified.", field="user_id"
        )


def scoped_filter(ids: Mapping[str, str], filters: Mapping[str, Any] | None) -> flt.Node:
    """Combine scope ids and a filter dict into one AST, enforcing the scope rule."""
    node = flt.parse(filters)
    for clause in flt.conjuncts(node):
        if not (isinstance(clause, flt.Compare) and clause.field.column in SCOPE_KEYS):
            continue
        key = clause.field.column
        if clause.op == "eq" and clause.value is not None and key in ids and ids[key] != clause.value:
            raise ScopeError(
                f"{key}={ids[key]!r} conflicts with filters {key}={clause.value!r}; give it once",
                field=key,
            )
    if not ids and not pins_scope(node):
        raise ScopeError(
            "At least one of 'user_id', 'agent_id', or 'run_id' must be specified, as an argument "
            "or in filters (filters={'user_id': '*'} searches across all users; an OR each of whose "
            "branches names one is scoped too).",
            field="user_id",
        )
    conditions = [flt.Compare(flt.Field(column=key), "eq", value) for key, value in ids.items()]
    return flt.conjoin(*conditions, node)


def pins_scope(node: flt.Node, *, wildcards: bool = True) -> bool:
    """Whether every record ``node`` matches has a scope it names: a scope id (``eq``, an ``in`` list
    without null) or (``wildcards``) a scope wildcard among its conditions, or an OR each of whose
    branches does (mem0's ``{"OR": [{"user_id": "alex"}, {"run_id": "run_456"}]}``). A NOT never does.
    Pinned without wildcards, a filter reads the scopes it names and no others."""
    if isinstance(node, flt.Compare):
        if node.field.column not in SCOPE_KEYS:
            return False
        return ((node.op == "eq" and node.value is not None) or (wildcards and node.op == "exists")
                or (node.op == "in" and bool(node.value) and None not in node.value))
    if isinstance(node, flt.And):
        return any(pins_scope(item, wildcards=wildcards) for item in node.items)
    if isinstance(node, flt.Or):
        return all(pins_scope(item, wildcards=wildcards) for item in node.items)
    return False


def validity(include_invalid: bool, as_of: Moment) -> flt.Node:
    """Which memories a read sees: active ones, all of them, or those valid at ``as_of``."""
    if as_of is not None:
        moment = validation.moment(as_of, "as_of")
        return flt.conjoin(
            flt.Compare(flt.Field(column="created_at"), "lte", moment),
            flt.Or((flt.Compare(flt.Field(column="valid_to"), "eq", None),
                    flt.Compare(flt.Field(column="valid_to"), "gt", moment))),
        )
    return flt.MATCH_ALL if include_invalid else ACTIVE
