"""What a maintenance call changes, as ``ChangeSet``s and its report. Pure: the facade reads the scope,
embeds rewritten texts and applies the changes.

- **cleanup**: the memories beyond the ``keep_latest`` newest are invalidated (``DELETE`` events
  with reason ``cleanup``), never erased: their text stays in the row and in history.
- **merge**: each group of near-duplicates (``similar.groups``) becomes its oldest memory (its id
  stays, as the seed's ``mem1``). The texts are folded oldest first, one ``write(older, newer)``
  per pair: the engine keeps the more specific text offline, an LLM writes the merged one. A pair
  the writer refuses (the texts disagree) or fails on is reported and left as it was. The survivor
  gets one ``MERGE`` event per memory merged into it (old and new text) and their messages in its
  provenance; each merged memory is invalidated with a ``MERGE`` event, ``superseded_by`` the survivor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memlane.ingest.types import FormationFailed
from memlane.maintenance.similar import Group
from memlane.core.models import MemoryRecord, text_hash
from memlane.core.changes import ChangeSet, Invalidate, Update

#: ``write(older text, newer text, cosine)``: the merged text, or None when the two must stay apart
Writer = Callable[[str, str, float], "str | None"]
Progress = Callable[[int, int], None]


def cleanup_changes(records: Sequence[MemoryRecord], keep_latest: int) -> tuple[ChangeSet, list[dict[str, Any]]]:
    """Invalidate ``records`` (the memories beyond the newest ``keep_latest``)."""
    reason = f"cleanup: older than the latest {keep_latest}"
    changes = ChangeSet(invalidations=[Invalidate(id=r.id, reason=reason) for r in records])
    return changes, [{"id": r.id, "memory": r.text, "event": "DELETE", "created_at": r.created_at} for r in records]


@dataclass
class Merge:
    """One group's outcome: the survivor, its text after each memory merged in, and what was left apart."""

    survivor: MemoryRecord
    #: (merged memory, its cosine to the survivor, the survivor's text after it)
    merged: list[tuple[MemoryRecord, float, str | None]] = field(default_factory=list)
    kept_apart: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def text(self) -> str | None:
        """The survivor's final text (None: written by the LLM when applied, in a dry run)."""
        return self.merged[-1][2] if self.merged else self.survivor.text


def plan_merges(records: Sequence[MemoryRecord], vectors: np.ndarray, found: Sequence[Group],
                write: Writer | None, progress: Progress | None = None) -> list[Merge]:
    """Fold each group into its oldest memory (records are oldest first). ``write`` None: a dry run
    of an LLM writer, which plans the groups without calling it."""
    norms = np.linalg.norm(vectors, axis=1)
    total, done = sum(len(g.members) for g in found), 0
    merges = []
    for group in found:
        order = sorted([group.centre, *(index for index, _ in group.members)])
        merge = Merge(records[order[0]])
        text: str | None = merge.survivor.text
        for index in order[1:]:
            member = records[index]
            cosine = float(vectors[order[0]] @ vectors[index] / max(norms[order[0]] * norms[index], 1e-12))
            try:
                merged = write(text, member.text, cosine) if write is not None and text is not None else None
            except FormationFailed as exc:
                merge.failed.append({"ids": [merge.survivor.id, member.id], "error": str(exc)})
            else:
                if write is not None and merged is None:
                    merge.kept_apart.append({"ids": [merge.survivor.id, member.id],
                                             "reason": "the memories disagree (a change or a contradiction)"})
                else:
                    merge.merged.append((member, cosine, merged))
                    text = merged
            done += 1
            if progress:
                progress(done, total)
        merges.append(merge)
    return merges


def merge_changes(merges: Sequence[Merge], now: str,
                  rewritten: dict[str, tuple[np.ndarray, np.ndarray | None]]) -> ChangeSet:
    """The writes of ``plan_merges``' outcome; ``rewritten`` maps each survivor whose text changed to
    the vector (and token vectors) of its final text."""
    changes = ChangeSet()
    for merge in merges:
        survivor, previous = merge.survivor, merge.survivor.text
        for n, (member, _, text) in enumerate(merge.merged):
            update = Update(id=survivor.id, updated_at=now, event="MERGE", reason=f"merged {member.id}",
                            source_message_ids=list(member.source_message_ids))
            if text != previous:
                update.text, update.hash, previous = text, text_hash(text), text
            if n == len(merge.merged) - 1 and survivor.id in rewritten:
                update.vector, update.token_vectors = rewritten[survivor.id]
            changes.updates.append(update)
            changes.invalidations.append(Invalidate(id=member.id, reason=f"merged into {survivor.id}",
                                                    superseded_by=survivor.id, event="MERGE"))
    return changes


def merge_report(merges: Sequence[Merge], *, scanned: int, pairs: int, dry_run: bool) -> dict[str, Any]:
    return {
        "results": [{"id": m.survivor.id, "memory": m.text, "event": "MERGE", "previous_memory": m.survivor.text,
                     "merged": [{"id": r.id, "memory": r.text, "similarity": round(s, 6)} for r, s, _ in m.merged]}
                    for m in merges if m.merged],
        "kept_apart": [entry for m in merges for entry in m.kept_apart],
        "failed": [entry for m in merges for entry in m.failed],
        "memories": scanned,
        "pairs": pairs,
        "dry_run": dry_run,
    }
