"""``memlane backup FILE`` and ``memlane restore FILE``: a home's stores and keys in one file, taken
while a server keeps writing, restored into an empty home (hosting/backup.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from memlane.cli.base import JsonOpt, _print_json, _state, _store_config, command, console

FileArg = typer.Argument(..., help="the backup file", dir_okay=False)


def _memories(count: int) -> str:
    return f"{count:,} memor{'y' if count == 1 else 'ies'}"


def _summary(verb: str, report: dict) -> None:
    what = ", ".join(f"{tenant}: {_memories(counts.get('memories', 0))}" for tenant, counts in report["tenants"].items())
    what = what or _memories(0)  # no tenant holds a memory: the store is empty (or there is no store yet)
    from rich.markup import escape  # rich only when printing

    console.print(f"{verb} {escape(report['file'])} ({report['backend']}, schema {report['schema_version']}, "
                  f"{report['bytes']:,} bytes): {escape(what)}" + ("; API keys" if report["keys"] else ""),
                  highlight=False)


@command("backup")
def backup_command(file: Path = FileArg, as_json: bool = JsonOpt) -> None:
    """Back up every tenant's memories, history, messages, graph and documents, and the API keys, while
    the store is in use (SQLite: the online backup API; PostgreSQL: one consistent snapshot)."""
    from memlane.hosting.backup import backup

    _report("backed up to", backup(file, config=_store_config()).to_dict(), as_json)


@command("restore")
def restore_command(
    file: Path = FileArg,
    postgres: bool = typer.Option(False, "--postgres", help="restore into the home's bundled PostgreSQL (a backup of "
                                                            "a PostgreSQL store, into a new home), which then is the "
                                                            "home's store"),
    as_json: bool = JsonOpt,
) -> None:
    """Restore a backup into an empty home (or empty PostgreSQL schema) of the backend it came from."""
    from memlane.core.defaults import memlane_home
    from memlane.hosting import home_store
    from memlane.hosting.backup import read_manifest, restore

    read_manifest(file)  # a file that is no backup is said so before the home's store is opened
    report = restore(file, config=_store_config("postgres" if postgres else None)).to_dict()
    if postgres:  # the home's server and commands use it from now on
        home_store.record(memlane_home(), _state["store"])
    _report("restored from", report, as_json)


def _report(verb: str, report: dict, as_json: bool) -> None:
    """A backup's or a restore's report, as JSON or as a summary (the column lists left out)."""
    report.pop("columns", None)
    if as_json:
        _print_json(report)
    else:
        _summary(verb, report)
