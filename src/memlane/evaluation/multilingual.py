"""``memlane eval multilingual``: hit@1 and hit@3 of questions over memories, per language group.

Case format (one scope a line)::

    {"id": "dev-zh-01", "lang": "zh", "memories": ["用户对青霉素过敏", ...],
     "queries": [{"q": "我对什么药物过敏", "expect": ["青霉素"]}, ...]}

Each case's memories are stored the way a user stores them — one ``add(text, infer=False)`` each, in
a fresh user scope; a memory given as ``{"text", "created_at"}`` is stored as a message said at that
time (a dated conversation: questions such as "what did I cook yesterday?" are read against it) — and
each question is searched in that scope; it is found at k when one of the
first k memories contains one of its ``expect`` strings. Modes: ``vector`` (no stage), ``default`` (the
search a user gets without flags: the configured defaults) and ``full`` (keyword search and rerank).
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from memlane.evaluation.modes import MODES
from memlane.memory import Memory



def load(path: str | Path) -> list[dict[str, Any]]:
    cases = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        case = json.loads(line)
        if not isinstance(case.get("memories"), list) or not isinstance(case.get("queries"), list):
            raise ValueError(f"{path}:{number}: a case needs 'memories' and 'queries' lists")
        if not all(isinstance(m, str) or (isinstance(m, dict) and isinstance(m.get("text"), str))
                   for m in case["memories"]):
            raise ValueError(f"{path}:{number}: each memory is a string or an object with a 'text'")
        cases.append(case)
    return cases


def _message(item: str | dict[str, Any]) -> str | list[dict[str, Any]]:
    """What ``add`` stores for a case's memory: its text, or a message said at its ``created_at``."""
    if isinstance(item, str):
        return item
    said = {"created_at": item["created_at"]} if "created_at" in item else {}
    return [{"role": "user", "content": item["text"], **said}]


def run(memory: Memory, cases: list[dict[str, Any]], modes: tuple[str, ...] = tuple(MODES)) -> dict[str, Any]:
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise ValueError(f"modes must be among {', '.join(MODES)}; got {unknown}")
    scopes = {}
    for case in cases:
        scopes[case["id"]] = scope = f"multilingual-{case['id']}-{uuid.uuid4().hex[:6]}"
        for item in case["memories"]:
            memory.add(_message(item), user_id=scope, infer=False)
    reports: dict[str, Any] = {"engine": memory.embeddings.name, "cases": len(cases),
                               "questions": sum(len(c["queries"]) for c in cases), "modes": {}}
    for mode in modes:
        found: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        misses, latencies = [], []
        for case in cases:
            for query in case["queries"]:
                started = time.perf_counter()
                flags = MODES[mode] or {}
                hits = memory.search(query["q"], user_id=scopes[case["id"]], limit=3, **flags)["results"]
                latencies.append(time.perf_counter() - started)
                matched = [any(e in hit["memory"] for e in query["expect"]) for hit in hits]
                found[case["lang"]].append((bool(matched) and matched[0], any(matched)))
                if not any(matched):
                    misses.append({"case": case["id"], "q": query["q"], "expect": query["expect"],
                                   "got": [hit["memory"] for hit in hits]})
        every = [f for rows in found.values() for f in rows]
        reports["modes"][mode] = {
            "by_lang": {lang: _rates(rows) for lang, rows in sorted(found.items())},
            "overall": _rates(every),
            "worst_hit@3": min(_rates(rows)["hit@3"] for rows in found.values()) if found else None,
            "search_ms_p50": round(1000 * statistics.median(latencies), 2) if latencies else None,
            "misses": misses,
        }
    return reports


def _rates(rows: list[tuple[bool, bool]]) -> dict[str, Any]:
    return {"hit@1": round(sum(a for a, _ in rows) / len(rows), 3), "hit@3": round(sum(b for _, b in rows) / len(rows), 3),
            "questions": len(rows)}
