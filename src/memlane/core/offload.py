"""Async twins of the sync classes (``AsyncMemory``, ``AsyncDocuments``): each method runs the sync
class's method in a worker thread, so a twin has no bodies of its own and cannot drift apart."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any


def offload(cls: type, name: str) -> Callable[..., Any]:
    """``cls.<name>`` as a coroutine method of a twin whose ``sync`` attribute is the ``cls`` instance
    (its signature and docstring are the sync method's)."""
    method = getattr(cls, name)

    @functools.wraps(method)
    async def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return call
