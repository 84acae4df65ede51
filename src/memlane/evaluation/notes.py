"""``memlane eval notes``: run note cases (agent notes, everyday statements) through ``Memory.add``.

Case format: ``tests/data/README.md`` (note cases). Each case runs in a fresh user
scope: its steps are added in order with ``infer=True``, then the active
memories are checked:

- ``expect``: each group of words appears together (case-insensitive) in one active memory;
- ``forbid``: no active memory contains the phrase;
- ``stale``: an active memory that still contains ``old`` also contains one of ``unless_any``;
- always: an ``add`` that changes nothing says why for every message (``skipped``), and every
  English word of a memory that is not in the input is a real English word (lemminflect's
  dictionary), so a rewrite never invents words ("noes", "particularlies").
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memlane.evaluation.reconcile import load_cases, summarize
from memlane.ingest import english
from memlane.memory import Memory

__all__ = ["load_cases", "run", "run_case", "invented_words"]

_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
#: words memlane itself writes (the subject of a rewritten statement)
_OWN_WORDS = frozenset({"user", "user's", "agent", "agent's"})


@dataclass
class CaseResult:
    id: str
    kind: str
    lang: str
    passed: bool
    failures: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)


def _is_english_word(word: str) -> bool:
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(word) or getAllLemmas(word.lower()))


def invented_words(memory_text: str, source_text: str) -> list[str]:
    """Words of ``memory_text`` that are neither in ``source_text`` nor real English."""
    given = {w.casefold().replace("’", "'") for w in _WORD.findall(source_text)}
    found = []
    for word in _WORD.findall(memory_text):
        folded = word.casefold().replace("’", "'")
        if folded in given or folded in _OWN_WORDS:
            continue
        base = folded[:-2] if folded.endswith("'s") else folded
        if base in given or base in _OWN_WORDS or base in english.FUNCTION_WORDS or _is_english_word(base):
            continue
        found.append(word)
    return found


def _has(haystack: str, needle: str) -> bool:
    return needle.casefold() in haystack.casefold()


def _said(step: str | list[dict[str, Any]]) -> str:
    """The words of one step: a message, or the contents of a list of chat messages."""
    return step if isinstance(step, str) else " ".join(str(m.get("content", "")) for m in step)


def run_case(memory: Memory, case: dict[str, Any]) -> CaseResult:
    user = f"eval-{case['id']}-{uuid.uuid4().hex[:8]}"
    failures: list[str] = []
    for step in case["steps"]:
        outcome = memory.add(step, user_id=user, infer=True)
        if outcome["status"] != "ok":
            failures.append(f"status {outcome['status']} for {step!r}: {outcome.get('reason')}")
        if not outcome["results"] and not outcome.get("skipped"):
            failures.append(f"{step!r} changed nothing and no reason was given")
    active = [item["memory"] for item in memory.get_all(user_id=user, limit=1000)["results"]]
    for group in case.get("expect", []):
        if not any(all(_has(text, word) for word in group) for text in active):
            failures.append(f"no active memory contains {' + '.join(map(repr, group))}")
    for phrase in case.get("forbid", []):
        offenders = [text for text in active if _has(text, phrase)]
        if offenders:
            failures.append(f"{phrase!r} in {offenders[0]!r}")
    for rule in case.get("stale", []):
        for text in active:
            if _has(text, rule["old"]) and not any(_has(text, w) for w in rule["unless_any"]):
                failures.append(f"stale {rule['old']!r} still active: {text!r}")
    source = " ".join(_said(step) for step in case["steps"])
    for text in active:
        invented = invented_words(text, source)
        if invented:
            failures.append(f"invented words {invented} in {text!r}")
    return CaseResult(case["id"], case.get("kind", ""), case.get("lang", ""), not failures, failures, active)


def run(memory: Memory, cases: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return summarize(memory.engine.name, [run_case(memory, case) for case in cases], ("kind", "lang"))
