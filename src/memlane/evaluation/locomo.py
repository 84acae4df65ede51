"""``memlane eval locomo``: evidence recall over LoCoMo dialog turns.

Every turn is stored verbatim as one memory (``"{speaker}: {text}"`` plus the
image caption when present) with metadata ``dia_id`` and ``session_date``,
scoped to its conversation; each question is searched inside its conversation
and recall@k = |evidence ∩ top-k turns| / |evidence|, averaged over questions
with evidence. Categories: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial; "overall" is 1–4. Data format:
``../shared/eval/README.md``.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from memlane.memory import Memory
from memlane.core.models import NewMemory

MODES = {
    "vector": {},
    "hybrid": {"keyword_search": True},
    "full": {"keyword_search": True, "rerank": True},
}
#: How turns are indexed for this benchmark: with their session date and the previous turn as context.
RETRIEVAL_SETTINGS = {"embed_metadata": ["session_date"], "context_messages": 1, "store_token_vectors": True}


def load(path: str | Path) -> list[dict[str, Any]]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def session_time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := re.fullmatch(r"session_(\d+)", key)))
    for number, key in sessions:
        date = conversation.get(f"{key}_date_time", "")
        start = session_time(date)
        for index, turn in enumerate(conversation[key]):
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            created = (start + timedelta(seconds=index)).isoformat() if start else None
            out.append({"dia_id": turn["dia_id"], "text": text, "session_date": date, "session": number,
                        "created_at": created})
    return out


def evidence_ids(evidence: Sequence[str]) -> set[str]:
    """Normalise the few malformed ids: "D8:6; D9:17", "D:11:26" -> D11:26, "D30:05" -> D30:5."""
    found = set()
    for item in evidence:
        for part in re.split(r"[;\s,]+", str(item)):
            match = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if match:
                found.add(f"D{match.group(1)}:{match.group(2)}")
    return found


def run(memory: Memory, data: list[dict[str, Any]], *, ks: Sequence[int] = (1, 5, 10, 25, 50),
        mode: str = "vector") -> dict[str, Any]:
    """One mode's report; search latency includes embedding each question."""
    return run_modes(memory, data, ks=ks, modes=(mode,))[mode]


def run_modes(memory: Memory, data: list[dict[str, Any]], *, ks: Sequence[int] = (1, 5, 10, 25, 50),
              modes: Sequence[str] = ("vector",)) -> dict[str, dict[str, Any]]:
    """A report per mode, from one insertion of each conversation (embedding the turns is the slow
    part). With several modes every question is embedded before the searches are timed, so that
    all modes' ``search_ms`` exclude it alike (``search_ms_includes_embedding`` says which)."""
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ValueError(f"modes must be among {', '.join(MODES)}; got {list(modes)}")
    depth = max(ks)
    warm = len(modes) > 1
    recalls = {m: defaultdict(lambda: defaultdict(list)) for m in modes}
    per_conversation: dict[str, dict[str, dict[int, list[float]]]] = {m: {} for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    unmatched = 0
    window = memory.config.retrieval.context_messages
    for sample in data:
        scope = f"locomo-{sample['sample_id']}-{uuid.uuid4().hex[:6]}"
        conversation = turns(sample["conversation"])
        drafts = [
            NewMemory(text=t["text"], user_id=scope, created_at=t["created_at"], updated_at=t["created_at"],
                      metadata={"dia_id": t["dia_id"], "session_date": t["session_date"], "session": t["session"]},
                      context=" ".join(p["text"] for p in conversation[max(0, i - window):i]
                                       if p["session"] == t["session"]) if window else None)
            for i, t in enumerate(conversation)
        ]
        for start in range(0, len(drafts), 256):
            memory.insert(drafts[start:start + 256])
        known = {t["dia_id"] for t in conversation}
        for mode in modes:
            per_conversation[mode][sample["sample_id"]] = defaultdict(list)
        for qa in sample["qa"]:
            wanted = evidence_ids(qa.get("evidence", []))
            unmatched += len(wanted - known)
            wanted &= known
            if not wanted:
                continue
            if warm and memory.embeddings.has_tokens:
                memory.embeddings.query_tokens(qa["question"])  # fills the query-vector cache too
            elif warm:
                memory.embeddings.query(qa["question"])
            for mode in modes:
                started = time.perf_counter()
                hits = memory.search(qa["question"], user_id=scope, limit=depth, **MODES[mode])["results"]
                latencies[mode].append(time.perf_counter() - started)
                ranked = [hit["metadata"]["dia_id"] for hit in hits]
                for k in ks:
                    recall = len(wanted & set(ranked[:k])) / len(wanted)
                    recalls[mode][str(qa["category"])][k].append(recall)
                    if str(qa["category"]) in OVERALL:
                        per_conversation[mode][sample["sample_id"]][k].append(recall)
    return {mode: _report(mode, memory, ks, recalls[mode], per_conversation[mode], latencies[mode], unmatched,
                          not warm) for mode in modes}


#: the categories of the overall figure (5, adversarial, is reported on its own)
OVERALL = ("1", "2", "3", "4")


def _table(values: dict[int, list[float]]) -> dict[str, float | None]:
    return {f"R@{k}": round(100 * statistics.mean(v), 1) if v else None for k, v in values.items()}


def _report(mode: str, memory: Memory, ks: Sequence[int], recalls: dict[str, dict[int, list[float]]],
            per_conversation: dict[str, dict[int, list[float]]], latencies: list[float], unmatched: int,
            with_embedding: bool) -> dict[str, Any]:
    overall = {k: [v for cat in OVERALL if cat in recalls for v in recalls[cat][k]] for k in ks}
    ordered = sorted(latencies)
    return {
        "mode": mode,
        "engine": memory.embeddings.name,
        "questions": len(latencies),
        "overall_1_4": _table(overall),
        "by_category": {cat: {**_table(recalls[cat]), "questions": len(recalls[cat][ks[0]])} for cat in sorted(recalls)},
        "by_conversation": {sid: {**_table({k: values[k] for k in ks}), "questions": len(values[ks[0]])}
                            for sid, values in per_conversation.items()},
        "search_ms": {"p50": round(1000 * ordered[len(ordered) // 2], 2),
                      "p95": round(1000 * ordered[int(len(ordered) * 0.95)], 2)} if ordered else {},
        "search_ms_includes_embedding": with_embedding,
        "unmatched_evidence": unmatched,
    }
