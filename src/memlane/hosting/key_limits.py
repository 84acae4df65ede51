"""A tenant's ``Memory`` as a key trusted with less sees it: read-only, and/or limited to some users.

``limited(memory, principal)`` is the ``Memory`` itself for a key with its tenant's full trust, else a
``LimitedMemory`` in front of it. The REST routes, mem0's platform routes, the dashboard (which calls
them) and the MCP tools all reach memories through it, so each rule is written once:

* a read-only key calls no method that writes (``PermissionDeniedError``, permission ``write``);
* a key limited to users names one of them as the user of every call that reads or writes a scope
  (``user_id``, or a ``user_id`` condition of ``filters`` that every result must meet); any user
  condition of its filters names only them (no other user, no wildcard, no ``ne``/``nin``); a memory
  or event of another user is unknown to it (404, as another tenant's); what the whole tenant
  shares (documents, entities, profiles, project settings, webhooks, exports, events lists) is refused
  (permission ``tenant``). Anything this module does not name is refused: a new ``Memory`` method is
  closed to such keys until it is listed here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memlane.core import filters as flt
from memlane.core.errors import EventNotFoundError, MemoryNotFoundError, PermissionDeniedError
from memlane.hosting.keys import Principal
from memlane.memory import Memory

#: Memory's methods that change something (a read-only key calls none of them)
WRITES = frozenset({"add", "insert", "update", "batch_update", "set_expiration", "delete", "batch_delete", "delete_all",
                    "reset", "cleanup_old_memories", "merge_similar_memories", "reembed", "feedback",
                    "create_memory_export", "update_project", "create_webhook", "update_webhook", "delete_webhook",
                    "delete_entity"})
#: the methods a user-limited key may call, by how the users they reach are found:
#: the scope arguments (``user_id``, ``filters``) ...
BY_SCOPE = frozenset({"add", "search", "get_all", "delete_all", "get_messages", "cleanup_old_memories",
                      "merge_similar_memories", "search_memory_with_context", "should_search_memory"})
#: ... a memory's id (first argument) ...
BY_ID = frozenset({"get", "history", "update", "set_expiration", "delete"})
#: ... the memory ids of a batch ...
BY_BATCH = frozenset({"batch_update", "batch_delete"})
#: ... or nothing stored at all
HARMLESS = frozenset({"limits", "search_is_quick"})


def limited(memory: Memory, principal: Principal) -> Any:
    """What a request of ``principal`` reaches of its tenant's ``memory``."""
    return LimitedMemory(memory, principal) if principal.limited else memory


def users_text(users: frozenset[str]) -> str:
    return ", ".join(repr(user) for user in sorted(users))


class LimitedMemory:
    def __init__(self, memory: Memory, principal: Principal):
        self._memory = memory
        self._principal = principal
        self.read_only = principal.read_only
        self.users = principal.users

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in WRITES:
            self.require_write(name)
        if self.users is None:
            return getattr(self._memory, name)
        if name in HARMLESS:
            return getattr(self._memory, name)
        method = getattr(self._memory, name)
        if name in BY_SCOPE:
            return self._scoped(name, method)
        if name in BY_ID:
            return self._by_id(name, method)
        if name in BY_BATCH:
            return self._batch(name, method)
        if name == "event":
            return self._event
        self.require_tenant(name.replace("_", " "))

    # -- the rules, also for callers that reach the tenant some other way (documents) ----------------

    def require_write(self, what: str) -> None:
        if self.read_only:
            raise PermissionDeniedError(f"this API key is read-only: {what} writes (it needs the 'write' permission; "
                                        "create a key without --read-only)", permission="write")

    def require_tenant(self, what: str) -> None:
        if self.users is not None:
            raise PermissionDeniedError(
                f"this API key is limited to users {users_text(self.users)}: {what} reaches the whole tenant "
                "(it needs the 'tenant' permission: a key without --user)", permission="tenant")

    def shared(self, what: str) -> Memory:
        """The tenant's ``Memory`` itself, to read what the whole tenant shares (``what``: documents);
        refused to a user-limited key."""
        self.require_tenant(what)
        return self._memory

    def require_user(self, user_id: Any, what: str) -> None:
        if self.users is None:
            return
        if user_id is None:
            raise PermissionDeniedError(
                f"this API key is limited to users {users_text(self.users)}: {what} must name one of them as "
                "user_id", permission="user")
        if user_id not in self.users:
            raise PermissionDeniedError(
                f"this API key is limited to users {users_text(self.users)}: it may not reach user {user_id!r}",
                permission="user")

    # -- the methods --------------------------------------------------------------------------------

    def _scoped(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(method)

        def call(*args: Any, **kwargs: Any) -> Any:
            given = signature.bind(*args, **kwargs).arguments
            filters = given.get("filters")
            node = flt.parse(filters) if isinstance(filters, Mapping) else flt.MATCH_ALL
            for compare in _user_conditions(node):
                if compare.op == "eq" and isinstance(compare.value, str):
                    self.require_user(compare.value, name)
                elif compare.op == "in" and compare.value:
                    for user in compare.value:
                        self.require_user(user, name)
                else:
                    wildcard = "every user (a wildcard)" if compare.op == "exists" else f"users by {compare.op!r}"
                    raise PermissionDeniedError(
                        f"this API key is limited to users {users_text(self.users or frozenset())}: a filter may not "
                        f"ask for {wildcard}", permission="user")
            user_id = given.get("user_id")
            if name == "should_search_memory" and user_id is None and given.get("agent_id") is None:
                return method(*args, **kwargs)  # no scope: it reads the conversation only
            if user_id is None and flt.scope_ids(node).get("user_id"):
                return method(*args, **kwargs)  # every result meets a user condition checked above
            self.require_user(user_id, name.replace("_", " "))
            return method(*args, **kwargs)

        return call

    def _owned(self, memory_id: Any) -> None:
        """Nothing, when the memory is the key's users' (or does not exist: the call says so itself)."""
        item = self._memory.get(memory_id) if isinstance(memory_id, str) else None
        if item is not None and item.get("user_id") not in (self.users or ()):
            raise MemoryNotFoundError(memory_id)

    def _by_id(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(memory_id: Any, *args: Any, **kwargs: Any) -> Any:
            if name == "history":  # history outlives the memory: its events name the user
                events = method(memory_id, *args, **kwargs)
                return events if all(event.get("user_id") in (self.users or ()) for event in events) else []
            try:
                self._owned(memory_id)
            except MemoryNotFoundError:
                if name == "get":
                    return None
                raise
            return method(memory_id, *args, **kwargs)

        return call

    def _batch(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        def call(memories: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(memories, (list, tuple)):
                self.require_tenant(name.replace("_", " ") + " of anything but a list of memories")
            for item in memories:
                self._owned(item.get("memory_id") if isinstance(item, Mapping) else item)
            return method(memories, *args, **kwargs)

        return call

    def _event(self, event_id: Any) -> dict[str, Any]:
        event = self._memory.event(event_id)
        if event.get("payload", {}).get("user_id") not in (self.users or ()):
            raise EventNotFoundError(event_id)
        return event


def _user_conditions(node: flt.Node) -> Iterator[flt.Compare]:
    """Every condition of the filter on the ``user_id`` column, wherever it stands (under OR, NOT)."""
    if isinstance(node, flt.Compare):
        if node.field.column == "user_id":
            yield node
    elif isinstance(node, (flt.And, flt.Or)):
        for item in node.items:
            yield from _user_conditions(item)
    elif isinstance(node, flt.Not):
        yield from _user_conditions(node.item)
