"""Storage backends, chosen by ``vector_store.provider``."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from memlane.config import MemoryConfig, memlane_home, validate
from memlane.errors import ConfigError
from memlane.store.base import ChangeSet, Delete, Store, StoreInfo, Update

__all__ = ["ChangeSet", "Delete", "Store", "StoreInfo", "Update", "create_store", "SQLiteStoreConfig", "sqlite_path"]

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


class SQLiteStoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Optional[str] = Field(None, description="a .db/.sqlite/.sqlite3 file, or a directory for <collection_name>.db")
    collection_name: str = Field("memlane", pattern=r"^[A-Za-z0-9_.-]+$")
    embedding_model_dims: Optional[int] = Field(None, ge=1, description="checked against the embedder")
    vector_dtype: Literal["float32", "float16"] = "float32"
    busy_timeout: float = Field(30.0, gt=0, description="seconds to wait for another writer")


def sqlite_path(store: SQLiteStoreConfig, history_db_path: str | None = None) -> Path:
    if store.path:
        path = Path(store.path).expanduser()
        if path.suffix in SQLITE_SUFFIXES or path.is_file():
            file = path
        else:
            file = path / f"{store.collection_name}.db"
        if history_db_path and Path(history_db_path).expanduser() != file:
            warnings.warn(
                f"memlane keeps history in the store file {file} so every write is atomic; "
                f"history_db_path={history_db_path!r} is not used",
                UserWarning,
                stacklevel=4,
            )
        return file
    if history_db_path:
        return Path(history_db_path).expanduser()
    return memlane_home() / f"{store.collection_name}.db"


def create_store(config: MemoryConfig, dims: int) -> Store:
    spec = config.vector_store
    if spec.provider != "sqlite":
        raise ConfigError(
            f"vector_store.provider {spec.provider!r} is not available; memlane stores vectors in its own "
            "backends: 'sqlite' (embedded, the default)"
        )
    settings = validate(SQLiteStoreConfig, spec.config, "vector_store.config")
    if settings.embedding_model_dims is not None and settings.embedding_model_dims != dims:
        raise ConfigError(
            f"vector_store.config.embedding_model_dims is {settings.embedding_model_dims} but the embedder "
            f"produces {dims}-dimensional vectors"
        )
    from memlane.store.sqlite import SQLiteStore

    return SQLiteStore(sqlite_path(settings, config.history_db_path), vector_dtype=settings.vector_dtype,
                       busy_timeout=settings.busy_timeout)
