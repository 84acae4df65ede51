"""Turn reconciliation decisions into one ChangeSet and the ``add`` result. Pure: no I/O.

Decisions are untrusted (an LLM may produce them): a decision about a memory
that was not among the candidates, a second decision about the same memory,
or an empty text is skipped, never applied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memlane.core.ids import new_id
from memlane.ingest.types import Candidates, Decision, Fact
from memlane.core.models import MemoryRecord
from memlane.core.changes import EXPIRED, ChangeSet, Invalidate, Update


#: the ``invalid_reason`` of a fact older than the memory it would have changed (an old conversation
#: imported after newer ones): it is kept as what was true until that memory was said
SUPERSEDED = "superseded"


@dataclass
class Context:
    """Who and what the new memories belong to."""

    scope: dict[str, str]
    metadata: dict[str, Any]
    message_ids: list[str]
    now: str
    hash: Callable[[str], str]
    actor_id: str | None = None
    role: str | None = None
    memory_type: str | None = None  # forced by the caller, else the fact's own type
    #: when the memories added expire (``add(expiration_date=)``): their ``valid_to``
    expires: str | None = None
    #: whether ``now`` is a time the caller gave (``add(timestamp=)``): memories it ends end then; else
    #: the store's clock ends them (so a server whose clock runs ahead cannot leave one valid a moment)
    said: bool = False
    #: a known memory's new vector under an update, or None when what it is embedded as does not change
    #: (``ingest/records.py`` ``revised_vector``); unset: vectors are left as they are
    revised_vector: Callable[[MemoryRecord, Update], np.ndarray | None] | None = None


@dataclass
class Plan:
    changes: ChangeSet = field(default_factory=ChangeSet)
    results: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[dict[str, Any]] = field(default_factory=list)
    #: decisions that could not be applied, and why (unknown memory, second decision, no text)
    ignored: list[str] = field(default_factory=list)
    #: facts (indices) behind a change (ADD, UPDATE, DELETE) and behind a NONE
    changed_facts: set[int] = field(default_factory=set)
    known_facts: set[int] = field(default_factory=set)
    #: facts already known whose memory took the call's metadata
    tagged_facts: set[int] = field(default_factory=set)
    #: a change no fact is known for (an LLM may merge facts or name none): it may come from any message
    unattributed_change: bool = False


def plan(
    decisions: Sequence[Decision],
    facts: Sequence[Fact],
    fact_vectors: np.ndarray,
    candidates: Candidates,
    context: Context,
    embed: Callable[[list[str], list[str | None]], np.ndarray],
) -> Plan:
    """``fact_vectors``: each fact's vector as stored (with its speaker when ``embed_actor``);
    ``embed(texts, actors)`` embeds other texts the same way (an LLM may merge or rephrase)."""
    out = Plan()
    known = {m.id: m for m in candidates.memories}
    touched: set[str] = set()
    accepted: list[Decision] = []
    for d in decisions:
        if d.event in ("UPDATE", "DELETE", "NONE"):
            if d.target not in known:
                out.ignored.append(f"{d.event} of unknown memory {d.target!r}")
                continue
            if d.target in touched:
                out.ignored.append(f"second decision ({d.event}) about memory {d.target}")
                continue
            touched.add(d.target)
        if d.event in ("ADD", "UPDATE") and not d.text.strip():
            out.ignored.append(f"{d.event} without text")
            continue
        accepted.append(d)

    def actor(d: Decision) -> str | None:
        if d.fact is not None and d.fact < len(facts) and facts[d.fact].actor_id:
            return facts[d.fact].actor_id
        return context.actor_id

    # one embedding batch for texts that are not verbatim facts (an LLM may merge or rephrase); the
    # same words from two speakers are two vectors
    fact_index = {(f.text, f.actor_id or context.actor_id): i for i, f in enumerate(facts)}
    fresh = sorted({(d.text, actor(d)) for d in accepted if d.event in ("ADD", "UPDATE")} - fact_index.keys(),
                   key=lambda k: (k[0], k[1] or ""))
    fresh_vectors = dict(zip(fresh, embed([t for t, _ in fresh], [a for _, a in fresh]))) if fresh else {}

    def vector(d: Decision) -> np.ndarray:
        key = (d.text, actor(d))
        return fact_vectors[fact_index[key]] if key in fact_index else fresh_vectors[key]

    def sources(d: Decision) -> list[str]:
        if d.fact is not None and facts[d.fact].sources:
            return [context.message_ids[i] for i in facts[d.fact].sources if i < len(context.message_ids)]
        return list(context.message_ids)

    def changed(d: Decision) -> None:
        if d.fact is None:
            out.unattributed_change = True
        else:
            out.changed_facts.add(d.fact)

    def known_already(d: Decision, old: MemoryRecord) -> None:
        item = {"id": old.id, "memory": old.text, "event": "NONE"}
        gained = {k: v for k, v in context.metadata.items() if k not in old.metadata or old.metadata[k] != v}
        if gained:  # the call tags what is already known: the memory takes the tags (history records it)
            change = Update(id=old.id, updated_at=context.now, metadata={**old.metadata, **gained}, actor_id=actor(d),
                            role=context.role, reason=f"already known; metadata merged: {', '.join(sorted(gained))}",
                            source_message_ids=sources(d))
            change.vector = context.revised_vector(old, change) if context.revised_vector else None
            out.changes.updates.append(change)
            item["metadata_merged"] = gained
        out.unchanged.append(item)
        if d.fact is not None:
            out.known_facts.add(d.fact)
            if gained:
                out.tagged_facts.add(d.fact)

    def older_than(d: Decision) -> MemoryRecord | None:
        """The memory a change would touch when it was said after this conversation (None otherwise)."""
        if d.event in ("UPDATE", "DELETE") and known[d.target].updated_at > context.now:
            return known[d.target]
        return None

    def keep_as_past(d: Decision, newer: MemoryRecord) -> None:
        """An old conversation's change of a newer memory: the fact is what was true until then."""
        text = d.text if d.event == "UPDATE" else (facts[d.fact].text if d.fact is not None else "")
        if not text.strip():
            out.ignored.append(f"{d.event} of memory {newer.id} said before it, without a text to keep")
            return
        record = MemoryRecord(
            id=new_id(), text=text, hash=context.hash(text), created_at=context.now, updated_at=context.now,
            actor_id=actor(d), role=context.role, metadata=dict(context.metadata),
            memory_type=context.memory_type or d.memory_type or "fact", source_message_ids=sources(d),
            vector=vector(d) if d.event == "UPDATE" else embed([text], [actor(d)])[0],
            # true until the newer memory began (or, said after it began, until its current text was said)
            valid_to=newer.created_at if newer.created_at > context.now else newer.updated_at,
            invalid_reason=SUPERSEDED, superseded_by=newer.id, **context.scope)
        out.changes.inserts.append(record)
        out.results.append({"id": record.id, "memory": text, "event": "ADD", "valid_to": record.valid_to,
                            "superseded_by": newer.id})
        changed(d)

    added_for_fact: dict[int, str] = {}
    for d in accepted:
        if d.event != "ADD":
            continue
        record = MemoryRecord(
            id=new_id(), text=d.text, hash=context.hash(d.text), created_at=context.now,
            updated_at=context.now, actor_id=actor(d), role=context.role, metadata=dict(context.metadata),
            memory_type=context.memory_type or d.memory_type or "fact", source_message_ids=sources(d),
            vector=vector(d), valid_to=context.expires, invalid_reason=EXPIRED if context.expires else None,
            **context.scope,
        )
        out.changes.inserts.append(record)
        out.results.append({"id": record.id, "memory": record.text, "event": "ADD"})
        changed(d)
        if d.fact is not None:
            added_for_fact.setdefault(d.fact, record.id)
    for d in accepted:
        newer = older_than(d)
        if newer is not None:
            keep_as_past(d, newer)
        elif d.event == "UPDATE":
            old = known[d.target]
            if d.text == old.text:
                known_already(d, old)
                continue
            out.changes.updates.append(Update(id=old.id, updated_at=context.now, text=d.text, hash=context.hash(d.text),
                                              vector=vector(d), actor_id=actor(d), role=context.role,
                                              memory_type=context.memory_type or d.memory_type,
                                              reason=d.reason or None, source_message_ids=sources(d)))
            out.results.append({"id": old.id, "memory": d.text, "event": "UPDATE", "previous_memory": old.text})
            changed(d)
        elif d.event == "DELETE":
            old = known[d.target]
            out.changes.invalidations.append(Invalidate(
                id=old.id, reason=d.reason or "contradicted", actor_id=actor(d), role=context.role,
                superseded_by=added_for_fact.get(d.fact) if d.fact is not None else None,
                at=context.now if context.said else None))
            out.results.append({"id": old.id, "memory": old.text, "event": "DELETE"})
            changed(d)
        elif d.event == "NONE":
            known_already(d, known[d.target])
    return out
