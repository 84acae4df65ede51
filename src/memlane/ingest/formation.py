"""Memory formation, conducted for ``Memory.add``: the memories one add writes besides its messages.

- ``procedural`` (``memory_type="procedural"``): the engine's summary of the messages, one memory of the agent;
- ``verbatim`` (``infer=False``): each message one memory, with the turns before it as context
  (``retrieval.context_messages``) when it answers them: only a message whose previous message
  came from another speaker (role or name) gets context, so a list of one person's notes is
  embedded note by note; system messages are skipped;
- ``form`` (``infer=True``): facts extracted and attributed to their speakers, embedded as they are
  stored, the scope's *formed* memories near them read as candidates (not the provisional stand-ins
  of async adds), the engine's decisions planned;
- ``decide``: whichever of them the call asks for, with the add's answer.

Pipelines decide, the facade applies: ``decide`` reads the store (the candidates) and returns the
``ChangeSet`` to write, the add's relations with it; ``Memory.add`` writes it in one transaction (a
background worker with the end of its job: background/formation.py).
"""

from __future__ import annotations

from typing import Any

from memlane.core import filters as flt
from memlane.core import project, timeutil, validation
from memlane.core.arguments import AddCall
from memlane.core.changes import ChangeSet
from memlane.core.config import MemoryConfig
from memlane.core.graph_models import GraphChanges
from memlane.core.models import Message, NewMemory, text_hash
from memlane.core.scope import ACTIVE, FORMED, scoped_filter
from memlane.embeddings import Embeddings, memory_text
from memlane.ingest import candidates as formation_candidates
from memlane.ingest import offline_extract, records, speakers
from memlane.ingest.pipeline import Pipeline
from memlane.ingest.plan import Context, plan
from memlane.ingest.report import skipped_messages
from memlane.ingest.types import Engine, FormationFailed


class Formation(Pipeline):
    def __init__(self, config: MemoryConfig, embeddings: Embeddings, store: Any, engine: Engine, graph: Any = None):
        super().__init__(config, embeddings, store, engine)
        #: graph memory (``GraphMemory``): the add's relations are planned with its memories
        self.graph = graph

    def decide(self, call: AddCall, message_ids: list[str], times: list[str]) -> tuple[ChangeSet, dict[str, Any]]:
        """What an add of these (already kept) messages, said at ``times``, writes, and its answer
        (``Memory.add``'s)."""
        outcome: dict[str, Any] = {"results": [], "status": "ok", "facts": [], "unchanged": [],
                                   "message_ids": message_ids}
        if call.memory_type == "procedural":
            try:
                drafts = self.procedural(call, message_ids, max(times))
            except FormationFailed as exc:
                return ChangeSet(), {**outcome, "status": "failed", "reason": str(exc)}
        elif not call.infer:
            drafts, outcome["skipped"] = self.verbatim(call, message_ids, times)
        else:
            graph = GraphChanges()
            if self.graph is not None:  # relations are written with the memories, or alone when formation fails
                graph, outcome["relations"] = self.graph.plan_add(call.messages, call.ids, message_ids)
            return self.form(call, message_ids, outcome, graph, max(times)) or ChangeSet(), outcome
        stored = records.records(drafts, self.embeddings, self.config.retrieval)
        outcome["results"] = [{"id": r.id, "memory": r.text, "event": "ADD"} for r in stored]
        return ChangeSet(inserts=stored), outcome

    def procedural(self, call: AddCall, message_ids: list[str], said_at: str) -> list[NewMemory]:
        """The agent's procedure, summarised by the engine (raises ``FormationFailed``); ``said_at``: the
        time of the last message."""
        summary = self.engine.summarize_procedure(call.messages, call.prompt)
        promoted = call.promoted
        return [NewMemory(text=validation.text(summary[: self.limits.max_text_chars], "summary", self.limits),
                          memory_type="procedural", metadata=call.metadata, source_message_ids=message_ids,
                          role="assistant", actor_id=promoted.get("actor_id"), created_at=said_at,
                          updated_at=said_at, **call.expiry, **call.ids)]

    def verbatim(self, call: AddCall, message_ids: list[str], times: list[str]
                 ) -> tuple[list[NewMemory], list[dict[str, str]]]:
        """One memory a message (said at ``times[i]``), and the system messages skipped
        (``[{"message_id", "reason"}]``)."""
        window = self.config.retrieval.context_messages
        received, promoted = call.messages, call.promoted
        # a conversation added turn by turn: the turns stored just before this add are read as its first
        # message's context, as if the conversation had come in one add
        before = self.earlier_turns(call, message_ids, times[0]) if window and received else []
        talk = [*before, *received]
        drafts = [
            NewMemory(text=m.content, actor_id=promoted.get("actor_id", m.name), role=promoted.get("role", m.role),
                      metadata=call.metadata, memory_type=call.memory_type, source_message_ids=[message_ids[i]],
                      context=reply_context(talk, len(before) + i, window),
                      created_at=times[i], updated_at=times[i], **call.expiry, **call.ids)
            for i, m in enumerate(received) if m.role != "system"
        ]
        skipped = [{"message_id": message_ids[i], "reason": offline_extract.SYSTEM}
                   for i, m in enumerate(received) if m.role == "system"]
        return drafts, skipped

    def earlier_turns(self, call: AddCall, message_ids: list[str], said_at: str,
                      count: int | None = None) -> list[Message]:
        """The messages of the call's scope stored just before this add's (at most
        ``retrieval.context_messages``), when the last of them was said at most
        ``retrieval.neighbour_gap_seconds`` before the add's first message (the same conversation; not
        after it: an older conversation imported later has no context from newer ones); system messages
        are not turns."""
        settings = self.config.retrieval
        count = settings.context_messages if count is None else count
        if not count:
            return []
        own = set(message_ids)
        latest = self.store.messages(scoped_filter(call.ids, None), count + len(message_ids))
        stored = [m for m in latest if m.id not in own and m.role != "system"][-count:]
        if not stored:
            return []
        if not 0 <= timeutil.seconds_between(stored[-1].created_at, said_at) <= settings.neighbour_gap_seconds:
            return []
        return [Message(role=m.role, content=m.content, name=m.name) for m in stored]

    def form(self, call: AddCall, message_ids: list[str], outcome: dict[str, Any],
             graph: GraphChanges, said_at: str) -> ChangeSet | None:
        """Extract facts, find the memories near them, decide, and plan every decision; ``outcome`` gets
        the add's report (results, unchanged, skipped, or status "failed" and the reason). Returns what
        to write: the decisions with the add's ``graph`` changes; when nothing is formed the graph
        changes alone, or None when there are none. ``said_at``: when the conversation was said (its last
        message): the time of every change it makes."""
        received, ids, metadata, promoted = call.messages, call.ids, call.metadata, call.promoted
        agent_facts = "agent_id" in ids and "user_id" not in ids

        def explain(message: Message) -> str:
            return self.engine.skip_reason(message, agent_facts=agent_facts)

        try:
            earlier = {}
            if getattr(self.engine, "reads_earlier_turns", False) and received:
                earlier = {"earlier": self.earlier_turns(call, message_ids, said_at,
                                                         self.config.formation.earlier_turns)}
            if getattr(self.engine, "follows_instructions", False):  # the project's (core/project.py)
                told = project.instructions(self.store.project_settings(), agent_facts=agent_facts)
                if told:
                    earlier["instructions"] = told
            facts = self.engine.extract(received, agent_facts=agent_facts, **earlier)
            outcome["facts"] = [f.text for f in facts if f.kind == "statement"]
            if not facts:
                outcome["skipped"] = skipped_messages(received, message_ids, facts, None, explain)
                return ChangeSet(graph=graph) if graph else None
            speaker = next((m for m in received if m.role == "user"), received[0])
            known = speakers.attribute(facts, received, explicit=promoted.get("actor_id"), default=speaker.name)
            settings = self.config.retrieval
            stored_as = [memory_text.embedding_text(f.text, metadata, None, settings, f.actor_id) for f in facts]
            vectors = self.embeddings.documents(stored_as)
            counterparts = speakers.counterpart_filter(facts) if known else None
            where = flt.conjoin(*(flt.Compare(flt.Field(column=k), "eq", v) for k, v in ids.items()), ACTIVE, FORMED,
                                *([counterparts] if counterparts else []))
            candidates = formation_candidates.find(self.store, self.embeddings, facts, vectors, where,
                                                   self.config.formation.top_k,
                                                   labelled=stored_as != [f.text for f in facts])
            decisions = self.engine.reconcile(facts, candidates)
        except FormationFailed as exc:
            outcome.update(status="failed", reason=str(exc))
            return ChangeSet(graph=graph) if graph else None
        context = Context(scope=ids, metadata=metadata, message_ids=message_ids, now=said_at, hash=text_hash,
                          actor_id=promoted.get("actor_id", speaker.name), role=promoted.get("role", speaker.role),
                          memory_type=call.memory_type, expires=call.expires,
                          said=call.said_at is not None or any(m.created_at for m in received),
                          revised_vector=lambda record, change: records.revised_vector(record, change, self.embeddings,
                                                                                       settings))
        outcome_plan = plan(decisions, facts, vectors, candidates, context,
                            lambda texts, actors: self.embeddings.documents(
                                [memory_text.embedding_text(t, metadata, None, settings, a) for t, a in zip(texts, actors)]))
        outcome_plan.changes.graph = graph
        outcome.update(results=outcome_plan.results, unchanged=outcome_plan.unchanged,
                       skipped=skipped_messages(received, message_ids, facts, outcome_plan, explain))
        if outcome_plan.ignored:
            outcome["ignored_decisions"] = outcome_plan.ignored
        return outcome_plan.changes


def reply_context(received: list[Message], i: int, window: int) -> str | None:
    """The ``window`` messages before message ``i``, when the one just before is another speaker's:
    a reply is read with what it answers; one speaker's consecutive notes are each their own."""
    if not window or i == 0:
        return None
    before, message = received[i - 1], received[i]
    if (before.role, before.name) == (message.role, message.name):
        return None
    return " ".join(p.content for p in received[max(0, i - window):i])
