"""``with`` for the objects that hold a store, a pool or an HTTP client (``Memory``, ``Documents``, the
CLI's ``RemoteMemory``), and ``async with`` for their async twins (``AsyncMemory``, ``AsyncDocuments``):
the block gives the object itself, and leaving it calls ``close()`` (awaited by a twin)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Self


class Closing(ABC):
    @abstractmethod
    def close(self) -> None:
        """Release what the object holds."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncClosing(ABC):
    @abstractmethod
    async def close(self) -> None:
        """Release what the object holds."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
