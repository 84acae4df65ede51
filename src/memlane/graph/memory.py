"""Graph memory, conducted for ``Memory`` (facade layer): read the store, call the graph
pipelines (``graph/``), hand back the changes to write and the relations to show.

``Memory`` owns one ``GraphMemory`` when ``enable_graph`` is on and writes what
``plan_add`` returns in the same transaction as the add's memories.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from memlane.core import filters as flt
from memlane.core.scope import pins_scope
from memlane.core import timeutil, validation
from memlane.core.config import MemoryConfig
from memlane.embeddings import Embeddings
from memlane.graph import lookup, reconcile, resolve
from memlane.graph.extract import Extractor, GraphExtractionFailed, RuleExtractor
from memlane.core.graph_models import (USER, Entity, GraphChanges, Relation, RelationConfirmation,
                                  RelationInvalidation)
from memlane.core.ids import new_id
from memlane.core.models import Message
from memlane.store import Store

SCOPE_KEYS = flt.SCOPE_COLUMNS

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def lookup_pool() -> ThreadPoolExecutor:
    """The threads graph lookups run in while the calling thread does the vector search: one pool for
    every ``Memory`` of the process (a server holds one per tenant), created on first use."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="memlane-graph")
    return _pool


def create_extractor(llm: object | None) -> Extractor:
    """The LLM extractor when the formation engine has an LLM (one extra call per add), else the rules."""
    if llm is None:
        return RuleExtractor()
    from memlane.graph.llm_extract import LLMExtractor

    return LLMExtractor(llm)  # type: ignore[arg-type]


def graph_scope(ids: Mapping[str, str], filters: Mapping[str, Any] | None, *, strict: bool = True) -> Any:
    """The scope columns a read or delete names: the ids plus top-level scope equalities of the filters.
    A wildcard (``"*"``) leaves its key open. The graph has no metadata to filter on: other conditions
    make it None when ``strict`` (``delete_all`` and ``get_all`` with such filters leave relations
    alone), and are skipped otherwise (a search's relations follow its scope). Scopes named in a way
    the scope columns cannot hold (an ``in`` list, an OR of scopes) make it None either way: no
    relations rather than those of every scope."""
    scope = dict(ids)
    for clause in flt.conjuncts(flt.parse(filters)):
        if isinstance(clause, flt.Compare) and clause.field.column in SCOPE_KEYS and not clause.field.path:
            if clause.op == "eq" and isinstance(clause.value, str):
                scope[clause.field.column] = clause.value
                continue
            if clause.op == "exists":
                continue
        if clause is flt.MATCH_ALL or not (strict or pins_scope(clause)):
            continue
        return None
    return scope


class GraphMemory:
    def __init__(self, config: MemoryConfig, embeddings: Embeddings, store: Store, extractor: Extractor):
        self.settings = config.graph
        self.embeddings = embeddings
        self.store = store
        self.extractor = extractor
        self.policy = reconcile.Policy(single_valued=frozenset(self.settings.single_valued),
                                       opposites=dict(self.settings.opposites))

    @classmethod
    def create(cls, config: MemoryConfig, embeddings: Embeddings, store: Store, engine: Any) -> "GraphMemory":
        return cls(config, embeddings, store, create_extractor(getattr(engine, "llm", None)))

    # -- writes ----------------------------------------------------------------------------------

    def plan_add(self, messages: list[Message], ids: Mapping[str, str],
                 message_ids: list[str]) -> tuple[GraphChanges, dict[str, Any]]:
        """Extract, resolve and reconcile the relations of one add: (changes to write, report)."""
        try:
            triples = self.extractor.extract(messages)
        except GraphExtractionFailed as exc:
            return GraphChanges(), {"status": "failed", "reason": str(exc), "added": [], "invalidated": []}
        report: dict[str, Any] = {"status": "ok", "added": [], "invalidated": []}
        if not triples:
            return GraphChanges(), report
        exact = {k: ids.get(k) for k in SCOPE_KEYS}  # the add's own scope, absent ids NULL
        user_name = ids.get("user_id") or "user"
        names = list(dict.fromkeys(user_name if n == USER else n
                                   for t in triples for n in (t.source, t.destination)))
        now = timeutil.now_iso()
        name_vectors = self.embeddings.documents(names)

        def make(name: str, key: str, vector: np.ndarray) -> Entity:
            return Entity(id=new_id(), name=name, key=key, created_at=now, updated_at=now, vector=vector, **exact)

        resolution = resolve.resolve(names, name_vectors, self.store.graph_entities(exact), make=make,
                                     merge_threshold=self.embeddings.raw_threshold(self.settings.merge_threshold,
                                                                                   "document"),
                                     acronym_threshold=self.embeddings.raw_threshold(self.settings.acronym_threshold,
                                                                                     "document"))
        proposed = []
        for t in triples:
            source = resolution.by_name[user_name if t.source == USER else t.source]
            destination = resolution.by_name[t.destination]
            if source.id != destination.id:
                proposed.append(reconcile.Proposed(source.id, source.name, t.relationship, destination.id,
                                                   destination.name, t.negated))
        current = self.store.graph_relations(exact)
        outcome = reconcile.reconcile(
            proposed, [reconcile.Existing(r.id, r.source_id, r.relationship, r.destination_id, r.destination)
                       for r in current], self.policy)
        texts = [f"{p.source} {p.relationship.replace('_', ' ')} {p.destination}" for p in outcome.add]
        vectors = self.embeddings.documents(texts) if texts else []
        added = [Relation(id=new_id(), source_id=p.source_id, source=p.source, relationship=p.relationship,
                          destination_id=p.destination_id, destination=p.destination, created_at=now, updated_at=now,
                          valid_from=now, source_message_ids=list(message_ids), vector=v, **exact)
                 for p, v in zip(outcome.add, vectors)]
        used = {r.source_id for r in added} | {r.destination_id for r in added}
        by_id = {r.id: r for r in current}
        changes = GraphChanges(
            entities=[e for e in resolution.new if e.id in used],
            relations=added,
            invalidations=[RelationInvalidation(id=i.id, reason=i.reason, at=now, superseded_by=None
                                                if i.superseded_by is None else added[i.superseded_by].id)
                           for i in outcome.invalidate],
            confirmations=[RelationConfirmation(id=rid, source_message_ids=list(message_ids), at=now)
                           for rid in outcome.keep],
        )
        report["added"] = [_triple(r) for r in added]
        report["invalidated"] = [{**_triple(by_id[i.id]), "reason": i.reason} for i in changes.invalidations]
        return changes, report

    def delete(self, scope: dict[str, str]) -> int:
        return self.store.delete_graph(scope)

    def delete_scope(self, ids: Mapping[str, str], filters: Mapping[str, Any] | None) -> int | None:
        """``delete_all``'s relations: how many were deleted, or None when the filters name more than
        the scope (metadata, which relations do not have: they are left alone)."""
        where = graph_scope(ids, filters)
        return None if where is None else self.delete(where)

    # -- reads -----------------------------------------------------------------------------------

    def search(self, query: str, vector: np.ndarray, scope: dict[str, str], *, include_invalid: bool = False,
               as_of: str | None = None) -> list[dict[str, Any]]:
        """The relations the query points at, best first (``{"source", "relationship", "destination", "score"}``)."""
        entities = self.store.graph_entities(scope)
        if not entities:
            return []
        user_keys = {resolve.normalize(scope["user_id"])} if scope.get("user_id") else {"user"}
        matched = lookup.match_entities(query, vector, entities, user_keys=user_keys,
                                        threshold=self.settings.entity_threshold, similarity=self.embeddings.similarity)
        if not matched:
            return []
        relations = self.store.graph_relations(scope, include_invalid=include_invalid, as_of=as_of,
                                               entity_ids=list(matched))
        scored = lookup.score_relations(query, vector, relations, matched, threshold=self.settings.relation_threshold,
                                        similarity=self.embeddings.similarity,
                                        limit=self.settings.max_relations)
        return [r.to_hit(score) for r, score in scored]

    def all(self, scope: dict[str, str], *, include_invalid: bool = False, as_of: str | None = None,
            limit: int | None = None) -> list[dict[str, Any]]:
        return [r.to_item() for r in self.store.graph_relations(scope, include_invalid=include_invalid, as_of=as_of,
                                                                  limit=limit)]

    def of_scope(self, ids: Mapping[str, str], filters: Mapping[str, Any] | None, *, include_invalid: bool,
                 as_of: Any, limit: int) -> list[dict[str, Any]]:
        """A scope's relations for ``get_all`` (none when the filters name more than the scope)."""
        where = graph_scope(ids, filters)
        if where is None:
            return []
        moment = validation.moment(as_of, "as_of") if as_of is not None else None
        return self.all(where, include_invalid=include_invalid, as_of=moment, limit=limit)

    def search_beside(self, memories: Callable[[], dict[str, Any]], query: str, vector: np.ndarray,
                      ids: Mapping[str, str], filters: Mapping[str, Any] | None, *, include_invalid: bool,
                      as_of: Any) -> dict[str, Any]:
        """``search`` with relations: the graph lookup runs in ``lookup_pool`` while this thread runs
        ``memories()`` (the vector search); its answer gains ``relations``."""
        arguments = (query, vector, ids, filters, include_invalid, as_of)
        lookup = lookup_pool().submit(self._search_scope, *arguments)
        found = memories()
        if found.get("status") == "error":  # the store failed (seed 001's answer): no relations either
            lookup.cancel()
            return {**found, "relations": []}
        # no thread took the lookup yet (a busy machine wakes threads late): do it here instead of waiting
        relations = self._search_scope(*arguments) if lookup.cancel() else lookup.result()
        return {**found, "relations": relations}

    def _search_scope(self, query: str, vector: np.ndarray, ids: Mapping[str, str],
                      filters: Mapping[str, Any] | None, include_invalid: bool, as_of: Any) -> list[dict[str, Any]]:
        # metadata filters narrow the memories; relations are found by the scope alone
        where = graph_scope(ids, filters, strict=False)
        if where is None:
            return []
        moment = validation.moment(as_of, "as_of") if as_of is not None else None
        return self.search(query, vector, where, include_invalid=include_invalid, as_of=moment)


def _triple(r: Relation) -> dict[str, str]:
    return {"id": r.id, "source": r.source, "relationship": r.relationship, "destination": r.destination}
