"""Why a message stored nothing: the ``skipped`` list of an ``add`` result. Pure: no I/O.

Every message of an ``add(infer=True)`` either contributed to a change (ADD,
UPDATE, DELETE) or is listed with a reason: the engine found no fact in it (a
greeting, a question, a request, an assistant turn …, from ``Engine.skip_reason``),
its facts were already known (and the known memory took the call's metadata, if it brought any), a request to forget matched no memory, or the
decisions about its facts could not be applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memlane.ingest.plan import Plan
from memlane.ingest.types import Fact
from memlane.core.models import Message

ALREADY_KNOWN = "already known"
ALREADY_KNOWN_TAGGED = "already known: the memory took this call's metadata"
NOTHING_TO_FORGET = "a request to forget: no memory matched it"
NOT_DECIDED = "its facts were not decided on (the engine's answer named none of them)"


def skipped_messages(messages: Sequence[Message], message_ids: Sequence[str], facts: Sequence[Fact],
                     outcome: Plan | None, explain: Callable[[Message], str]) -> list[dict[str, Any]]:
    """``[{"message_id", "reason"}]`` for each message that changed nothing, in message order."""
    facts_of: dict[int, list[int]] = {}
    for number, fact in enumerate(facts):
        for source in fact.sources:
            facts_of.setdefault(source, []).append(number)
    changed = outcome.changed_facts if outcome else set()
    known = outcome.known_facts if outcome else set()
    skipped = []
    for index, message in enumerate(messages):
        own = facts_of.get(index, [])
        if own and (outcome is not None and outcome.unattributed_change or any(f in changed for f in own)):
            continue
        if not own:
            reason = explain(message)
        elif all(f in known for f in own if facts[f].kind == "statement") and any(f in known for f in own):
            reason = ALREADY_KNOWN_TAGGED if any(f in outcome.tagged_facts for f in own) else ALREADY_KNOWN
        elif all(facts[f].kind == "forget" for f in own):
            reason = NOTHING_TO_FORGET
        elif outcome is not None and outcome.ignored:
            reason = "its decisions could not be applied: " + "; ".join(outcome.ignored)
        else:
            reason = NOT_DECIDED
        skipped.append({"message_id": message_ids[index], "reason": reason})
    return skipped
