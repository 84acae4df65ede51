"""``memlane keys create|list|revoke``: the server's API keys, stored hashed in ``<home>/keys.db`` (or, for a
PostgreSQL deployment, in its database, which every server reads)."""

from __future__ import annotations

import sys
from typing import Any, Optional

import typer

from memlane.cli.base import JsonOpt, _print_json, _store_config, command, console, errors
from memlane.cli.render import escape
from memlane.core.defaults import DEFAULT_TENANT

keys_app = typer.Typer(rich_markup_mode=None,
                       help="API keys of the server: create, list, revoke (stored hashed in <home>/keys.db, or in "
                            "the PostgreSQL database).",
                       no_args_is_help=True)


def _key_store() -> Any:
    """The keys of the servers this configuration runs: ``<home>/keys.db``, or the PostgreSQL database."""
    from memlane.core.defaults import memlane_home
    from memlane.hosting.keys import open_key_store

    return open_key_store(_store_config(), memlane_home())


@command("create", on=keys_app)
def keys_create(
    tenant: str = typer.Option(..., "--tenant", "-t", help="the tenant the key acts for (letters, digits, _ or -)"),
    admin: bool = typer.Option(False, "--admin", help="may reset the tenant and list across all its users"),
    read_only: bool = typer.Option(False, "--read-only",
                                   help="reads only: search, get, list, history, context; no add, update or delete"),
    users: Optional[list[str]] = typer.Option(None, "--user", "-u",
                                              help="reaches only this user's memories (repeat for several users)"),
    as_json: bool = JsonOpt,
) -> None:
    """Create an API key. The key is printed once: only its hash is stored."""
    key, info = _key_store().create(tenant, admin=admin, read_only=read_only, users=users or None)
    store = _tenant_store(info.tenant)
    if as_json:
        _print_json({"key": key, **info.to_dict(), "store": store})
        return
    sys.stdout.write(key + "\n")
    errors.print(f"[green]created[/green] {info.id} for tenant [bold]{escape(info.tenant)}[/bold]"
                 f"{f' ({escape(_trust(info))})' if _trust(info) else ''}. Store the key now: it cannot be shown again.",
                 highlight=False, soft_wrap=True)
    if info.tenant == DEFAULT_TENANT:
        errors.print(f"its memories: {escape(store)}, the ones Memory(), the memlane command and memlane mcp use",
                     highlight=False, soft_wrap=True)
    else:
        errors.print(f"its memories: {escape(store)}, tenant {escape(info.tenant)}'s own (not those of Memory() and "
                     f"the memlane command); see them with: memlane --tenant {escape(info.tenant)} list --user ID, "
                     f"or Memory(tenant={info.tenant!r})", highlight=False, soft_wrap=True)


def _tenant_store(tenant: str) -> str:
    """Where the memories of a tenant's keys live, for a server with this command's --config and home."""
    from memlane.core import config as config_mod
    from memlane.core.defaults import memlane_home
    from memlane.hosting.tenancy import Tenants
    from memlane.store import postgres_config

    settings = config_mod.load(_store_config())
    postgres = postgres_config(settings)
    if postgres is not None:
        from memlane.store.postgres import redact

        return f"tenant {tenant!r} of {redact(postgres.resolved_dsn())}"
    return str(Tenants.sqlite_file(settings, memlane_home(), tenant))


def _trust(info: Any) -> str:
    """What a key may do beyond or short of its tenant's plain key: admin, read-only, users."""
    parts = ["admin"] if info.admin else []
    if info.read_only:
        parts.append("read-only")
    if info.users is not None:
        parts.append("users " + ", ".join(info.users))
    return "; ".join(parts)


def _minute(when: Optional[str]) -> str:
    return when[:16].replace("T", " ") if when else ""


@command("list", on=keys_app)
def keys_list(as_json: bool = JsonOpt) -> None:
    """List keys (id, prefix, tenant, access, created, last used, revoked); never the keys themselves."""
    stored = _key_store().list()
    if as_json:
        _print_json([k.to_dict() for k in stored])
        return
    from rich.table import Table

    table = Table(title="API keys")
    for column in ("id", "prefix", "tenant", "access", "created", "last used", "revoked"):
        table.add_column(column, no_wrap=column in ("id", "prefix"), overflow="fold")
    for k in stored:
        table.add_row(k.id, k.prefix + "…", escape(k.tenant), escape(_trust(k)), k.created_at[:10],
                      _minute(k.last_used_at), (k.revoked_at or "")[:10])
    console.print(table if stored else "[dim]no API keys; create one with memlane keys create --tenant NAME[/dim]")


@command("revoke", on=keys_app)
def keys_revoke(key_id: str = typer.Argument(..., help="the key's id (see memlane keys list)"),
                as_json: bool = JsonOpt) -> None:
    """Revoke a key; the server refuses it from the next request on."""
    info = _key_store().revoke(key_id)
    if as_json:
        _print_json(info.to_dict())
    else:
        console.print(f"revoked {info.id} (tenant {escape(info.tenant)}) at {info.revoked_at}", highlight=False)
