"""Storage backends, chosen by ``vector_store.provider``."""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memlane.core.config import MemoryConfig, memlane_home, validate
from memlane.core.defaults import DEFAULT_TENANT  # noqa: F401  (the tenant of Memory(), the CLI, memlane mcp)
from memlane.core.errors import ConfigError
from memlane.core.registry import Registry
from memlane.core.validation import tenant_name
from memlane.store.base import ChangeSet, Delete, SearchReads, Store, StoreInfo, Update

__all__ = ["ChangeSet", "Delete", "SearchReads", "Store", "StoreInfo", "Update", "create_store", "check_dims", "recorded_embedders", "SQLiteStoreConfig", "sqlite_path",
           "PostgresStoreConfig", "DATABASE_URL_ENV", "DEFAULT_TENANT", "postgres_settings", "postgres_config",
           "postgres_database", "STORES"]

SQLITE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
#: A PostgreSQL URL here makes PostgreSQL the store of ``Memory()`` and ``memlane serve`` (unless configured otherwise).
DATABASE_URL_ENV = "MEMLANE_DATABASE_URL"


class SQLiteStoreConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: Optional[str] = Field(None, description="a .db/.sqlite/.sqlite3 file, or a directory for <collection_name>.db")
    collection_name: str = Field("memlane", pattern=r"^[A-Za-z0-9_.-]+$")
    embedding_model_dims: Optional[int] = Field(None, ge=1, description="checked against the embedder")
    vector_dtype: Literal["float32", "float16"] = "float32"
    busy_timeout: float = Field(30.0, gt=0, description="seconds to wait for another writer")
    scope_cache_rows: int = Field(100_000, ge=0, description="rows of searched scopes whose vectors, keyword terms and "
                                  "records are kept in memory until a write to the scope, about 3 KB each "
                                  "(docs/retrieval.md; 0: none)")
    synchronous: Literal["normal", "full"] = Field(
        "normal", description="when a commit is on the disk (docs/storage.md, Durability): 'normal' (WAL; an "
                              "acknowledged write survives a crash of the process, the last ones may be lost on "
                              "power loss) or 'full' (each commit flushed to the disk first: survives power loss)")

    @field_validator("synchronous", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        return value.lower() if isinstance(value, str) else value


class PostgresStoreConfig(BaseModel):
    """``vector_store: {"provider": "postgres", "config": {...}}`` (``pgvector`` is accepted as a provider name too)."""

    model_config = ConfigDict(extra="forbid")

    dsn: Optional[str] = Field(None, description=f"postgresql://user:password@host:port/db (default ${DATABASE_URL_ENV})")
    schema_name: str = Field("public", alias="schema", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$",
                             description="the PostgreSQL schema holding memlane's tables (created if missing)")
    tenant: str = Field("default", min_length=1, max_length=200,
                        description="whose memories this store holds; tenants share the tables, never rows")
    embedding_model_dims: Optional[int] = Field(None, ge=1, description="checked against the embedder")
    min_connections: int = Field(1, ge=0)
    max_connections: int = Field(10, ge=1)
    connect_timeout: float = Field(10.0, gt=0, description="seconds to wait for a connection")
    auto_migrate: bool = Field(True, description="upgrade the schema on start (else `memlane db upgrade`)")
    exact_search_limit: int = Field(10_000, ge=0, description="scopes up to this many memories are searched exactly")
    ann_candidates: int = Field(40, ge=1, le=1000,
                                description="rows a search through the HNSW index asks for before keeping the best")
    hnsw_m: int = Field(16, ge=2, le=100)
    hnsw_ef_construction: int = Field(
        128, ge=4, le=1000, description="HNSW build candidate list (pgvector's default of 64 gave recall@10 0.86"
                                        " at 1M clustered vectors, 128 gave 0.99; benchmarks/RESULTS.md)")
    ef_search: int = Field(100, ge=1, le=1000, description="HNSW candidate list of unscoped searches")
    max_scan_tuples: int = Field(20_000, ge=1, description="rows an iterative index scan visits before giving up")
    vector_index: bool = Field(True, description="build the HNSW index (searches of scopes above exact_search_limit"
                                                 " and unscoped ones use it); false: every search is exact, and an"
                                                 " insert costs no index maintenance (docs/scaling.md)")
    databases: dict[str, str] = Field(default_factory=dict,
                                      description="other databases tenants may be placed in, by label: "
                                                  "{\"eu\": \"postgresql://...\"} (memlane tenants move)")
    synchronous_commit: Optional[Literal["on", "off", "local", "remote_write", "remote_apply"]] = Field(
        None, description="PostgreSQL's synchronous_commit for memlane's connections (docs/storage.md, "
                          "Durability); unset: the server's (on by default: durable when acknowledged). 'off' "
                          "acknowledges before the commit is flushed: a crash of the server may lose the last ones")

    @field_validator("synchronous_commit", mode="before")
    @classmethod
    def _on_off(cls, value: object) -> object:  # YAML reads on/off as booleans
        if isinstance(value, bool):
            return "on" if value else "off"
        return value.lower() if isinstance(value, str) else value

    def resolved_dsn(self) -> str:
        dsn = self.dsn or os.environ.get(DATABASE_URL_ENV)
        if not dsn:
            raise ConfigError(
                "vector_store.config.dsn is missing: give a PostgreSQL URL "
                f"(postgresql://user:password@host:5432/dbname) or set {DATABASE_URL_ENV}"
            )
        return dsn

    def database_options(self) -> dict:
        return dict(schema_name=self.schema_name, min_size=self.min_connections,
                    max_size=max(self.max_connections, self.min_connections), connect_timeout=self.connect_timeout,
                    migrate=self.auto_migrate, hnsw_m=self.hnsw_m, hnsw_ef_construction=self.hnsw_ef_construction,
                    ef_search=self.ef_search, max_scan_tuples=self.max_scan_tuples, vector_index=self.vector_index,
                    synchronous_commit=self.synchronous_commit)


def postgres_settings(config: dict | None) -> PostgresStoreConfig:
    return validate(PostgresStoreConfig, config, "vector_store.config")


def _check_dims(configured: Optional[int], dims: int | None) -> None:
    if configured is not None and dims is not None and configured != dims:
        raise ConfigError(
            f"vector_store.config.embedding_model_dims is {configured} but the embedder "
            f"produces {dims}-dimensional vectors"
        )


def postgres_config(config: MemoryConfig) -> PostgresStoreConfig | None:
    """The PostgreSQL settings of the store ``config`` names, or None for another provider. A config
    that names no store uses PostgreSQL when ``$MEMLANE_DATABASE_URL`` is set (every face alike)."""
    spec = config.vector_store
    if STORES.canonical(spec.provider) == "postgres":
        return postgres_settings(spec.config)
    if "vector_store" not in config.model_fields_set and os.environ.get(DATABASE_URL_ENV):
        return postgres_settings({})
    return None


def sqlite_path(store: SQLiteStoreConfig, history_db_path: str | None = None, tenant: str = DEFAULT_TENANT,
                home: Path | None = None) -> Path:
    """The SQLite file of ``tenant``. The default tenant's is the configured file, or
    ``<home>/memlane.db``; another tenant's is ``tenants/<tenant>.db`` beside it (``<home>/tenants/``
    unless the config names a directory). A home whose only store is ``tenants/default.db`` (what
    servers before one home wrote) keeps using it."""
    home = Path(home).expanduser() if home is not None else memlane_home()
    configured = store.path or history_db_path
    if tenant != DEFAULT_TENANT:
        base = home
        if store.path:
            path = Path(store.path).expanduser()
            base = path.parent if path.suffix in SQLITE_SUFFIXES or path.is_file() else path
        return base / "tenants" / f"{tenant_name(tenant)}.db"
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
    if configured:
        return Path(configured).expanduser()
    file = home / f"{store.collection_name}.db"
    legacy = home / "tenants" / f"{DEFAULT_TENANT}.db"
    if not file.exists() and legacy.exists():
        return legacy
    return file


#: store factories by ``vector_store.provider``: (the whole config, the embedder's dims, the tenant,
#: keyword ``home`` and ``database``; ``placement`` for PostgreSQL) -> Store
STORES: Registry[Callable[..., Store]] = Registry(
    "stores", "vector_store.provider",
    hint="memlane stores vectors in its own backends: 'sqlite' (embedded, the default) or 'postgres' "
         "(PostgreSQL with pgvector)")


def check_dims(config: MemoryConfig, dims: int) -> None:
    """A ``ConfigError`` when the store's configured ``embedding_model_dims`` is not the embedder's ``dims``."""
    settings = postgres_config(config)
    if settings is None and STORES.canonical(config.vector_store.provider) == "sqlite":
        settings = validate(SQLiteStoreConfig, config.vector_store.config, "vector_store.config")
    _check_dims(getattr(settings, "embedding_model_dims", None), dims)


def recorded_embedders(config: MemoryConfig, home: Path | None = None) -> list[str]:
    """The embedder names recorded by the stores a deployment (``config`` and ``home``) already has, the
    default tenant's first; each store is read, never created. Unreadable stores are skipped."""
    names: list[str] = []
    settings = postgres_config(config)
    if settings is not None:
        import psycopg

        # the home database first, then the others tenants may have moved to (``databases``)
        for dsn in [settings.resolved_dsn(), *settings.databases.values()]:
            try:
                with psycopg.connect(dsn, connect_timeout=int(settings.connect_timeout)) as con:
                    con.execute(f'SET search_path TO "{settings.schema_name}"')
                    names += [row[0] for row in con.execute(
                        "SELECT value FROM memlane_meta WHERE key = 'embedder' ORDER BY tenant <> %s, tenant",
                        (settings.tenant,)).fetchall()]
            except Exception:  # no such table yet, or no server: nothing recorded that could be read
                continue
        return names
    if STORES.canonical(config.vector_store.provider) != "sqlite":
        return []
    import sqlite3

    sqlite = validate(SQLiteStoreConfig, config.vector_store.config, "vector_store.config")
    first = sqlite_path(sqlite, config.history_db_path, DEFAULT_TENANT, home)
    others = sorted(first.parent.joinpath("tenants").glob("*.db")) if first.parent.joinpath("tenants").is_dir() else []
    for file in [first, *others]:
        if not file.is_file():
            continue
        try:
            con = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
            try:
                row = con.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
            finally:
                con.close()
        except sqlite3.Error:
            continue
        if row:
            names.append(row[0])
    return names


def create_store(config: MemoryConfig, dims: int | None = None, tenant: str | None = None, *,
                 home: Path | None = None, database: Any = None, placement: Any = None) -> Store:
    """The store of ``tenant`` (default: the config's PostgreSQL tenant, else ``DEFAULT_TENANT``) that
    ``config`` names. ``home``: where SQLite files live unless configured (``memlane_home()``);
    ``database``: a ``PostgresDatabase`` shared by several tenants' stores (the server's pool);
    ``placement``: the tenant directory they share (store/placement.py), which then owns the pools;
    ``dims``: the embedder's, checked against a configured ``embedding_model_dims`` (or ``check_dims``
    later, when the store's recorded model decides the embedder)."""
    provider = "postgres" if postgres_config(config) is not None else config.vector_store.provider
    if placement is not None:
        return STORES.get(provider)(config, dims, tenant, home=home, database=database, placement=placement)
    return STORES.get(provider)(config, dims, tenant, home=home, database=database)


@STORES.register("sqlite")
def _sqlite_store(config: MemoryConfig, dims: int | None, tenant: str | None, *, home: Path | None = None,
                  database: Any = None) -> Store:
    sqlite = validate(SQLiteStoreConfig, config.vector_store.config, "vector_store.config")
    _check_dims(sqlite.embedding_model_dims, dims)
    from memlane.store.sqlite import SQLiteStore

    tenant = tenant_name(tenant or DEFAULT_TENANT)
    path = sqlite_path(sqlite, config.history_db_path, tenant, home)
    store = SQLiteStore(path, vector_dtype=sqlite.vector_dtype, busy_timeout=sqlite.busy_timeout,
                        synchronous=sqlite.synchronous, scope_cache_rows=sqlite.scope_cache_rows)
    store.project_name = tenant  # the file is the tenant's: its rows carry no tenant
    return store


@STORES.register("postgres", aliases=("postgresql", "pgvector"))
def _postgres_store(config: MemoryConfig, dims: int | None, tenant: str | None, *, home: Path | None = None,
                    database: Any = None, placement: Any = None) -> Store:
    settings = postgres_config(config) or postgres_settings(config.vector_store.config)
    _check_dims(settings.embedding_model_dims, dims)
    owns = placement is None
    if placement is None:
        placement = postgres_placement(settings, database)
        owns = database is None
    from memlane.store.postgres import PostgresStore

    tenant = tenant or settings.tenant
    return PostgresStore(placement.where(tenant)[0], tenant, owns_database=owns, placement=placement,
                         exact_search_limit=settings.exact_search_limit, ann_candidates=settings.ann_candidates)


def postgres_database(settings: PostgresStoreConfig, dsn: str | None = None) -> Any:
    """A connection pool for ``settings`` (``PostgresDatabase``; of ``dsn`` instead of the configured
    database: another database of the deployment), with a clear error without the extra."""
    try:
        from memlane.store.postgres import PostgresDatabase
    except ImportError as exc:
        raise ConfigError(f"the PostgreSQL store needs the 'postgres' extra: pip install 'memlane[postgres]' ({exc})") from None
    return PostgresDatabase(dsn or settings.resolved_dsn(), **settings.database_options())


def postgres_placement(settings: PostgresStoreConfig, database: Any = None) -> Any:
    """The tenant directory of a PostgreSQL deployment (store/placement.py) over its home database
    (``database``, or a pool opened for ``settings``)."""
    from memlane.store.placement import Placement

    return Placement(database or postgres_database(settings), lambda dsn: postgres_database(settings, dsn),
                     labels=settings.databases)
