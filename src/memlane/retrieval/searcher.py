"""The search pipeline behind ``Memory.search`` and ``Memory.search_memory_with_context``.

``Memory`` validates the call and builds the filter (``core/scope.py``: the scope and ``validity``); the
``Searcher`` embeds the query once (a ``Query``: text, vector, keyword terms, date windows) and runs the
stages over it:

- **vector**: the store's nearest memories (the whole search when no stage is asked for);
- **keyword** (``keyword_search``): BM25 matches fused with the vector candidates, then the
  **timeline** step (dates the query names, time-neighbours of strong candidates);
- **rerank** (``rerank``): the configured reranker scores the best candidates again (skipped, with a
  warning, while ``retrieval.reranker`` is unwritten: ``rerank.unchosen_reason``);
- **filter** (``filter_memories``): the judge (offline, or the configured LLM) drops results
  that do not answer the query.

Each optional stage runs under a ``Trace``: a failing stage is skipped and reported
(``stages_failed``), never fatal. When the advanced search itself fails (embedding the query, the
vector candidates), a standard search answers instead (``fallback_used``); when that fails too, the
answer says so (``status: "error"``, ``fallback_failed``) rather than raising (seed 001).
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
from typing import Any

from memlane.core import filters as flt
from memlane.core import validation
from memlane.core.config import MemoryConfig
from memlane.core.scope import ACTIVE, Moment
from memlane.core.errors import StoreError
from memlane.embeddings import Embeddings
from memlane.embeddings.memory_text import token_text
from memlane.core.logcontext import one_line, request_id
from memlane.core.models import MemoryRecord, Message, text_hash
from memlane.core.query import Query
from memlane.retrieval import context as agent_context
from memlane.retrieval import about_answer, about_user, actors, context_terms, fusion, judge, relative_time, timeline
from memlane.retrieval.candidates import Candidate, Pool, Trace
from memlane.retrieval.rerank import Reranker, create_reranker, unchosen_reason
from memlane.retrieval.searchable import SearchableStore
from memlane.store import SearchReads, Store

STAGES = ("keyword_search", "rerank", "filter_memories")

#: one semaphore per store provider that limits its searches at once (``Searcher._slot``)
_SLOTS: dict[str, threading.BoundedSemaphore] = {}
_slots_lock = threading.Lock()


def _turns(store: Store) -> threading.BoundedSemaphore | None:
    """The semaphore shared by every searcher of this process over a store of ``store``'s provider that
    limits its searches at once (``SEARCH_SLOTS``), or None for a store whose searches run elsewhere."""
    slots = getattr(store, "SEARCH_SLOTS", None)
    if not slots:
        return None
    turns = _SLOTS.get(store.provider)  # made once per provider; no lock on a search's path after that
    if turns is None:
        with _slots_lock:
            turns = _SLOTS.setdefault(store.provider, threading.BoundedSemaphore(slots))
    return turns


#: memories each search of ``evidence`` reads (vector and keywords, per pool)
EVIDENCE_CANDIDATES = 10

log = logging.getLogger("memlane.retrieval")


class SearchAnswer(dict):
    """A search's answer (a plain dict to callers and JSON) that keeps, off the record, the ``trace`` of a
    search nobody asked stages of: what ran, for a face that reports it (the MCP tool's ``metadata``)."""

    trace: dict[str, Any] | None = None


def readable_scores(candidates: list[Candidate]) -> list[float]:
    """The score a user reads for each result of an ordered list: on the similarity scale, in [0, 1], never
    below the result's own similarity to the query and never below the score of a result ranked under it
    (the stages that put a memory above another found it at least as relevant). Computed from the end:
    ``score[i] = max(similarity[i], score[i + 1])``, a negative similarity counting as 0."""
    shown = [0.0] * len(candidates)
    floor = 0.0
    for i in range(len(candidates) - 1, -1, -1):
        floor = max(floor, min(1.0, max(0.0, candidates[i].cosine)))
        shown[i] = round(floor, 6)
    return shown


class Searcher:
    """Runs searches over one store with one embedder; the reranker and the judge's LLM are made
    on first use."""

    def __init__(self, config: MemoryConfig, embeddings: Embeddings, store: Store):
        self.config = config
        self.embeddings = embeddings
        self.store = SearchableStore(store)  # memories marked "searchable": false are never results
        self._reranker: Reranker | None = None
        self._judge_llm: Any = None

    def flags(self, keyword_search: bool | None = None, rerank: bool | None = None,
              filter_memories: bool | None = None) -> dict[str, bool]:
        """The optional stages asked for: each flag as given, else the ``retrieval`` default."""
        settings = self.config.retrieval
        given = dict(zip(STAGES, (keyword_search, rerank, filter_memories)))
        return {name: validation.flag(value, name, getattr(settings, name)) for name, value in given.items()}

    def asked(self, keyword_search: bool | None = None, rerank: bool | None = None,
              filter_memories: bool | None = None) -> list[str]:
        """The optional stages the call, or a ``retrieval`` setting the user wrote, asks for: a search
        asking for any is seed 001's advanced retrieval (``metadata``, each result's ``scores``, a failing
        search answered by a standard one). memlane's own defaults (hybrid search) ask for nothing: a
        search without flags answers as a plain one does (results with their score; a failing store raises)."""
        settings = self.config.retrieval
        given = dict(zip(STAGES, (keyword_search, rerank, filter_memories)))
        return [name for name, value in given.items()
                if (validation.flag(value, name, False) if value is not None
                    else name in settings.model_fields_set and getattr(settings, name))]

    def is_quick(self, query: Any, keyword_search: bool | None = None, rerank: bool | None = None,
                 filter_memories: bool | None = None) -> bool:
        """Whether a search with these flags is a few milliseconds of this process's work: its query's
        vector is cached, and it asks for nothing but the store's lookups (the vector search; the keyword
        search too on a store searched in this process, ``SEARCH_SLOTS``: SQLite), no rerank or filter."""
        flags = self.flags(keyword_search, rerank, filter_memories)
        if self._reranks(flags) or flags["filter_memories"] or (flags["keyword_search"] and _turns(self.store) is None):
            return False
        return isinstance(query, str) and self.embeddings.has_query(query)

    def query(self, text: str, flags: dict[str, bool]) -> Query:
        """The query with its vector (from the cache when the text was asked before)."""
        if self._reranks(flags) and self.embeddings.has_tokens and self._maxsim_wanted():
            self.embeddings.query_tokens(text)  # one model pass gives the query's vector and its tokens
        return Query(text, self.embeddings.query(text))

    def search(self, text: str, where: flt.Node, flags: dict[str, bool], limit: int,
               threshold: float | None, as_of: Moment, *, requested: list[str] | None = None) -> dict[str, Any]:
        """The memories matching ``where``, best first: a standard search, or with any of ``flags`` those
        stages. With stages ``requested`` (``asked``; None: every stage of ``flags``), seed 001's advanced
        retrieval: a stage that fails is
        skipped (``stages_failed``); when the advanced search itself fails (the query's embedding, the
        base vector search) a standard search answers (``fallback_used``, ``original_error``); when that
        fails too, the answer is
        ``{"memories": [], "results": [], "status": "error", "message", "metadata": {"fallback_failed": true, ...}}``
        instead of an exception. With none requested (the default stages, asked for by nobody): the answer
        has the standard search's shape, a failing optional stage is skipped (logged), and a failing
        query embedding or vector search raises, as in a standard search.

        A question asking for everything known about the user or one of their people ("What do you know
        about me?", ``about_user``) is answered from the scope's memories instead, profile first
        (``about_answer``), with ``metadata.query_kind`` ``"about_user"``."""
        asked = about_user.read(text)
        if asked is not None and (answer := self._about(asked, where, limit, threshold, as_of)) is not None:
            return answer
        if not any(flags.values()):
            return {"results": self._standard(Query(text, self.embeddings.query(text)), where, limit, threshold,
                                              as_of)}
        trace = Trace()
        if requested is None:
            requested = [name for name in STAGES if flags[name]]
        if not requested:
            answer = SearchAnswer(results=self._advanced(trace, text, where, flags, limit, threshold, as_of,
                                                         detailed=False))
            answer.trace = {**trace.to_dict([]), "advanced_retrieval": False}
            return answer
        try:
            results = self._advanced(trace, text, where, flags, limit, threshold, as_of)
        except Exception as exc:  # seed 001: the advanced search degrades to a standard one, never fails
            return self._fall_back(trace, requested, one_line(exc), text, where, limit, threshold, as_of)
        return {"results": results, "metadata": trace.to_dict(requested)}

    def _about(self, asked: about_user.AboutQuestion, where: flt.Node, limit: int, threshold: float | None,
               as_of: Moment) -> dict[str, Any] | None:
        """The answer to a question about the user (``about_answer``), or None when the scope holds nothing
        about whom it asks (a normal search answers)."""
        with self._slot({}):
            found = about_answer.answer(self.store.listed(where, about_answer.READ), asked)
        if not found:
            return None
        if threshold is not None:
            found = [(record, score) for record, score in found if score >= threshold]
        found = found[:limit]
        records = self.as_of([record for record, _ in found], as_of)
        return {"results": [record.to_item(score) for record, (_, score) in zip(records, found)],
                "metadata": {"query_kind": "about_user", "about": asked.party, "language": asked.language,
                             "score": about_answer.SCORE_RULE}}

    def _fall_back(self, trace: Trace, requested: list[str], original: str, text: str, where: flt.Node,
                   limit: int, threshold: float | None, as_of: Moment) -> dict[str, Any]:
        """Seed 001's ``_fallback_to_standard_search``: the standard search's answer with the fallback
        metadata, or, when it fails too, the error answer."""
        log.warning("advanced search failed (request %s): %s; falling back to a standard search",
                    request_id.get(), original)
        try:
            with trace.stage("standard_search", fatal=True):
                results = self._standard(Query(text, self.embeddings.query(text)), where, limit, threshold, as_of)
        except Exception as exc:
            log.error("standard search failed too (request %s): %s", request_id.get(), one_line(exc))
            return {"memories": [], "results": [], "status": "error",
                    "message": f"Both advanced and standard search failed: {one_line(exc)}",
                    "metadata": {**trace.to_dict(requested, original), "fallback_failed": True}}
        return {"results": results, "metadata": trace.to_dict(requested, original)}

    def _standard(self, query: Query, where: flt.Node, limit: int, threshold: float | None,
                  as_of: Moment) -> list[dict[str, Any]]:
        """The plain vector search: ``score`` is the cosine on the common scale (``Embeddings.similarity``),
        0 for a negative one."""
        with self._slot({}):
            hits = self.store.search(query.vector, where, limit, self.embeddings.raw_threshold(threshold))
            records = self.as_of([record for record, _ in hits], as_of)
        return [record.to_item(round(max(0.0, score), 6))
                for record, score in zip(records, self._common([cosine for _, cosine in hits]))]

    def _vector_hits(self, vector: Any, where: flt.Node, limit: int,
                     reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float]]:
        """The store's nearest memories with their cosines on the common scale (``reads``: the search's
        records read so far, ``Store.search``)."""
        hits = self.store.search(vector, where, limit, None, reads)
        common = self._common([cosine for _, cosine in hits])
        return [(record, similarity) for (record, _), similarity in zip(hits, common)]

    def _focused_hits(self, vector: Any, where: flt.Node, focus: flt.Node, limit: int, reads: SearchReads
                      ) -> tuple[list[tuple[MemoryRecord, float]], list[tuple[MemoryRecord, float]] | None]:
        """``_vector_hits``, and those of ``focus`` too when the store finds them in the same pass
        (``Store.focused_search``; None when it does not), cosines on the common scale."""
        near, focused = self.store.focused_search(vector, where, focus, limit, reads)
        common = self._common([cosine for _, cosine in near] + [cosine for _, cosine in focused or []])
        scaled = [(record, similarity) for (record, _), similarity in zip(near + (focused or []), common)]
        return scaled[:len(near)], None if focused is None else scaled[len(near):]

    def _keyword_hits(self, query: Query, where: flt.Node, limit: int,
                      reads: SearchReads | None = None) -> list[tuple[MemoryRecord, float, float]]:
        """The store's keyword matches: (record, keyword share of the query, cosine on the common scale). A
        memory without a vector yet (an async add's text before a worker embeds it) is scored by its words
        alone: its keyword share, up to 1, stands for its similarity."""
        hits = self.store.keyword_search(query, query.vector, where, limit, reads)
        common = iter(self._common([cosine for _, _, cosine in hits if cosine is not None]))
        return [(record, bm25, min(1.0, bm25) if cosine is None else next(common)) for record, bm25, cosine in hits]

    def _common(self, cosines: list[float]) -> list[float]:
        """Cosines on the common scale (``Embeddings.similarity``), calibrated in one operation."""
        return self.embeddings.similarities(cosines)

    def _advanced(self, trace: Trace, text: str, where: flt.Node, flags: dict[str, bool], limit: int,
                  threshold: float | None, as_of: Moment, *, detailed: bool = True) -> list[dict[str, Any]]:
        """The vector candidates (a failure here fails the advanced search), then the optional stages,
        each guarded by ``trace``; ``detailed``: each result with its stages' ``scores``."""
        with trace.stage("vector", fatal=True):
            query = self.query(text, flags)
        with self._slot(flags):
            return self._ranked(trace, query, where, flags, limit, threshold, as_of, detailed)

    def _slot(self, flags: dict[str, bool]) -> Any:
        """A turn for a search's work in this process (after its query's embedding, which concurrent
        searches share: ``embeddings.batching``), for a store whose searches run here (``SEARCH_SLOTS``,
        SQLite): threads that all work under the GIL and hand it over at every SQLite call finish fewer
        searches together than one by one (SQLite, 100k memories, 32 threads: 184 cached vector
        searches/s, 1,196 taking turns). A search that may wait for a model or an LLM (rerank, an LLM
        filter) does not take one: it would hold up the others, a cached search on the server's event
        loop among them."""
        waits = self._reranks(flags) or (flags.get("filter_memories") and self.config.llm is not None)
        turns = None if waits else _turns(self.store)
        return contextlib.nullcontext() if turns is None else turns

    def _ranked(self, trace: Trace, query: Query, where: flt.Node, flags: dict[str, bool], limit: int,
                threshold: float | None, as_of: Moment, detailed: bool) -> list[dict[str, Any]]:
        settings = self.config.retrieval
        depth = max(limit, settings.candidates)  # candidates each vector and keyword search brings
        reads = SearchReads()  # the stages' candidates overlap: each record read once

        def vector_hits(vector: Any, scoped: flt.Node, k: int) -> list[tuple[MemoryRecord, float]]:
            return self._vector_hits(vector, scoped, k, reads)

        def whole(chosen: list[Candidate]) -> list[Candidate]:
            """The chosen candidates with their records whole (the store may have read them in part, for
            ranking: ``SearchReads``); one deleted since is dropped."""
            if reads is None:  # a benchmark's search reading apart (bench_conversation_search.py)
                return chosen
            records = reads.whole([c.record for c in chosen])
            kept = [c for c in chosen if c.record.id in records]
            for c in kept:
                c.record = records[c.record.id]
            return kept

        focused = None  # the actor focus's memories, when the store finds them with the candidates
        with trace.stage("candidates", within="vector", fatal=True):
            focus = actors.focus(query.text) if settings.actor_weight else None
            if focus is None:
                near = vector_hits(query.vector, where, depth)
            else:
                near, focused = self._focused_hits(query.vector, where, focus, depth, reads)
            ranking = Pool.of(near)
        named: set[str] = set()
        if settings.actor_weight:
            with trace.stage("actors", within="vector") as stage:
                ranking, named, found = actors.join(vector_hits, query, where, ranking, depth, focused)
                stage.update(found)
        if flags["keyword_search"] and settings.date_weight and relative_time.mentions(query.text):
            with trace.stage("relative_time", within="vector") as stage:  # "last week": the scope's last week
                stage.update(relative_time.resolve(query, as_of, lambda: next(
                    (r.created_at for r in self.store.list(where, 1)), None)))
        if flags["keyword_search"] and settings.date_weight and query.windows:
            with trace.stage("dated", within="vector") as stage:
                ranking, found = timeline.join(vector_hits, query, where, ranking, depth)
                stage.update(found)
        if flags["keyword_search"]:
            with trace.stage("keyword") as stage:
                hits = self._keyword_hits(query, where, depth, reads)
                stage["matches"] = len(hits)
                ranking = fusion.fuse(ranking, hits, method=settings.fusion, keyword_weight=settings.keyword_weight,
                                      rrf_k=settings.rrf_k)
        hybrid = flags["keyword_search"] and trace.stages["keyword"]["ran"]  # else the vector order is the fallback
        if hybrid and (settings.date_weight or settings.neighbour_weight):
            with trace.stage("timeline", within="keyword") as stage:
                ranking, found = timeline.apply(ranking, query, date_weight=settings.date_weight,
                                                neighbour_weight=settings.neighbour_weight,
                                                neighbour_gap_seconds=settings.neighbour_gap_seconds)
                stage.update(found)
        if named:
            with trace.stage("actor_boost", within="vector"):
                ranking = actors.boost(ranking, named, settings.actor_weight)
        # the candidates the later stages see: those the answer may hold, and those a reranker scores again
        candidates = ranking.best(max(limit, settings.rerank_top) if flags["rerank"] else limit)
        if flags["rerank"] and candidates and (skipped := unchosen_reason(self.config)) is not None:
            trace.skip("rerank", skipped)
        elif flags["rerank"] and candidates:
            with trace.stage("rerank") as stage:
                reranker = self.reranker()
                top, rest = whole(candidates[:settings.rerank_top]), candidates[settings.rerank_top:]
                if reranker.needs_tokens:
                    self._attach_tokens(top)
                stage["reranker"], stage["candidates"] = reranker.name, len(top)
                weight = reranker.default_weight if settings.rerank_weight is None else settings.rerank_weight
                stage["weight"] = weight
                candidates = fusion.blend(top, reranker.scores(query.text, top), weight) + rest
        candidates = whole(candidates[:limit])
        if flags["filter_memories"] and candidates:
            with trace.stage("filter") as stage:
                before = len(candidates)
                if self.config.llm is not None:
                    candidates = judge.llm_filter(self._judge(), query, candidates)
                else:
                    candidates = judge.offline_filter(query, candidates)
                stage["dropped"] = before - len(candidates)
        shown = readable_scores(candidates)
        if threshold is not None:  # the scores never rise down the list: the threshold keeps a prefix
            kept = sum(1 for s in shown if s >= threshold)
            candidates, shown = candidates[:kept], shown[:kept]
        records = self.as_of([c.record for c in candidates], as_of)
        results = []
        for record, c, score in zip(records, candidates, shown):
            item = record.to_item(score)
            if detailed:
                item["scores"] = {**c.scores(), "fused": round(c.score, 6)}
            results.append(item)
        return results

    def as_of(self, records: list[MemoryRecord], as_of: Moment) -> list[MemoryRecord]:
        """Each record with the text it had at ``as_of`` (from its history), and no later invalidation: a copy
        of one changed since (the store's records may be shared: ``store/sqlite_scope_cache.py``)."""
        if as_of is None:
            return records
        moment = validation.moment(as_of, "as_of")
        records = list(records)
        for i, record in enumerate(records):
            if record.updated_at > moment:
                record = records[i] = copy.copy(record)
                versions = [e for e in self.store.history(record.id) if e.created_at <= moment and e.new_memory]
                if versions:
                    record.text = versions[-1].new_memory
                    record.hash = text_hash(record.text)
                if record.valid_to and record.valid_to > moment:
                    record.valid_to = record.invalid_reason = record.superseded_by = None
        return records

    def context(self, turns: list[Message], system_prompt: str, pools: dict[str, flt.Node],
                max_results: int) -> dict[str, Any]:
        """``search_memory_with_context``: the memories of each pool (``context.scope_pools``) the
        conversation calls for, by the terms it uses and the meaning of its recent turns
        (docs/context.md). An empty conversation calls for nothing: the empty groups."""
        if not turns:
            return agent_context.group([], [], max_results)
        settings = self.config.context
        terms = context_terms.extract([m.content for m in turns if m.role != "system"], system_prompt,
                                      settings.max_terms)
        vector = self.embeddings.query(agent_context.semantic_query(turns, settings.recent_turns))
        keywords = Query(" ".join(t.text for t in terms), vector)
        pool = max(settings.candidates, max_results)
        candidates: list[tuple[MemoryRecord, float]] = []
        for where in pools.values():
            where = flt.conjoin(where, ACTIVE)
            candidates.extend(self._vector_hits(vector, where, pool))
            if keywords.text:
                candidates.extend((record, cosine) for record, _, cosine in self._keyword_hits(keywords, where, pool))
        matches = agent_context.score(candidates, terms, semantic_weight=settings.semantic_weight,
                                      min_similarity=settings.min_similarity)
        return agent_context.group(terms, matches, max_results)

    def evidence(self, turns: list[Message], pools: dict[str, flt.Node]) -> agent_context.MemoryEvidence:
        """What the pools' valid memories hold for the last user turn (``should_search_memory`` with a
        scope): whether there is any, the turn's words they contain, and the closest one's cosine."""
        last = agent_context.last_user_turn(turns)
        settings = self.config.context
        terms = context_terms.extract([last], "", settings.max_terms) if last else []
        vector = self.embeddings.query(last) if last else None
        found: list[tuple[MemoryRecord, float]] = []
        has_memories = False
        for where in pools.values():
            where = flt.conjoin(where, ACTIVE)
            if vector is None:
                has_memories = has_memories or bool(self.store.list(where, 1))
                continue
            near = self._vector_hits(vector, where, EVIDENCE_CANDIDATES)
            has_memories = has_memories or bool(near)
            found.extend(near)
            if terms:
                found.extend((r, c) for r, _, c in self._keyword_hits(
                    Query(" ".join(t.text for t in terms), vector), where, EVIDENCE_CANDIDATES))
        matched = {t.text for record, _ in found for t in context_terms.matched(terms, record.text)}
        return agent_context.MemoryEvidence(
            has_memories=has_memories, matched_terms=tuple(t.text for t in terms if t.text in matched),
            best_similarity=max((float(c) for _, c in found), default=0.0))

    def reranker(self) -> Reranker:
        """The configured reranker (``retrieval.reranker``), made on first use."""
        if self._reranker is None:
            self._reranker = create_reranker(self.config, self.embeddings)
        return self._reranker

    def _reranks(self, flags: dict[str, bool]) -> bool:
        """Whether a search with ``flags`` runs a reranker: rerank asked for and ``retrieval.reranker`` chosen
        (``rerank.unchosen_reason``; a skipped rerank costs nothing)."""
        return bool(flags.get("rerank")) and unchosen_reason(self.config) is None

    def _maxsim_wanted(self) -> bool:
        try:
            return self.reranker().needs_tokens
        except Exception:  # a broken reranker is reported by its stage, not here
            return False

    def _judge(self) -> Any:
        if self._judge_llm is None:
            from memlane.llms import create_llm

            self._judge_llm = create_llm(self.config.llm)
        return self._judge_llm

    def _attach_tokens(self, candidates: list[Candidate]) -> None:
        """Token vectors for late interaction: stored ones, else computed now and written back, so a
        memory's are computed once (the store keeps them only while the memory is unchanged)."""
        stored = self.store.token_vectors([c.record.id for c in candidates])
        missing = [c for c in candidates if c.record.id not in stored]
        if missing:
            settings = self.config.retrieval
            _, computed = self.embeddings.documents_and_tokens(
                [token_text(c.record.text, settings, c.record.actor_id) for c in missing], settings.max_token_vectors)
            stored.update((c.record.id, t) for c, t in zip(missing, computed))
            try:
                self.store.keep_token_vectors([(c.record, t) for c, t in zip(missing, computed)])
            except StoreError as exc:  # a cache: a store that refuses the write costs the next search the work
                log.warning("could not keep the token vectors of %d memories (request %s): %s",
                            len(missing), request_id.get(), one_line(exc))
        for c in candidates:
            c.tokens = stored[c.record.id]
