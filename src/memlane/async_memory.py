"""``AsyncMemory``: ``Memory`` for asyncio code. It has no bodies of its own: every method runs the
``Memory`` method in a worker thread, so the two can never drift apart."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from memlane.core import config as config_mod
from memlane.core.closing import AsyncClosing
from memlane.core.offload import offload
from memlane.memory import Memory


_offload = functools.partial(offload, Memory)


class AsyncMemory(AsyncClosing):
    """``Memory`` for asyncio code: the same methods and results, awaited.

    Blocking work (embedding, SQLite) runs in worker threads, so many calls can
    be in flight at once without blocking the event loop.
    """

    def __init__(self, config: config_mod.MemoryConfig | Mapping[str, Any] | None = None, *,
                 memory: Memory | None = None, **options: Any):
        """``AsyncMemory(config, **options)`` runs ``Memory(config, **options)`` (``embedder``, ``store``,
        ``tenant`` …); ``memory=`` an existing ``Memory``."""
        self.sync = memory or Memory(config, **options)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> "AsyncMemory":
        return cls(config_dict)

    add = _offload("add")
    cleanup_old_memories = _offload("cleanup_old_memories")
    merge_similar_memories = _offload("merge_similar_memories")
    insert = _offload("insert")
    get_messages = _offload("get_messages")
    get = _offload("get")
    get_all = _offload("get_all")
    search = _offload("search")
    update = _offload("update")
    batch_update = _offload("batch_update")
    set_expiration = _offload("set_expiration")
    delete = _offload("delete")
    batch_delete = _offload("batch_delete")
    delete_all = _offload("delete_all")
    history = _offload("history")
    get_project = _offload("get_project")
    update_project = _offload("update_project")
    get_webhooks = _offload("get_webhooks")
    create_webhook = _offload("create_webhook")
    update_webhook = _offload("update_webhook")
    delete_webhook = _offload("delete_webhook")
    webhook_deliveries = _offload("webhook_deliveries")
    feedback = _offload("feedback")
    get_feedback = _offload("get_feedback")
    create_memory_export = _offload("create_memory_export")
    get_memory_export = _offload("get_memory_export")
    reset = _offload("reset")
    info = _offload("info")
    scopes = _offload("scopes")
    close = _offload("close")
    should_search_memory = _offload("should_search_memory")
    search_memory_with_context = _offload("search_memory_with_context")
    event = _offload("event")
    events = _offload("events")
