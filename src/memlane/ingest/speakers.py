"""Who stated each fact, in a conversation with several named speakers (a message's ``name``, kept
as the memory's ``actor_id``), and which stored memories a speaker's facts are reconciled with.

"I like green tea" from Bob is not Alice's "I like green tea": without this, Bob's fact was found
"already known" from Alice's memory and never stored, and a request of Bob's to forget could
delete Alice's memory."""

from __future__ import annotations

from collections.abc import Sequence

from memlane.core import filters as flt
from memlane.core.models import Message
from memlane.ingest.types import Fact


def attribute(facts: Sequence[Fact], messages: Sequence[Message], *, explicit: str | None,
              default: str | None) -> bool:
    """Set each fact's ``actor_id``: ``explicit`` (the call's own ``actor_id``) when given, else the
    one name its source messages share, else ``default`` (the first user message's name). Returns
    whether every fact's speaker is known (explicit, or one name among its sources): an LLM that
    read several speakers' messages at once cannot say whose a fact is."""
    known = True
    for fact in facts:
        names = {messages[i].name for i in fact.sources if i < len(messages) and messages[i].name}
        if explicit or len(names) == 1:
            fact.actor_id = explicit or names.pop()
        else:
            fact.actor_id, known = default, False
    return known


def may_reconcile(first: str | None, second: str | None) -> bool:
    """Whether memories (or a fact and a memory) of these speakers may be the same statement: not
    when both have a speaker and the speakers differ."""
    return not (first and second and first != second)


def counterpart_filter(facts: Sequence[Fact]) -> flt.Node | None:
    """The stored memories facts whose speakers are known may be reconciled with: their speakers'
    and those said by no one in particular (no ``actor_id``); None when no fact has a speaker."""
    actors = sorted({f.actor_id for f in facts if f.actor_id})
    if not actors:
        return None
    column = flt.Field(column="actor_id")
    return flt.Or((flt.Compare(column, "in", actors), flt.Compare(column, "eq", None)))
