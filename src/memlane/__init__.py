"""memlane: long-term memory for AI agents.

    from memlane import Memory
    m = Memory()                       # SQLite under ~/.memlane, local model, offline
    m.add("I love pizza", user_id="alice")
    m.search("what food does alice like?", user_id="alice")
"""

from memlane.core.errors import (
    ConfigError,
    EmbedderMismatchError,
    EmbeddingError,
    FilterError,
    InvalidInputError,
    MemlaneError,
    MemoryNotFoundError,
    ScopeError,
    StorageFullError,
    StoreError,
    StoreUnavailableError,
)
__version__ = "0.1.0"

#: imported on first use (PEP 562), so ``import memlane.<anything>`` (the ``memlane`` command's start, the
#: errors) does not load the engine, numpy and pydantic until a Memory or Documents is asked for
_LAZY = {"Memory": "memlane.memory", "AsyncMemory": "memlane.async_memory",
         "Documents": "memlane.documents", "AsyncDocuments": "memlane.documents"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memlane' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)

__all__ = [
    "AsyncDocuments",
    "AsyncMemory",
    "Documents",
    "ConfigError",
    "EmbedderMismatchError",
    "EmbeddingError",
    "FilterError",
    "InvalidInputError",
    "MemlaneError",
    "Memory",
    "MemoryNotFoundError",
    "ScopeError",
    "StorageFullError",
    "StoreError",
    "StoreUnavailableError",
    "__version__",
]
