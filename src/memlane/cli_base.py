"""What every ``memlane`` sub-command module shares: the typer app, the consoles, the global
options' state, the common options and the error-handling ``command`` decorator."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from memlane import render
from memlane.errors import MemlaneError
from memlane.memory import Memory

app = typer.Typer(help="memlane: long-term memory for AI agents (embedded SQLite, offline by default).",
                  no_args_is_help=True, add_completion=False)
console = Console()
errors = Console(stderr=True)

_state: dict[str, Any] = {"config": None}

UserOpt = typer.Option(None, "--user", "-u", help="user_id scope")
AgentOpt = typer.Option(None, "--agent", "-a", help="agent_id scope")
RunOpt = typer.Option(None, "--run", "-r", help="run_id scope")
FiltersOpt = typer.Option(None, "--filters", "-f", help='filter as JSON, e.g. \'{"category": "food"}\'')
JsonOpt = typer.Option(False, "--json", help="print JSON instead of a table")


def command(*args: Any, on: typer.Typer | None = None, **kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a command (on ``app``, or the sub-app ``on``) whose memlane errors become a
    one-line message and exit status 1."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(*a: Any, **k: Any) -> Any:
            try:
                return fn(*a, **k)
            except MemlaneError as exc:
                errors.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False)
                raise typer.Exit(1) from None

        return (on or app).command(*args, **kwargs)(run)

    return register


def _json_arg(value: str | None, name: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc.msg})", param_hint=name) from None


def _memory() -> Memory:
    return Memory(_state["config"], tenant=_state.get("tenant"))


def _print_json(value: Any) -> None:
    sys.stdout.write(render.as_json(value) + "\n")


def _progress() -> Progress:
    return Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), console=errors, transient=False)
