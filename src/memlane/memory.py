"""The facade: ``Memory``, the public API's methods (``AsyncMemory``, the same methods awaited, is
derived from it in ``async_memory.py``).

``Memory`` conducts: each method has its call's arguments checked (``core/arguments.py``,
``core/validation.py``), asks the pipelines (``ingest/formation.py``, ``retrieval/searcher.py``,
``graph/memory.py``, ``maintenance/maintainer.py``) for what to write or show, and writes each
call's outcome in one transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import date, datetime
from typing import Any

from memlane.core import arguments, scope, timeutil, validation
from memlane.core import config as config_mod
from memlane.core import filters as flt
from memlane.core.changes import ChangeSet, Delete, Expiry, Update
from memlane.core.closing import Closing
from memlane.core.errors import MemoryNotFoundError
from memlane.core.moved import moved
from memlane.core.models import MemoryRecord, MessageRecord, NewMemory
from memlane.embeddings import Embedder, Embeddings, create_embedder
from memlane.embeddings import choice as embedder_choice
from memlane.background import formation as background
from memlane.background.formation import FormsInBackground
from memlane.background.workers import Workers
from memlane.graph.memory import GraphMemory
from memlane.ingest import create_engine
from memlane.ingest import records as ingest_records
from memlane.ingest.adds import Adds
from memlane.ingest.formation import Formation
from memlane.ingest.types import Engine
from memlane.maintenance.maintainer import Maintainer, reembed_store
from memlane.project import ProjectFeatures
from memlane.retrieval import context as agent_context
from memlane.retrieval.searcher import Searcher
from memlane.store import Store, check_dims, create_store


class Memory(FormsInBackground, ProjectFeatures, Closing):
    """Long-term memory. ``Memory()`` works offline: SQLite under ``~/.memlane``
    (or ``$MEMLANE_HOME``) and a local model (a new store: multilingual-e5-small)."""

    def __init__(
        self,
        config: config_mod.MemoryConfig | Mapping[str, Any] | None = None,
        *,
        embedder: Embedder | None = None,
        store: Store | None = None,
        engine: Engine | None = None,
        tenant: str | None = None,
        background: bool = True,
    ):
        """``tenant``: whose memories (the server's tenants; default ``"default"``, the tenant of the
        CLI, ``memlane mcp`` and a server without keys). Ignored when ``store`` is given.
        ``background``: it forms its async adds itself (False: a server's or ``memlane worker``'s do)."""
        self.config = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        self.limits = self.config.limits.to_limits()
        self.store = store or create_store(self.config, None, tenant)
        embedder = embedder or embedder_choice.create(self.config, [self.store.bound_embedder()[0]])
        self.embeddings = Embeddings(embedder, self.config.query_cache_size)
        check_dims(self.config, self.embeddings.dims)
        self.engine = engine or create_engine(self.config)
        self.store.bind_embedder(self.embeddings.name, self.embeddings.dims)
        #: the search pipeline (``retrieval/searcher.py``)
        self.searcher = Searcher(self.config, self.embeddings, self.store)
        #: graph memory (``enable_graph``): entities and relations next to the memories
        self.graph = (GraphMemory.create(self.config, self.embeddings, self.store, self.engine)
                      if self.config.enable_graph else None)
        #: memory formation (``ingest/formation.py``): what an add writes besides its messages
        self.formation = Formation(self.config, self.embeddings, self.store, self.engine, self.graph)
        #: maintenance of a scope (``maintenance/maintainer.py``): cleanup, merges
        self.maintainer = Maintainer(self.config, self.embeddings, self.store, self.engine)
        #: each add exactly once (``ingest/adds.py``); what a crash left half-done is completed now
        self.adds = Adds(self.store, self.formation)
        self.adds.recover()
        self.background = background
        #: called after an async add queued its job (a server wakes its workers; background/)
        self.on_queued: Callable[[], None] | None = None
        self._workers: Workers | None = None

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
        timestamp: int | float | str | date | datetime | None = None,
        async_mode: bool = False,
        idempotency_key: str | None = None,
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
        still shows them). ``timestamp`` (mem0's name: Unix seconds or ISO-8601) is when the conversation
        was said, and a message's ``created_at`` when that message was (default: now): the messages and
        the memories formed carry that time (``created_at``, history, ``as_of``, the timeline of a
        search); a time in the future is refused. A fact older than the memory it would change is kept
        as what was true before it (``valid_to``, ``superseded_by``), the newer memory left as it is.
        ``prompt`` (mem0's) replaces the instructions of a procedural summary (LLM engine).

        Returns ``{"results": [{"id", "memory", "event", "previous_memory"?}],
        "status": "ok" | "failed", "reason"?, "facts", "unchanged", "skipped", "message_ids"}``;
        ``results`` lists changes (as mem0), ``unchanged`` the memories a fact confirmed, and
        ``skipped`` (``infer=True``) each message that changed nothing, with why:
        ``[{"message_id", "reason"}]`` (a question, a greeting, already known …).

        ``async_mode=True`` answers at once (``PENDING``, an ``event_id`` for ``event``); what was sent is
        searchable at once, formed in the background (docs/deployment.md).

        Each add happens exactly once (``ingest/adds.py``): if the process dies after the messages are
        kept, the add is completed when the store next opens or by the next add in its scope. A call
        with an ``idempotency_key`` (any string of 1-256 characters, unique per add) that comes again
        returns the first call's result (an async add's: its event) and stores nothing twice; the same
        key with another request is an ``InvalidInputError``."""
        call = arguments.add(messages, user_id, agent_id, run_id, metadata, infer, memory_type, expiration_date,
                             self.limits, prompt, timestamp)
        key = validation.idempotency_key(idempotency_key)
        if validation.flag(async_mode, "async_mode", False):
            answer = self.adds.queue(call, key, lambda kept, record: background.enqueue(self, call, kept, record))
            self._queued()
            return answer
        return self.adds.add(call, key)

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
               data: str | None = None, timestamp: int | float | str | date | datetime | None = None
               ) -> dict[str, Any]:
        """Replace the text (re-embedding it) and/or the metadata, and/or say when the memory was said
        (``timestamp``, mem0's: Unix seconds or ISO-8601, not in the future; it becomes the memory's
        ``created_at``, as ``add(timestamp=)`` makes it); returns the updated memory, mem0's answer
        (``"message"``) beside its fields so callers of either work. ``data`` is mem0's name for ``text``
        (``update(memory_id, data="...")``); give one of them."""
        memory_id, text = arguments.update_target(memory_id, text, data, metadata, timestamp)
        self._revise([arguments.update(memory_id, text, metadata, timeutil.now_iso(), self.limits, timestamp)])
        return {**self._get_record(memory_id).to_item(), "message": "Memory updated successfully!"}

    def batch_update(self, memories: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """mem0's batch update: each item ``{"memory_id", "text"?, "metadata"?, "timestamp"?}`` is one
        ``update`` (1 to 1,000 items, each memory once), all written in one transaction or none (an
        unknown id raises ``MemoryNotFoundError`` and changes nothing). Returns ``{"message",
        "results"}``, the updated memories in the order given."""
        changes = arguments.batch_update(memories, timeutil.now_iso(), self.limits)
        self._revise(changes)
        return {"message": f"Successfully updated {len(changes)} memories",
                "results": [self._get_record(change.id).to_item() for change in changes]}

    def _revise(self, changes: Sequence[Update]) -> None:
        """Embed what ``changes`` re-word (one batch) and write them in one transaction."""
        currents = [self._get_record(change.id) for change in changes]
        vectors = ingest_records.revised_vectors(list(zip(currents, changes)), self.embeddings, self.config.retrieval)
        for change, vector in zip(changes, vectors):
            change.vector = vector
        self.store.apply(ChangeSet(updates=list(changes)))

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

    def batch_delete(self, memories: Sequence[str | Mapping[str, Any]]) -> dict[str, Any]:
        """mem0's batch delete: 1 to 1,000 memory ids (or ``{"memory_id": id}`` objects, as mem0's client
        sends them), each once, deleted in one transaction or none (an unknown id raises
        ``MemoryNotFoundError`` and deletes nothing). History is kept, as ``delete`` keeps it."""
        ids = arguments.batch_delete(memories)
        self.store.apply(ChangeSet(deletes=[Delete(memory_id) for memory_id in ids]))
        return {"message": f"Successfully deleted {len(ids)} memories", "deleted": len(ids)}

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
            arguments.purge(ids, filters)
            deleted = self.store.purge(scope.scoped_filter(ids, None))  # relations and entities too
            return {"message": "Memories, history and messages purged successfully!", "deleted": deleted}
        deleted = self.store.delete_matching(scope.scoped_filter(ids, filters))
        relations = self.graph.delete_scope(ids, filters) if self.graph is not None else None
        return {"message": "Memories deleted successfully!", "deleted": deleted,
                **({"deleted_relations": relations} if relations is not None else {})}

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
        where = arguments.read_filter(user_id, agent_id, run_id, filters, include_invalid, as_of)
        limit = arguments.limit(limit, top_k, self.limits)
        records = self.searcher.as_of(self.store.list(where, limit), as_of)
        if self.graph is not None:
            return {"results": [record.to_item() for record in records],
                    "relations": self.graph.of_scope(scope.scope_ids(user_id, agent_id, run_id), filters,
                                                     include_invalid=include_invalid, as_of=as_of, limit=limit)}
        return {"results": [record.to_item() for record in records]}

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

        ``score`` is in [0, 1]: the similarity of query and memory on memlane's common scale, never
        below the score of a result ranked under it; ``threshold`` keeps results scoring at least
        that. Validity works as in ``get_all`` (ranking uses each memory's current text).

        ``keyword_search`` fuses keyword scores (a memory's share of the query's words) with vector
        scores (on by default: ``retrieval.keyword_search``), ``rerank`` reorders the top candidates
        with the configured reranker, ``filter_memories`` drops results that do not answer the query
        (defaults from ``retrieval`` config). Hybrid ranking also weighs a memory's place in time:
        dates the query names, and time-neighbours of strong candidates (``retrieval.date_weight``,
        ``neighbour_weight``). A search that asks for no stage (no flag, none in the configuration
        written) answers with ``results`` only and raises when the store fails, as a plain search.
        With a flag given, each result has ``scores`` (vector, keyword, rerank), and the response has ``metadata``
        (seed 001): ``advanced_retrieval``, ``stages_requested``, ``stages_failed``
        (a stage that failed and was skipped), ``fallback_used`` and
        ``original_error`` (the advanced search failed and a standard search
        answered), ``stages`` with timings in ms. If the standard search fails
        too, the answer is ``{"memories": [], "results": [], "status": "error",
        "message", "metadata": {..., "fallback_failed": True}}``, not an exception.
        """
        query = validation.text(query, "query", self.limits)
        limit = arguments.limit(limit, top_k, self.limits)
        threshold = validation.threshold(threshold)
        flags = self.searcher.flags(keyword_search, rerank, filter_memories)
        requested = self.searcher.asked(keyword_search, rerank, filter_memories)
        where = arguments.read_filter(user_id, agent_id, run_id, filters, include_invalid, as_of)
        if self.graph is not None:  # the vector search and the graph lookup run at the same time
            return self.graph.search_beside(
                lambda: self.searcher.search(query, where, flags, limit, threshold, as_of, requested=requested),
                query, self.embeddings.query(query), scope.scope_ids(user_id, agent_id, run_id), filters,
                include_invalid=include_invalid, as_of=as_of)
        return self.searcher.search(query, where, flags, limit, threshold, as_of, requested=requested)

    def search_is_quick(self, query: str, *, keyword_search: bool | None = None, rerank: bool | None = None,
                        filter_memories: bool | None = None) -> bool:
        """Whether ``search`` with these flags needs no model call and no optional stage (the query's
        vector is cached): a plain store lookup of about a millisecond. Servers answer such
        searches without a thread hand-off."""
        return self.graph is None and self.searcher.is_quick(query, keyword_search, rerank, filter_memories)

    def get_messages(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """The latest ``limit`` messages stored for the scope, oldest first."""
        ids = arguments.required_scope(user_id, agent_id, run_id)
        limit = validation.limit(limit, self.limits)
        return [m.to_dict() for m in self.store.messages(scope.scoped_filter(ids, None), limit)]

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every ADD / UPDATE / DELETE of the memory, oldest first (also after deletion)."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        return [event.to_dict() for event in self.store.history(memory_id)]

    def info(self) -> dict[str, Any]:
        info = self.store.info()
        return {"store": info.location, "embedder": self.embeddings.name, "dims": self.embeddings.dims,
                "memories": info.memories, "history_events": info.history_events, "durability": info.durability}

    def scopes(self, limit: int = 1000) -> dict[str, list[dict[str, Any]]]:
        """Every user, agent and run with memories or messages here, by id, each with ``memories``
        (valid or not), ``valid`` and ``messages`` counts: ``{"users": [...], "agents": [...], "runs": [...]}``."""
        limit = validation.limit(limit, self.limits)
        return {f"{column[:-3]}s": [asdict(row) for row in self.store.scopes(column, limit)]
                for column in flt.SCOPE_COLUMNS}

    def _get_record(self, memory_id: str) -> MemoryRecord:
        record = self.store.get(memory_id)
        if record is None:
            raise MemoryNotFoundError(memory_id)
        return record

    # -- agent context (docs/context.md) -------------------------------------

    def should_search_memory(self, conversation: Any = None, system_prompt: str = "", *,
                             explain: bool = False, user_id: Any = None,
                             agent_id: Any = None) -> "bool | agent_context.SearchDecision":
        """Whether the conversation's next reply needs long-term memory: a keyword-scored gate (English
        and Chinese; small talk never searches), settings in ``config.context`` (``gate="tuned"``, the
        default, or ``"seed"``: docs/context.md). A named scope (``user_id``, ``agent_id``) adds what it
        holds (none: no search). An empty or missing conversation needs no search (False).
        ``explain=True`` returns a ``SearchDecision`` with the score of each signal."""
        call = arguments.gate(conversation, system_prompt, explain, user_id, agent_id, self.limits,
                              self.config.context.max_conversation_chars)
        evidence = self.searcher.evidence(call.turns, agent_context.scope_pools(*call.scope)) if call.scope else None
        decision = agent_context.decide(call.turns, call.system_prompt, self.config.context, evidence)
        return decision if call.explain else decision.should_search

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
        call = arguments.context(conversation, system_prompt, user_id, max_results, agent_id, self.limits,
                                 self.config.context.max_conversation_chars)
        pools = agent_context.scope_pools(call.user_id, call.agent_id, user_ignored=call.user_ignored)
        return self.searcher.context(call.turns, call.system_prompt, pools, call.max_results)

    # -- maintenance (seed 002; docs/maintenance.md) ---------------------------

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
        transactions of ``CLEANUP_BATCH`` memories (``maintenance/maintainer.py``; ``progress(done, total)``
        after each), so an interrupted cleanup leaves whole invalidations and a rerun finishes it.

        Returns ``{"results": [{"id", "memory", "event": "DELETE", "created_at"}], "kept", "dry_run"}``."""
        where, dry_run = arguments.maintained(user_id, agent_id, run_id, dry_run)
        keep_latest = validation.count(keep_latest, "keep_latest")
        return self.maintainer.cleanup(where, keep_latest, dry_run, progress)

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
        where, dry_run = arguments.maintained(user_id, agent_id, run_id, dry_run)
        threshold = validation.similarity_threshold(threshold)
        return self.maintainer.merge(where, threshold, dry_run, progress)

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
        store = reembed_store(settings, embeddings, tenant, batch_size, progress)
        return cls(settings, embedder=embeddings.embedder, store=store)

    def close(self) -> None:
        self.stop_background()
        self.store.close()


#: ``memlane.memory.AsyncMemory`` (it lives in ``async_memory.py``; import it from ``memlane``)
__getattr__ = moved(__name__, {"AsyncMemory": "memlane"})
