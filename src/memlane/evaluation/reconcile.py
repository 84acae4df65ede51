"""``memlane eval reconcile``: run labelled reconciliation cases through ``Memory.add``.

Case format and matching rules: ``tests/data/README.md`` (reconcile cases).
Each case runs in a fresh scope: its existing memories are stored verbatim,
the new turn goes through ``add(infer=True)``, then the decisions and the
active memories are checked against the labels.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlane.memory import Memory
from memlane.core.models import NewMemory


@dataclass
class CaseResult:
    id: str
    category: str
    lang: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _has(haystack: str, needle: str) -> bool:
    return needle.casefold() in haystack.casefold()


def run_case(memory: Memory, case: dict[str, Any]) -> CaseResult:
    user = f"eval-{case['id']}-{uuid.uuid4().hex[:8]}"
    stored = memory.insert([NewMemory(text=e["text"], user_id=user) for e in case["existing"]])
    label_of = {record.id: e["id"] for record, e in zip(stored, case["existing"])}
    before = {record.id: record.text for record in stored}
    outcome = memory.add(case["messages"], user_id=user, infer=True)
    decisions = [{**d, "target": label_of.get(d["id"])} for d in outcome["results"] + outcome["unchanged"]]
    active = [item["memory"] for item in memory.get_all(user_id=user, limit=1000)["results"]]
    active_ids = {item["id"]: item["memory"] for item in memory.get_all(user_id=user, limit=1000)["results"]}
    expect = case["expect"]
    failures = []
    if outcome["status"] != "ok":
        failures.append(f"status {outcome['status']}: {outcome.get('reason')}")
    facts = len(outcome["facts"])
    if facts < expect.get("facts_min", 0):
        failures.append(f"{facts} facts extracted, expected at least {expect['facts_min']}")
    if expect.get("facts_max") is not None and facts > expect["facts_max"]:
        failures.append(f"{facts} facts extracted, expected at most {expect['facts_max']}")
    used: set[int] = set()
    for required in expect["events"]:
        allowed = required["event"].split("|")
        match = None
        for n, d in enumerate(decisions):
            if n in used or d["event"] not in allowed or d["target"] != required["target"]:
                continue
            if d["event"] in ("ADD", "UPDATE") and not all(_has(d["memory"], s) for s in required.get("contains", [])):
                continue
            if d["event"] == "NONE" and active_ids.get(d["id"]) != before.get(d["id"]):
                continue
            match = n
            break
        if match is None:
            failures.append(f"missing {required['event']} {required['target'] or 'new memory'}"
                            + (f" containing {required['contains']}" if required.get("contains") else ""))
        else:
            used.add(match)
    for needle in expect["final_contains"]:
        if not any(_has(text, needle) for text in active):
            failures.append(f"no active memory contains {needle!r}")
    for needle in expect["final_absent"]:
        offenders = [text for text in active if _has(text, needle)]
        if offenders:
            failures.append(f"{needle!r} still active in {offenders[0]!r}")
    return CaseResult(case["id"], case.get("category", ""), case.get("lang", ""), not failures, failures,
                      [{"event": d["event"], "target": d["target"], "memory": d["memory"]} for d in decisions],
                      outcome["facts"])


def summarize(engine: str, results: list[Any], groups: tuple[str, ...]) -> dict[str, Any]:
    """Totals of case results (each with ``passed`` and the attributes named in ``groups``), and per group."""
    by: dict[str, dict[str, list[int]]] = {key: defaultdict(lambda: [0, 0]) for key in groups}
    for r in results:
        for key in groups:
            tally = by[key][getattr(r, key)]
            tally[0] += r.passed
            tally[1] += 1
    passed = sum(r.passed for r in results)
    return {
        "engine": engine,
        "passed": passed,
        "total": len(results),
        "pass_rate": round(passed / len(results), 4) if results else 0.0,
        **{f"by_{key}": {k: {"passed": v[0], "total": v[1]} for k, v in sorted(by[key].items())} for key in groups},
        "cases": [r.__dict__ for r in results],
    }


def run(memory: Memory, cases: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return summarize(memory.engine.name, [run_case(memory, case) for case in cases], ("category", "lang"))
