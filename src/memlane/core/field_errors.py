"""pydantic's validation errors in a caller's words, one entry per field at fault: what REST answers
in a 422 body and MCP in a tool error (``messages: Input should be a valid string or a valid list``),
never pydantic's multi-line text with its documentation links."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_INPUT_SHOULD = "Input should be "


def is_union_tag(part: str) -> bool:
    """pydantic names the union member it tried ("str", "list[MessageIn]", "constrained-str");
    no field of memlane's request models or tool arguments looks like that."""
    return "[" in part or "-" in part or part in ("str", "int", "float", "bool", "dict", "list", "none")


def field_name(loc: Iterable[Any], *, locations: tuple[str, ...] = (), whole: str = "body") -> str:
    """``("body", "messages", 0, "role")`` -> ``"messages.0.role"``: the union members pydantic tried are
    left out, and a first part naming where the value came from (``locations``: body, query …);
    ``whole`` when nothing is left (the request itself)."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in locations:
        parts = parts[1:]
    return ".".join(p for p in parts if not is_union_tag(p)) or whole


def field_errors(errors: Iterable[Mapping[str, Any]], *, locations: tuple[str, ...] = (),
                 whole: str = "body") -> list[dict[str, Any]]:
    """``[{"field", "message", "type"}]`` of pydantic's ``errors()``. Of a union's failed members the one
    that got furthest is kept (``messages.0.role``, not "not a string"); members that failed at the
    same place are one entry (``Input should be a valid string or a valid list``)."""
    found = []
    for error in errors:
        loc = [str(p) for p in error.get("loc", ())]
        union = any(is_union_tag(p) for p in (loc[1:] if loc[:1] and loc[0] in locations else loc))
        found.append({"field": field_name(loc, locations=locations, whole=whole),
                      "message": error.get("msg", "invalid"), "type": error.get("type"), "union": union})
    found = [e for e in found if not (e["union"] and any(o["field"].startswith(e["field"] + ".") for o in found))]
    merged: list[dict[str, Any]] = []
    for entry in found:
        same = next((m for m in merged if m["union"] and entry["union"] and m["field"] == entry["field"]), None)
        if same is None:
            merged.append(entry)
        elif entry["message"] not in same["message"]:
            extra = entry["message"]
            if same["message"].startswith(_INPUT_SHOULD) and extra.startswith(_INPUT_SHOULD):
                extra = extra[len(_INPUT_SHOULD):]
            same["message"] += f" or {extra}"
    return [{k: v for k, v in e.items() if k != "union"} for e in merged]


def summary(entries: Iterable[Mapping[str, Any]]) -> str:
    """``field: message; field: message``."""
    return "; ".join(f"{e['field']}: {e['message']}" for e in entries)
