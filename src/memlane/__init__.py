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
    StoreError,
)
from memlane.async_memory import AsyncMemory
from memlane.memory import Memory
from memlane.documents import AsyncDocuments, Documents

__version__ = "0.1.0"

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
    "StoreError",
    "__version__",
]
