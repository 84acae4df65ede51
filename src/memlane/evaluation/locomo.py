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

from memlane.memory import Memory, NewMemory

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
    flags = MODES[mode]
    depth = max(ks)
    recalls: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    latencies: list[float] = []
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
        for qa in sample["qa"]:
            wanted = evidence_ids(qa.get("evidence", []))
            unmatched += len(wanted - known)
            wanted &= known
            if not wanted:
                continue
            started = time.perf_counter()
            hits = memory.search(qa["question"], user_id=scope, limit=depth, **flags)["results"]
            latencies.append(time.perf_counter() - started)
            ranked = [hit["metadata"]["dia_id"] for hit in hits]
            for k in ks:
                recalls[str(qa["category"])][k].append(len(wanted & set(ranked[:k])) / len(wanted))
    overall = {k: [v for cat in ("1", "2", "3", "4") if cat in recalls for v in recalls[cat][k]] for k in ks}

    def table(values: dict[int, list[float]]) -> dict[str, float]:
        return {f"R@{k}": round(100 * statistics.mean(v), 1) if v else None for k, v in values.items()}

    ordered = sorted(latencies)
    return {
        "mode": mode,
        "engine": memory.embeddings.name,
        "questions": len(latencies),
        "overall_1_4": table(overall),
        "by_category": {cat: {**table(recalls[cat]), "questions": len(recalls[cat][ks[0]])} for cat in sorted(recalls)},
        "search_ms": {"p50": round(1000 * ordered[len(ordered) // 2], 2),
                      "p95": round(1000 * ordered[int(len(ordered) * 0.95)], 2)} if ordered else {},
        "unmatched_evidence": unmatched,
    }
