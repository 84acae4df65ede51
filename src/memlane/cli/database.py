"""``memlane db upgrade|status`` (the PostgreSQL store's schema) and ``memlane migrate`` (a SQLite store
copied into PostgreSQL)."""

from __future__ import annotations

from typing import Any, Optional

import typer

from memlane.cli.render import escape
from memlane.cli.base import JsonOpt, _print_json, _progress, _store_config, command, console

db_app = typer.Typer(rich_markup_mode=None, help="The PostgreSQL store's schema (MEMLANE_DATABASE_URL or --dsn).", no_args_is_help=True)

DsnOpt = typer.Option(None, "--dsn", help="postgresql://user:password@host:5432/db (default: the config, then "
                                          "$MEMLANE_DATABASE_URL)")
SchemaOpt = typer.Option(None, "--schema", help="PostgreSQL schema of memlane's tables (default: the config, then public)")


def _postgres_target(dsn: str | None, schema: str | None) -> tuple[str, str]:
    from memlane.core.config import load
    from memlane.store import postgres_settings

    spec = load(_store_config()).vector_store
    settings = postgres_settings(spec.config if spec.provider in ("postgres", "postgresql", "pgvector") else {})
    return dsn or settings.resolved_dsn(), schema or settings.schema_name


@command("upgrade", on=db_app)
def db_upgrade(dsn: Optional[str] = DsnOpt, schema: Optional[str] = SchemaOpt, as_json: bool = JsonOpt) -> None:
    """Bring the database's memlane schema to this version (safe to run again, and from several hosts)."""
    from memlane.store.postgres import PostgresDatabase

    url, schema_name = _postgres_target(dsn, schema)
    database = PostgresDatabase(url, schema_name=schema_name, min_size=0, max_size=1, migrate=False, check=False)
    try:
        before, after = database.upgrade()
    finally:
        database.close()
    if as_json:
        _print_json({"location": database.location, "schema": schema_name, "before": before, "after": after})
        return
    change = f"{before} -> {after}" if before != after else f"{after} (already current)"
    console.print(f"memlane schema in {escape(database.location)} ({escape(schema_name)}): version {change}",
                  highlight=False)


@command("status", on=db_app)
def db_status(dsn: Optional[str] = DsnOpt, schema: Optional[str] = SchemaOpt, as_json: bool = JsonOpt) -> None:
    """Schema version, pgvector version and memories per tenant."""
    from memlane.store.postgres import PostgresDatabase

    url, schema_name = _postgres_target(dsn, schema)
    database = PostgresDatabase(url, schema_name=schema_name, min_size=0, max_size=1, migrate=False, check=False)
    try:
        status = database.status()
    finally:
        database.close()
    if as_json:
        _print_json(status)
        return
    for key, value in status.items():
        console.print(f"{key:16}{escape(str(value))}", highlight=False)


@command()
def migrate(
    source: str = typer.Option(..., "--from", help="the SQLite store: sqlite:///path/to/memlane.db"),
    target: str = typer.Option(..., "--to", envvar="MEMLANE_DATABASE_URL", show_envvar=True,
                               help="postgresql://user:password@host:5432/db (with pgvector)"),
    tenant: str = typer.Option("default", help="tenant of the target that receives the copy (must hold nothing else)"),
    schema: str = typer.Option("public", "--schema", help="PostgreSQL schema of memlane's tables"),
    batch_size: int = typer.Option(2000, min=1, help="rows per transaction (and per checkpoint)"),
    source_tenant: Optional[str] = typer.Option(
        None, "--source-tenant", help="tenant of the source's document tables to copy, when it holds several"),
    index_memory: str = typer.Option(
        "1GB", "--index-memory", help="maintenance_work_mem of the HNSW build after the load (e.g. 4GB); "
                                      "the build is several times faster when the whole graph fits"),
    as_json: bool = JsonOpt,
) -> None:
    """Copy a SQLite store (memories, vectors, history, messages, graph, documents, project settings,
    webhooks, feedback, exports) into PostgreSQL.
    Resumable; verifies counts."""
    from memlane import migration

    with _progress() as bar:
        tasks: dict[str, Any] = {}

        def progress(table: str, done: int, total: int) -> None:
            if table not in tasks:
                tasks[table] = bar.add_task(f"copying {table}", total=total)
            bar.update(tasks[table], completed=done, total=total)

        report = migration.migrate(source, target, tenant=tenant, schema_name=schema, batch_size=batch_size,
                                   progress=progress, source_tenant=source_tenant, index_memory=index_memory)
    if as_json:
        _print_json(report.to_dict())
        return
    verb = "resumed and finished" if report.resumed else "copied"
    console.print(f"{verb} {escape(report.source)} -> {escape(report.target)} (tenant {escape(report.tenant)}), "
                  f"HNSW index {report.index}", highlight=False)
    for table, (in_source, in_target) in report.counts.items():
        this_run = f" ({report.copied[table]} this run)" if table in report.copied else ""
        console.print(f"  {table:16}{in_target:>10} of {in_source}{this_run}", highlight=False)
