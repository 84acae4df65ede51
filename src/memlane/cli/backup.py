"""``memlane backup FILE`` and ``memlane restore FILE``: a home's stores and keys in one file, taken
while a server keeps writing, restored into an empty home (hosting/backup.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from memlane.cli.base import JsonOpt, _print_json, _state, command, console

FileArg = typer.Argument(..., help="the backup file", dir_okay=False)


def _summary(verb: str, report: dict) -> None:
    what = (", ".join(f"{tenant}: {counts.get('memories', 0):,} memories" for tenant, counts in report["tenants"].items())
            or "no memories")
    from rich.markup import escape  # rich only when printing

    console.print(f"{verb} {escape(report['file'])} ({report['backend']}, schema {report['schema_version']}, "
                  f"{report['bytes']:,} bytes): {escape(what)}" + ("; API keys" if report["keys"] else ""),
                  highlight=False)


@command("backup")
def backup_command(file: Path = FileArg, as_json: bool = JsonOpt) -> None:
    """Back up every tenant's memories, history, messages, graph and documents, and the API keys, while
    the store is in use (SQLite: the online backup API; PostgreSQL: one consistent snapshot)."""
    from memlane.hosting.backup import backup

    report = backup(file, config=_state["config"]).to_dict()
    report.pop("columns", None)
    if as_json:
        _print_json(report)
    else:
        _summary("backed up to", report)


@command("restore")
def restore_command(file: Path = FileArg, as_json: bool = JsonOpt) -> None:
    """Restore a backup into an empty home (or empty PostgreSQL schema) of the backend it came from."""
    from memlane.hosting.backup import restore

    report = restore(file, config=_state["config"]).to_dict()
    report.pop("columns", None)
    if as_json:
        _print_json(report)
    else:
        _summary("restored from", report)
