"""Scope rules: which memories a call may touch.

``search``, ``get_all`` and ``delete_all`` need at least one of ``user_id``,
``agent_id``, ``run_id``: as arguments (mem0 v1 style) or as top-level
conditions inside ``filters`` (mem0 v2 style). Several ids combine with AND. A
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
    scoped = set(ids)
    for clause in flt.conjuncts(node):
        if not (isinstance(clause, flt.Compare) and clause.field.column in SCOPE_KEYS):
            continue
        key = clause.field.column
        if clause.op == "eq" and clause.value is not None:
            if key in ids and ids[key] != clause.value:
                raise ScopeError(
                    f"{key}={ids[key]!r} conflicts with filters {key}={clause.value!r}; give it once",
                    field=key,
                )
            scoped.add(key)
        elif (clause.op == "in" and clause.value and None not in clause.value) or clause.op == "exists":
            scoped.add(key)
    if not scoped:
        raise ScopeError(
            "At least one of 'user_id', 'agent_id', or 'run_id' must be specified, as an argument "
            "or in filters (filters={'user_id': '*'} searches across all users).",
            field="user_id",
        )
    conditions = [flt.Compare(flt.Field(column=key), "eq", value) for key, value in ids.items()]
    return flt.conjoin(*conditions, node)


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
