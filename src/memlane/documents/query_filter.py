"""``query_filter``: JSON lookups on document or collection metadata (seed 003, section 6).

    {"on": "document" | "collection", "key": str | [str], "value": ..., "lookup": L}
    L := key_lookup (default) | contains | contained_by | has_key | has_keys | has_any_keys

The lookups are those of memlane's one filter language (``memlane.core.filters``), which
parses them, validates them (``key_lookup``, ``contains`` and ``contained_by`` need a
string key and a value; ``has_key`` a string key and no value; ``has_keys`` and
``has_any_keys`` a list of keys and no value) and compiles them per backend with the
semantics of ``memlane.core.jsonmatch`` (jsonb ``@>``, ``<@``, ``?``, ``?&``, ``?|``). This
module only adds the defaults of seed 003 (``on: document``, ``lookup: key_lookup``),
the ``AND`` / ``OR`` / ``NOT`` of several lookups, and which records a filter is about.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memlane.core import filters as flt
from memlane.core.errors import FilterError

TARGETS = ("document", "collection")
_LOOKUP_KEYS = {"on", "key", "value", "lookup"}


def parse(query_filter: Mapping[str, Any] | None, path: str = "query_filter") -> flt.Node:
    """The filter as an AST over the targets ``document`` and ``collection`` (``MATCH_ALL`` for None / {})."""
    if query_filter is None:
        return flt.MATCH_ALL
    try:
        flt.check_size(query_filter, "filters")  # before _normalise walks it
        return flt.parse(_normalise(query_filter, path), columns=(), targets=TARGETS)
    except FilterError as exc:
        if not exc.path.startswith("filters"):
            raise
        # the filter language names its argument "filters"; here it is the query_filter
        message = str(exc)[len(exc.path) + 2:]
        raise filter_error(message, path + exc.path[len("filters"):]) from None


def filter_error(message: str, path: str) -> FilterError:
    error = FilterError(message, path=path)
    error.field = "query_filter"
    return error


def targets(node: flt.Node) -> set[str]:
    """Which metadata (``document``, ``collection``) the filter reads."""
    if isinstance(node, flt.Compare):
        return {node.field.target}
    if isinstance(node, (flt.And, flt.Or)):
        return set().union(*(targets(item) for item in node.items)) if node.items else set()
    if isinstance(node, flt.Not):
        return targets(node.item)
    return set()


def _normalise(obj: Any, path: str) -> Any:
    """Fill seed 003's defaults into every lookup object; lookups may nest in AND / OR / NOT."""
    if not isinstance(obj, Mapping):
        raise filter_error(f"expected an object (dict), got {type(obj).__name__}", path=path)
    if not obj:
        return {}
    logic = {k: v for k, v in obj.items() if flt.LOGIC_ALIASES.get(k, k) in flt.LOGIC}
    if logic:
        if len(logic) != len(obj):
            raise filter_error("combine lookups with AND / OR / NOT lists only; put each lookup in the list",
                              path=path)
        out: dict[str, Any] = {}
        for key, items in logic.items():
            if not isinstance(items, list) or not items:
                raise filter_error(f"{key} takes a non-empty list of lookups", path=f"{path}.{key}")
            out[key] = [_normalise(item, f"{path}.{key}[{i}]") for i, item in enumerate(items)]
        return out
    unknown = sorted(set(obj) - _LOOKUP_KEYS)
    if unknown:
        raise filter_error(f"unknown field(s) {unknown}; a query_filter has on, key, value and lookup", path=path)
    if "key" not in obj:
        raise filter_error("key is required (a metadata key, or a list of keys for has_keys / has_any_keys)",
                          path=f"{path}.key")
    lookup = obj.get("lookup", "key_lookup")
    if lookup is None:
        lookup = "key_lookup"
    if not isinstance(lookup, str):
        raise filter_error(f"lookup must be one of {', '.join(flt.LOOKUPS)}", path=f"{path}.lookup")
    out = dict(obj)
    out["on"] = "document" if obj.get("on") is None else obj["on"]
    out["lookup"] = lookup
    return out
