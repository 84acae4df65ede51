"""``memlane docs``: document collections from the command line. Every command calls the
same ``Documents`` method the SDK and the REST server call.

    memlane docs add report.pdf notes.md -c papers --create -m '{"year": 2024}'
    memlane docs list -c papers            # documents (memlane docs list --collections: collections)
    memlane docs search "what did the report say about Q4?" -c papers -k 5 --filter '{"key": "year", "value": 2024}'
    memlane docs delete report -c papers   # a document; without a name: the collection
    memlane docs reencode -c papers --encoder multilingual   # every page encoded again by another encoder
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional

import typer

from memlane.cli.render import escape
from memlane.cli.base import JsonOpt, _json_arg, _print_json, _progress, _store_config, command, console

if TYPE_CHECKING:
    from memlane.documents import Documents

docs_app = typer.Typer(rich_markup_mode=None, help="Document collections searched by late interaction (MaxSim over token vectors).",
                       no_args_is_help=True)

CollectionOpt = typer.Option(None, "--collection", "-c", help="collection name")
ENCODER_HELP = ("the collection's encoder: english (all-MiniLM-L6-v2), multilingual (multilingual-e5-small) or "
                "auto (the configured one, else chosen by the pages' language)")
FilterOpt = typer.Option(None, "--filter", "-f",
                         help='query_filter as JSON, e.g. \'{"on": "document", "key": "year", "value": 2024}\'')


@contextmanager
def _documents() -> Iterator[Documents]:
    from memlane.documents import Documents

    with Documents(_store_config()) as documents:
        yield documents


@contextmanager
def _bar(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress callback drawing a bar on stderr once a file needs more than one step."""
    if not enabled:
        yield None
        return
    with _progress() as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if total <= 1 and stage not in tasks:
                return
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


@command("add", on=docs_app)
def add(
    paths: Optional[list[Path]] = typer.Argument(None, exists=True, dir_okay=False,
                                                 help="files: PDF, Markdown (.md), UTF-8 text, images"),
    collection: str = typer.Option(..., "--collection", "-c", help="collection name"),
    text: Optional[str] = typer.Option(None, "--text", "-t", help="the document's text (instead of files)"),
    name: Optional[str] = typer.Option(None, "--name", "-n",
                                       help="document name (default: the file name; needed with --text)"),
    metadata: Optional[str] = typer.Option(None, "--metadata", "-m", help="document metadata as a JSON object"),
    create: bool = typer.Option(False, "--create", help="create the collection if it does not exist"),
    encoder: Optional[str] = typer.Option(None, "--encoder", "-e",
                                          help=ENCODER_HELP + "; for a collection without documents"),
    as_json: bool = JsonOpt,
) -> None:
    """Add documents (or replace the pages and metadata of documents of the same name)."""
    files = list(paths or [])
    if bool(files) == (text is not None):
        raise typer.BadParameter("give files or --text, not both and not neither", param_hint="PATHS")
    if text is not None and not name:
        raise typer.BadParameter("--text needs --name", param_hint="--name")
    if len(files) > 1 and name:
        raise typer.BadParameter("--name names one document; give one file", param_hint="--name")
    meta = _json_arg(metadata, "--metadata")
    results = []
    from memlane.documents.errors import CollectionNotFoundError

    with _documents() as documents:
        if create:
            try:
                documents.get_collection(collection)
            except CollectionNotFoundError:
                documents.create_collection(collection, encoder=encoder)
        if text is not None:
            results.append(documents.upsert_document(name, collection, text=text, metadata=meta, encoder=encoder))
        for path in files:
            with _bar(not as_json) as progress:
                results.append(documents.upsert_document(name or path.name, collection, path=path, metadata=meta,
                                                         progress=progress, encoder=encoder))
    if as_json:
        _print_json(results)
        return
    for doc in results:
        verb = "added" if doc["created"] else "replaced"
        console.print(f"[green]{verb}[/green] {escape(doc['name'])} ({doc['kind']}, {doc['num_pages']} page"
                      f"{'s' if doc['num_pages'] != 1 else ''}) in {escape(doc['collection_name'])}")
        for warning in doc.get("warnings", []):
            console.print(f"[yellow]warning:[/yellow] {escape(warning)}")


@command("reencode", on=docs_app)
def reencode(
    collection: str = typer.Option(..., "--collection", "-c", help="collection name"),
    encoder: str = typer.Option("auto", "--encoder", "-e", help=ENCODER_HELP),
    as_json: bool = JsonOpt,
) -> None:
    """Give a collection another encoder: every page encoded again, written in one transaction."""
    with _documents() as documents, _bar(not as_json) as progress:
        result = documents.reencode_collection(collection, encoder, progress=progress)
    if as_json:
        _print_json(result)
        return
    if not result["reencoded_pages"] and result["previous_encoder"] == result["encoder"]:
        console.print(f"collection {escape(collection)} has encoder {escape(_encoder_label(result['encoder']))} "
                      "already: nothing re-encoded")
        return
    before, after = _encoder_label(result["previous_encoder"]), _encoder_label(result["encoder"])
    console.print(f"[green]re-encoded[/green] {escape(collection)}: {result['reencoded_pages']} pages, "
                  f"{escape(before)} -> {escape(after)}")


@command("list", on=docs_app)
def list_(
    collection: Optional[str] = CollectionOpt,
    collections: bool = typer.Option(False, "--collections", help="list the collections instead of documents"),
    query_filter: Optional[str] = FilterOpt,
    as_json: bool = JsonOpt,
) -> None:
    """List documents (of one collection, or of all), or the collections."""
    where = _json_arg(query_filter, "--filter")
    with _documents() as documents:
        if collections:
            rows = documents.list_collections(where)
        else:
            rows = documents.list_documents(collection or "all", query_filter=where)
    if as_json:
        _print_json(rows)
        return
    from rich.table import Table

    if collections:
        table = Table("collection", "documents")
        table.add_column("encoder", no_wrap=True)
        table.add_column("metadata")
        table.add_column("created")
        for c in rows:  # encoder: its model (--json: the full name); chosen by the first upsert unless configured
            table.add_row(escape(c["name"]), str(c["num_documents"]), escape(_encoder_label(c.get("encoder"))),
                          escape(_short(c["metadata"])), c["created_at"][:19])
    else:
        table = Table("collection", "document", "pages", "metadata", "updated")
        for d in rows:
            table.add_row(escape(d["collection_name"]), escape(d["name"]), str(d["num_pages"]),
                          escape(_short(d["metadata"])), d["updated_at"][:19])
    console.print(table if rows else "[dim]nothing here yet[/dim]")


@command("search", on=docs_app)
def search(
    query: str,
    collection: Optional[str] = CollectionOpt,
    top_k: int = typer.Option(3, "--top-k", "-k", min=1, help="pages to return"),
    query_filter: Optional[str] = FilterOpt,
    exact: Optional[bool] = typer.Option(None, "--exact/--fast", help="score every page exactly (default: config)"),
    keyword: Optional[bool] = typer.Option(None, "--keyword/--no-keyword",
                                           help="fuse BM25 over the pages' text with MaxSim (default: config)"),
    as_json: bool = JsonOpt,
) -> None:
    """Pages by late-interaction (MaxSim) similarity to the query, best first; with --keyword fused
    with BM25 over their text (then the first column is the hybrid score)."""
    with _documents() as documents:
        found = documents.search(query, collection_name=collection or "all", top_k=top_k,
                                 query_filter=_json_arg(query_filter, "--filter"), exact=exact,
                                 keyword_search=keyword)
    if as_json:
        _print_json(found)
        return
    if not found["results"]:
        console.print("[dim]no pages found[/dim]")
        return
    from rich.table import Table

    hybrid = "keyword_matches" in found
    table = Table("hybrid" if hybrid else "score", "raw", "collection", "document", "page", "text")
    for r in found["results"]:
        snippet = " ".join(r["text"].split())
        score = r["hybrid_score"] if hybrid else r["normalized_score"]
        table.add_row(f"{score:.3f}", f"{r['raw_score']:.2f}", escape(r["collection_name"]),
                      escape(r["document_name"]), str(r["page_number"]),
                      escape(snippet[:120] + ("…" if len(snippet) > 120 else "")))
    console.print(table)


@command("delete", on=docs_app)
def delete(
    name: Optional[str] = typer.Argument(None, help="document name (none: delete the whole collection)"),
    collection: str = typer.Option(..., "--collection", "-c", help="collection name"),
    as_json: bool = JsonOpt,
) -> None:
    """Delete a document, or (without a name) a collection with all its documents."""
    with _documents() as documents:
        result = (documents.delete_document(name, collection) if name is not None
                  else documents.delete_collection(collection))
    if as_json:
        _print_json(result)
        return
    what = f"document {name!r} of {collection!r}" if name is not None else f"collection {collection!r}"
    console.print(f"[red]deleted[/red] {escape(what)} ({result['pages_deleted']} pages)")


def _encoder_label(name: str | None) -> str:
    """A collection's encoder by its model ("all-MiniLM-L6-v2" for "local/all-MiniLM-L6-v2/tokens+global")."""
    if name is None:
        return "(first upsert)"
    parts = name.split("/")
    return parts[1].split("@")[0] if len(parts) > 2 and parts[0] in ("local", "e5") else name


def _short(metadata: dict[str, Any]) -> str:
    import json

    text = json.dumps(metadata, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"
