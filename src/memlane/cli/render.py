"""Rich tables for people; JSON for machines (``--json``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


def escape(text: str) -> str:
    """``text`` shown as written, not read as rich markup. rich is imported when something is printed,
    not when the command starts (it was a sixth of what ``memlane --help`` cost)."""
    from rich.markup import escape as escape_markup

    return escape_markup(text)


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _scope(item: dict[str, Any]) -> str:
    return " ".join(f"{k.split('_')[0]}:{item[k]}" for k in ("user_id", "agent_id", "run_id") if item.get(k))


#: the narrowest terminal that shows memories as a table of columns; narrower ones get one block per memory
WIDE = 120


def memories_table(items: Sequence[dict[str, Any]], *, title: str | None = None, compact: bool = False) -> Table:
    """The memories as a table, ids and times never cut or wrapped (for terminals of ``WIDE`` columns and
    more); ``compact`` leaves out ids and timestamps (for narrow, read-only displays)."""
    from rich.table import Table

    with_score = any(item.get("score") is not None for item in items)
    table = Table(title=title, expand=True)
    if with_score:
        table.add_column("score", justify="right", style="cyan", no_wrap=True)
    table.add_column("memory", overflow="fold", ratio=4)
    table.add_column("scope", style="magenta", overflow="fold", ratio=1, min_width=12)
    table.add_column("metadata", overflow="fold", style="dim", ratio=2)
    if not compact:
        table.add_column("created (UTC)", style="dim", no_wrap=True, min_width=19)
        table.add_column("id", style="dim", no_wrap=True, min_width=36)
    for item in items:
        row = [escape(item["memory"]), escape(_scope(item)), escape(_metadata(item))]
        if not compact:
            row += [_when(item["created_at"]), item["id"]]
        table.add_row(*([f"{item['score']:.3f}"] if with_score else []), *row)
    return table


def memories_blocks(items: Sequence[dict[str, Any]], *, title: str | None = None) -> Table:
    """The memories for a narrow terminal (80 columns): one block each, its text first, then its scope and
    metadata, then its id and creation time on a line of their own (an id is never cut or wrapped)."""
    with_score = any(item.get("score") is not None for item in items)
    from rich.table import Table

    table = Table(title=title, box=None, expand=True, padding=(0, 1, 1, 0))
    if with_score:
        table.add_column("score", justify="right", style="cyan", no_wrap=True)
    table.add_column("memory · scope, metadata · id, created", overflow="fold")
    for item in items:
        lines = [escape(item["memory"])]
        about = " · ".join(part for part in (_scope(item), _metadata(item)) if part)
        if about:
            lines.append(f"[magenta]{escape(about)}[/magenta]")
        lines.append(f"[dim]{item['id']} · {_when(item['created_at'])} UTC[/dim]")
        table.add_row(*([f"{item['score']:.3f}"] if with_score else []), "\n".join(lines))
    return table


def _metadata(item: dict[str, Any]) -> str:
    return json.dumps(item["metadata"], ensure_ascii=False) if item.get("metadata") else ""


def _when(moment: str) -> str:
    return moment[:19].replace("T", " ")


def history_table(events: Sequence[dict[str, Any]], memory_id: str) -> Table:
    from rich.table import Table

    table = Table(title=f"history of {memory_id}")
    table.add_column("when (UTC)", no_wrap=True, min_width=19)
    table.add_column("event", no_wrap=True)
    for column in ("old", "new", "actor/role"):
        table.add_column(column, overflow="fold")
    style = {"ADD": "green", "UPDATE": "yellow", "DELETE": "red"}
    for e in events:
        table.add_row(
            _when(e["created_at"]),
            f"[{style[e['event']]}]{e['event']}[/]",
            escape(e["old_memory"] or ""),
            escape(e["new_memory"] or ""),
            escape(" / ".join(x for x in (e.get("actor_id"), e.get("role")) if x)),
        )
    return table


def print_memories(console: Console, items: Sequence[dict[str, Any]], *, title: str | None = None,
                   empty: str = "no memories", compact: bool = False) -> None:
    if items:
        wide = compact or console.width >= WIDE
        console.print(memories_table(items, title=title, compact=compact) if wide else memories_blocks(items, title=title))
    else:
        console.print(f"[dim]{empty}[/dim]")


def print_relations(console: Console, relations: Sequence[dict[str, Any]] | None) -> None:
    """Graph memory's relations (search hits with a score, or listed ones with their validity)."""
    if relations is None:  # graph memory is off
        return
    if not relations:
        console.print("[dim]no relations[/dim]")
        return
    from rich.table import Table

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
