"""The public API's calls, checked: each function takes the arguments of a ``Memory`` method as the
caller gave them and returns what the facade works with (scope ids, filters, validated values), or
raises ``InvalidInputError`` / ``ScopeError`` naming the argument, before anything is embedded or
written. Checks of single values live in ``validation``; the scope rule in ``scope``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memlane.core import filters as flt
from memlane.core import scope, validation
from memlane.core.changes import EXPIRED, Update
from memlane.core.errors import InvalidInputError
from memlane.core.ids import new_id
from memlane.core.models import MEMORY_TYPES, Message, MessageRecord, text_hash

#: how many memories ``search`` and ``get_all`` return when neither ``limit`` nor ``top_k`` is given (mem0's)
DEFAULT_LIMIT = 100


def mem0_alias(value: Any, mem0_value: Any, name: str, mem0_name: str) -> Any:
    """The value given under memlane's name or mem0's (``data`` for ``text``, ``top_k`` for ``limit``),
    so code written for mem0's library runs unchanged; both at once is an error."""
    if mem0_value is None:
        return value
    if value is not None:
        raise InvalidInputError(f"give {name} or {mem0_name} (mem0's name for it), not both", field=mem0_name)
    return mem0_value


def limit(value: Any, top_k: Any, limits: validation.Limits) -> int:
    """``limit`` or mem0's ``top_k`` (not both), default ``DEFAULT_LIMIT``, checked."""
    if top_k is not None:
        return validation.limit(mem0_alias(value, top_k, "limit", "top_k"), limits, "top_k")
    return validation.limit(DEFAULT_LIMIT if value is None else value, limits)


def read_filter(user_id: Any, agent_id: Any, run_id: Any, filters: Mapping[str, Any] | None,
                include_invalid: bool, as_of: scope.Moment) -> flt.Node:
    """What a read (``get_all``, ``search``) sees: the scope and filters, and the validity asked for."""
    return flt.conjoin(scope.scoped_filter(scope.scope_ids(user_id, agent_id, run_id), filters),
                       scope.validity(include_invalid, as_of))


def required_scope(user_id: Any, agent_id: Any, run_id: Any) -> dict[str, str]:
    """The scope ids of a call that writes or reads one scope: at least one of them."""
    ids = scope.scope_ids(user_id, agent_id, run_id)
    scope.require_ids(ids)
    return ids


@dataclass(frozen=True)
class AddCall:
    """``Memory.add``'s arguments, checked."""

    ids: dict[str, str]
    messages: list[Message]
    metadata: dict[str, Any]
    #: metadata keys that become fields of the memory (``actor_id``, ``role``)
    promoted: dict[str, str]
    infer: bool
    memory_type: str | None
    #: when the memories this call adds expire (stored form), or None
    expires: str | None
    #: mem0's ``prompt``: the instructions of a procedural summary, for this call
    prompt: str | None = None
    #: when the conversation was said (``timestamp``; stored form), or None for now
    said_at: str | None = None

    def times(self, now: str) -> list[str]:
        """When each message was said: its own ``created_at``, else the call's ``timestamp``, else ``now``."""
        return [m.created_at or self.said_at or now for m in self.messages]

    def message_records(self, now: str) -> list[MessageRecord]:
        """The messages as they are stored: a new id each, said at ``times(now)``."""
        return [MessageRecord(id=new_id(), role=m.role, content=m.content, created_at=at, name=m.name, **self.ids)
                for m, at in zip(self.messages, self.times(now))]

    @property
    def expiry(self) -> dict[str, str]:
        """A draft's validity fields when the memories expire (``add(expiration_date=)``)."""
        return {"valid_to": self.expires, "invalid_reason": EXPIRED} if self.expires else {}


def add(messages: Any, user_id: Any, agent_id: Any, run_id: Any, metadata: Any, infer: Any, memory_type: Any,
        expiration_date: Any, limits: validation.Limits, prompt: Any = None, timestamp: Any = None) -> AddCall:
    ids = required_scope(user_id, agent_id, run_id)
    if not isinstance(infer, bool):
        raise InvalidInputError(f"infer must be true or false, got {infer!r}", field="infer")
    memory_type = validation.choice(memory_type, MEMORY_TYPES, "memory_type")
    if memory_type == "procedural" and "agent_id" not in ids:
        raise InvalidInputError("procedural memories belong to an agent: give agent_id", field="agent_id")
    if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
        raise InvalidInputError(f"prompt must be non-empty text (or None), got {prompt!r}", field="prompt")
    stored_metadata, promoted = validation.metadata(metadata, limits)
    expires = validation.expiration(expiration_date)
    received = validation.messages(messages, limits)
    return AddCall(ids, received, stored_metadata, promoted, infer, memory_type, expires, prompt,
                   validation.said_time(timestamp, "timestamp"))


def update_target(memory_id: Any, text: Any, data: Any, metadata: Any, timestamp: Any = None) -> tuple[str, Any]:
    """``Memory.update``'s memory and text (``data`` is mem0's name for it), before the memory is read."""
    text = mem0_alias(text, data, "text", "data")
    memory_id = validation.identifier(memory_id, "memory_id", required=True)
    if text is None and metadata is None and timestamp is None:
        raise InvalidInputError("update needs text, metadata or timestamp (one or more)", field="text")
    return memory_id, text


def update(memory_id: str, text: Any, metadata: Any, updated_at: str, limits: validation.Limits,
           timestamp: Any = None) -> Update:
    """The change ``Memory.update`` writes (without its vector): the text, the metadata and/or when the
    memory was said (``timestamp``, as ``add``'s: its ``created_at``), checked."""
    change = Update(id=memory_id, updated_at=updated_at, created_at=validation.said_time(timestamp, "timestamp"))
    if text is not None:
        change.text = validation.text(text, "text", limits)
        change.hash = text_hash(change.text)
    if metadata is not None:
        change.metadata, promoted = validation.metadata(metadata, limits)
        if promoted:
            raise InvalidInputError(f"{', '.join(promoted)} cannot be changed by update", field="metadata")
    return change


#: the most memories one ``batch_update`` or ``batch_delete`` takes (mem0's platform limit)
MAX_BATCH = 1000
#: what an item of ``batch_update`` may say: ``update``'s arguments (``data``: mem0's name for ``text``)
BATCH_UPDATE_KEYS = ("memory_id", "text", "data", "metadata", "timestamp")


def _batch(items: Any, what: str) -> list[Mapping[str, Any]]:
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise InvalidInputError(f"{what} takes a list of memories, got {type(items).__name__}", field="memories")
    items = list(items)
    if not 1 <= len(items) <= MAX_BATCH:
        raise InvalidInputError(f"{what} takes 1 to {MAX_BATCH} memories, got {len(items)}", field="memories")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"memories[{i}] must be an object with a memory_id, got {type(item).__name__}",
                                    field=f"memories.{i}")
    return items


def _each(i: int, check: Any) -> Any:
    """``check()``, its error naming the item (``memories.3.text``)."""
    try:
        return check()
    except InvalidInputError as exc:
        raise InvalidInputError(f"memories[{i}]: {exc}", field=f"memories.{i}.{exc.field or 'memory_id'}") from None


def _unique(ids: list[str]) -> list[str]:
    seen: set[str] = set()
    for i, memory_id in enumerate(ids):
        if memory_id in seen:
            raise InvalidInputError(f"memories[{i}]: memory {memory_id!r} is named twice", field=f"memories.{i}")
        seen.add(memory_id)
    return ids


def batch_update(items: Any, updated_at: str, limits: validation.Limits) -> list[Update]:
    """``Memory.batch_update``'s changes (without their vectors): 1 to ``MAX_BATCH`` objects, each
    ``update``'s arguments (keys ``BATCH_UPDATE_KEYS``), every memory once, each checked as ``update``
    checks it (an error names the item: ``memories.3.text``)."""
    changes = []
    for i, item in enumerate(_batch(items, "batch_update")):
        unknown = sorted(set(item) - set(BATCH_UPDATE_KEYS))
        if unknown:
            raise InvalidInputError(f"memories[{i}]: unknown key(s) {', '.join(unknown)}; an item takes "
                                    f"{', '.join(BATCH_UPDATE_KEYS)}", field=f"memories.{i}.{unknown[0]}")

        def check(item: Mapping[str, Any] = item) -> Update:
            memory_id, text = update_target(item.get("memory_id"), item.get("text"), item.get("data"),
                                            item.get("metadata"), item.get("timestamp"))
            return update(memory_id, text, item.get("metadata"), updated_at, limits, item.get("timestamp"))

        changes.append(_each(i, check))
    _unique([change.id for change in changes])
    return changes


def batch_delete(items: Any) -> list[str]:
    """``Memory.batch_delete``'s memories: 1 to ``MAX_BATCH`` ids, or ``{"memory_id": id}`` objects as
    mem0's client sends them, every memory once."""
    items = list(items) if isinstance(items, (list, tuple)) else items
    if isinstance(items, list):
        items = [{"memory_id": item} if isinstance(item, str) else item for item in items]
    return _unique([_each(i, lambda item=item: validation.identifier(item.get("memory_id"), "memory_id",
                                                                      required=True))
                    for i, item in enumerate(_batch(items, "batch_delete"))])


def purge(ids: dict[str, str], filters: Any) -> None:
    """``delete_all(purge=True)`` erases one whole scope: ids given, no filters."""
    scope.require_ids(ids)
    if filters:
        raise InvalidInputError("purge erases a whole scope; it takes no filters", field="filters")


@dataclass(frozen=True)
class ContextCall:
    """``Memory.search_memory_with_context``'s arguments, checked."""

    turns: list[Message]
    system_prompt: str
    user_id: str | None
    agent_id: str | None
    #: a ``user_id`` was given but is no valid id (it names nobody)
    user_ignored: bool
    max_results: int


def context(conversation: Any, system_prompt: Any, user_id: Any, max_results: Any, agent_id: Any,
            limits: validation.Limits, max_chars: int) -> ContextCall:
    turns, system_prompt = validation.conversation(conversation, system_prompt, limits, max_chars)
    agent_id = validation.identifier(agent_id, "agent_id")
    user, user_ignored = user_id, False
    if user_id is not None:
        try:
            user = validation.identifier(user_id, "user_id")
        except InvalidInputError:  # seed 004: "invalid user IDs are silently ignored"
            user, user_ignored = None, True
    max_results = validation.limit(max_results, limits, "max_results")
    return ContextCall(turns, system_prompt, user, agent_id, user_ignored, max_results)


@dataclass(frozen=True)
class GateCall:
    """``Memory.should_search_memory``'s arguments, checked."""

    turns: list[Message]
    system_prompt: str
    explain: bool
    #: the named scope (user_id, agent_id) whose memories weigh in; None: none named, or no turns
    scope: tuple[str | None, str | None] | None


def gate(conversation: Any, system_prompt: Any, explain: Any, user_id: Any, agent_id: Any,
         limits: validation.Limits, max_chars: int) -> GateCall:
    turns, system_prompt = validation.conversation(conversation, system_prompt, limits, max_chars)
    explain = validation.flag(explain, "explain", False)
    named = None
    if (user_id is not None or agent_id is not None) and turns:
        named = (validation.identifier(user_id, "user_id"), validation.identifier(agent_id, "agent_id"))
    return GateCall(turns, system_prompt, explain, named)


def maintained(user_id: Any, agent_id: Any, run_id: Any, dry_run: Any) -> tuple[flt.Node, bool]:
    """A maintenance call's memories (the scope's valid, formed ones) and whether it only plans."""
    ids = required_scope(user_id, agent_id, run_id)
    return (flt.conjoin(scope.scoped_filter(ids, None), scope.ACTIVE, scope.FORMED),
            validation.flag(dry_run, "dry_run", False))
