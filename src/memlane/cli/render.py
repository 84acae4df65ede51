"""Rich tables for people; JSON for machines (``--json``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _scope(item: dict[str, Any]) -> str:
    return " ".join(f"{k.split('_')[0]}:{item[k]}" for k in ("user_id", "agent_id", "run_id") if item.get(k))


def memories_table(items: Sequence[dict[str, Any]], *, title: str | None = None, compact: bool = False) -> Table:
    """``compact`` leaves out ids and timestamps (for narrow, read-only displays)."""
    with_score = any(item.get("score") is not None for item in items)
    table = Table(title=title, expand=True)
    if with_score:
        table.add_column("score", justify="right", style="cyan", no_wrap=True)
    table.add_column("memory", overflow="fold", ratio=4)
    table.add_column("scope", style="magenta", overflow="fold", ratio=1)
    table.add_column("metadata", overflow="fold", style="dim", ratio=2)
    if not compact:
        table.add_column("created (UTC)", style="dim", ratio=1)
        table.add_column("id", style="dim", overflow="fold", ratio=2)
    for item in items:
        row = [item["memory"], _scope(item),
               json.dumps(item["metadata"], ensure_ascii=False) if item.get("metadata") else ""]
        if not compact:
            row += [item["created_at"][:19].replace("T", " "), item["id"]]
        table.add_row(*([f"{item['score']:.3f}"] if with_score else []), *row)
    return table


def history_table(events: Sequence[dict[str, Any]], memory_id: str) -> Table:
    table = Table(title=f"history of {memory_id}")
    for column in ("when", "event", "old", "new", "actor/role"):
        table.add_column(column, overflow="fold")
    style = {"ADD": "green", "UPDATE": "yellow", "DELETE": "red"}
    for e in events:
        table.add_row(
            e["created_at"][:19].replace("T", " "),
            f"[{style[e['event']]}]{e['event']}[/]",
            e["old_memory"] or "",
            e["new_memory"] or "",
            " / ".join(x for x in (e.get("actor_id"), e.get("role")) if x),
        )
    return table


def print_memories(console: Console, items: Sequence[dict[str, Any]], *, title: str | None = None,
                   empty: str = "no memories", compact: bool = False) -> None:
    if items:
        console.print(memories_table(items, title=title, compact=compact))
    else:
        console.print(f"[dim]{empty}[/dim]")


def print_relations(console: Console, relations: Sequence[dict[str, Any]] | None) -> None:
    """Graph memory's relations (search hits with a score, or listed ones with their validity)."""
    if relations is None:  # graph memory is off
        return
    if not relations:
        console.print("[dim]no relations[/dim]")
        return
    table = Table(title="relations", show_lines=False)
    for name in ("source", "relationship", "destination"):
        table.add_column(name, overflow="fold")
    scored = any("score" in r for r in relations)
    table.add_column("score" if scored else "valid", no_wrap=True)
    for r in relations:
        last = (f"{r['score']:.3f}" if scored else
                f"until {r['valid_to'][:19]} ({r.get('invalid_reason', '')})" if r.get("valid_to") else "yes")
        table.add_row(escape(r["source"]), r["relationship"], escape(r["destination"]), last)
    console.print(table)
