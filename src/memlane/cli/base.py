"""What every ``memlane`` sub-command module shares: the typer app, the consoles, the global
options' state, the common options and the error-handling ``command`` decorator."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from memlane.cli import render
from memlane.cli.render import escape
from memlane.core.defaults import DEFAULT_TENANT
from memlane.core.errors import InvalidInputError, MemlaneError, ScopeError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

# Plain help (click's): typer's rich panels import rich.markdown and markdown-it, a third of the time
# `memlane --help` took, and showed a "<bool>" placeholder on flags that take no value.
app = typer.Typer(help="memlane: long-term memory for AI agents (embedded SQLite, offline by default).",
                  rich_markup_mode=None, pretty_exceptions_enable=False,
                  no_args_is_help=True, add_completion=False)


class LazyConsole:
    """A rich ``Console`` made when something is first printed: a command that prints nothing of rich's
    (``--help``, ``--version``) does not import it."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Console | None = None

    def instance(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.instance(), name)


console = LazyConsole()
errors = LazyConsole(stderr=True)

_state: dict[str, Any] = {"config": None, "local": False, "tenant": None}

#: the SDK arguments that CLI options stand for, so an error names what the user typed
FLAGS = {"user_id": "--user", "agent_id": "--agent", "run_id": "--run", "metadata": "--metadata",
         "filters": "--filters", "threshold": "--threshold", "limit": "--limit", "memory_type": "--type",
         "infer": "--infer", "encoder": "--encoder"}

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
                with contextlib.ExitStack() as opened:  # what the command opened for its run (_store_config)
                    _state["opened"] = opened
                    try:
                        return fn(*a, **k)
                    finally:
                        for name in ("opened", "store_config", "store"):
                            _state.pop(name, None)
            except MemlaneError as exc:
                errors.print(f"[red]error:[/red] {escape(cli_message(exc))}", highlight=False, soft_wrap=True)
                raise typer.Exit(1) from None

        return (on or app).command(*args, **kwargs)(run)

    return register


def cli_message(exc: MemlaneError) -> str:
    """The error's message in the command line's words: ``--user``, not ``user_id``."""
    message = str(exc)
    if isinstance(exc, ScopeError) and message.startswith("At least one of"):
        return ("give at least one of --user, --agent or --run (or scope ids in --filters; "
                "--filters '{\"user_id\": \"*\"}' means every user)")
    field = getattr(exc, "field", None)
    if field in FLAGS:
        return re.sub(rf"(?<![\w.\-]){re.escape(field)}\b", FLAGS[field], message, count=1)
    return message


def _json_arg(value: str | None, name: str) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc.msg})", param_hint=name) from None


def _memory(*, remote: bool = False) -> Any:
    """The store a command works on. With ``remote=True`` (commands the REST API serves), a running
    local server (``<home>/server.json``) or ``$MEMLANE_URL`` is used instead of loading the model
    here, unless --local or --config is given. A local server's token acts for tenant 'default' only:
    ``--tenant`` naming another tenant works on that tenant's store here."""
    tenant = _state.get("tenant")
    if remote and not _state["local"] and _state["config"] is None:
        from memlane.core.defaults import memlane_home
        from memlane.hosting import local_server

        address = local_server.find(memlane_home())
        if address is not None and tenant in (None, DEFAULT_TENANT):
            from memlane.cli.remote import RemoteMemory

            return RemoteMemory(address)
        if address is not None and os.environ.get(local_server.URL_ENV):
            raise InvalidInputError(
                f"--tenant {tenant}: ${local_server.URL_ENV} names a server, where the key "
                f"(${local_server.KEY_ENV}) decides the tenant; drop --tenant to use that server, "
                "or add --local to work on the tenant's store here", field="tenant")
    from memlane.memory import Memory

    return Memory(_store_config(), tenant=tenant)


def _store_config(flag: str | None = None) -> Any:
    """The config a command opens the home's store with, here in this process: the store this home's
    server uses (hosting/home_store.py), the bundled PostgreSQL started for it when the server uses
    that (stopped when the command ends, unless the server still runs), a note on stderr when --config,
    $MEMLANE_DATABASE_URL or the command's ``flag`` ('postgres': the bundled PostgreSQL, 'sqlite')
    names another. Every command that opens a store calls it."""
    if "store_config" not in _state:
        from memlane.core.defaults import memlane_home
        from memlane.hosting import home_store

        def say(note: str) -> None:
            errors.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True)

        opened = _state.get("opened") or contextlib.ExitStack()  # outside a command: open for the process
        resolved = opened.enter_context(home_store.opened(memlane_home(), _state["config"], flag=flag, say=say))
        _state["store_config"], _state["store"] = resolved.config, resolved.store
    return _state["store_config"]


def _print_json(value: Any) -> None:
    sys.stdout.write(render.as_json(value) + "\n")


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeRemainingColumn(), console=errors.instance(), transient=False)
