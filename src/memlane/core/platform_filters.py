"""mem0's *platform* filter language, read into memlane's (``core.filters``).

The mem0 platform routes (``POST /v2|v3/memories/search/``, ``POST /v2|v3/memories/``) take the
filters of mem0's "Memory filters" (v2) documentation. Unlike memlane's own form (and mem0's
open-source SDK), where a key memlane does not know is a metadata key, the platform knows a fixed
set of fields and refuses anything else; so does this reader, naming the key. A metadata key is
written ``{"metadata": {"source": "email"}}`` or as the path ``"metadata.source"``.

``read`` returns an equivalent filter in memlane's form, which ``Memory`` parses as it parses any
other (one parser, one compiler per store). What each platform field becomes:

========================  =====================================================================
``user_id`` ``agent_id``  themselves (``eq`` / bare value, ``ne``, ``in``, ``"*"``: not null)
``run_id``
``created_at``            themselves (ISO-8601 dates or datetimes)
``updated_at``
``timestamp``             ``created_at`` (when the memory was said; also Unix seconds)
``expiration_date``       ``valid_to`` (when the memory stops being valid)
``text``                  ``memory``, the memory's text
``keywords``              ``memory`` with ``contains`` (case-sensitive) or ``icontains``
``categories``            the list at ``metadata.categories``: ``in`` (any category in the list),
                          ``contains`` (a category equal to it ignoring case)
``metadata``              ``{key: value or {op: argument}}``, each key a metadata path
``memory_ids``            ``id`` ``in`` the list (a bare list or ``{"in": [...]}``)
``app_id``                refused: memlane has no apps (scopes are user, agent and run)
========================  =====================================================================

memlane's own record fields (``id``, ``memory``, ``role`` …) are known too, and every memlane
operator works (``nin``, ``gt`` on metadata …) where mem0's allow-list is narrower.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from memlane.core import filters as flt
from memlane.core.errors import FilterError

#: mem0 platform fields that are memlane fields under another name (``keywords``, ``categories`` and
#: ``memory_ids`` are read by functions of their own below)
RENAMED = {"timestamp": "created_at", "expiration_date": "valid_to", "text": "memory"}
REFUSED = {
    "app_id": "app_id is not supported: memlane scopes memories by user_id, agent_id and run_id",
    "keywords_search": "keywords_search is not a filter memlane reads; for a keyword search send "
                       "keyword_search: true beside the query, or filter text with {'keywords': {'icontains': ...}}",
}
#: every field name the platform form knows, in mem0's order, then memlane's own record fields
FIELDS = ("user_id", "agent_id", "run_id", "created_at", "updated_at", "timestamp", "expiration_date", "text",
          "categories", "metadata", "memory_ids", "keywords",
          *(c for c in flt.MEMORY_COLUMNS if c not in flt.SCOPE_COLUMNS + ("created_at", "updated_at")))
#: where ``categories`` live: a list of strings (or one string) in the memory's metadata
CATEGORIES = "metadata.categories"
KEYWORD_OPS = ("contains", "icontains")


def read(filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The platform filter ``filters`` in memlane's form; ``FilterError`` (naming the part) for what
    mem0's platform form does not have."""
    if filters is None:
        return None
    flt.check_size(filters, "filters")
    return _object(filters, "filters")


def _object(obj: Any, path: str) -> dict[str, Any]:
    if not isinstance(obj, Mapping):
        raise FilterError(f"expected an object (dict), got {_describe(obj)}", path=path)
    out: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        """Two platform keys may read as one memlane key (``text`` and ``keywords``): AND the second in."""
        if key in out:
            out["AND"] = [*out.get("AND", []), {key: value}] if key != "AND" else [*out["AND"], *value]
        else:
            out[key] = value

    for key, value in obj.items():
        where = f"{path}.{key}"
        if not isinstance(key, str) or not key:
            raise FilterError(f"keys must be non-empty strings, got {key!r}", path=path)
        logic = flt.LOGIC_ALIASES.get(key, key)
        if logic in flt.LOGIC:
            put(logic, _logic(logic, value, where))
        elif key in REFUSED:
            raise FilterError(REFUSED[key], path=where)
        elif key in RENAMED:
            _known_operators(key, value, where)  # named here: past this point the field has memlane's name
            put(RENAMED[key], _time(value, where) if key == "timestamp" else value)
        elif key == "keywords":
            put("memory", _keywords(value, where))
        elif key == "categories":
            for k, v in _categories(value, where).items():
                put(k, v)
        elif key == "memory_ids":
            put("id", {"in": _id_list(value, where)})
        elif key in FIELDS or key.startswith("metadata."):
            put(key, value)
        elif key.lower() in ("and", "or", "not"):
            raise FilterError(f"{key!r} is not a logical operator; write it in upper case: {key.upper()!r}",
                              path=where)
        else:
            raise FilterError(
                f"unknown filter field {key!r}. mem0's platform filters take AND, OR, NOT and the fields "
                f"{', '.join(FIELDS)}; a metadata key is written {{'metadata': {{{key!r}: ...}}}} "
                f"or 'metadata.{key}'", path=where)
    return out


def _logic(op: str, value: Any, path: str) -> Any:
    if op == "NOT" and isinstance(value, Mapping) and value:
        return _object(value, path)
    if not isinstance(value, list) or not value:
        raise FilterError(f"{op} takes a non-empty list of filter objects, got {_describe(value)}", path=path)
    return [_object(item, f"{path}[{i}]") for i, item in enumerate(value)]


def _known_operators(key: str, value: Any, path: str) -> None:
    unknown = [op for op in value if op not in flt.OPERATORS] if isinstance(value, Mapping) else []
    if unknown:
        raise FilterError(f"unknown operator {unknown[0]!r} for field {key!r}; known operators: "
                          f"{', '.join(flt.OPERATORS)}", path=path)


def _keywords(value: Any, path: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not value or set(value) - set(KEYWORD_OPS):
        raise FilterError("keywords takes contains (case-sensitive) or icontains (case-insensitive), e.g. "
                          f"{{'keywords': {{'icontains': 'invoice'}}}}; got {_describe(value)}", path=path)
    for op, text in value.items():
        if not isinstance(text, str):
            raise FilterError(f"{op} takes a string, got {_describe(text)}", path=f"{path}.{op}")
    return dict(value)


def _categories(value: Any, path: str) -> dict[str, Any]:
    """``in``: a category among the list (the stored list holds one, or the stored string is one);
    ``contains``: a category equal to it ignoring case (a stored string: containing it)."""
    if not isinstance(value, Mapping) or not value or set(value) - {"in", "contains"}:
        raise FilterError("categories takes in (a list: any of these categories) or contains (one category, "
                          f"ignoring case), e.g. {{'categories': {{'in': ['finance']}}}}; got {_describe(value)}",
                          path=path)
    clauses: list[dict[str, Any]] = []
    if "contains" in value:
        if not isinstance(value["contains"], str):
            raise FilterError(f"contains takes a string, got {_describe(value['contains'])}",
                              path=f"{path}.contains")
        clauses.append({CATEGORIES: {"icontains": value["contains"]}})
    if "in" in value:
        wanted = value["in"]
        if not isinstance(wanted, list) or not all(isinstance(c, str) for c in wanted):
            raise FilterError(f"in takes a list of categories (strings), got {_describe(wanted)}", path=f"{path}.in")
        held = [{CATEGORIES: {"contains": [c]}} for c in dict.fromkeys(wanted)]
        clauses.append({"OR": [{CATEGORIES: {"in": wanted}}, *held]} if held else {CATEGORIES: {"in": []}})
    if len(clauses) == 1:
        return clauses[0]
    return {"AND": clauses}


def _id_list(value: Any, path: str) -> list[Any]:
    if isinstance(value, Mapping) and set(value) == {"in"}:
        value, path = value["in"], f"{path}.in"
    if not isinstance(value, list):
        raise FilterError(f"memory_ids takes a list of memory ids (or {{'in': [...]}}), got {_describe(value)}",
                          path=path)
    return value


def _time(value: Any, path: str) -> Any:
    """``timestamp`` as mem0 writes it: Unix seconds as well as ISO-8601."""
    if isinstance(value, Mapping):
        return {op: _time(arg, f"{path}.{op}") for op, arg in value.items()}
    if isinstance(value, list):
        return [_time(v, path) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc).isoformat()
        except (OverflowError, OSError, ValueError):
            raise FilterError(f"{value!r} is not a time (Unix seconds, 1970 to 9999)", path=path) from None
    return value


def _describe(value: Any) -> str:
    if isinstance(value, Mapping) and not value:
        return "an empty object"
    return flt._describe(value)  # noqa: SLF001  (one wording of values in every filter error)
