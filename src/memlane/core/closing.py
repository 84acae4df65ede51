"""``with`` for the objects that hold a store, a pool or an HTTP client (``Memory``, ``Documents``, the
CLI's ``RemoteMemory``): the block gives the object itself, and leaving it calls ``close()``."""

from __future__ import annotations

from typing import Self


class Closing:
    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
