"""What a SQL store says about its database, so its statements can be written once.

``SqlMemoryStore`` (store/sql.py) and its graph tables (store/sql_graph.py) write every
statement as a template: ``%s`` placeholders, ``{memories}``-style table names, and the
tenant, which PostgreSQL rows carry and a SQLite file (one per tenant) does not:

- ``{tenant}`` / ``{tenant:m}``: ``[m.]tenant = %s AND `` (one parameter, see ``_t``), or nothing;
- ``{same:s.r}``: ``s.tenant = r.tenant AND `` (a join within the tenant), or nothing;
- ``{tenant_col}`` / ``{tenant_val}``: ``tenant, `` and ``%s, `` in an INSERT, or nothing;
- ``{seq}``: the column that orders rows by insertion; ``{lock}``: what locks a row read
  before it is changed (PostgreSQL: ``FOR UPDATE``); ``{now}``: the database's current time;
  ``{epoch}``: the database's clock in seconds since the epoch (job leases).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
Con = Any  # a DB-API connection whose execute(sql, params) returns a cursor


class _Tenant:
    def __init__(self, on: bool):
        self.on = on

    def __format__(self, alias: str) -> str:
        return f"{alias + '.' if alias else ''}tenant = %s AND " if self.on else ""


class _SameTenant:
    def __init__(self, on: bool):
        self.on = on

    def __format__(self, aliases: str) -> str:
        if not self.on:
            return ""
        left, right = aliases.split(".")
        return f"{left}.tenant = {right}.tenant AND "


class SqlDialect(ABC):
    #: logical table name -> the table (``TABLES["memories"]`` ...)
    TABLES: dict[str, str] = {}
    PLACEHOLDER = "%s"
    #: rows carry a tenant column (PostgreSQL); else the database is one tenant's (SQLite)
    TENANTED = False
    #: the column giving insertion order
    SEQ = "rowid"
    #: appended to the read of a row the transaction then changes
    LOCK = ""
    #: the driver's error for a duplicate key
    INTEGRITY_ERRORS: tuple[type[Exception], ...] = ()
    #: the current time as stored timestamps write it (``{now}``; the filter compiler's ``NOW``)
    NOW = ""
    #: the database's clock in seconds since the epoch (``{epoch}``)
    EPOCH = ""

    def __init__(self, tenant: str):
        self.tenant = tenant
        self._templates: dict[tuple[str, tuple[str, ...]], str] = {}

    # -- the dialect --------------------------------------------------------------------------------

    @abstractmethod
    def _run(self, work: Callable[[Con], T], *, write: bool = False) -> T:
        """``work`` on a connection, in one transaction when ``write`` (one snapshot otherwise)."""

    @abstractmethod
    def _json_in(self, value: dict[str, Any]) -> Any:
        """A JSON object as the dialect stores it."""

    @abstractmethod
    def _json_out(self, value: Any) -> dict[str, Any]:
        """A stored JSON object back as a dict."""

    @abstractmethod
    def _list_in(self, values: Sequence[str]) -> Any:
        """A list of strings as the dialect stores it."""

    @abstractmethod
    def _list_out(self, value: Any) -> list[str]:
        """A stored list of strings back as a list."""

    @abstractmethod
    def _in(self, column: str, values: Sequence[Any], params: list[Any]) -> str:
        """``column`` is one of ``values`` (any number of them)."""

    # -- templates ----------------------------------------------------------------------------------

    def _sql(self, template: str, **parts: str) -> str:
        """``template`` in this dialect; ``parts`` (compiled filters, ``_in`` lists) are put in as they are."""
        key = (template, tuple(parts))
        text = self._templates.get(key)
        if text is None:
            text = template.format(**self.TABLES, tenant=_Tenant(self.TENANTED), same=_SameTenant(self.TENANTED),
                                   tenant_col="tenant, " if self.TENANTED else "",
                                   tenant_val="%s, " if self.TENANTED else "", seq=self.SEQ, lock=self.LOCK, now=self.NOW, epoch=self.EPOCH,
                                   **{k: "{" + k + "}" for k in parts})
            if self.PLACEHOLDER != "%s":
                text = text.replace("%s", self.PLACEHOLDER)
            self._templates[key] = text
        return text.format(**parts) if parts else text

    def _t(self, *params: Any) -> tuple[Any, ...]:
        """The parameters of a statement with one ``{tenant}`` (or ``{tenant_val}``) at its start."""
        return (self.tenant, *params) if self.TENANTED else params
