"""Typed exceptions. Every message says what was wrong and how to fix it.

Input errors subclass ``ValueError`` so code written against mem0 (which raises
``ValueError``) keeps working; lookup failures subclass ``LookupError``.
"""

from __future__ import annotations


class MemlaneError(Exception):
    """Base class of every error memlane raises on purpose."""


class InvalidInputError(MemlaneError, ValueError):
    """An argument was malformed. ``field`` names the offending argument."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.field = field


class ScopeError(InvalidInputError):
    """A call that needs a scope (user_id / agent_id / run_id) got none, or two that disagree."""


class FilterError(InvalidInputError):
    """A filter could not be parsed. ``path`` locates the offending part of the tree."""

    def __init__(self, message: str, *, path: str = "filters"):
        super().__init__(f"{path}: {message}", field="filters")
        self.path = path


class ConfigError(MemlaneError, ValueError):
    """The configuration is invalid or names something that does not exist."""


class MemoryNotFoundError(MemlaneError, LookupError):
    """No memory has the given id."""

    def __init__(self, memory_id: str):
        super().__init__(f"no memory with id {memory_id!r}")
        self.memory_id = memory_id


class EntityNotFoundError(MemlaneError, LookupError):
    """No memory and no message names this user, agent or run."""

    def __init__(self, kind: str, entity_id: str):
        super().__init__(f"no {kind} {entity_id!r} has memories or messages here")
        self.kind = kind
        self.entity_id = entity_id


class EventNotFoundError(MemlaneError, LookupError):
    """No event (an ``add(async_mode=True)``) has the given id; ended events are kept for
    ``background.keep_days``."""

    def __init__(self, event_id: str):
        super().__init__(f"no event with id {event_id!r} (events are kept for background.keep_days after they end)")
        self.event_id = event_id


class NotFoundError(MemlaneError, LookupError):
    """No webhook or export (``kind``) has the given id; ``field`` names the argument that gave it."""

    def __init__(self, kind: str, item_id: str, *, field: str):
        super().__init__(f"no {kind} with id {item_id!r}")
        self.kind = kind
        self.item_id = item_id
        self.field = field


class PermissionDeniedError(MemlaneError):
    """The API key may not do this: it is read-only (``permission`` ``write``), limited to some users
    (``user``: the request names another user, a wildcard or none; ``tenant``: it reaches what the whole
    tenant shares), or not an admin key (``admin``). 403."""

    def __init__(self, message: str, *, permission: str):
        super().__init__(message)
        self.permission = permission


class MaintenanceBusyError(MemlaneError):
    """Maintenance of the same scope (a cleanup, a merge) is running already, in this process or
    another server of the deployment; it runs once at a time."""


class EmbedderMismatchError(MemlaneError):
    """The store was filled by a different embedder than the one configured."""


class EmbeddingError(MemlaneError):
    """The embedding provider failed or returned something unusable."""


class StoreError(MemlaneError):
    """The storage backend failed in a way the caller cannot fix by changing input."""


class StorageFullError(StoreError):
    """The disk holding the store is full (SQLite's ``SQLITE_FULL``, PostgreSQL's ``DiskFull``): the
    write was rolled back, nothing of it was stored. Free space, then retry; an add retried with the
    same idempotency key happens once. ``location`` names the store, ``cause`` is the database's words."""

    def __init__(self, location: str | None = None, cause: str = ""):
        super().__init__("the disk holding the store is full: nothing of this request was stored; "
                         "free space on it, then retry")
        self.location = location
        self.cause = cause


class StoreUnavailableError(StoreError):
    """The database cannot serve this call now: it is unreachable (stopped, restarting, the network
    cut), or every connection stays busy. Nothing is wrong with the call: retry it after
    ``retry_after`` seconds (an add with the same idempotency key happens once). ``location`` names
    the database (without its password), ``since`` is when it was last seen away (ISO-8601, UTC)."""

    #: seconds a client is told to wait (HTTP ``Retry-After``) unless the error says otherwise
    RETRY_AFTER = 2

    def __init__(self, message: str, *, location: str | None = None, since: str | None = None,
                 retry_after: int = RETRY_AFTER):
        super().__init__(message)
        self.location = location
        self.since = since
        self.retry_after = retry_after


class _AddKeyError(MemlaneError):
    """What became of the add of an idempotency key (``key``): the message says it after the key."""

    state = ""

    def __init__(self, key: str):
        super().__init__(f"an add with idempotency key {key!r} {self.state}")
        self.key = key


class AddKeyTaken(_AddKeyError, StoreError):
    """An add's idempotency key is journaled already (another call with that key came first)."""

    state = "is journaled already"


class AddAlreadyDone(StoreError):
    """An add was completed already (by another process, or a recovery), so this completion is void."""

    def __init__(self, add_id: str):
        super().__init__(f"the add {add_id} is not pending any more")
        self.add_id = add_id


class IdempotencyKeyReused(InvalidInputError):
    """An idempotency key came back with a different request than its first use."""


class AddInProgress(_AddKeyError):
    """An add with this idempotency key is being formed by another live call; retry shortly."""

    state = "is still being processed; retry in a moment"


class UnsupportedInputError(InvalidInputError):
    """The configured provider cannot take this kind of input (e.g. an image for a text-only encoder)."""
