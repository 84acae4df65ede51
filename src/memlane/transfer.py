"""JSON Lines import and export.

Each input line is either a message to remember::

    {"role": "user", "content": "I like tea", "user_id": "alice", "metadata": {...}}
    {"messages": [{"role": "user", "content": "..."}, ...], "user_id": "alice", "created_at": "2026-03-01T09:00:00Z"}

(its messages go to the message log, ``get_messages``, and each non-system message becomes a memory
verbatim, dated ``created_at`` when the line has one; with ``infer=True`` the messages go through
memory formation instead, as ``Memory.add`` does, dated now)

or a memory as ``export`` writes it (a MemoryItem: ``memory``, ``id``, scope,
``metadata``, timestamps; ``hash`` and ``score`` are ignored)::

    {"memory": "Likes tea", "id": "...", "user_id": "alice", "created_at": "..."}

The whole file is validated before anything is written. Lines are written in
batches, each batch in one transaction together with the keys of its lines, so
an interrupted import can simply be run again: lines already imported are
skipped, and memories whose ``id`` already exists are not duplicated.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from memlane.core import scope, timeutil, validation
from memlane.core.errors import InvalidInputError
from memlane.core.filters import Node
from memlane.core.ids import new_id
from memlane.memory import Memory
from memlane.core.models import MEMORY_TYPES, Message, MessageRecord, NewMemory
from memlane.ingest.formation import reply_context
from memlane.store import ChangeSet

_SCOPE = ("user_id", "agent_id", "run_id")
_MESSAGE_KEYS = {"role", "content", "name", "messages", "metadata", "created_at", *_SCOPE}
_MEMORY_KEYS = {"memory", "id", "hash", "score", "metadata", "created_at", "updated_at", "actor_id", "role",
                "memory_type", "source_message_ids", "valid_to", "invalid_reason", "superseded_by", "context", *_SCOPE}


@dataclass
class ImportReport:
    lines: int = 0
    skipped_lines: int = 0  # imported by an earlier run
    memories: int = 0  # memories stored (with infer: memories added by formation)
    existing_ids: int = 0  # memory lines whose id was already stored
    messages: int = 0  # messages written to the message log
    #: with infer: memories formation changed, deleted, or found already known (left as they were)
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class _Line:
    """One validated input line: the memories it stores verbatim, or the messages it holds."""

    drafts: list[NewMemory]
    messages: list[MessageRecord]
    received: list[Message]
    scope: dict[str, str]
    metadata: dict[str, Any]


def _line(obj: Any, lineno: int, memory: Memory, infer: bool) -> _Line:
    """Validate one parsed line."""
    where = f"line {lineno}"
    if not isinstance(obj, Mapping):
        raise InvalidInputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    kind_keys = _MEMORY_KEYS if "memory" in obj else _MESSAGE_KEYS
    unknown = sorted(set(obj) - kind_keys)
    if unknown:
        raise InvalidInputError(f"{where}: unknown keys {unknown}")
    try:
        ids = scope.scope_ids(*(obj.get(k) for k in _SCOPE))
        scope.require_ids(ids)
        metadata, promoted = validation.metadata(obj.get("metadata"), memory.limits)
        if "memory" in obj:
            times = {k: timeutil.canonical(obj[k]) for k in ("created_at", "updated_at", "valid_to") if obj.get(k)}
            labels = {k: validation.identifier_text(obj[k], k)
                      for k in ("actor_id", "role", "invalid_reason") if obj.get(k) is not None}
            sources = obj.get("source_message_ids") or []
            if not isinstance(sources, list) or not all(isinstance(i, str) for i in sources):
                raise InvalidInputError("source_message_ids must be a list of strings")
            draft = NewMemory(text=validation.text(obj["memory"], "memory", memory.limits), metadata=metadata,
                              id=validation.identifier(obj.get("id"), "id"), **ids, **{**promoted, **labels}, **times,
                              memory_type=validation.choice(obj.get("memory_type"), MEMORY_TYPES, "memory_type"),
                              source_message_ids=sources, context=None if obj.get("context") is None
                              else validation.text(obj["context"], "context", memory.limits),
                              superseded_by=validation.identifier(obj.get("superseded_by"), "superseded_by"))
            return _Line([draft], [], [], ids, metadata)
        if infer and obj.get("created_at"):
            raise InvalidInputError("created_at cannot be kept with --infer (formation dates what it stores now); "
                                    "import without --infer to keep the line's date", field="created_at")
        created = timeutil.canonical(obj["created_at"]) if obj.get("created_at") else timeutil.now_iso()
        given = obj["messages"] if "messages" in obj else {k: obj[k] for k in ("role", "content", "name") if k in obj}
        received = validation.messages(given, memory.limits)
        logged = [MessageRecord(id=new_id(), role=m.role, content=m.content, created_at=created, name=m.name, **ids)
                  for m in received]
        window = memory.config.retrieval.context_messages
        drafts = [
            NewMemory(text=m.content, actor_id=promoted.get("actor_id", m.name), role=promoted.get("role", m.role),
                      metadata=metadata, created_at=created, source_message_ids=[record.id],
                      context=reply_context(received, i, window), **ids)
            for i, (m, record) in enumerate(zip(received, logged))
            if m.role != "system"
        ]
        return _Line(drafts, logged, received, ids, {**metadata, **promoted})
    except (InvalidInputError, ValueError) as exc:
        raise InvalidInputError(f"{where}: {exc}") from None


def _read(path: Path) -> Iterator[tuple[int, str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for lineno, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield lineno, raw, json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"line {lineno}: not valid JSON ({exc.msg})") from None


def import_jsonl(
    memory: Memory,
    path: str | Path,
    *,
    batch_size: int = 256,
    source: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    infer: bool = False,
) -> ImportReport:
    """Import a JSONL file; safe to rerun after an interruption.

    A line's key is derived from ``source`` (default: the file name), its line
    number and its content, so rerunning the same file skips what was done.
    With ``infer=True`` each message line goes through memory formation (``Memory.add``), one
    line at a time; a line is marked done right after its ``add``, so an interruption between
    the two re-forms that one line on the next run (formation then finds its facts already known).
    """
    path = Path(path)
    source = source or path.name
    lines = [(lineno, raw, _line(obj, lineno, memory, infer)) for lineno, raw, obj in _read(path)]
    report = ImportReport(lines=len(lines))
    if infer:
        batch_size = 1  # one formation per line, each one marked done when it is
    for start in range(0, len(lines), batch_size):
        batch = lines[start:start + batch_size]
        keys = {
            lineno: "import:" + hashlib.sha256(f"{source}\n{lineno}\n{raw.strip()}".encode()).hexdigest()
            for lineno, raw, _ in batch
        }
        done = memory.store.known_keys(list(keys.values()))
        todo = [(lineno, line) for lineno, _, line in batch if keys[lineno] not in done]
        report.skipped_lines += len(batch) - len(todo)
        if infer and todo and todo[0][1].received:
            lineno, line = todo[0]
            result = memory.add([m.model_dump(exclude_none=True) for m in line.received], **line.scope,
                                metadata=line.metadata or None, infer=True)
            memory.store.apply(ChangeSet(keys=[keys[lineno]]))
            events = [r["event"] for r in result["results"]]
            report.memories += events.count("ADD")
            report.updated += events.count("UPDATE")
            report.deleted += events.count("DELETE")
            report.unchanged += len(result.get("unchanged", []))
            report.messages += len(result["message_ids"])
            if progress:
                progress(start + 1, len(lines))
            continue
        fresh, seen = [], set()
        for draft in (d for _, line in todo for d in line.drafts):
            if draft.id and (draft.id in seen or memory.store.get(draft.id) is not None):
                report.existing_ids += 1
                continue
            seen.add(draft.id)
            fresh.append(draft)
        if todo:
            logged = [m for _, line in todo for m in line.messages]
            memory.insert(fresh, idempotency_keys=[keys[lineno] for lineno, _ in todo], messages=logged)
            report.messages += len(logged)
        report.memories += len(fresh)
        if progress:
            progress(min(start + batch_size, len(lines)), len(lines))
    return report


def export_jsonl(memory: Memory, out: IO[str], where: Node) -> int:
    """Write every matching memory (oldest first) as one MemoryItem per line; return the count. A
    provisional memory (an async add not formed yet) is not a memory yet: its messages are kept, and
    its formation writes the memories an export after it carries."""
    count = 0
    for batch in memory.store.iter_records(where):
        for record in batch:
            if record.event_id is not None:
                continue
            item = record.to_item()
            item.pop("score")
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
            count += 1
    return count
