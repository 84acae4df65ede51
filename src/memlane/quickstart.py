"""``make run`` / ``memlane quickstart``: import the sample conversation, then ask it questions."""

from __future__ import annotations

from importlib import resources

from rich.console import Console

from memlane import transfer
from memlane.memory import Memory
from memlane.render import print_memories

QUESTIONS = [
    "Where does Alice live and what does she do?",
    "What should I avoid cooking for her?",
    "Who is coming to visit?",
    "Is she doing any sport?",
]


def run(memory: Memory, console: Console) -> None:
    sample = resources.files("memlane") / "data" / "sample_conversation.jsonl"
    with resources.as_file(sample) as path:
        report = transfer.import_jsonl(memory, path, source="memlane-sample")
    console.print(
        f"[bold]memlane quick-start[/bold] · store [cyan]{memory.info()['store']}[/cyan] · "
        f"embedder [cyan]{memory.embeddings.name}[/cyan]"
    )
    console.print(
        f"sample conversation: {report.lines} messages, {report.memories} stored now, "
        f"{report.skipped_lines} already stored by an earlier run\n"
    )
    for question in QUESTIONS:
        results = memory.search(question, user_id="alice", filters={"role": "user"}, limit=3)["results"]
        print_memories(console, results, title=f"search: {question}", compact=True)
    console.print(
        "\nTry it yourself:  [bold].venv/bin/memlane search \"what pets does she have?\" --user alice[/bold]"
    )
