"""memlane as a LangGraph store: ``MemlaneStore`` implements ``langgraph.store.base.BaseStore``.

    from langgraph.graph import StateGraph
    from memlane.integrations.langgraph_store import MemlaneStore

    store = MemlaneStore()                       # Memory() under ~/.memlane, or MemlaneStore(memory)
    store.put(("alice", "memories"), "food", {"text": "Alice is vegetarian"})
    store.search(("alice",), query="what does she eat?")
    graph = StateGraph(...).compile(store=store)

Each item is one memlane memory, so it has a history, shows in ``memlane list``
and is found by ``Memory.search``:

* **namespace ↔ scope + metadata**: the labels at the positions of ``layout``
  are the memory's ``user_id`` / ``agent_id`` / ``run_id`` (by default the first
  label is the user); the whole namespace, the key and the value are kept in the
  memory's metadata under ``"langgraph"``.
* **key ↔ id**: the memory id is derived from namespace and key (UUID 5), so a
  ``get`` is one lookup and a second ``put`` of the key updates the same memory
  (its old text stays in the history).
* **text**: what the memory says (``memlane list``), embedded and searched. By
  default the value's own words: its ``text``, ``content``, ``memory`` or ``data``
  (the first present; nested objects and lists of strings too), else each string
  in it as a ``key: text`` line; numbers, booleans and the rest stay in the
  value (filterable) without becoming text. ``fields`` (LangGraph paths; ``"$"``
  is the whole value as JSON) or a put's ``index`` name the paths instead. Items
  put with ``index=False``, or with no text, are found by ``get``, filters and
  listings but by no search: neither a ``query`` here nor ``Memory.search`` (their
  memory is marked ``"searchable": false``).
* **search**: ``query`` ranks by memlane search (``score`` is memlane's score);
  ``filter`` matches the value (``{"tag": "a"}``, ``{"score": {"$gte": 3}}``);
  without a query, items come newest first with ``score=None``.

* **ttl** (minutes, ``supports_ttl``; defaults from ``ttl=TTLConfig(...)``):
  the memory's expiry (``valid_to``, reason ``expired``), as
  ``add(expiration_date=)`` sets it. An item past it reads as deleted; a get or
  search with ``refresh_ttl`` (LangGraph's default: ``refresh_on_read``) pushes
  it back to now + ttl without a history row; a put sets it anew (``ttl=None``:
  no expiry). An expired memory is not erased: it stays in memlane's history and
  ``include_invalid`` reads, as every invalid memory does, so no sweep is needed
  and ``sweep_interval_minutes`` is not used.

A memory that memlane's formation invalidated is treated as deleted; a put of
its key deletes it (history kept) and stores the new value.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta, timezone
from typing import Any, Optional

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path
from pydantic import BaseModel, ConfigDict, Field, model_validator

from memlane.async_memory import AsyncMemory
from memlane.core import timeutil, validation
from memlane.core.changes import EXPIRED
from memlane.core.errors import FilterError, InvalidInputError, MemoryNotFoundError
from memlane.core.filters import SCOPE_COLUMNS
from memlane.core.models import SEARCHABLE, NewMemory
from memlane.memory import Memory

#: the metadata key under which an item's namespace, key and value are kept
METADATA_KEY = "langgraph"
#: the namespace of the UUID 5 ids derived from (namespace, key)
ID_NAMESPACE = uuid.UUID("6f1c8d2e-4b7a-5e39-9c0d-3a8f2b1e7d54")
#: the keys whose text is an item's text, by default (the first present)
TEXT_KEYS = ("text", "content", "memory", "data")
#: LangGraph filter operators and memlane's names for them
OPERATORS = {"$eq": "eq", "$ne": "ne", "$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}


class NamespaceLayout(BaseModel):
    """Which namespace labels are memlane scope ids: the position (0 = first label) of each, or None.

    ``NamespaceLayout(user_id=1)`` reads ``("memories", "alice")`` as user alice;
    ``NamespaceLayout(user_id=0, agent_id=1)`` reads ``("alice", "planner", ...)``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: Optional[int] = Field(default=0, ge=0)
    agent_id: Optional[int] = Field(default=None, ge=0)
    run_id: Optional[int] = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _distinct(self) -> "NamespaceLayout":
        used = [p for p in self.positions().values()]
        if not used:
            raise ValueError("a namespace layout maps at least one of user_id, agent_id, run_id to a label position")
        if len(set(used)) != len(used):
            raise ValueError(f"user_id, agent_id and run_id need different label positions, got {self.positions()}")
        return self

    def positions(self) -> dict[str, int]:
        return {field: p for field in SCOPE_COLUMNS if (p := getattr(self, field)) is not None}

    def scope(self, namespace: tuple[str, ...]) -> dict[str, str]:
        """The scope ids of an item's namespace; every mapped position must be there."""
        scope = {}
        for field, position in self.positions().items():
            if position >= len(namespace):
                raise InvalidInputError(
                    f"namespace {namespace} has no label at position {position}, which this store maps to {field} "
                    f"(NamespaceLayout {self.positions()}); use a longer namespace or another layout",
                    field="namespace")
            scope[field] = _scope_label(namespace[position], field, namespace)
        return scope

    def prefix_scope(self, prefix: tuple[str, ...]) -> dict[str, str]:
        """The scope ids a search prefix pins (those of its mapped positions that it has)."""
        return {field: _scope_label(prefix[p], field, prefix)
                for field, p in self.positions().items() if p < len(prefix) and prefix[p] != "*"}


def _scope_label(label: str, field: str, namespace: tuple[str, ...]) -> str:
    try:
        return validation.identifier(label, field, required=True)  # type: ignore[return-value]
    except InvalidInputError as exc:
        raise InvalidInputError(f"namespace {namespace}: the label {label!r} is the {field}, and {exc}",
                                field="namespace") from None


def item_id(namespace: tuple[str, ...], key: str) -> str:
    """The memory id of an item: the same for the same namespace and key, in every store."""
    return str(uuid.uuid5(ID_NAMESPACE, json.dumps([list(namespace), key], ensure_ascii=False)))


def value_filters(filter: Mapping[str, Any] | None) -> dict[str, Any]:
    """A LangGraph ``filter`` on item values as memlane filters on the metadata that holds them."""
    out: dict[str, Any] = {}

    def add(path: str, wanted: Any) -> None:
        if isinstance(wanted, Mapping) and any(str(k).startswith("$") for k in wanted):
            unknown = [k for k in wanted if k not in OPERATORS]
            if unknown:
                raise FilterError(f"unknown operator {unknown[0]!r} for {path!r}; LangGraph filters take "
                                  f"{', '.join(OPERATORS)}", path=f"filter.{path}")
            out[f"{METADATA_KEY}.value.{path}"] = {OPERATORS[k]: v for k, v in wanted.items()}
        elif isinstance(wanted, Mapping) and wanted:  # a nested object matches key by key, as in LangGraph
            for key, inner in wanted.items():
                add(f"{path}.{key}", inner)
        else:
            out[f"{METADATA_KEY}.value.{path}"] = {"eq": wanted}

    for key, wanted in (filter or {}).items():
        if not isinstance(key, str) or not key:
            raise FilterError(f"filter keys must be non-empty strings, got {key!r}", path="filter")
        add(key, wanted)
    return out


class MemlaneStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are memlane memories (see the module docstring).

    ``memory``: a ``Memory`` or ``AsyncMemory`` (default: ``Memory()``, the local store).
    ``layout``: which namespace labels are user / agent / run ids.
    ``fields``: the value paths that are an item's text when ``put`` names none (default: the
    value's own words, ``value_text``).
    ``ttl``: LangGraph's ``TTLConfig`` (``default_ttl`` minutes for a put that names none,
    ``refresh_on_read``).
    """

    supports_ttl = True

    def __init__(self, memory: Memory | AsyncMemory | None = None, *,
                 layout: NamespaceLayout | Mapping[str, Any] | None = None, fields: Iterable[str] | None = None,
                 ttl: TTLConfig | None = None):
        self.ttl_config = ttl
        self.memory = memory.sync if isinstance(memory, AsyncMemory) else (memory or Memory())
        self.layout = layout if isinstance(layout, NamespaceLayout) else NamespaceLayout(**(layout or {}))
        self.fields = None if fields is None else list(fields)
        if self.fields is not None and (not self.fields or not all(isinstance(f, str) and f for f in self.fields)):
            raise InvalidInputError("fields must be a non-empty list of value paths (\"$\" is the whole value)",
                                    field="fields")

    # -- the two entry points LangGraph calls -----------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; each result is at its operation's position."""
        results: list[Result] = []
        for op in ops:
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results.append(self._get(op))
            elif isinstance(op, PutOp):
                results.append(self._put(op))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise InvalidInputError(f"unknown LangGraph store operation {type(op).__name__}", field="ops")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread (the same code, awaited)."""
        return await asyncio.to_thread(self.batch, list(ops))

    # -- operations ----------------------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        found = self.memory.get(item_id(op.namespace, op.key))
        if found is None or not _is_item(found):
            return None
        if op.refresh_ttl:
            self._refresh([found])
        return _item(found)

    def _refresh(self, found: list[dict[str, Any]]) -> None:
        """Push the expiry of the items read that have a ttl back to now + ttl (LangGraph's refresh on read)."""
        for memory in found:
            ttl = memory["metadata"][METADATA_KEY].get("ttl")
            if ttl is not None:
                try:
                    self.memory.set_expiration(memory["id"], _expiry(ttl))
                except MemoryNotFoundError:
                    pass  # invalidated or deleted since it was read: nothing to keep alive

    def _put(self, op: PutOp) -> None:
        memory_id = item_id(op.namespace, op.key)
        if op.value is None:
            try:
                self.memory.delete(memory_id)
            except MemoryNotFoundError:
                pass  # deleting what is not there is a no-op, as in every LangGraph store
            return None
        if op.ttl is not None and (isinstance(op.ttl, bool) or not isinstance(op.ttl, (int, float))
                                   or not 0 < op.ttl < float("inf")):
            raise InvalidInputError(f"ttl is a positive number of minutes (or None: no expiry), got {op.ttl!r}",
                                    field="ttl")
        if not isinstance(op.value, Mapping):
            raise InvalidInputError(f"a LangGraph item value is a dict, got {type(op.value).__name__}", field="value")
        scope = self.layout.scope(op.namespace)
        value = dict(op.value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"the value of item {op.key!r} must be JSON (objects, lists, strings, finite "
                                    f"numbers, booleans, null): {exc}", field="value") from None
        text, indexed = self._text(value, op.index)
        limits = self.memory.limits
        text = validation.text(text, "value", limits)
        kept = {"namespace": list(op.namespace), "labels": {str(i): label for i, label in enumerate(op.namespace)},
                "key": op.key, "value": value, "indexed": indexed}
        if op.ttl is not None:
            kept["ttl"] = op.ttl
        try:
            metadata, _ = validation.metadata({METADATA_KEY: kept, **({} if indexed else {SEARCHABLE: False})},
                                              limits)
        except InvalidInputError as exc:  # the value is kept in the memory's metadata: say so
            raise InvalidInputError(f"the value of item {op.key!r} cannot be stored: {exc}", field="value") from None
        expires = None if op.ttl is None else _expiry(op.ttl)
        current = self.memory.get(memory_id)
        if current is not None and current.get("invalid_reason") not in (None, EXPIRED):
            self.memory.delete(memory_id)  # invalidated by formation: the item was deleted; its key is free
            current = None
        if current is not None:
            self.memory.set_expiration(memory_id, expires)  # first: a failed update leaves the old value alive
            self.memory.update(memory_id, text=text, metadata=metadata)
        else:
            self.memory.insert([NewMemory(text=text, metadata=metadata, id=memory_id, valid_to=expires,
                                          invalid_reason=EXPIRED if expires else None, **scope)])
        return None

    def _text(self, value: dict[str, Any], index: Any) -> tuple[str, bool]:
        """What the memory's text is, and whether a search may find it."""
        if index is False:
            text = value_text(value)
            return text or json.dumps(value, sort_keys=True, ensure_ascii=False), False
        paths = self.fields if index is None else list(index)
        if paths is None:
            text = value_text(value)
        else:
            text = "\n".join(t for path in paths for t in get_text_at_path(value, path) if t.strip())
        if text:
            return text, True
        return json.dumps(value, sort_keys=True, ensure_ascii=False), False

    def _search(self, op: SearchOp) -> list[SearchItem]:
        if op.limit <= 0 or op.offset < 0:
            raise InvalidInputError(f"search takes limit >= 1 and offset >= 0, got limit={op.limit}, "
                                    f"offset={op.offset}", field="limit")
        where = self._where(op.namespace_prefix)
        where.update(value_filters(op.filter))
        wanted = op.offset + op.limit
        if op.query:
            where[f"{METADATA_KEY}.indexed"] = True
            found = self.memory.search(op.query, filters=where, limit=wanted)["results"][op.offset:]
        else:
            found = self.memory.get_all(filters=where, limit=wanted)["results"][op.offset:]
        if op.refresh_ttl:
            self._refresh(found)
        return [_item(m, score=m["score"] if op.query else None) for m in found]

    def _where(self, prefix: tuple[str, ...]) -> dict[str, Any]:
        """memlane filters for the items under a namespace prefix (``"*"`` labels match any label)."""
        scope = self.layout.prefix_scope(prefix)
        where: dict[str, Any] = dict(scope) if scope else {next(iter(self.layout.positions())): "*"}
        where[f"{METADATA_KEY}.key"] = "*"  # only items this store wrote
        for position, label in enumerate(prefix):
            if label != "*":
                where[f"{METADATA_KEY}.labels.{position}"] = label
        return where

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = list(op.match_conditions or ())
        prefix = next((tuple(c.path) for c in conditions if c.match_type == "prefix"), ())
        namespaces = {ns for ns in self._namespaces(self._where(prefix))
                      if all(_matches(c, ns) for c in conditions)}
        if op.max_depth is not None:
            namespaces = {ns[: op.max_depth] for ns in namespaces}
        return sorted(namespaces)[op.offset: op.offset + op.limit]

    def _namespaces(self, where: dict[str, Any]) -> Iterator[tuple[str, ...]]:
        """The namespace of every item matching ``where``, read page by page (newest first)."""
        page_size = self.memory.limits.max_results
        seen: set[str] = set()
        before: str | None = None
        while True:
            page_where = dict(where, created_at={"lte": before}) if before else where
            page = self.memory.get_all(filters=page_where, limit=page_size)["results"]
            fresh = [m for m in page if m["id"] not in seen]
            for m in fresh:
                seen.add(m["id"])
                yield tuple(m["metadata"][METADATA_KEY]["namespace"])
            if len(page) < page_size or not fresh:
                return
            before = page[-1]["created_at"]


def value_text(value: Any) -> str:
    """An item value's own words: the text of its first ``TEXT_KEYS`` key that has any, else every
    string in it as a ``key: text`` line (dotted keys for nested objects); "" when it holds no text."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "\n".join(t for t in (value_text(v) for v in value) if t)
    if not isinstance(value, Mapping):
        return ""
    for key in TEXT_KEYS:
        text = value_text(value.get(key))
        if text:
            return text
    return "\n".join(f"{path}: {text}" for path, text in _strings(value, ()))


def _strings(value: Any, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if value.strip():
            yield ".".join(path), value.strip()
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _strings(inner, (*path, str(key)))
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner, path)


def _expiry(ttl: float) -> str:
    """The moment ``ttl`` minutes from now, as memlane stores it."""
    return timeutil.canonical(datetime.now(timezone.utc) + timedelta(minutes=ttl))


def _is_item(memory: Mapping[str, Any]) -> bool:
    return METADATA_KEY in memory.get("metadata", {}) and not (memory.get("valid_to")
                                                               and memory["valid_to"] <= timeutil.now_iso())


def _item(memory: Mapping[str, Any], **score: Any) -> Any:
    """A LangGraph ``Item`` (``SearchItem`` when a score is given) from a memlane memory."""
    kept = memory["metadata"][METADATA_KEY]
    fields = dict(namespace=tuple(kept["namespace"]), key=kept["key"], value=kept["value"],
                  created_at=datetime.fromisoformat(memory["created_at"]),
                  updated_at=datetime.fromisoformat(memory["updated_at"]))
    return SearchItem(**fields, **score) if score else Item(**fields)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A LangGraph namespace match condition (prefix or suffix; ``"*"`` matches any label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        part = namespace[: len(path)]
    elif condition.match_type == "suffix":
        part = namespace[len(namespace) - len(path):]
    else:
        raise InvalidInputError(f"unknown namespace match type {condition.match_type!r}; use prefix or suffix",
                                field="match_conditions")
    return all(want == "*" or want == got for want, got in zip(path, part))
