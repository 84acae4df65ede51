"""``memlane context``: should a conversation search memory, and what does it find
(docs/context.md). The commands call the ``Memory`` methods the SDK, REST and MCP call."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from memlane.cli import render
from memlane.cli.render import escape
from memlane.cli.base import AgentOpt, JsonOpt, UserOpt, _json_arg, _memory, _print_json, command, console

context_app = typer.Typer(rich_markup_mode=None, help="Agent context: should a conversation search memory, and what does it find.",
                          no_args_is_help=True)

ConversationArg = typer.Argument(None, help="the conversation as text (one user message); or use --file")
ConversationFileOpt = typer.Option(None, "--file", "-F", help="a JSON list of {role, content} messages ('-': stdin)",
                                   allow_dash=True, dir_okay=False)
SystemOpt = typer.Option("", "--system", "-s", help="the agent's system prompt")


def _conversation(text: Optional[str], path: Optional[Path]) -> Any:
    """The conversation from the argument or from a JSON file of messages (``Memory`` validates it)."""
    if (text is None) == (path is None):
        raise typer.BadParameter("give the conversation as text or with --file, not both", param_hint="CONVERSATION")
    if path is None:
        return text
    raw = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    return _json_arg(raw, "--file")


@command("should-search", on=context_app)
def context_should_search(
    conversation: Optional[str] = ConversationArg, file: Optional[Path] = ConversationFileOpt,
    system: str = SystemOpt, as_json: bool = JsonOpt,
) -> None:
    """Whether the conversation needs a memory search, with the score of each signal."""
    with _memory() as memory:
        decision = memory.should_search_memory(_conversation(conversation, file), system, explain=True)
    if as_json:
        _print_json(decision.model_dump())
        return
    verdict = "[green]search[/green]" if decision.should_search else "[yellow]no search[/yellow]"
    console.print(f"{verdict}  score {decision.score:g} (threshold {decision.threshold:g})", highlight=False)
    for signal in decision.signals:
        if signal.hits or signal.system_prompt_hits:
            hits = ", ".join(signal.hits + [f"{h} (system)" for h in signal.system_prompt_hits])
            console.print(f"  {signal.signal}: {signal.points:g}  [dim]{escape(hits)}[/dim]", highlight=False)


@command("search", on=context_app)
def context_search(
    conversation: Optional[str] = ConversationArg, file: Optional[Path] = ConversationFileOpt,
    system: str = SystemOpt, user: Optional[str] = UserOpt, agent: Optional[str] = AgentOpt,
    max_results: int = typer.Option(10, "--max-results", "-n", help="matches per category"),
    as_json: bool = JsonOpt,
) -> None:
    """The memories a conversation calls for, grouped as agent/user x profile/event."""
    with _memory() as memory:
        result = memory.search_memory_with_context(_conversation(conversation, file), system, user_id=user,
                                                   agent_id=agent, max_results=max_results)
    if as_json:
        _print_json(result)
        return
    console.print(f"search terms: {escape(', '.join(result['search_terms'])) or '(none)'}", highlight=False)
    for category in ("agent_profile_matches", "agent_event_matches", "user_profile_matches", "user_event_matches"):
        if result[category]:
            render.print_memories(console, result[category], title=category.removesuffix("_matches").replace("_", " "),
                                  compact=True)
    console.print(f"{result['total_matches']} matches", highlight=False)
