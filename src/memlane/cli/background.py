"""``memlane worker`` (forms async adds outside the servers) and ``memlane event ID`` (an async
add's outcome); docs/deployment.md."""

from __future__ import annotations

import json
import signal
import sys
import threading
from typing import Optional

import typer

from memlane.cli.base import JsonOpt, _memory, _print_json, _store_config, command, console
from memlane.cli.render import escape


@command()
def event(event_id: str = typer.Argument(..., help="the event id an async add answered with"),
          as_json: bool = JsonOpt) -> None:
    """The outcome of an async add: PENDING, RUNNING, SUCCEEDED (what it stored) or FAILED (why)."""
    with _memory() as memory:
        found = memory.event(event_id)
    if as_json:
        _print_json(found)
        return
    console.print(f"{found['status']:9} {found['id']}  attempts {found['attempts']}"
                  + (f", {found['latency']:.0f} ms" if found["latency"] is not None else ""), highlight=False)
    for item in found["results"]:
        console.print(f"  {item['event']:6} {item['id']}  {escape(item['memory'])}", highlight=False)
    if found["error"]:
        console.print(f"  [red]{escape(found['error'])}[/red]", highlight=False)


@command()
def worker(
    threads: Optional[int] = typer.Option(None, "--threads", min=1,
                                          help="formation threads (default: background.workers of the config)"),
    as_json: bool = typer.Option(False, "--json", help="announce the start as one JSON line"),
) -> None:
    """Form the async adds of every tenant until stopped (Ctrl-C, SIGTERM), beside or instead of the servers.

    On PostgreSQL any number of workers on any hosts share the queue; on SQLite a worker forms the
    jobs of the home's stores on this machine."""
    from memlane.core.defaults import memlane_home
    from memlane.hosting.tenancy import Tenants

    tenants = Tenants(memlane_home(), _store_config())
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    try:
        workers = tenants.start_background(threads or tenants.config.background.workers or 2)
        started = {"worker": "started", "threads": workers.settings.workers if workers else 0,
                   "stores": tenants.location}
        if as_json:
            sys.stdout.write(json.dumps(started) + "\n")
            sys.stdout.flush()
        else:
            console.print(f"memlane worker: {started['threads']} threads forming async adds of "
                          f"{escape(started['stores'])} (Ctrl-C stops)", highlight=False, soft_wrap=True)
        stopped.wait()
    finally:
        tenants.close()  # waits for the jobs being formed (background.stop_seconds), gives back the rest
