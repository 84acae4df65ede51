"""``memlane maintain cleanup|merge``: ``Memory.cleanup_old_memories`` and ``Memory.merge_similar_memories``
(seed 002; docs/maintenance.md), with a progress bar on stderr, ``--dry-run`` and ``--json``; and
``memlane reembed``: every memory re-embedded after a change of models (``Memory.reembed``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Optional

import typer

from memlane.cli.render import escape
from memlane.cli.base import (AgentOpt, JsonOpt, RunOpt, UserOpt, _memory, _print_json, _progress, _state, _store_config, command,
                              console)

maintain_app = typer.Typer(rich_markup_mode=None, help="Maintenance of a scope's memories: invalidate the oldest, merge near-duplicates.",
                           no_args_is_help=True)

DryRunOpt = typer.Option(False, "--dry-run", help="print the plan; change nothing")


@contextmanager
def _progress_bar(label: str, show: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A progress callback drawing a bar on stderr (none for a dry run: nothing is written)."""
    if not show:
        yield None
        return
    with _progress() as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _clip(text: str | None, width: int = 70) -> str:
    text = " ".join((text or "(written by the LLM when applied)").split())
    return escape(text if len(text) <= width else text[: width - 1] + "…")


@command("cleanup", on=maintain_app)
def maintain_cleanup(
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    keep_latest: int = typer.Option(1000, "--keep-latest", "-k", min=0, help="how many of the newest memories to keep"),
    dry_run: bool = DryRunOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Keep the newest valid memories of a scope and invalidate the older ones (texts kept in history)."""
    with _memory() as memory, _progress_bar("invalidating", not dry_run) as progress:
        outcome = memory.cleanup_old_memories(user, keep_latest, agent_id=agent, run_id=run, dry_run=dry_run,
                                              progress=progress)
    if as_json:
        _print_json(outcome)
        return
    verb = "would invalidate" if dry_run else "invalidated"
    console.print(f"{verb} {len(outcome['results'])} memories, kept {outcome['kept']}")
    for item in outcome["results"]:
        console.print(f"  {item['id']}  {item['created_at'][:19]}  {_clip(item['memory'])}", highlight=False)


@command("merge", on=maintain_app)
def maintain_merge(
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    threshold: float = typer.Option(0.95, "--threshold", "-t", help="cosine similarity at which memories merge"),
    dry_run: bool = DryRunOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Merge a scope's near-duplicates into their oldest memory (texts kept in history)."""
    with _memory() as memory, _progress_bar("merging", not dry_run) as progress:
        outcome: dict[str, Any] = memory.merge_similar_memories(user, threshold, agent_id=agent, run_id=run,
                                                                dry_run=dry_run, progress=progress)
    if as_json:
        _print_json(outcome)
        return
    merged = sum(len(item["merged"]) for item in outcome["results"])
    console.print(f"{'would merge' if dry_run else 'merged'} {merged} of {outcome['memories']} memories into "
                  f"{len(outcome['results'])} ({outcome['pairs']} similar pairs)")
    for item in outcome["results"]:
        console.print(f"  {item['id']}  {_clip(item['memory'])}", highlight=False)
        for absorbed in item["merged"]:
            console.print(f"    + {absorbed['id']}  {absorbed['similarity']:.3f}  {_clip(absorbed['memory'], 60)}",
                          highlight=False)
    for entry in outcome["kept_apart"]:
        console.print(f"  kept apart: {' '.join(entry['ids'])} ({escape(entry['reason'])})", highlight=False)
    for entry in outcome["failed"]:
        console.print(f"  [red]failed[/red]: {' '.join(entry['ids'])} ({escape(entry['error'])})", highlight=False)


@command()
def reembed(batch_size: int = typer.Option(256, min=1), as_json: bool = JsonOpt) -> None:
    """Re-embed every memory with the configured embedder (after changing models). Resumable."""
    from memlane.memory import Memory

    with _progress() as bar:
        task = bar.add_task("re-embedding", total=None)
        memory = Memory.reembed(_store_config(), batch_size=batch_size, tenant=_state.get("tenant"),
                                progress=lambda done, total: bar.update(task, completed=done, total=total))
    with memory:
        report = {"memories": memory.info()["memories"], "embedder": memory.embeddings.name}
    if as_json:
        _print_json(report)
    else:
        console.print(f"re-embedded {report['memories']} memories with {report['embedder']}")
