"""The ``memlane`` command. Every command calls the same ``Memory`` method the SDK offers."""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape

from memlane import transfer
from memlane.cli import render
from memlane.core import scope
from memlane.cli.base import (AgentOpt, FiltersOpt, JsonOpt, RunOpt, UserOpt, _json_arg, _memory, _print_json,
                              _progress, _state, app, command, console, errors)
from memlane.cli.context import context_app
from memlane.cli.docs import docs_app
from memlane.cli.maintain import maintain_app
from memlane.core.config import HOME_ENV
from memlane.core.errors import MemlaneError
from memlane.core.filters import MATCH_ALL
from memlane.memory import Memory
from memlane.core.scope import DEFAULT_USER_ID
from memlane.hosting.tenancy import DEFAULT_TENANT

app.add_typer(context_app, name="context")
app.add_typer(docs_app, name="docs")
app.add_typer(maintain_app, name="maintain")


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


@command()
def add(
    text: list[str] = typer.Argument(..., help="messages (one per argument)"),
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    role: str = typer.Option("user", help="message role"),
    metadata: Optional[str] = typer.Option(None, "--metadata", "-m", help="metadata as a JSON object"),
    infer: bool = typer.Option(True, "--infer/--no-infer",
                               help="extract and reconcile facts (default), or store each message verbatim"),
    memory_type: Optional[str] = typer.Option(None, "--type", help="fact | preference | event | profile | procedural"),
    as_json: bool = JsonOpt,
) -> None:
    """Remember messages: extract facts and reconcile them with what is known (or store verbatim)."""
    with _memory(remote=True) as memory:
        result = memory.add([{"role": role, "content": t} for t in text], user_id=user, agent_id=agent, run_id=run,
                            metadata=_json_arg(metadata, "--metadata"), infer=infer, memory_type=memory_type)
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
    with _memory() as memory, _progress() as bar:
        task = bar.add_task(f"{'forming memories from' if infer else 'importing'} {file.name}", total=None)
        report = transfer.import_jsonl(memory, file, batch_size=batch_size, source=source, infer=infer,
                                       progress=lambda done, total: bar.update(task, completed=done, total=total))
    if as_json:
        _print_json(report.to_dict())
    else:
        console.print(f"{report.lines} lines: {report.memories} memories {'added' if infer else 'stored'}, "
                      f"{report.messages} messages logged, {report.skipped_lines} lines already imported, "
                      f"{report.existing_ids} ids already present")


@command()
def export(
    user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt, run: Optional[str] = RunOpt,
    filters: Optional[str] = FiltersOpt,
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="file to write (default: stdout)"),
    as_json: bool = typer.Option(False, "--json", help="report the count as JSON (on stdout with -o, else stderr)"),
) -> None:
    """Export memories as JSON Lines (every memory when no scope is given)."""
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


@command()
def reembed(batch_size: int = typer.Option(256, min=1), as_json: bool = JsonOpt) -> None:
    """Re-embed every memory with the configured embedder (after changing models). Resumable."""
    with _progress() as bar:
        task = bar.add_task("re-embedding", total=None)
        memory = Memory.reembed(_state["config"], batch_size=batch_size, tenant=_state.get("tenant"),
                                progress=lambda done, total: bar.update(task, completed=done, total=total))
    with memory:
        report = {"memories": memory.info()["memories"], "embedder": memory.embeddings.name}
    if as_json:
        _print_json(report)
    else:
        console.print(f"re-embedded {report['memories']} memories with {report['embedder']}")


eval_app = typer.Typer(help="Run memlane against labelled evaluation data.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@contextmanager
def _evaluation_memory(retrieval: dict[str, Any] | None = None) -> Iterator[Memory]:
    """A Memory on a temporary store, configured by --config (plus evaluation defaults)."""
    import tempfile

    from memlane.core.config import load

    settings = load(_state["config"])
    if retrieval and "retrieval" not in (_state["config"] or {}):
        settings.retrieval = settings.retrieval.model_copy(update=retrieval)
    with tempfile.TemporaryDirectory() as tmp:
        settings.vector_store.config = {**settings.vector_store.config, "path": str(Path(tmp) / "eval.db")}
        with Memory(settings) as memory:
            yield memory


@command("reconcile", on=eval_app)
def eval_reconcile(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="reconcile cases (JSON Lines)"),
    as_json: bool = JsonOpt,
) -> None:
    """Run each labelled reconciliation case in a fresh scope; print pass/fail per case and totals.

    Uses the configured engine (--config with an llm block for the LLM engine) on a temporary store.
    """
    from memlane.evaluation import reconcile as evaluation

    _run_cases(evaluation, file, as_json, "reconciliation cases", "category",
               lambda case: "; ".join(case["failures"]))


@command("notes", on=eval_app)
def eval_notes(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="note cases (JSON Lines)"),
    as_json: bool = JsonOpt,
) -> None:
    """Add each case's notes and statements to a fresh user, then check the active memories:
    expected words, forbidden phrases, stale states, invented words and silent adds.

    Uses the configured engine (--config with an llm block for the LLM engine) on a temporary store.
    """
    from memlane.evaluation import notes as evaluation

    _run_cases(evaluation, file, as_json, "note cases", "kind",
               lambda case: "; ".join(case["failures"]) if case["failures"] else " | ".join(case["memories"]))


def _run_cases(evaluation: Any, file: Path, as_json: bool, title: str, group: str,
               detail: Callable[[dict[str, Any]], str]) -> None:
    """Run an evaluation module's labelled cases on a temporary store and print the report: one row a
    case (pass/FAIL and ``detail``), totals per group and language (or the report as JSON)."""
    from rich.table import Table

    with _evaluation_memory() as memory:
        report = evaluation.run(memory, evaluation.load_cases(file))
    if as_json:
        _print_json(report)
        return

    table = Table(title=f"{title} · engine {report['engine']}")
    for column in ("case", group, "lang", "result", "detail"):
        table.add_column(column, overflow="fold")
    for case in report["cases"]:
        table.add_row(case["id"], case[group], case["lang"],
                      "[green]pass[/green]" if case["passed"] else "[red]FAIL[/red]", escape(detail(case)))
    console.print(table)
    for key in (f"by_{group}", "by_lang"):
        console.print(f"[bold]{key[3:]}[/bold]: " + ", ".join(f"{k} {v['passed']}/{v['total']}" for k, v in report[key].items()))
    console.print(f"[bold]passed {report['passed']}/{report['total']} ({report['pass_rate']:.1%})[/bold]")


@command("locomo", on=eval_app)
def eval_locomo(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="LoCoMo conversations (JSON)"),
    k: str = typer.Option("1,5,10,25,50", "--k", help="cut-offs for recall@k"),
    mode: str = typer.Option("full", "--mode", help="vector | hybrid (keyword + vector) | full (hybrid + rerank)"),
    cv: bool = typer.Option(False, "--cv", help="cross-validate: tune --grid on all conversations but one, "
                            "measure on that one, for each; printed next to the all-conversations figures"),
    grid: Optional[str] = typer.Option(None, "--grid", help='--cv: JSON object of retrieval settings to values '
                                       'to try, e.g. \'{"keyword_weight": [0.3, 0.5]}\' (default: fusion, '
                                       'neighbour and rerank weights)'),
    as_json: bool = JsonOpt,
) -> None:
    """Evidence recall@k over LoCoMo dialog turns, per category and overall (1-4), with search latency;
    with --cv, leave-one-conversation-out tuning."""
    from memlane.evaluation import locomo

    try:
        ks = sorted({int(x) for x in k.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter("a comma-separated list of integers", param_hint="--k") from None
    if mode not in locomo.MODES or not ks or min(ks) < 1:
        raise typer.BadParameter(f"--mode must be one of {', '.join(locomo.MODES)} and --k positive integers")
    values = None
    if grid is not None:
        try:
            values = json.loads(grid)
        except ValueError as exc:
            raise typer.BadParameter(f"not JSON: {exc}", param_hint="--grid") from None
        if not isinstance(values, dict) or not all(isinstance(v, list) and v for v in values.values()):
            raise typer.BadParameter("a JSON object of setting -> non-empty list of values", param_hint="--grid")
    with _evaluation_memory(locomo.RETRIEVAL_SETTINGS) as memory:
        try:
            report = (locomo.cross_validate(memory, locomo.load(file), grid=values, mode=mode, ks=ks) if cv
                      else locomo.run(memory, locomo.load(file), ks=ks, mode=mode))
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--grid") from None
    if as_json:
        _print_json(report)
        return
    if cv:
        _print_locomo_cv(report, ks)
        return
    console.print(_locomo_table(f"LoCoMo evidence recall · mode {mode} · {report['questions']} questions", report, ks))
    console.print(f"search latency p50 {report['search_ms'].get('p50')} ms, p95 {report['search_ms'].get('p95')} ms; "
                  f"unmatched evidence ids: {report['unmatched_evidence']}")


LOCOMO_CATEGORIES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop", "5": "adversarial"}


def _locomo_table(title: str, report: dict[str, Any], ks: list[int]) -> Any:
    from rich.table import Table

    table = Table(title=title)
    table.add_column("category")
    for cut in ks:
        table.add_column(f"R@{cut}", justify="right")
    rows = [(f"{c} {LOCOMO_CATEGORIES.get(c, '')}", v) for c, v in report["by_category"].items()]
    rows.append(("overall (1-4)", report["overall_1_4"]))
    for label, values in rows:
        table.add_row(label, *(f"{values[f'R@{cut}']:.1f}" if values.get(f"R@{cut}") is not None else "-" for cut in ks))
    return table


def _print_locomo_cv(report: dict[str, Any], ks: list[int]) -> None:
    from rich.table import Table

    mode, count = report["mode"], report["questions"]
    console.print(_locomo_table(f"LoCoMo cross-validated (tuned on the other conversations) · mode {mode} · "
                                f"{count} questions", report["cross_validated"], ks))
    console.print(_locomo_table(f"LoCoMo all conversations, best of {report['settings_tried']} settings (tuned and "
                                f"measured on the same data) · {report['all_conversations_best']['setting']}",
                                report["all_conversations_best"], ks))
    console.print(_locomo_table("LoCoMo all conversations, configured settings", report["configured"], ks))
    folds = Table(title=f"folds (setting chosen by R@{report['select_k']} on the others)")
    for column in ("held out", "setting", *(f"R@{cut}" for cut in ks)):
        folds.add_column(column)
    for fold in report["folds"]:
        folds.add_row(fold["conversation"], json.dumps(fold["setting"]),
                      *(str(fold["overall_1_4"].get(f"R@{cut}")) for cut in ks))
    folds.add_row("mean of folds", "", *(str(report["cross_validated_fold_mean"].get(f"R@{cut}")) for cut in ks))
    console.print(folds)


CRANFIELD = Path("../shared/eval/cranfield")


@command("docs", on=eval_app)
def eval_docs(
    docs: Path = typer.Option(CRANFIELD / "cranfield_docs.jsonl", "--docs", exists=True, dir_okay=False,
                              help="documents (JSON Lines: doc_id, text)"),
    queries: Path = typer.Option(CRANFIELD / "cranfield_queries_dev.jsonl", "--queries", exists=True, dir_okay=False,
                                 help="queries with graded judgements (JSON Lines: qid, text, relevant)"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="only the first N documents (and the "
                                        "queries with a judged document among them)"),
    as_json: bool = JsonOpt,
) -> None:
    """Document search quality on Cranfield: nDCG@10 and recall@100 of single-vector search, exact
    MaxSim and the fast path, with the default (local) encoder and the same model's sentence vectors."""
    from rich.table import Table

    from memlane.documents.encoders import LocalTokenEncoder
    from memlane.evaluation import docs as evaluation

    documents = evaluation.load_jsonl(docs)[:limit]
    encoder = LocalTokenEncoder()
    with _progress() as bar:
        tasks: dict[str, Any] = {}

        def progress(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done)

        report = evaluation.run(documents, evaluation.load_jsonl(queries), encoder=encoder,
                                embedder=encoder.embedder, progress=progress)
    if as_json:
        _print_json(report)
        return
    table = Table(title=f"Cranfield · {report['docs']} documents · {report['queries']} queries · {report['encoder']}")
    for column in ("method", "nDCG@10", "R@100", "query p50 ms", "query p95 ms"):
        table.add_column(column, justify="right" if column != "method" else "left")
    for method, values in report["methods"].items():
        table.add_row(method, f"{values['nDCG@10']:.4f}", f"{values['R@100']:.4f}",
                      str(values["query_ms"].get("p50")), str(values["query_ms"].get("p95")))
    console.print(table)
    console.print(f"fast path scores {report['fast_path_candidates']} pages exactly (of {report['docs']}); "
                  f"{report['token_vectors']} token vectors")


@command()
def quickstart(as_json: bool = JsonOpt) -> None:
    """Import the bundled sample conversation and run a few searches."""
    from memlane.cli import quickstart as qs

    with _memory() as memory:
        if as_json:
            _print_json(qs.answers(memory))
        else:
            qs.run(memory, console)


# -- server faces: REST server, API keys, MCP ------------------------------------------------------------


def _needs_server_extra(exc: ImportError) -> None:
    errors.print(f"[red]error:[/red] this command needs the 'server' extra: pip install 'memlane[server]' "
                 f"({escape(str(exc))})", highlight=False)
    raise typer.Exit(1)


@command()
def serve(
    host: str = typer.Option("127.0.0.1", help="address to bind (loopback by default)"),
    port: int = typer.Option(18088, min=1, max=65535, help="port to listen on"),
    workers: int = typer.Option(1, min=1, help="worker processes (each loads the embedding model)"),
    no_auth: bool = typer.Option(False, "--no-auth",
                                 help="no API keys: every request is admin of tenant 'default' (loopback only)"),
    max_body_bytes: int = typer.Option(1 << 20, min=1, help="largest request body accepted (413 above)"),
    mcp_user_id: str = typer.Option(DEFAULT_USER_ID, "--mcp-user-id",
                                    help="user_id the /mcp tools use when a call names no scope"),
    threads: Optional[int] = typer.Option(None, min=1, help="threads per worker for memory calls (default 40)"),
    log_level: str = typer.Option("info", help="uvicorn log level"),
    postgres: bool = typer.Option(False, "--postgres", help="store in a bundled PostgreSQL under the home directory"),
    as_json: bool = typer.Option(False, "--json", help="print the start-up details as one JSON line"),
) -> None:
    """Run the REST server (mem0-compatible API, docs at /docs) with MCP at /mcp.

    The first start on a loopback address creates an admin key for tenant 'default' and prints it once."""
    # the bundled PostgreSQL stops however the server ends: return, start-up error, SIGINT, SIGTERM
    with _bundled_postgres() if postgres else nullcontext():
        _serve(host, port, workers, no_auth, max_body_bytes, mcp_user_id, threads, log_level, as_json)


def _serve(host: str, port: int, workers: int, no_auth: bool, max_body_bytes: int, mcp_user_id: str,
           threads: Optional[int], log_level: str, as_json: bool) -> None:
    try:
        import uvicorn

        from memlane.hosting import local_server
        from memlane.server.app import ServerSettings, create_app, is_loopback
        from memlane.server.first_run import active_keys, first_start_key
        from memlane.server.http_protocol import uvicorn_options
    except ImportError as exc:
        _needs_server_extra(exc)
    if no_auth and not is_loopback(host):
        errors.print(f"[red]error:[/red] --no-auth serves every request without a key; it is refused together with "
                     f"the non-loopback --host {escape(host)}. Create keys instead: memlane keys create --tenant NAME",
                     highlight=False)
        raise typer.Exit(2)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    loopback = is_loopback(host)
    settings = ServerSettings(auth=not no_auth, max_body_bytes=max_body_bytes, config=_state["config"],
                              mcp_user_id=mcp_user_id, host=host, threads=threads, url=url,
                              local_token=local_server.new_token() if loopback and not no_auth else None)
    started: dict[str, Any] = {"url": url, "docs": f"{url}/docs", "dashboard": f"{url}/ui", "mcp": f"{url}/mcp",
                               "mcp_user_id": mcp_user_id, "stores": _store_location(settings), "auth": not no_auth}
    if not no_auth:
        first = first_start_key(settings.home, loopback=loopback, tenant=DEFAULT_TENANT)
        if first is not None:
            started["first_key"] = first
        started["active_keys"] = active_keys(settings.home)
    if as_json:  # one line, flushed: a supervisor reads it before the server's log
        sys.stdout.write(json.dumps(started) + "\n")
        sys.stdout.flush()
    else:
        _print_started(started)
    # uvicorn's logging, plus memlane's own loggers (request ids of failed requests, MCP tool failures)
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["loggers"]["memlane"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    if workers == 1:
        uvicorn.run(create_app(settings), host=host, port=port, log_level=log_level, log_config=log_config,
                    **uvicorn_options())
    else:  # worker processes build the app themselves from the environment
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


keys_app = typer.Typer(help="API keys of the server: create, list, revoke (stored hashed in <home>/keys.db).",
                       no_args_is_help=True)
app.add_typer(keys_app, name="keys")


def _key_store() -> Any:
    from memlane.core.config import memlane_home
    from memlane.hosting.keys import KeyStore

    return KeyStore(memlane_home() / "keys.db")


@command("create", on=keys_app)
def keys_create(
    tenant: str = typer.Option(..., "--tenant", "-t", help="the tenant the key acts for (letters, digits, _ or -)"),
    admin: bool = typer.Option(False, "--admin", help="may reset the tenant and list across all its users"),
    as_json: bool = JsonOpt,
) -> None:
    """Create an API key. The key is printed once: only its hash is stored."""
    key, info = _key_store().create(tenant, admin=admin)
    if as_json:
        _print_json({"key": key, **info.to_dict()})
        return
    sys.stdout.write(key + "\n")
    errors.print(f"[green]created[/green] {info.id} for tenant [bold]{escape(info.tenant)}[/bold]"
                 f"{' (admin)' if info.admin else ''}. Store the key now: it cannot be shown again.", highlight=False)


@command("list", on=keys_app)
def keys_list(as_json: bool = JsonOpt) -> None:
    """List keys (id, prefix, tenant, admin, created, revoked); never the keys themselves."""
    stored = _key_store().list()
    if as_json:
        _print_json([k.to_dict() for k in stored])
        return
    from rich.table import Table

    table = Table(title="API keys")
    for column in ("id", "prefix", "tenant", "admin", "created", "revoked"):
        table.add_column(column, no_wrap=column in ("id", "prefix"), overflow="fold")
    for k in stored:
        table.add_row(k.id, k.prefix + "…", escape(k.tenant), "yes" if k.admin else "",
                      k.created_at[:16].replace("T", " "), k.revoked_at[:16].replace("T", " ") if k.revoked_at else "")
    console.print(table if stored else "[dim]no API keys; create one with memlane keys create --tenant NAME[/dim]")


@command("revoke", on=keys_app)
def keys_revoke(key_id: str = typer.Argument(..., help="the key's id (see memlane keys list)"),
                as_json: bool = JsonOpt) -> None:
    """Revoke a key; the server refuses it from the next request on."""
    info = _key_store().revoke(key_id)
    if as_json:
        _print_json(info.to_dict())
    else:
        console.print(f"revoked {info.id} (tenant {escape(info.tenant)}) at {info.revoked_at}", highlight=False)


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



# -- PostgreSQL: memlane db upgrade/status, serve --postgres ---------------------------------------

db_app = typer.Typer(help="The PostgreSQL store's schema (MEMLANE_DATABASE_URL or --dsn).", no_args_is_help=True)
app.add_typer(db_app, name="db")

DsnOpt = typer.Option(None, "--dsn", help="postgresql://user:password@host:5432/db (default: the config, then "
                                          "$MEMLANE_DATABASE_URL)")
SchemaOpt = typer.Option(None, "--schema", help="PostgreSQL schema of memlane's tables (default: the config, then public)")


def _postgres_target(dsn: str | None, schema: str | None) -> tuple[str, str]:
    from memlane.core.config import load
    from memlane.store import postgres_settings

    spec = load(_state["config"]).vector_store
    settings = postgres_settings(spec.config if spec.provider in ("postgres", "postgresql", "pgvector") else {})
    return dsn or settings.resolved_dsn(), schema or settings.schema_name


@command("upgrade", on=db_app)
def db_upgrade(dsn: Optional[str] = DsnOpt, schema: Optional[str] = SchemaOpt, as_json: bool = JsonOpt) -> None:
    """Bring the database's memlane schema to this version (safe to run again, and from several hosts)."""
    from memlane.store.postgres import PostgresDatabase

    url, schema_name = _postgres_target(dsn, schema)
    database = PostgresDatabase(url, schema_name=schema_name, min_size=0, max_size=1, migrate=False, check=False)
    try:
        before, after = database.upgrade()
    finally:
        database.close()
    if as_json:
        _print_json({"location": database.location, "schema": schema_name, "before": before, "after": after})
        return
    change = f"{before} -> {after}" if before != after else f"{after} (already current)"
    console.print(f"memlane schema in {escape(database.location)} ({escape(schema_name)}): version {change}",
                  highlight=False)


@command("status", on=db_app)
def db_status(dsn: Optional[str] = DsnOpt, schema: Optional[str] = SchemaOpt, as_json: bool = JsonOpt) -> None:
    """Schema version, pgvector version and memories per tenant."""
    from memlane.store.postgres import PostgresDatabase

    url, schema_name = _postgres_target(dsn, schema)
    database = PostgresDatabase(url, schema_name=schema_name, min_size=0, max_size=1, migrate=False, check=False)
    try:
        status = database.status()
    finally:
        database.close()
    if as_json:
        _print_json(status)
        return
    for key, value in status.items():
        console.print(f"{key:16}{escape(str(value))}", highlight=False)


@command()
def migrate(
    source: str = typer.Option(..., "--from", help="the SQLite store: sqlite:///path/to/memlane.db"),
    target: str = typer.Option(..., "--to", envvar="MEMLANE_DATABASE_URL", show_envvar=True,
                               help="postgresql://user:password@host:5432/db (with pgvector)"),
    tenant: str = typer.Option("default", help="tenant of the target that receives the copy (must hold nothing else)"),
    schema: str = typer.Option("public", "--schema", help="PostgreSQL schema of memlane's tables"),
    batch_size: int = typer.Option(2000, min=1, help="rows per transaction (and per checkpoint)"),
    source_tenant: Optional[str] = typer.Option(
        None, "--source-tenant", help="tenant of the source's document tables to copy, when it holds several"),
    index_memory: str = typer.Option(
        "1GB", "--index-memory", help="maintenance_work_mem of the HNSW build after the load (e.g. 4GB); "
                                      "the build is several times faster when the whole graph fits"),
    as_json: bool = JsonOpt,
) -> None:
    """Copy a SQLite store (memories, vectors, history, messages, graph, documents) into PostgreSQL.
    Resumable; verifies counts."""
    from memlane import migration

    with _progress() as bar:
        tasks: dict[str, Any] = {}

        def progress(table: str, done: int, total: int) -> None:
            if table not in tasks:
                tasks[table] = bar.add_task(f"copying {table}", total=total)
            bar.update(tasks[table], completed=done, total=total)

        report = migration.migrate(source, target, tenant=tenant, schema_name=schema, batch_size=batch_size,
                                   progress=progress, source_tenant=source_tenant, index_memory=index_memory)
    if as_json:
        _print_json(report.to_dict())
        return
    verb = "resumed and finished" if report.resumed else "copied"
    console.print(f"{verb} {escape(report.source)} -> {escape(report.target)} (tenant {escape(report.tenant)}), "
                  f"HNSW index {report.index}", highlight=False)
    for table, (in_source, in_target) in report.counts.items():
        this_run = f" ({report.copied[table]} this run)" if table in report.copied else ""
        console.print(f"  {table:16}{in_target:>10} of {in_source}{this_run}", highlight=False)


@contextmanager
def _bundled_postgres() -> Iterator[None]:
    from memlane.core.config import memlane_home
    from memlane.store import DATABASE_URL_ENV
    from memlane.store.pgserver import bundled_postgres

    with bundled_postgres(memlane_home()) as url:
        os.environ[DATABASE_URL_ENV] = url  # worker processes inherit it
        console.print(f"  postgres      bundled, data in {memlane_home() / 'postgres'}", highlight=False,
                      soft_wrap=True)
        yield


def _store_location(settings: Any) -> str:
    from memlane.hosting.tenancy import Tenants

    try:
        return Tenants.describe(settings.config, settings.home)
    except MemlaneError as exc:
        return f"[red]{escape(str(exc))}[/red]"


def main() -> None:
    app()


if __name__ == "__main__":
    main()

