"""``memlane add|messages|search|get|list|delete|history|import|export|info``: a scope's memories.
Every command calls the same ``Memory`` method the SDK and the REST server call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from memlane.cli import render
from memlane.cli.render import escape
from memlane.cli.base import (AgentOpt, FiltersOpt, JsonOpt, RunOpt, UserOpt, _json_arg, _memory, _print_json,
                              _progress, command, console, errors)


@command()
def add(
    text: list[str] = typer.Argument(..., help="messages (one per argument)"),
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    role: str = typer.Option("user", help="message role"),
    metadata: Optional[str] = typer.Option(None, "--metadata", "-m", help="metadata as a JSON object"),
    infer: bool = typer.Option(True, "--infer/--no-infer",
                               help="extract and reconcile facts (default), or store each message verbatim"),
    memory_type: Optional[str] = typer.Option(None, "--type", help="fact | preference | event | profile | procedural"),
    timestamp: Optional[str] = typer.Option(None, "--timestamp", "-t",
                                            help="when it was said: ISO-8601 or Unix seconds (default: now)"),
    as_json: bool = JsonOpt,
) -> None:
    """Remember messages: extract facts and reconcile them with what is known (or store verbatim)."""
    with _memory(remote=True) as memory:
        result = memory.add([{"role": role, "content": t} for t in text], user_id=user, agent_id=agent, run_id=run,
                            metadata=_json_arg(metadata, "--metadata"), infer=infer, memory_type=memory_type,
                            timestamp=timestamp)
    if as_json:
        _print_json(result)
        return
    if result["status"] != "ok":
        errors.print(f"[yellow]memory formation failed:[/yellow] {escape(result.get('reason', ''))} "
                     "(the messages are stored; see `memlane messages`)")
    colour = {"ADD": "green", "UPDATE": "yellow", "DELETE": "red", "NONE": "dim"}
    for item in result["results"] + result["unchanged"]:
        before = f"  [dim](was: {escape(item['previous_memory'])})[/dim]" if item.get("previous_memory") else ""
        console.print(f"[{colour[item['event']]}]{item['event']:6}[/] {item['id']}  {escape(item['memory'])}{before}")
    for item in result.get("skipped", []):
        console.print(f"[dim]SKIP   {item['message_id']}  {escape(item['reason'])}[/dim]")
    graph = result.get("relations")  # graph memory is on
    if graph:
        if graph["status"] != "ok":
            errors.print(f"[yellow]relation extraction failed:[/yellow] {escape(graph.get('reason', ''))}")
        for r in graph["added"]:
            console.print(f"[green]RELATE[/] {escape(r['source'])} {r['relationship']} {escape(r['destination'])}")
        for r in graph["invalidated"]:
            console.print(f"[red]UNRELATE[/] {escape(r['source'])} {r['relationship']} {escape(r['destination'])}"
                          f"  [dim]({r['reason']})[/dim]")


@command()
def messages(
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    limit: int = typer.Option(100, "--limit", "-n"),
    as_json: bool = JsonOpt,
) -> None:
    """The raw messages stored for a scope, oldest first."""
    with _memory(remote=True) as memory:
        stored = memory.get_messages(user_id=user, agent_id=agent, run_id=run, limit=limit)
    if as_json:
        _print_json(stored)
        return
    for m in stored:
        console.print(f"[dim]{m['created_at'][:19]}[/dim] [bold]{m['role']}[/bold]: {escape(m['content'])}")


@command()
def search(
    query: str,
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    filters: Optional[str] = FiltersOpt,
    limit: int = typer.Option(10, "--limit", "-n"),
    threshold: Optional[float] = typer.Option(None, "--threshold", "-t", help="minimum cosine similarity"),
    keyword: Optional[bool] = typer.Option(None, "--keyword/--no-keyword",
                                           help="fuse BM25 keyword scores with vector scores (default: config)"),
    rerank: Optional[bool] = typer.Option(None, "--rerank/--no-rerank",
                                          help="re-order the top candidates with the configured reranker"),
    filter_memories: Optional[bool] = typer.Option(None, "--filter-memories/--no-filter-memories",
                                                   help="drop results that do not answer the query"),
    as_json: bool = JsonOpt,
) -> None:
    """Search inside a scope: by meaning, optionally with keywords, reranking and filtering."""
    with _memory(remote=True) as memory:
        result = memory.search(query, user_id=user, agent_id=agent, run_id=run,
                               filters=_json_arg(filters, "--filters"), limit=limit, threshold=threshold,
                               keyword_search=keyword, rerank=rerank, filter_memories=filter_memories)
    if as_json:
        _print_json(result)
        return
    if result.get("status") == "error":  # seed 001: the advanced search and the standard one both failed
        errors.print(f"[red]error:[/red] {escape(str(result['message']))}", highlight=False)
        raise typer.Exit(1)
    render.print_memories(console, result["results"], title=f"search: {query}", empty="no matching memories")
    render.print_relations(console, result.get("relations"))
    meta = result.get("metadata")
    if meta:
        ran = ", ".join(f"{name} {stage['ms']:.0f} ms" for name, stage in meta.get("stages", {}).items() if stage["ran"])
        console.print(f"[dim]stages: {ran}[/dim]", highlight=False)
        for stage, error in (meta.get("stages_failed") or {}).items():
            errors.print(f"[yellow]warning:[/yellow] stage {stage} failed and was skipped: {escape(str(error))}",
                         highlight=False)
        for warning in meta.get("warnings") or []:  # a stage skipped on purpose (rerank, no reranker chosen)
            errors.print(f"[yellow]warning:[/yellow] {escape(str(warning))}", highlight=False)
        if meta.get("fallback_used"):
            errors.print(f"[yellow]warning:[/yellow] advanced retrieval failed, a standard search answered: "
                         f"{escape(str(meta['original_error']))}", highlight=False)


@command()
def get(memory_id: str, as_json: bool = JsonOpt) -> None:
    """Show one memory."""
    with _memory(remote=True) as memory:
        item = memory.get(memory_id)
    if item is None:
        errors.print(f"[red]error:[/red] no memory with id {memory_id!r}")
        raise typer.Exit(1)
    if as_json:
        _print_json(item)
    else:
        render.print_memories(console, [item])


@command("list")
def list_(
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    filters: Optional[str] = FiltersOpt,
    limit: int = typer.Option(100, "--limit", "-n"),
    as_json: bool = JsonOpt,
) -> None:
    """List memories in a scope, newest first."""
    with _memory(remote=True) as memory:
        result = memory.get_all(user_id=user, agent_id=agent, run_id=run, filters=_json_arg(filters, "--filters"),
                                limit=limit)
    if as_json:
        _print_json(result)
    else:
        render.print_memories(console, result["results"])
        render.print_relations(console, result.get("relations"))


@command()
def delete(
    memory_id: Optional[str] = typer.Argument(None, help="the memory to delete"),
    all_: bool = typer.Option(False, "--all", help="delete every memory in the scope given by --user/--agent/--run"),
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Delete one memory, or with --all every memory of a scope (history is kept)."""
    if (memory_id is None) == (not all_):
        raise typer.BadParameter("give a memory id, or --all with --user/--agent/--run")
    with _memory(remote=True) as memory:
        result = memory.delete(memory_id) if memory_id else memory.delete_all(user_id=user, agent_id=agent, run_id=run)
    if as_json:
        _print_json(result)
    else:
        console.print(result["message"] + (f" ({result['deleted']})" if "deleted" in result else ""))


@command()
def history(memory_id: str, as_json: bool = JsonOpt) -> None:
    """Every change of a memory, oldest first."""
    with _memory(remote=True) as memory:
        events = memory.history(memory_id)
    if not events:  # history outlives the memory: no event at all means the id was never known here
        errors.print(f"[red]error:[/red] no memory with id {escape(repr(memory_id))} (and no history of one)",
                     highlight=False)
        raise typer.Exit(1)
    if as_json:
        _print_json(events)
    else:
        console.print(render.history_table(events, memory_id))


@command("import")
def import_(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSON Lines: one message or memory per line"),
    batch_size: int = typer.Option(256, min=1, help="lines per transaction"),
    source: Optional[str] = typer.Option(None, help="name that identifies this input across reruns (default: file name)"),
    infer: bool = typer.Option(False, "--infer/--no-infer", help="form memories from each message line (extract "
                               "and reconcile facts, as add does) instead of storing each message verbatim"),
    as_json: bool = JsonOpt,
) -> None:
    """Import a JSONL file (messages, with created_at if known, or exported memories); the messages also
    go to the message log. Rerunning it after an interruption skips what was done."""
    from memlane import transfer

    with _memory() as memory, _progress() as bar:
        task = bar.add_task(f"{'forming memories from' if infer else 'importing'} {file.name}", total=None)
        report = transfer.import_jsonl(memory, file, batch_size=batch_size, source=source, infer=infer,
                                       progress=lambda done, total: bar.update(task, completed=done, total=total))
    if as_json:
        _print_json(report.to_dict())
    else:
        formed = (f"{report.memories} memories added, {report.updated} updated, {report.deleted} deleted, "
                  f"{report.unchanged} unchanged" if infer else f"{report.memories} memories stored")
        console.print(f"{report.lines} lines: {formed}, {report.messages} messages logged, "
                      f"{report.skipped_lines} lines already imported, {report.existing_ids} ids already present")


@command()
def export(
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    filters: Optional[str] = FiltersOpt,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="file to write (default: stdout)"),
    as_json: bool = typer.Option(False, "--json", help="report the count as JSON (on stdout with -o, else stderr)"),
) -> None:
    """Export memories as JSON Lines (every memory when no scope is given)."""
    from memlane import transfer
    from memlane.core import scope
    from memlane.core.filters import MATCH_ALL

    ids = scope.scope_ids(user, agent, run)
    parsed = _json_arg(filters, "--filters")
    with _memory() as memory:
        where = scope.scoped_filter(ids, parsed) if ids or parsed else MATCH_ALL
        if output is None:
            count = transfer.export_jsonl(memory, sys.stdout, where)
        else:
            with output.open("w", encoding="utf-8") as handle:
                count = transfer.export_jsonl(memory, handle, where)
    if not as_json:
        errors.print(f"exported {count} memories")
    elif output is None:  # stdout holds the memories
        errors.print(render.as_json({"exported": count}), highlight=False, markup=False)
    else:
        _print_json({"exported": count, "output": str(output)})


@command()
def info(as_json: bool = JsonOpt) -> None:
    """Where the store is, which embedder filled it, how much it holds."""
    with _memory(remote=True) as memory:
        details = memory.info()
    if as_json:
        _print_json(details)
    else:
        for key, value in details.items():
            console.print(f"[bold]{key}[/bold]: {value}")
