"""``make run`` / ``memlane quickstart``: import the sample conversation, then ask it questions."""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

from memlane.cli.base import JsonOpt, _memory, _print_json, command, console
from memlane.cli.render import print_memories

if TYPE_CHECKING:
    from rich.console import Console

    from memlane.memory import Memory

QUESTIONS = [
    "Where does Alice live and what does she do?",
    "What should I avoid cooking for her?",
    "Who is coming to visit?",
    "Is she doing any sport?",
]


def answers(memory: Memory) -> dict:
    """Import the sample conversation (once) and search it: ``{"import": ..., "searches": {question: results}}``."""
    from memlane import transfer

    sample = resources.files("memlane") / "data" / "sample_conversation.jsonl"
    with resources.as_file(sample) as path:
        report = transfer.import_jsonl(memory, path, source="memlane-sample")
    searches = {q: memory.search(q, user_id="alice", filters={"role": "user"}, limit=3)["results"] for q in QUESTIONS}
    return {"store": str(memory.info()["store"]), "embedder": memory.embeddings.name, "import": report.to_dict(),
            "searches": searches}


def run(memory: Memory, console: Console) -> None:
    found = answers(memory)
    report = found["import"]
    console.print(
        f"[bold]memlane quick-start[/bold] · store [cyan]{found['store']}[/cyan] · "
        f"embedder [cyan]{found['embedder']}[/cyan]"
    )
    console.print(
        f"sample conversation: {report['lines']} messages, {report['memories']} stored now, "
        f"{report['skipped_lines']} already stored by an earlier run\n"
    )
    for question, results in found["searches"].items():
        print_memories(console, results, title=f"search: {question}", compact=True)
    console.print(
        "\nTry it yourself:  [bold].venv/bin/memlane search \"what pets does she have?\" --user alice[/bold]"
    )


@command()
def quickstart(as_json: bool = JsonOpt) -> None:
    """Import the bundled sample conversation and run a few searches."""
    with _memory() as memory:
        if as_json:
            _print_json(answers(memory))
        else:
            run(memory, console)
