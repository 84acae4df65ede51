"""``memlane tenants list|move``: where the tenants of a PostgreSQL deployment live, and moving one
to another database online (store/tenant_move.py; docs/deployment.md)."""

from __future__ import annotations

from typing import Any

import typer

from memlane.cli.base import JsonOpt, _print_json, _progress, _store_config, command, console
from memlane.cli.render import escape
from memlane.core.errors import ConfigError

tenants_app = typer.Typer(rich_markup_mode=None, no_args_is_help=True,
                          help="Tenants across PostgreSQL databases: list where they live, move one online.")


def _placement() -> Any:
    from memlane.core.config import load
    from memlane.store import postgres_config, postgres_placement

    settings = postgres_config(load(_store_config()))
    if settings is None:
        raise ConfigError("tenants live in several databases only on PostgreSQL: configure the postgres store "
                          "(vector_store.provider 'postgres', or $MEMLANE_DATABASE_URL) with its other databases "
                          "in vector_store.config.databases")
    return postgres_placement(settings)


def _close(placement: Any) -> None:
    placement.close()
    placement.home.close()


@command("list", on=tenants_app)
def tenants_list(as_json: bool = JsonOpt) -> None:
    """Every tenant with memories, and the database it lives in (home unless moved)."""
    from memlane.store.placement import HOME

    placement = _placement()
    try:
        placed = placement.entries()
        rows: dict[str, dict[str, Any]] = {}
        for location in {HOME, *placement.labels, *(loc for loc, _ in placed.values())}:
            database = placement.database(location)
            for tenant, count in database.status()["memories_per_tenant"].items():
                if placed.get(tenant, (HOME, ""))[0] == location:
                    rows[tenant] = {"tenant": tenant, "database": location or "home",
                                    "state": placed.get(tenant, (HOME, "active"))[1], "memories": count}
        for tenant, (location, state) in placed.items():
            rows.setdefault(tenant, {"tenant": tenant, "database": location or "home", "state": state, "memories": 0})
    finally:
        _close(placement)
    listed = [rows[t] for t in sorted(rows)]
    if as_json:
        _print_json(listed)
        return
    from rich.table import Table

    table = Table(title="tenants")
    for column in ("tenant", "database", "state", "memories"):
        table.add_column(column)
    for row in listed:
        table.add_row(escape(row["tenant"]), escape(row["database"]), row["state"], str(row["memories"]))
    console.print(table)


@command("move", on=tenants_app)
def tenants_move(
    tenant: str = typer.Argument(..., help="the tenant to move"),
    target: str = typer.Argument(..., help="a label of vector_store.config.databases, a PostgreSQL URL, or 'home'"),
    keep_source: bool = typer.Option(False, "--keep-source", help="leave the tenant's rows in the old database"),
    as_json: bool = JsonOpt,
) -> None:
    """Move a tenant to another database while the servers keep serving it.

    Its memories, history, messages, graph, documents and jobs move; its writes wait about 1.5 s
    at the end, and none is lost."""
    from memlane.core.validation import tenant_name
    from memlane.store.tenant_move import move_tenant

    placement = _placement()
    try:
        with _progress() as bar:
            task = bar.add_task("copying tables", total=None)
            report = move_tenant(placement, tenant_name(tenant), target, keep_source=keep_source,
                                 progress=lambda table, done, total: bar.update(task, completed=done, total=total))
    finally:
        _close(placement)
    if as_json:
        _print_json(report.to_dict())
        return
    console.print(f"moved tenant {escape(report.tenant)}: {escape(report.source)} -> {escape(report.target)} in "
                  f"{report.seconds:.1f} s ({report.replayed} rows written meanwhile copied again; writes waited "
                  f"{report.paused_seconds:.1f} s)", highlight=False)
    for table, count in report.rows.items():
        if count:
            console.print(f"  {table:26}{count:>10}", highlight=False)
