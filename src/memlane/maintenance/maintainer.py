"""Maintenance, conducted for ``Memory`` (as ``graph/memory.py`` conducts graph memory): read a scope's
valid memories, plan with ``plans`` (pure), embed rewritten texts, and write.

- ``cleanup``: invalidates the memories beyond the newest ``keep_latest``, in transactions of
  ``CLEANUP_BATCH`` memories (``progress(done, total)`` after each): an interrupted cleanup leaves
  whole invalidations and a rerun finishes it;
- ``merge``: folds each group of near-duplicates into its oldest memory, one transaction for all;
  two speakers' memories stay apart.

A dry run reads and plans only (and calls no LLM). ``reembed_store``: every memory of a store
embedded again, after a change of models.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

from memlane.core import timeutil
from memlane.core.changes import ChangeSet
from memlane.core.config import MemoryConfig
from memlane.core.filters import Node, scope_ids
from memlane.core.models import NewMemory
from memlane.embeddings import Embeddings
from memlane.ingest import records as ingest_records
from memlane.ingest import speakers
from memlane.ingest.pipeline import Pipeline
from memlane.ingest.types import FormationFailed
from memlane.maintenance import plans
from memlane.maintenance.similar import groups, similar_pairs
from memlane.store import Store, create_store
from memlane.store.base import ReembedItem

#: memories invalidated per transaction by ``cleanup``
CLEANUP_BATCH = 500


class Maintainer(Pipeline):
    def _turn(self, where: Node, dry_run: bool) -> AbstractContextManager[None]:
        """The scope's maintenance lock (``Store.maintenance_lock``): one cleanup or merge of a scope at
        a time, across the servers of a database; a dry run only reads."""
        if dry_run:
            return nullcontext()
        return self.store.maintenance_lock(",".join(f"{k}={'|'.join(v)}" for k, v in sorted(scope_ids(where).items())))

    def cleanup(self, where: Node, keep_latest: int, dry_run: bool,
                progress: plans.Progress | None) -> dict[str, Any]:
        """Invalidate the memories of ``where`` beyond the newest ``keep_latest`` (by ``created_at``)."""
        with self._turn(where, dry_run):
            return self._cleanup(where, keep_latest, dry_run, progress)

    def _cleanup(self, where: Node, keep_latest: int, dry_run: bool,
                 progress: plans.Progress | None) -> dict[str, Any]:
        total = self.store.count(where)
        old = self.store.list(where, total - keep_latest, offset=keep_latest) if total > keep_latest else []
        old.reverse()  # oldest first
        changes, results = plans.cleanup_changes(old, keep_latest)
        if not dry_run:
            for start in range(0, len(old), CLEANUP_BATCH):
                self.store.apply(ChangeSet(invalidations=changes.invalidations[start:start + CLEANUP_BATCH]))
                if progress:
                    progress(min(start + CLEANUP_BATCH, len(old)), len(old))
        return {"results": results, "kept": total - len(old), "dry_run": dry_run}

    def merge(self, where: Node, threshold: float, dry_run: bool, progress: plans.Progress | None) -> dict[str, Any]:
        """Merge the near-duplicates of ``where`` (cosine >= ``threshold``); returns the report."""
        with self._turn(where, dry_run):
            return self._merge(where, threshold, dry_run, progress)

    def _merge(self, where: Node, threshold: float, dry_run: bool, progress: plans.Progress | None) -> dict[str, Any]:
        records, matrix = self.store.with_vectors(where)
        # the threshold and the pairs' similarities on the common scale (a model's raw cosines are not)
        pairs = [(i, j, self.embeddings.similarity(s, "document"))
                 for i, j, s in similar_pairs(matrix, self.embeddings.raw_threshold(threshold, "document"))
                 if speakers.may_reconcile(records[i].actor_id, records[j].actor_id)]  # two speakers stay apart

        def write(older: str, newer: str, similarity: float) -> str | None:
            text = self.engine.merge(older, newer, similarity)
            if text is not None and len(text) > self.limits.max_text_chars:
                raise FormationFailed(f"the merged text has {len(text)} characters, more than "
                                      f"limits.max_text_chars ({self.limits.max_text_chars})")
            return text

        no_calls = dry_run and self.config.llm is not None  # a dry run does not spend LLM calls
        merges = plans.plan_merges(records, matrix, groups(pairs), None if no_calls else write, progress)
        report = plans.merge_report(merges, scanned=len(records), pairs=len(pairs), dry_run=dry_run)
        if dry_run:
            return report
        changed = [m for m in merges if m.merged and m.text != m.survivor.text]
        drafts = [NewMemory(text=m.text, metadata=m.survivor.metadata, actor_id=m.survivor.actor_id) for m in changed]
        embedded = ingest_records.records(drafts, self.embeddings, self.config.retrieval)
        rewritten = {m.survivor.id: (r.vector, r.token_vectors) for m, r in zip(changed, embedded)}
        changes = plans.merge_changes(merges, timeutil.now_iso(), rewritten)
        if changes.updates:
            self.store.apply(changes)
        return report


def reembed_store(settings: MemoryConfig, embeddings: Embeddings, tenant: str | None, batch_size: int,
                  progress: plans.Progress | None) -> Store:
    """The configured store (of ``tenant``) with every memory embedded again by ``embeddings``, each
    the way it is embedded when stored (``Store.reembed``: resumable)."""
    store = create_store(settings, embeddings.dims, tenant)

    def embed(items: list[ReembedItem]) -> Any:
        return ingest_records.vectors(items, embeddings, settings.retrieval)

    store.reembed(embed, embeddings.name, embeddings.dims, batch_size=batch_size, progress=progress)
    return store
