"""The ``memlane`` command: the global options, and the command groups assembled from their modules.
Every command calls the same ``Memory`` (or ``Documents``) method the SDK offers.

    memories.py      add, messages, search, get, list, delete, history, import, export, info
    maintenance.py   reembed; maintain cleanup|merge
    quickstart.py    quickstart
    server.py        serve, mcp
    background.py    worker, event
    database.py      migrate; db upgrade|status
    context.py       context ...          documents.py   docs ...
    evaluation.py    eval ...             keys.py        keys ...
    tenants.py       tenants list|move
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

# each module registers its commands on ``app`` when imported; the order is the order of ``memlane --help``
from memlane.cli import memories, maintenance, quickstart, server, background, database  # noqa: F401
from memlane.cli.base import _json_arg, _state, app
from memlane.cli.context import context_app
from memlane.cli.documents import docs_app
from memlane.cli.evaluation import eval_app
from memlane.cli.keys import keys_app
from memlane.cli.maintenance import maintain_app
from memlane.cli.tenants import tenants_app
from memlane.core.defaults import HOME_ENV

app.add_typer(context_app, name="context")
app.add_typer(docs_app, name="docs")
app.add_typer(maintain_app, name="maintain")
app.add_typer(eval_app, name="eval")
app.add_typer(keys_app, name="keys")
app.add_typer(database.db_app, name="db")
app.add_typer(tenants_app, name="tenants")


def _show_version(value: bool) -> None:
    if value:
        from memlane import __version__

        sys.stdout.write(f"memlane {__version__}\n")
        raise typer.Exit()


@app.callback()
def main_options(
    home: Optional[Path] = typer.Option(None, "--home", help=f"store directory (default ${HOME_ENV} or ~/.memlane)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="JSON config file (mem0-style)",
                                          exists=True, dir_okay=False),
    tenant: Optional[str] = typer.Option(None, "--tenant", help="whose memories: a server tenant (default: default,"
                                                                " the tenant of a server without keys)"),
    local: bool = typer.Option(False, "--local", help="work on the store here even when a local server is running "
                                                      "(by default add, search, list ... go to it: no model load)"),
    version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True,
                                 help="print the version and exit"),
) -> None:
    if home is not None:
        os.environ[HOME_ENV] = str(home)
    _state["config"] = _json_arg(config.read_text(), "--config") if config is not None else None
    _state["tenant"] = tenant
    _state["local"] = local


def main() -> None:
    app()


if __name__ == "__main__":
    main()
