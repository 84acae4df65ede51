"""``memlane serve`` (the REST server, with MCP at /mcp and the dashboard) and ``memlane mcp`` (MCP over
stdio): the server faces started from the command line."""

from __future__ import annotations

import copy
import json
import os
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import typer

from memlane.cli.render import escape
from memlane.cli.base import _json_arg, _memory, _state, command, console, errors
from memlane.core.defaults import DEFAULT_TENANT, DEFAULT_USER_ID, memlane_home
from memlane.core.errors import MemlaneError


def _needs_server_extra(exc: ImportError) -> None:
    errors.print(f"[red]error:[/red] this command needs the 'server' extra: pip install 'memlane[server]' "
                 f"({escape(str(exc))})", highlight=False)
    raise typer.Exit(1)


@command()
def serve(
    host: str = typer.Option("127.0.0.1", envvar="MEMLANE_HOST", show_envvar=True,
                             help="address to bind (loopback by default)"),
    port: int = typer.Option(18088, min=1, max=65535, envvar="MEMLANE_PORT", show_envvar=True,
                             help="port to listen on"),
    workers: int = typer.Option(1, min=1, help="worker processes (each loads the embedding model)"),
    no_auth: bool = typer.Option(False, "--no-auth",
                                 help="no API keys: every request is admin of tenant 'default' (loopback only)"),
    max_body_bytes: int = typer.Option(1 << 20, min=1, help="largest request body accepted (413 above)"),
    mcp_user_id: str = typer.Option(DEFAULT_USER_ID, "--mcp-user-id",
                                    help="user_id the /mcp tools use when a call names no scope"),
    threads: Optional[int] = typer.Option(None, min=1, help="threads per worker for memory calls (default 40)"),
    no_rate_limit: bool = typer.Option(False, "--no-rate-limit",
                                       help="no per-key / per-tenant rate or concurrency limits (the config's "
                                            "server.rate_limit sets them; docs/rest.md, Limits)"),
    log_level: str = typer.Option("info", help="uvicorn log level"),
    postgres: Optional[bool] = typer.Option(
        None, "--postgres/--sqlite", show_default=False,
        help="--postgres: store in a bundled PostgreSQL under the home directory; --sqlite: in the home's SQLite "
             "file. Default: the store this home's server used last (<home>/store.json), else --config, "
             "$MEMLANE_DATABASE_URL or SQLite"),
    as_json: bool = typer.Option(False, "--json", help="print the start-up details as one JSON line"),
    config_file: Optional[Path] = typer.Option(None, "--config", "-c", exists=True, dir_okay=False,
                                               help="JSON config file (mem0-style); the same as memlane --config "
                                                    "FILE serve"),
) -> None:
    """Run the REST server (mem0-compatible API, docs at /docs) with MCP at /mcp.

    The first start on a loopback address creates an admin key for tenant 'default' and prints it once."""
    if config_file is not None:
        _state["config"] = _json_arg(config_file.read_text(), "--config")
    from memlane.hosting.listen import bind

    try:
        from memlane.server.app import is_loopback
    except ImportError as exc:
        _needs_server_extra(exc)
    if no_auth and not is_loopback(host):
        errors.print(f"[red]error:[/red] --no-auth serves every request without a key; it is refused together with "
                     f"the non-loopback --host {escape(host)}. Create keys instead: memlane keys create --tenant NAME",
                     highlight=False)
        raise typer.Exit(2)
    # then the port: a busy one is reported before anything loads, starts or is announced (ListenError)
    with bind(host, port, memlane_home()) as sock:
        # the home's store (hosting/home_store.py), recorded for the other commands on this home; a bundled
        # PostgreSQL stops however the server ends: return, start-up error, SIGINT, SIGTERM
        with _home_store(postgres, as_json) as config:
            _serve(sock, host, port, workers, no_auth, max_body_bytes, mcp_user_id, threads, log_level, as_json,
                   config, rate_limit=not no_rate_limit)


def _serve(sock: socket.socket, host: str, port: int, workers: int, no_auth: bool, max_body_bytes: int,
           mcp_user_id: str, threads: Optional[int], log_level: str, as_json: bool, config: Any, *,
           rate_limit: bool = True) -> None:
    import uvicorn

    from memlane.hosting import local_server
    from memlane.server.app import ServerSettings, create_app, is_loopback
    from memlane.server.first_run import active_keys, first_start_key
    from memlane.server.http_protocol import uvicorn_options

    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    loopback = is_loopback(host)
    settings = ServerSettings(auth=not no_auth, max_body_bytes=max_body_bytes, config=config,
                              mcp_user_id=mcp_user_id, host=host, threads=threads, url=url, rate_limit=rate_limit,
                              local_token=local_server.new_token() if loopback and not no_auth else None)
    started: dict[str, Any] = {"url": url, "docs": f"{url}/docs", "dashboard": f"{url}/ui", "mcp": f"{url}/mcp",
                               "mcp_user_id": mcp_user_id, "stores": _store_location(settings), "auth": not no_auth}
    if not no_auth:
        first = first_start_key(settings.home, loopback=loopback, tenant=DEFAULT_TENANT, config=settings.config)
        if first is not None:
            started["first_key"] = first
        started["active_keys"] = active_keys(settings.home, settings.config)
    if as_json:  # one line, flushed: a supervisor reads it before the server's log
        sys.stdout.write(json.dumps(started) + "\n")
        sys.stdout.flush()
    else:
        _print_started(started)
    # uvicorn's logging, plus memlane's own loggers (request ids of failed requests, MCP tool failures)
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["loggers"]["memlane"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    if workers == 1:  # on the socket bound above (uvicorn.run would start the app before binding)
        config = uvicorn.Config(create_app(settings), host=host, port=port, log_level=log_level, log_config=log_config,
                                **uvicorn_options())
        server = uvicorn.Server(config)
        server.run(sockets=[sock])
        if not server.started:
            raise typer.Exit(3)  # uvicorn's start-up failure status
    else:  # worker processes build the app themselves from the environment; uvicorn binds before they start
        sock.close()
        os.environ.update(settings.to_env())
        uvicorn.run("memlane.server.app:app_from_env", factory=True, host=host, port=port, workers=workers,
                    log_level=log_level, log_config=log_config, **uvicorn_options())


def _print_started(started: dict[str, Any]) -> None:
    url = started["url"]
    for label, value in (("[bold]memlane server[/bold]", url), ("  API docs    ", started["docs"]),
                         ("  dashboard   ", f"{started['dashboard']}  (sign in with an API key)"),
                         ("  MCP         ", f"{started['mcp']}  (streamable HTTP; default user "
                                            f"{escape(started['mcp_user_id'])}, --mcp-user-id)"),
                         ("  stores      ", started["stores"])):
        console.print(f"{label}  {value}", highlight=False, soft_wrap=True)
    if not started["auth"]:
        console.print("  auth          [yellow]off (--no-auth)[/yellow]: every request is admin of tenant 'default'",
                      soft_wrap=True)
        return
    first = started.get("first_key")
    if first:
        console.print(f"  first start   created an admin API key for tenant '{first['tenant']}' ({first['id']}). "
                      "It is shown only now (only its hash is stored):", highlight=False, soft_wrap=True)
        console.print(f"                {first['key']}", highlight=False, soft_wrap=True)
        console.print(f"  try it        curl -s {url}/memories -H 'Authorization: Bearer {first['key']}' "
                      "-H 'content-type: application/json' "
                      "-d '{\"messages\": \"I love Thai food\", \"user_id\": \"alice\"}'",
                      highlight=False, soft_wrap=True, markup=False)
    console.print(f"  API keys      {started['active_keys']} active; create one with: memlane keys create --tenant NAME "
                  "[--admin]", highlight=False, soft_wrap=True, markup=False)
    console.print("                send it as 'Authorization: Bearer <key>' (or 'X-API-Key: <key>')",
                  highlight=False, soft_wrap=True)


@command("mcp")
def mcp_(
    user_id: str = typer.Option(DEFAULT_USER_ID, "--user-id", help="user_id used when a tool call names no scope"),
    as_json: bool = typer.Option(False, "--json", help="announce the start on stderr as one JSON line "
                                                       "(stdout carries the MCP protocol)"),
) -> None:
    """Serve the MCP tools over stdio (for Claude Desktop, IDEs and other MCP clients)."""
    try:
        from memlane.mcp_server.server import run_stdio
    except ImportError as exc:
        _needs_server_extra(exc)
    with _memory() as memory:
        if as_json:
            sys.stderr.write(json.dumps({"mcp": "stdio", "default_user_id": user_id,
                                         "store": str(memory.info()["store"])}) + "\n")
        run_stdio(memory, default_user_id=user_id)


@contextmanager
def _home_store(postgres: Optional[bool], as_json: bool) -> Iterator[Any]:
    """The store this server uses, made ready and recorded in the home; yields the config to open it with."""
    from memlane.hosting import home_store

    said = errors if as_json else console  # --json: stdout carries one JSON line

    def say(note: str) -> None:
        errors.print(f"[yellow]note:[/yellow] {escape(note)}", highlight=False, soft_wrap=True)

    flag = None if postgres is None else "postgres" if postgres else "sqlite"
    with home_store.opened(memlane_home(), _state["config"], flag=flag, serving=True, say=say) as resolved:
        if resolved.bundled:
            said.print(f"  postgres      bundled, data in {escape(resolved.store.location)}", highlight=False,
                       soft_wrap=True)
        yield resolved.config


def _store_location(settings: Any) -> str:
    from memlane.hosting.tenancy import Tenants

    try:
        return Tenants.describe(settings.config, settings.home)
    except MemlaneError as exc:
        return f"[red]{escape(str(exc))}[/red]"
