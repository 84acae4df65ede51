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

    _report("backed up to", backup(file, config=_state["config"]).to_dict(), as_json)


@command("restore")
def restore_command(file: Path = FileArg, as_json: bool = JsonOpt) -> None:
    """Restore a backup into an empty home (or empty PostgreSQL schema) of the backend it came from."""
    from memlane.hosting.backup import restore

    _report("restored from", restore(file, config=_state["config"]).to_dict(), as_json)


def _report(verb: str, report: dict, as_json: bool) -> None:
    """A backup's or a restore's report, as JSON or as a summary (the column lists left out)."""
    report.pop("columns", None)
    if as_json:
        _print_json(report)
    else:
        _summary(verb, report)
