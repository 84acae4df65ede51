"""The offline formation engine: rules and the local embedding model, no network."""

from __future__ import annotations

from memlane.ingest import offline_extract, offline_merge, offline_reconcile
from memlane.ingest.types import Candidates, Decision, Fact
from memlane.core.models import Message

_STEP_CHARS = 240


def _clip(text: str, limit: int = _STEP_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class OfflineEngine:
    name = "offline"

    #: ``extract`` reads the turns said just before an add (``Engine.reads_earlier_turns``)
    reads_earlier_turns = True

    def extract(self, messages: list[Message], *, agent_facts: bool, earlier: list[Message] | tuple = ()) -> list[Fact]:
        return offline_extract.extract(messages, agent_facts=agent_facts, earlier=earlier)

    def reconcile(self, facts: list[Fact], candidates: Candidates) -> list[Decision]:
        return offline_reconcile.reconcile(facts, candidates)

    def skip_reason(self, message: Message, *, agent_facts: bool) -> str:
        return offline_extract.skip_reason(message, agent_facts=agent_facts)

    def merge(self, older: str, newer: str, similarity: float) -> str | None:
        """The more specific text (``ingest/offline_merge.py``); None when the two disagree."""
        if offline_merge.disagree(older, newer, similarity):
            return None
        return offline_merge.more_specific(older, newer)

    def summarize_procedure(self, messages: list[Message], prompt: str | None = None) -> str:
        """A deterministic digest: the task, each step the agent or a tool took, and the outcome (``prompt``,
        instructions for a model, has nothing to instruct here)."""
        task = next((m.content for m in messages if m.role == "user"), None)
        steps = [m for m in messages if m.role in ("assistant", "tool")]
        lines = [f"Procedure ({len(steps)} steps)"]
        if task:
            lines.append(f"Task: {_clip(task)}")
        for number, step in enumerate(steps, start=1):
            who = "tool" if step.role == "tool" else (step.name or "agent")
            lines.append(f"{number}. [{who}] {_clip(step.content)}")
        if steps:
            lines.append(f"Outcome: {_clip(steps[-1].content)}")
        return "\n".join(lines)
