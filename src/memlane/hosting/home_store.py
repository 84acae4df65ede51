"""The store of a home: the one its server uses, recorded in ``<home>/store.json``, which every
``memlane`` command on that home opens too, whether the server runs or not.

``memlane serve`` writes the record when it starts, once its store is open::

    {"store": "sqlite", "location": "/home/me/.memlane/memlane.db"}
    {"store": "bundled-postgres", "location": "/home/me/.memlane/postgres"}
    {"store": "postgres", "location": "postgresql://me@db:5432/mem", "schema": "public",
     "given_by": "MEMLANE_DATABASE_URL"}

A PostgreSQL URL is recorded without its password: the record says which store a command must
open, never how to log in to it (that stays in the environment or the config file it came from).

The rule (``resolve``), for ``memlane serve`` and for every command that opens the store itself:

1. an explicit choice wins: serve's ``--postgres`` / ``--sqlite``, a ``--config`` naming a
   ``vector_store``, ``$MEMLANE_DATABASE_URL``. When it is not the recorded store the command says
   so (``Resolved.note``) before it goes on;
2. else the recorded store: the bundled PostgreSQL is started (or joined) for the command and
   stopped after it unless someone else still uses it; an external PostgreSQL needs its URL again,
   and without it the command stops with an error naming the store; a SQLite file elsewhere than
   the home (a server's ``--config``) is opened where it is;
3. else a home holding the bundled PostgreSQL's data and no SQLite store (served with
   ``--postgres`` by a memlane that recorded nothing) is taken to use it;
4. else SQLite in the home (``<home>/memlane.db``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

RECORD = "store.json"
SQLITE, BUNDLED, POSTGRES = "sqlite", "bundled-postgres", "postgres"
#: the environment variable that names a PostgreSQL store (``memlane.store.DATABASE_URL_ENV``)
DATABASE_URL_ENV = "MEMLANE_DATABASE_URL"
Flag = Literal["postgres", "sqlite"]


@dataclass(frozen=True)
class HomeStore:
    """A store, as a home records it: its kind, where it is (no password), and what chose it."""

    store: str
    location: str
    schema: str | None = None
    given_by: str | None = None

    def same(self, other: HomeStore) -> bool:
        return (self.store, self.location, self.schema) == (other.store, other.location, other.schema)

    def describe(self) -> str:
        if self.store == SQLITE:
            return f"the SQLite store {self.location}"
        if self.store == BUNDLED:
            return f"the bundled PostgreSQL in {self.location}"
        return f"the PostgreSQL at {self.location} (schema {self.schema or 'public'})"


@dataclass(frozen=True)
class Resolved:
    """What a command on a home uses."""

    store: HomeStore
    #: the config to open it with: the command's, or for a SQLite file elsewhere, one naming that file
    config: dict[str, Any] | None
    #: the recorded (or inferred) store of the home, if any
    recorded: HomeStore | None
    #: said to the user when an explicit choice is not the home's store
    note: str | None = None

    @property
    def bundled(self) -> bool:
        return self.store.store == BUNDLED


def record(home: Path, store: HomeStore) -> None:
    """Write ``<home>/store.json`` (owner-only, replaced atomically)."""
    home = Path(home).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    partial = home / f".{RECORD}.{os.getpid()}"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({k: v for k, v in asdict(store).items() if v is not None}, handle)
    os.replace(partial, home / RECORD)


def recorded(home: Path) -> HomeStore | None:
    """The store ``<home>/store.json`` names (None: no record, or one that cannot be read)."""
    try:
        data = json.loads((Path(home).expanduser() / RECORD).read_text(encoding="utf-8"))
        store = HomeStore(store=str(data["store"]), location=str(data["location"]), schema=data.get("schema"),
                          given_by=data.get("given_by"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return store if store.store in (SQLITE, BUNDLED, POSTGRES) else None


def bundled_data(home: Path) -> Path:
    """Where the bundled PostgreSQL of ``home`` keeps its data (``store/pgserver.py``)."""
    return Path(home).expanduser() / "postgres"


def _sqlite_file(config: Mapping[str, Any] | None, home: Path) -> str:
    from memlane.core import config as config_mod
    from memlane.store import DEFAULT_TENANT, SQLiteStoreConfig, sqlite_path

    settings = config_mod.load(dict(config) if config is not None else None)
    store = config_mod.validate(SQLiteStoreConfig, settings.vector_store.config, "vector_store.config")
    return str(sqlite_path(store, settings.history_db_path, DEFAULT_TENANT, home).resolve())


def _postgres(dsn: str | None, schema: str | None, given_by: str) -> HomeStore:
    try:
        from memlane.store.postgres import redact
    except ImportError:  # no 'postgres' extra: opening the store will say so
        return HomeStore(POSTGRES, "<a PostgreSQL URL>", schema or "public", given_by)
    return HomeStore(POSTGRES, redact(dsn) if dsn else "<no URL>", schema or "public", given_by)


def explicit(home: Path, config: Mapping[str, Any] | None, flag: Flag | None = None) -> HomeStore | None:
    """The store the command chose itself (a flag, the config, the environment), or None."""
    home = Path(home).expanduser()
    if flag == "postgres":
        return HomeStore(BUNDLED, str(bundled_data(home)), given_by="--postgres")
    if flag == "sqlite":
        return HomeStore(SQLITE, _sqlite_file(config, home), given_by="--sqlite")
    spec = (config or {}).get("vector_store")
    if isinstance(spec, Mapping):
        from memlane.store import STORES

        if STORES.canonical(str(spec.get("provider", SQLITE))) == POSTGRES:
            options = spec.get("config") or {}
            return _postgres(options.get("dsn") or os.environ.get(DATABASE_URL_ENV), options.get("schema"), "--config")
        return HomeStore(SQLITE, _sqlite_file(config, home), given_by="--config")
    url = os.environ.get(DATABASE_URL_ENV)
    if url:
        return _postgres(url, None, DATABASE_URL_ENV)
    return None


def inferred(home: Path) -> HomeStore | None:
    """The recorded store of ``home``, else the bundled PostgreSQL when its data is there and no SQLite store is."""
    home = Path(home).expanduser()
    found = recorded(home)
    if found is None and (bundled_data(home) / "PG_VERSION").is_file() and not Path(_sqlite_file(None, home)).exists():
        found = HomeStore(BUNDLED, str(bundled_data(home)), given_by="its data in the home")
    return found


def resolve(home: Path, config: Mapping[str, Any] | None, flag: Flag | None = None) -> Resolved:
    """The store a command on ``home`` with ``config`` (and serve's ``flag``) uses: the module's rule."""
    from memlane.core.errors import ConfigError

    home = Path(home).expanduser()
    config = dict(config) if config is not None else None
    chosen, known = explicit(home, config, flag), inferred(home)
    if chosen is not None:
        note = None
        if known is not None and not known.same(chosen):
            note = (f"{chosen.describe()} (given by {chosen.given_by}) is not the store this home's server used "
                    f"last: {known.describe()} (recorded in {home / RECORD}). Going on with {chosen.describe()}.")
        return Resolved(chosen, config, known, note)
    if known is None:
        return Resolved(HomeStore(SQLITE, _sqlite_file(config, home), given_by="the default"), config, None)
    if known.store == POSTGRES:
        raise ConfigError(
            f"this home's server uses {known.describe()}, given by {known.given_by} (recorded in {home / RECORD}); "
            f"its password is not recorded: set {DATABASE_URL_ENV} to that database's URL"
            + (" or give the same --config" if known.given_by == "--config" else "")
            + ", or name another store with --config")
    if known.store == SQLITE and known.location != _sqlite_file(config, home):
        opened = {**(config or {}), "vector_store": {"provider": SQLITE, "config": {"path": known.location}}}
        return Resolved(known, opened, known)
    return Resolved(known, config, known)


@contextmanager
def opened(home: Path, config: Mapping[str, Any] | None, *, flag: Flag | None = None, serving: bool = False,
           say: Callable[[str], None] | None = None) -> Iterator[Resolved]:
    """The home's store made ready for the block (``resolve``): the note said, the bundled PostgreSQL
    started (or joined) and named by ``$MEMLANE_DATABASE_URL`` until the block ends, when it stops
    unless another process still uses it. ``serving``: the block is the home's server, whose store
    the home records."""
    home = Path(home).expanduser()
    resolved = resolve(home, config, flag)
    if resolved.note and say is not None:
        say(resolved.note)
    if not resolved.bundled:
        if serving:
            record(home, resolved.store)
        yield resolved
        return
    from memlane.store.pgserver import bundled_postgres

    with bundled_postgres(home) as url:
        before = os.environ.get(DATABASE_URL_ENV)
        os.environ[DATABASE_URL_ENV] = url  # worker processes of a server inherit it
        try:
            if serving:
                record(home, resolved.store)
            yield resolved
        finally:
            if before is None:
                os.environ.pop(DATABASE_URL_ENV, None)
            else:
                os.environ[DATABASE_URL_ENV] = before
