"""The facade: ``Memory`` (sync) and ``AsyncMemory`` (the same methods, awaited).

``Memory`` validates input, asks the embedder for vectors and the store for
records, and writes each call's outcome in one transaction. ``AsyncMemory`` has
no bodies of its own: every method runs the ``Memory`` method in a worker
thread, so the two can never drift apart.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import date, datetime
from typing import Any

import numpy as np

from memlane.core import config as config_mod
from memlane.core import filters as flt
from memlane.core import scope, timeutil, validation
from memlane.embeddings import Embedder, Embeddings, create_embedder, memory_text
from memlane.core.errors import InvalidInputError, MemoryNotFoundError
from memlane.graph.memory import GraphMemory, graph_scope, lookup_pool
from memlane.core.ids import new_id
from memlane.ingest import candidates as formation_candidates
from memlane.ingest import create_engine, offline_extract, speakers
from memlane.ingest import records as ingest_records
from memlane.ingest.plan import Context, plan
from memlane.ingest.report import skipped_messages
from memlane.ingest.types import Engine, FormationFailed
from memlane.maintenance import plans as maintenance
from memlane.maintenance.similar import groups, similar_pairs
from memlane.core.models import MEMORY_TYPES, MemoryRecord, Message, MessageRecord, NewMemory, text_hash
from memlane.retrieval import context as agent_context
from memlane.retrieval.searcher import ACTIVE, Searcher, validity
from memlane.core.changes import EXPIRED, Expiry
from memlane.store import ChangeSet, Delete, Store, Update, create_store
from memlane.store.base import ReembedItem

#: memories invalidated per transaction by ``cleanup_old_memories``
CLEANUP_BATCH = 500
#: mem0's answer to an update, returned beside the memory's fields
UPDATED = "Memory updated successfully!"


#: how many memories ``search`` and ``get_all`` return when neither ``limit`` nor ``top_k`` is given (mem0's)
DEFAULT_LIMIT = 100


def mem0_alias(value: Any, mem0_value: Any, name: str, mem0_name: str) -> Any:
    """The value given under memlane's name or mem0's (``data`` for ``text``, ``top_k`` for ``limit``),
    so code written for mem0's library runs unchanged; both at once is an error."""
    if mem0_value is None:
        return value
    if value is not None:
        raise InvalidInputError(f"give {name} or {mem0_name} (mem0's name for it), not both", field=mem0_name)
    return mem0_value


class Memory:
    """Long-term memory. ``Memory()`` works offline: SQLite under ``~/.memlane``
    (or ``$MEMLANE_HOME``) and the local all-MiniLM-L6-v2 model."""

    def __init__(
        self,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        store: Store | None = None,
        engine: Engine | None = None,
        tenant: str | None = None,
    ):
        """``tenant``: whose memories (the server's tenants; default ``"default"``, the tenant of the
        CLI, ``memlane mcp`` and a server without keys). Ignored when ``store`` is given."""
        self.config = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        self.limits = self.config.limits.to_limits()
        self.embeddings = Embeddings(embedder or create_embedder(self.config.embedder), self.config.query_cache_size)
        self.engine = engine or create_engine(self.config)
        self.store = store or create_store(self.config, self.embeddings.dims, tenant)
        self.store.bind_embedder(self.embeddings.name, self.embeddings.dims)
        #: the search pipeline (``retrieval/searcher.py``)
        self.searcher = Searcher(self.config, self.embeddings, self.store)
        #: graph memory (``enable_graph``): entities and relations next to the memories
        self.graph = (GraphMemory.create(self.config, self.embeddings, self.store, self.engine)
                      if self.config.enable_graph else None)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> "Memory":
        return cls(config_dict)

    # -- writes -------------------------------------------------------------

    def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any] | str],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        memory_type: str | None = None,
        expiration_date: str | date | datetime | None = None,
        prompt: str | None = None,
    ) -> dict[str, Any]:
        """Remember a conversation.

        The messages are always kept verbatim first (``get_messages``). With
        ``infer=True`` facts are extracted and reconciled with what the scope
        already holds: ADD, UPDATE (same id, old text in history), DELETE
        (invalidated, not erased) or NONE. With ``infer=False`` each message is
        stored as one memory (system messages are skipped, as in mem0).
        ``memory_type="procedural"`` (needs ``agent_id``) summarises the
        messages as one memory of the agent. ``expiration_date`` (a future date or datetime, as
        mem0's) makes the memories this call adds invalid from then on: ``valid_to`` is that moment,
        ``invalid_reason`` is ``expired``, and reads check it when they run (``as_of`` before it
        still shows them). ``prompt`` (mem0's) replaces the instructions of the procedural summary with
        the LLM engine; the offline engine and the other adds have no instructions to replace, as in mem0.

        Returns ``{"results": [{"id", "memory", "event", "previous_memory"?}],
        "status": "ok" | "failed", "reason"?, "facts", "unchanged", "skipped", "message_ids"}``;
        ``results`` lists changes (as mem0), ``unchanged`` the memories a fact confirmed, and
        ``skipped`` (``infer=True``) each message that changed nothing, with why:
        ``[{"message_id", "reason"}]`` (a question, a greeting, already known …).
        """
        ids = scope.scope_ids(user_id, agent_id, run_id)
        scope.require_ids(ids)
        if not isinstance(infer, bool):
            raise InvalidInputError(f"infer must be true or false, got {infer!r}", field="infer")
        memory_type = validation.choice(memory_type, MEMORY_TYPES, "memory_type")
        if memory_type == "procedural" and "agent_id" not in ids:
            raise InvalidInputError("procedural memories belong to an agent: give agent_id", field="agent_id")
        if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
            raise InvalidInputError(f"prompt must be non-empty text (or None), got {prompt!r}", field="prompt")
        stored_metadata, promoted = validation.metadata(metadata, self.limits)
        expires = validation.expiration(expiration_date)
        received = validation.messages(messages, self.limits)
        now = timeutil.now_iso()
        kept = [MessageRecord(id=new_id(), role=m.role, content=m.content, created_at=now, name=m.name, **ids)
                for m in received]
        self.store.apply(ChangeSet(messages=kept))  # nothing a user sends is lost, whatever happens next
        message_ids = [m.id for m in kept]
        outcome = {"results": [], "status": "ok", "facts": [], "unchanged": [], "message_ids": message_ids}

        if memory_type == "procedural":
            try:
                summary = self.engine.summarize_procedure(received, prompt)
            except FormationFailed as exc:
                return {**outcome, "status": "failed", "reason": str(exc)}
            drafts = [NewMemory(text=validation.text(summary[: self.limits.max_text_chars], "summary", self.limits),
                                memory_type="procedural", metadata=stored_metadata, source_message_ids=message_ids,
                                role="assistant", actor_id=promoted.get("actor_id"), **_expiry(expires), **ids)]
        elif not infer:
            window = self.config.retrieval.context_messages
            drafts = [
                NewMemory(text=m.content, actor_id=promoted.get("actor_id", m.name), role=promoted.get("role", m.role),
                          metadata=stored_metadata, memory_type=memory_type, source_message_ids=[kept[i].id],
                          context=" ".join(p.content for p in received[max(0, i - window):i]) if window else None,
                          **_expiry(expires), **ids)
                for i, m in enumerate(received) if m.role != "system"
            ]
        else:
            return self._form(received, ids, stored_metadata, promoted, memory_type, message_ids, outcome, expires)
        records = self.insert(drafts)
        outcome["results"] = [{"id": r.id, "memory": r.text, "event": "ADD"} for r in records]
        if not infer and memory_type != "procedural":
            outcome["skipped"] = [{"message_id": kept[i].id, "reason": offline_extract.SYSTEM}
                                  for i, m in enumerate(received) if m.role == "system"]
        return outcome

    def _form(self, received: list[Message], ids: dict[str, str], metadata: dict[str, Any], promoted: dict[str, str],
              memory_type: str | None, message_ids: list[str], outcome: dict[str, Any],
              expires: str | None) -> dict[str, Any]:
        """Extract facts, find the memories near them, decide, and apply every decision in one transaction."""
        graph = ChangeSet()
        if self.graph is not None:  # relations are written with the memories, or alone when formation fails
            graph.graph, outcome["relations"] = self.graph.plan_add(received, ids, message_ids)
        agent_facts = "agent_id" in ids and "user_id" not in ids

        def explain(message: Message) -> str:
            return self.engine.skip_reason(message, agent_facts=agent_facts)

        try:
            facts = self.engine.extract(received, agent_facts=agent_facts)
            outcome["facts"] = [f.text for f in facts if f.kind == "statement"]
            if not facts:
                if graph.graph:
                    self.store.apply(graph)
                outcome["skipped"] = skipped_messages(received, message_ids, facts, None, explain)
                return outcome
            speaker = next((m for m in received if m.role == "user"), received[0])
            known = speakers.attribute(facts, received, explicit=promoted.get("actor_id"), default=speaker.name)
            settings = self.config.retrieval
            stored_as = [memory_text.embedding_text(f.text, metadata, None, settings, f.actor_id) for f in facts]
            vectors = self.embeddings.documents(stored_as)
            counterparts = speakers.counterpart_filter(facts) if known else None
            where = flt.conjoin(*(flt.Compare(flt.Field(column=k), "eq", v) for k, v in ids.items()), ACTIVE,
                                *([counterparts] if counterparts else []))
            candidates = formation_candidates.find(self.store, self.embeddings, facts, vectors, where,
                                                   self.config.formation.top_k,
                                                   labelled=stored_as != [f.text for f in facts])
            decisions = self.engine.reconcile(facts, candidates)
        except FormationFailed as exc:
            if graph.graph:
                self.store.apply(graph)
            return {**outcome, "status": "failed", "reason": str(exc)}
        context = Context(scope=ids, metadata=metadata, message_ids=message_ids, now=timeutil.now_iso(), hash=text_hash,
                          actor_id=promoted.get("actor_id", speaker.name), role=promoted.get("role", speaker.role),
                          memory_type=memory_type, expires=expires)
        outcome_plan = plan(decisions, facts, vectors, candidates, context,
                            lambda texts, actors: self.embeddings.documents(
                                [memory_text.embedding_text(t, metadata, None, settings, a) for t, a in zip(texts, actors)]))
        outcome_plan.changes.graph = graph.graph
        self.store.apply(outcome_plan.changes)
        outcome.update(results=outcome_plan.results, unchanged=outcome_plan.unchanged,
                       skipped=skipped_messages(received, message_ids, facts, outcome_plan, explain))
        if outcome_plan.ignored:
            outcome["ignored_decisions"] = outcome_plan.ignored
        return outcome

    def insert(self, drafts: Sequence[NewMemory], *, idempotency_keys: Sequence[str] = (),
               messages: Sequence[MessageRecord] = ()) -> list[MemoryRecord]:
        """Embed and store already validated memories in one transaction (bulk paths: add, import).

        ``idempotency_keys`` are recorded in the same transaction; see ``Store.known_keys``; so are
        ``messages`` (the message log of what is imported).
        """
        if not drafts and not idempotency_keys and not messages:
            return []
        records = ingest_records.records(drafts, self.embeddings, self.config.retrieval)
        self.store.apply(ChangeSet(inserts=records, keys=list(idempotency_keys), messages=list(messages)))
        return records

    def update(self, memory_id: str, text: str | None = None, metadata: Mapping[str, Any] | None = None, *,
               data: str | None = None) -> dict[str, Any]:
        """Replace the text (re-embedding it) and/or the metadata; returns the updated memory, with mem0's
        ``"message": "Memory updated successfully!"`` beside its fields (mem0 returns only that message).
        ``data`` is mem0's name for ``text`` (``update(memory_id, data="...")``); give one of them."""
        text = mem0_alias(text, data, "text", "data")
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        if text is None and metadata is None:
            raise InvalidInputError("update needs text, metadata or both", field="text")
        current = self.store.get(memory_id)
        if current is None:
            raise MemoryNotFoundError(memory_id)
        change = Update(id=memory_id, updated_at=timeutil.now_iso())
        if text is not None:
            change.text = validation.text(text, "text", self.limits)
            change.hash = text_hash(change.text)
        if metadata is not None:
            change.metadata, promoted = validation.metadata(metadata, self.limits)
            if promoted:
                raise InvalidInputError(f"{', '.join(promoted)} cannot be changed by update", field="metadata")
        settings = self.config.retrieval
        before = memory_text.embedding_text(current.text, current.metadata, None, settings, current.actor_id)
        after = memory_text.embedding_text(change.text if change.text is not None else current.text,
                                           change.metadata if change.metadata is not None else current.metadata,
                                           None, settings, current.actor_id)
        if after != before:  # what the vector says changed: the text, or an embedded metadata value
            change.vector = self.embeddings.documents([after])[0]
        self.store.apply(ChangeSet(updates=[change]))
        # the memory as memlane returns it, with mem0's answer beside its fields: code written for either works
        return {**self._get_record(memory_id).to_item(), "message": UPDATED}

    def set_expiration(self, memory_id: str, expiration_date: str | date | datetime | None) -> dict[str, Any]:
        """When the memory stops being valid: a future date or datetime (as ``add(expiration_date=)``), or
        None for never; returns the memory. A memory that has expired is valid again until then; one that
        was invalidated (contradicted, retracted, merged) is not, and raises ``MemoryNotFoundError`` like
        an unknown id. No history row is written: the expiry is not part of what the memory says."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        self.store.apply(ChangeSet(expiries=[Expiry(memory_id, validation.expiration(expiration_date))]))
        return self._get_record(memory_id).to_item()

    def delete(self, memory_id: str) -> dict[str, str]:
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        self.store.apply(ChangeSet(deletes=[Delete(memory_id)]))
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        purge: bool = False,
    ) -> dict[str, Any]:
        """Delete every memory in the scope; history is kept. ``purge=True`` also erases the
        scope's history and stored messages (the right to be forgotten)."""
        ids = scope.scope_ids(user_id, agent_id, run_id)
        if purge:
            scope.require_ids(ids)
            if filters:
                raise InvalidInputError("purge erases a whole scope; it takes no filters", field="filters")
            deleted = self.store.purge(scope.scoped_filter(ids, None))  # relations and entities too
            return {"message": "Memories, history and messages purged successfully!", "deleted": deleted}
        deleted = self.store.delete_matching(scope.scoped_filter(ids, filters))
        if self.graph is not None:
            where = graph_scope(ids, filters)  # None: filters on metadata, which relations do not have
            if where is not None:
                return {"message": "Memories deleted successfully!", "deleted": deleted,
                        "deleted_relations": self.graph.delete(where)}
        return {"message": "Memories deleted successfully!", "deleted": deleted}

    def reset(self) -> None:
        """Erase every memory, history event and import record in the store."""
        self.store.reset()
        self.store.bind_embedder(self.embeddings.name, self.embeddings.dims)

    # -- reads --------------------------------------------------------------

    def get(self, memory_id: str) -> dict[str, Any] | None:
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        record = self.store.get(memory_id)
        return record.to_item() if record else None

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
        include_invalid: bool = False,
        as_of: str | datetime | date | None = None,
        top_k: int | None = None,
    ) -> dict[str, list[dict[str, Any]]]:
        """Memories in the scope, newest first: at most ``limit`` (default 100; ``top_k`` is mem0's name
        for it). Invalidated memories are left out unless ``include_invalid``; ``as_of`` shows what
        was valid (and its text) at that moment."""
        where = flt.conjoin(scope.scoped_filter(scope.scope_ids(user_id, agent_id, run_id), filters),
                            validity(include_invalid, as_of))
        limit = self._limit(limit, top_k)
        records = self.searcher.as_of(self.store.list(where, limit), as_of)
        if self.graph is not None:
            return {"results": [record.to_item() for record in records],
                    "relations": self._relations(user_id, agent_id, run_id, filters, include_invalid, as_of, limit)}
        return {"results": [record.to_item() for record in records]}

    def _relations(self, user_id: str | None, agent_id: str | None, run_id: str | None,
                   filters: Mapping[str, Any] | None, include_invalid: bool,
                   as_of: str | datetime | date | None, limit: int) -> list[dict[str, Any]]:
        """The scope's relations for ``get_all`` (none when the filters name more than the scope)."""
        where = graph_scope(scope.scope_ids(user_id, agent_id, run_id), filters)
        if where is None:
            return []
        moment = validation.moment(as_of, "as_of") if as_of is not None else None
        return self.graph.all(where, include_invalid=include_invalid, as_of=moment, limit=limit)

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
        threshold: float | None = None,
        include_invalid: bool = False,
        as_of: str | datetime | date | None = None,
        keyword_search: bool | None = None,
        rerank: bool | None = None,
        filter_memories: bool | None = None,
        top_k: int | None = None,
    ) -> dict[str, Any]:
        """Memories in the scope by relevance to ``query``, best first: at most ``limit`` (default 100;
        ``top_k`` is mem0's name for it, give one of them).

        ``score`` is the cosine similarity of query and memory, in [-1, 1]
        (in practice 0 to 1 for the default model); ``threshold`` keeps results
        with cosine >= threshold. Validity works as in ``get_all`` (ranking uses
        each memory's current text).

        ``keyword_search`` fuses BM25 keyword scores with vector scores,
        ``rerank`` reorders the top candidates with the configured reranker,
        ``filter_memories`` drops results that do not answer the query (defaults
        from ``retrieval`` config). Hybrid ranking also weighs a memory's place
        in time: dates the query names, and time-neighbours of strong
        candidates (``retrieval.date_weight``, ``neighbour_weight``).
        With any flag, ``score`` is the final ranking score, each result has
        ``scores`` (vector, keyword, rerank), and the response has ``metadata``
        (seed 001): ``advanced_retrieval``, ``stages_requested``, ``stages_failed``
        (a stage that failed and was skipped), ``fallback_used`` and
        ``original_error`` (the advanced search failed and a standard search
        answered), ``stages`` with timings in ms. If the standard search fails
        too, the answer is ``{"memories": [], "results": [], "status": "error",
        "message", "metadata": {..., "fallback_failed": True}}``, not an exception.
        """
        query = validation.text(query, "query", self.limits)
        limit = self._limit(limit, top_k)
        threshold = validation.threshold(threshold)
        flags = self.searcher.flags(keyword_search, rerank, filter_memories)
        where = flt.conjoin(scope.scoped_filter(scope.scope_ids(user_id, agent_id, run_id), filters),
                            validity(include_invalid, as_of))
        if self.graph is not None:  # the vector search and the graph lookup run at the same time
            arguments = (query, self.embeddings.query(query), user_id, agent_id, run_id, filters, include_invalid,
                         as_of)
            lookup = lookup_pool().submit(self._graph_search, *arguments)
            memories = self.searcher.search(query, where, flags, limit, threshold, as_of)
            if memories.get("status") == "error":  # the store failed (seed 001's answer): no relations either
                lookup.cancel()
                return {**memories, "relations": []}
            # no thread took the lookup yet (a busy machine wakes threads late): do it here instead of waiting
            relations = self._graph_search(*arguments) if lookup.cancel() else lookup.result()
            return {**memories, "relations": relations}
        return self.searcher.search(query, where, flags, limit, threshold, as_of)

    def _graph_search(self, query: str, vector: Any, user_id: str | None, agent_id: str | None, run_id: str | None,
                      filters: Mapping[str, Any] | None, include_invalid: bool,
                      as_of: str | datetime | date | None) -> list[dict[str, Any]]:
        # metadata filters narrow the memories; relations are found by the scope alone
        where = graph_scope(scope.scope_ids(user_id, agent_id, run_id), filters, strict=False)
        moment = validation.moment(as_of, "as_of") if as_of is not None else None
        return self.graph.search(query, vector, where, include_invalid=include_invalid, as_of=moment)

    def search_is_quick(self, query: str, *, keyword_search: bool | None = None, rerank: bool | None = None,
                        filter_memories: bool | None = None) -> bool:
        """Whether ``search`` with these flags needs no model call and no optional stage (the query's
        vector is cached): a plain store lookup of about a millisecond. Servers answer such
        searches without a thread hand-off."""
        if self.graph is not None or any(self.searcher.flags(keyword_search, rerank, filter_memories).values()):
            return False
        return isinstance(query, str) and self.embeddings.has_query(query)

    def get_messages(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """The latest ``limit`` messages stored for the scope, oldest first."""
        ids = scope.scope_ids(user_id, agent_id, run_id)
        scope.require_ids(ids)
        limit = validation.limit(limit, self.limits)
        return [m.to_dict() for m in self.store.messages(scope.scoped_filter(ids, None), limit)]

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every ADD / UPDATE / DELETE of the memory, oldest first (also after deletion)."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        return [event.to_dict() for event in self.store.history(memory_id)]

    def info(self) -> dict[str, Any]:
        info = self.store.info()
        return {"store": info.location, "embedder": self.embeddings.name, "dims": self.embeddings.dims,
                "memories": info.memories, "history_events": info.history_events}

    def scopes(self, limit: int = 1000) -> dict[str, list[dict[str, Any]]]:
        """Every user, agent and run with memories or messages here, by id, each with ``memories``
        (valid or not), ``valid`` and ``messages`` counts: ``{"users": [...], "agents": [...], "runs": [...]}``."""
        limit = validation.limit(limit, self.limits)
        return {f"{column[:-3]}s": [asdict(row) for row in self.store.scopes(column, limit)]
                for column in flt.SCOPE_COLUMNS}

    def _limit(self, limit: Any, top_k: Any) -> int:
        """``limit`` or mem0's ``top_k`` (not both), default 100, checked."""
        if top_k is not None:
            return validation.limit(mem0_alias(limit, top_k, "limit", "top_k"), self.limits, "top_k")
        return validation.limit(DEFAULT_LIMIT if limit is None else limit, self.limits)

    def _get_record(self, memory_id: str) -> MemoryRecord:
        record = self.store.get(memory_id)
        if record is None:
            raise MemoryNotFoundError(memory_id)
        return record

    # -- agent context (docs/context.md) -------------------------------------

    def should_search_memory(self, conversation: Any = None, system_prompt: str = "", *,
                             explain: bool = False) -> "bool | agent_context.SearchDecision":
        """Whether the conversation's next reply needs long-term memory: a keyword-scored gate
        (memory words, question words, relationship pronouns; English and Chinese), weights and
        threshold in ``config.context`` (``gate="seed"``: as seed 004 reads, the default; ``"tuned"``:
        memlane's). An empty or missing conversation needs no search (False). ``explain=True``
        returns a ``SearchDecision`` with the score of each signal instead of the bool."""
        turns, system_prompt = validation.conversation(conversation, system_prompt, self.limits,
                                                       self.config.context.max_conversation_chars)
        explain = validation.flag(explain, "explain", False)
        decision = agent_context.decide(turns, system_prompt, self.config.context)
        return decision if explain else decision.should_search

    def search_memory_with_context(self, conversation: Any = None, system_prompt: str = "",
                                   user_id: Any = None, max_results: int = 10, *,
                                   agent_id: str | None = None) -> dict[str, Any]:
        """The memories a conversation calls for, by the terms it uses and the meaning of its recent turns.

        Seed 004's signature: ``(conversation, system_prompt="", user_id=None, max_results=10)``,
        positional or by name; ``agent_id`` is memlane's addition (by name).

        Returns ``{"search_terms", "agent_profile_matches", "agent_event_matches",
        "user_profile_matches", "user_event_matches", "total_matches"}``; each match is a memory
        item with ``content``, ``match_score`` (also its ``score``), ``matched_terms`` and ``scores``
        (terms, vector). ``max_results`` applies per category. Who is searched
        (``retrieval.context.scope_pools``): with neither ``user_id`` nor ``agent_id`` every memory of
        the store; with ``user_id=None`` and an agent, the agent's memories and those of every user
        recorded with it. A ``user_id`` that is not a valid id is ignored (it names nobody: no user
        memories are read). An empty or missing conversation gives the empty groups."""
        turns, system_prompt = validation.conversation(conversation, system_prompt, self.limits,
                                                       self.config.context.max_conversation_chars)
        agent_id = validation.identifier(agent_id, "agent_id")
        user, user_ignored = user_id, False
        if user_id is not None:
            try:
                user = validation.identifier(user_id, "user_id")
            except InvalidInputError:  # seed 004: "invalid user IDs are silently ignored"
                user, user_ignored = None, True
        max_results = validation.limit(max_results, self.limits, "max_results")
        pools = agent_context.scope_pools(user, agent_id, user_ignored=user_ignored)
        return self.searcher.context(turns, system_prompt, pools, max_results)

    # -- maintenance (seed 002; docs/maintenance.md) ---------------------------

    @staticmethod
    def _maintained(user_id: Any, agent_id: Any, run_id: Any, dry_run: Any) -> tuple[flt.Node, bool]:
        """A maintenance call's memories (the scope's valid ones) and whether it only plans."""
        ids = scope.scope_ids(user_id, agent_id, run_id)
        scope.require_ids(ids)
        return flt.conjoin(scope.scoped_filter(ids, None), ACTIVE), validation.flag(dry_run, "dry_run", False)

    def cleanup_old_memories(
        self,
        user_id: str | None = None,
        keep_latest: int = 1000,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Keep the ``keep_latest`` newest valid memories of the scope (by ``created_at``) and invalidate
        the older ones: a ``DELETE`` event each, reason ``cleanup``, the text kept (``include_invalid``
        and ``history`` still show them). ``dry_run`` returns the plan without writing. Written in
        transactions of ``CLEANUP_BATCH`` memories (``progress(done, total)`` after each), so an
        interrupted cleanup leaves whole invalidations and a rerun finishes it.

        Returns ``{"results": [{"id", "memory", "event": "DELETE", "created_at"}], "kept", "dry_run"}``."""
        where, dry_run = self._maintained(user_id, agent_id, run_id, dry_run)
        keep_latest = validation.count(keep_latest, "keep_latest")
        total = self.store.count(where)
        old = self.store.list(where, total - keep_latest, offset=keep_latest) if total > keep_latest else []
        old.reverse()  # oldest first
        changes, results = maintenance.cleanup_changes(old, keep_latest)
        if not dry_run:
            for start in range(0, len(old), CLEANUP_BATCH):
                self.store.apply(ChangeSet(invalidations=changes.invalidations[start:start + CLEANUP_BATCH]))
                if progress:
                    progress(min(start + CLEANUP_BATCH, len(old)), len(old))
        return {"results": results, "kept": total - len(old), "dry_run": dry_run}

    def merge_similar_memories(
        self,
        user_id: str | None = None,
        threshold: float = 0.95,
        *,
        agent_id: str | None = None,
        run_id: str | None = None,
        dry_run: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> dict[str, Any]:
        """Merge the scope's near-duplicates: valid memories whose vectors have cosine >= ``threshold``.

        Each group becomes its oldest memory (same id) with one text: offline the more specific of
        the texts (``ingest/offline_merge.py``), with an ``llm`` the model's merged text (one call per
        pair; a failed call is reported in ``failed`` and leaves that pair as it was). Texts that
        disagree (a change, a contradiction) stay apart (``kept_apart``). History: ``MERGE`` events
        with the old texts; the merged memories are invalidated, ``superseded_by`` the survivor,
        whose provenance gains their messages. ``dry_run`` returns the plan without writing (and
        without calling the LLM: its texts are ``None`` then). ``progress(done, total)`` per pair.

        Returns ``{"results": [{"id", "memory", "event": "MERGE", "previous_memory", "merged": [{"id",
        "memory", "similarity"}]}], "kept_apart", "failed", "memories", "pairs", "dry_run"}``."""
        where, dry_run = self._maintained(user_id, agent_id, run_id, dry_run)
        threshold = validation.similarity_threshold(threshold)
        records, matrix = self.store.with_vectors(where)
        pairs = [(i, j, s) for i, j, s in similar_pairs(matrix, threshold)  # two speakers' memories stay apart
                 if speakers.may_reconcile(records[i].actor_id, records[j].actor_id)]

        def write(older: str, newer: str, similarity: float) -> str | None:
            text = self.engine.merge(older, newer, similarity)
            if text is not None and len(text) > self.limits.max_text_chars:
                raise FormationFailed(f"the merged text has {len(text)} characters, more than "
                                      f"limits.max_text_chars ({self.limits.max_text_chars})")
            return text

        no_calls = dry_run and self.config.llm is not None  # a dry run does not spend LLM calls
        merges = maintenance.plan_merges(records, matrix, groups(pairs), None if no_calls else write, progress)
        report = maintenance.merge_report(merges, scanned=len(records), pairs=len(pairs), dry_run=dry_run)
        if dry_run:
            return report
        changed = [m for m in merges if m.merged and m.text != m.survivor.text]
        drafts = [NewMemory(text=m.text, metadata=m.survivor.metadata, actor_id=m.survivor.actor_id) for m in changed]
        embedded = ingest_records.records(drafts, self.embeddings, self.config.retrieval)
        rewritten = {m.survivor.id: (r.vector, r.token_vectors) for m, r in zip(changed, embedded)}
        changes = maintenance.merge_changes(merges, timeutil.now_iso(), rewritten)
        if changes.updates:
            self.store.apply(changes)
        return report

    @classmethod
    def reembed(
        cls,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        batch_size: int = 256,
        progress: Callable[[int, int], None] | None = None,
        tenant: str | None = None,
    ) -> "Memory":
        """Re-embed every memory of the configured store (of ``tenant``) with the configured embedder
        (after changing models), then return a ready ``Memory``. Safe to interrupt and rerun."""
        settings = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        embeddings = Embeddings(embedder or create_embedder(settings.embedder), 0)
        store = create_store(settings, embeddings.dims, tenant)

        def embed(items: list[ReembedItem]) -> np.ndarray:  # each memory the way it is embedded when stored
            return embeddings.documents([memory_text.embedding_text(i.text, i.metadata, None, settings.retrieval,
                                                                    i.actor_id) for i in items])

        store.reembed(embed, embeddings.name, embeddings.dims, batch_size=batch_size, progress=progress)
        return cls(settings, embedder=embeddings.embedder, store=store)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _expiry(expires: str | None) -> dict[str, str]:
    """A draft's validity fields when it expires (``add(expiration_date=)``)."""
    return {"valid_to": expires, "invalid_reason": EXPIRED} if expires else {}


def _offload(name: str) -> Callable[..., Any]:
    method = getattr(Memory, name)

    @functools.wraps(method)
    async def call(self: "AsyncMemory", *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return call


class AsyncMemory:
    """``Memory`` for asyncio code: the same methods and results, awaited.

    Blocking work (embedding, SQLite) runs in worker threads, so many calls can
    be in flight at once without blocking the event loop.
    """

    def __init__(
        self,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        store: Store | None = None,
        memory: Memory | None = None,
        tenant: str | None = None,
    ):
        self.sync = memory or Memory(config, embedder=embedder, store=store, tenant=tenant)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> "AsyncMemory":
        return cls(config_dict)

    add = _offload("add")
    cleanup_old_memories = _offload("cleanup_old_memories")
    merge_similar_memories = _offload("merge_similar_memories")
    insert = _offload("insert")
    get_messages = _offload("get_messages")
    get = _offload("get")
    get_all = _offload("get_all")
    search = _offload("search")
    update = _offload("update")
    set_expiration = _offload("set_expiration")
    delete = _offload("delete")
    delete_all = _offload("delete_all")
    history = _offload("history")
    reset = _offload("reset")
    info = _offload("info")
    scopes = _offload("scopes")
    close = _offload("close")
    should_search_memory = _offload("should_search_memory")
    search_memory_with_context = _offload("search_memory_with_context")

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
