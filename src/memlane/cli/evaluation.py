"""``memlane eval reconcile|notes|locomo|docs``: run memlane against labelled evaluation data, each
on a temporary store configured by --config (plus evaluation defaults)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from memlane.cli.render import escape
from memlane.cli.base import JsonOpt, _print_json, _progress, _state, command, console

if TYPE_CHECKING:
    from memlane.memory import Memory

eval_app = typer.Typer(rich_markup_mode=None, help="Run memlane against labelled evaluation data.", no_args_is_help=True)


@contextmanager
def _evaluation_memory(retrieval: dict[str, Any] | None = None) -> Iterator[Memory]:
    """A Memory on a temporary store, configured by --config (plus evaluation defaults)."""
    import tempfile

    from memlane.core.config import load
    from memlane.memory import Memory

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


@command("should-search", on=eval_app)
def eval_should_search(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="labelled conversations (JSON Lines)"),
    scope: bool = typer.Option(True, "--scope/--no-scope", help="store each case's memories and name the scope"),
    cv: bool = typer.Option(False, "--cv", help="also cross-validate the gate's weights (5 folds)"),
    as_json: bool = JsonOpt,
) -> None:
    """Ask should_search_memory about each labelled conversation (with the memories its scope holds,
    stored through add); print accuracy, precision and recall, overall and per language."""
    from memlane.evaluation import should_search as evaluation

    with _evaluation_memory() as memory:
        cases = evaluation.features(memory, evaluation.load_cases(file), scope=scope)
        report = evaluation.report(cases, memory.config.context)
        if cv:
            report["cross_validation"] = evaluation.cross_validate(cases, memory.config.context)
    if as_json:
        _print_json(report)
        return
    for name, row in [("all", report), *report["by_lang"].items()]:
        console.print(f"[bold]{name}[/bold]: {row['cases']} conversations, accuracy {row['accuracy']:.3f}, "
                      f"precision {row['precision']:.3f}, recall {row['recall']:.3f}")
    if report["wrong"]:
        console.print("wrong: " + ", ".join(report["wrong"]))
    if cv:
        row = report["cross_validation"]
        console.print(f"[bold]5-fold cross-validation[/bold]: accuracy {row['accuracy']:.3f}, "
                      f"precision {row['precision']:.3f}, recall {row['recall']:.3f}")


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
    mode: str = typer.Option("all", "--mode", help="default (the search without flags) | vector | hybrid (keyword + "
                             "vector) | full (hybrid + rerank: the reranker --config writes in retrieval.reranker; "
                             "none written, skipped) | all (each, from one load; default first)"),
    cv: bool = typer.Option(False, "--cv", help="cross-validate: tune --grid on all conversations but one, "
                            "measure on that one, for each; printed next to the all-conversations figures"),
    grid: Optional[str] = typer.Option(None, "--grid", help='--cv: JSON object of retrieval settings to values '
                                       'to try, e.g. \'{"neighbour_weight": [0.4, 0.6]}\' (default: the keyword '
                                       'weight, 0.4 to 0.8)'),
    without_times: bool = typer.Option(False, "--without-times", help="store the messages without their time "
                                       "(all dated now), as a conversation imported with none"),
    as_json: bool = JsonOpt,
) -> None:
    """Evidence recall@k over LoCoMo dialog turns stored as a user stores them (a session an add of named
    messages with their time), per category and overall (1-4), with search latency; with --cv,
    leave-one-conversation-out tuning (of --mode; all: default)."""
    from memlane.evaluation import locomo

    try:
        ks = sorted({int(x) for x in k.split(",") if x.strip()})
    except ValueError:
        raise typer.BadParameter("a comma-separated list of integers", param_hint="--k") from None
    if (mode != "all" and mode not in locomo.MODES) or not ks or min(ks) < 1:
        raise typer.BadParameter(f"--mode must be one of {', '.join(locomo.MODES)} or all, and --k positive integers")
    values = None
    if grid is not None:
        try:
            values = json.loads(grid)
        except ValueError as exc:
            raise typer.BadParameter(f"not JSON: {exc}", param_hint="--grid") from None
        if not isinstance(values, dict) or not all(isinstance(v, list) and v for v in values.values()):
            raise typer.BadParameter("a JSON object of setting -> non-empty list of values", param_hint="--grid")
    modes = tuple(locomo.MODES) if mode == "all" else (mode,)
    with _evaluation_memory() as memory:
        try:
            report = (locomo.cross_validate(memory, locomo.load(file), grid=values, mode=modes[0], ks=ks,
                                            times=not without_times) if cv
                      else locomo.run_modes(memory, locomo.load(file), ks=ks, modes=modes, times=not without_times))
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--grid") from None
    if as_json:
        _print_json(report)
        return
    if cv:
        _print_locomo_cv(report, ks)
        return
    for name, one in report.items():
        console.print(_locomo_table(f"LoCoMo evidence recall · {name} · {one['questions']} questions · "
                                    f"{one['engine']}", one, ks))
        console.print(f"search latency p50 {one['search_ms'].get('p50')} ms, p95 {one['search_ms'].get('p95')} ms "
                      f"({'with' if one['search_ms_includes_embedding'] else 'without'} the query's embedding); "
                      f"unmatched evidence ids: {one['unmatched_evidence']}")


@command("multilingual", on=eval_app)
def eval_multilingual(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="retrieval cases (JSON Lines: memories, "
                                "queries with expected strings, a language group)"),
    mode: str = typer.Option("all", "--mode", help="default (the search without flags) | vector | hybrid | full | all"),
    as_json: bool = JsonOpt,
) -> None:
    """hit@1 and hit@3 of each language group: memories stored with add(infer=False), questions searched in
    their scope, with the configured (default) model."""
    from rich.table import Table

    from memlane.evaluation import multilingual

    modes = tuple(multilingual.MODES) if mode == "all" else (mode,)
    if any(m not in multilingual.MODES for m in modes):
        raise typer.BadParameter(f"one of {', '.join(multilingual.MODES)} or all", param_hint="--mode")
    try:
        cases = multilingual.load(file)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="FILE") from None
    with _evaluation_memory() as memory:
        report = multilingual.run(memory, cases, modes)
    if as_json:
        _print_json(report)
        return
    table = Table(title=f"multilingual retrieval · {report['questions']} questions · {report['engine']}")
    table.add_column("language")
    for name in modes:
        table.add_column(f"{name} hit@1 / hit@3", justify="right")
    langs = sorted({lang for m in report["modes"].values() for lang in m["by_lang"]})
    for lang in [*langs, "overall"]:
        cells = []
        for name in modes:
            rates = report["modes"][name]["overall" if lang == "overall" else "by_lang"]
            rates = rates if lang == "overall" else rates.get(lang, {})
            cells.append(f"{rates.get('hit@1', 0):.2f} / {rates.get('hit@3', 0):.2f}")
        table.add_row(lang, *cells)
    console.print(table)


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


@command("docs", on=eval_app)
def eval_docs(
    docs: Path = typer.Option(..., "--docs", exists=True, dir_okay=False,
                              help="documents, e.g. Cranfield's (JSON Lines: doc_id, text)"),
    queries: Path = typer.Option(..., "--queries", exists=True, dir_okay=False,
                                 help="queries with graded judgements (JSON Lines: qid, text, relevant)"),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="only the first N documents (and the "
                                        "queries with a judged document among them)"),
    model: str = typer.Option("auto", "--model", help="auto (the default: the encoder a new collection of these "
                              "documents gets, chosen by their language) | multilingual (multilingual-e5-small's "
                              "token vectors) | english (all-MiniLM-L6-v2's; 'local' is the same)"),
    as_json: bool = JsonOpt,
) -> None:
    """Document search quality on Cranfield: nDCG@10 and recall@100 of single-vector search, exact
    MaxSim and the fast path, with the encoder a new collection of the documents gets (or --model
    multilingual / english) and the same model's sentence vectors."""
    from rich.table import Table

    from memlane.core.config import DocumentsConfig
    from memlane.documents import encoder_choice
    from memlane.documents.facade import choose_encoders
    from memlane.evaluation import docs as evaluation

    kinds = {"auto": None, "multilingual": "multilingual", "default": "multilingual", "english": "english",
             "local": "english"}
    if model not in kinds:
        raise typer.BadParameter("auto, multilingual or english", param_hint="--model")
    documents = evaluation.load_jsonl(docs)[:limit]
    choice = choose_encoders(DocumentsConfig())
    language = encoder_choice.pages_language([d["text"] for d in documents])
    kind = kinds[model] or encoder_choice.kind_for(language)
    encoder = choice.of_kind(kind)  # type: ignore[arg-type]
    with _progress() as bar:
        tasks: dict[str, Any] = {}

        def progress(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done)

        report = evaluation.run(documents, evaluation.load_jsonl(queries), encoder=encoder,
                                embedder=encoder.embedder, progress=progress)  # type: ignore[attr-defined]
    report = {"model": model, "language": language, "choice": kind,
              "other_settings": [m for m in ("auto", "multilingual", "english") if m != model], **report}
    if as_json:
        _print_json(report)
        return
    table = Table(title=f"Cranfield · {report['docs']} documents · {report['queries']} queries · --model {model}: "
                        f"{kind} ({report['encoder']}; documents' language: {language}; other settings: "
                        f"{', '.join(report['other_settings'])})")
    for column in ("method", "nDCG@10", "R@100", "query p50 ms", "query p95 ms"):
        table.add_column(column, justify="right" if column != "method" else "left")
    for method, values in report["methods"].items():
        table.add_row(method, f"{values['nDCG@10']:.4f}", f"{values['R@100']:.4f}",
                      str(values["query_ms"].get("p50")), str(values["query_ms"].get("p95")))
    console.print(table)
    console.print(f"fast path scores {report['fast_path_candidates']} pages exactly (of {report['docs']}); "
                  f"{report['token_vectors']} token vectors")
