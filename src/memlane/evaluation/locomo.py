"""``memlane eval locomo``: evidence recall over LoCoMo dialog turns, stored the way a user stores them.

Each session is one ``add`` of its turns as chat messages named by their speaker (the image caption,
when a turn shares one, after its text), with the session's time (``created_at``: the session's
start, a second per turn), ``infer=False``, in the conversation's own user scope, with the
configuration under test (the default one unless told otherwise). Each question is searched inside its
conversation, and recall@k = |evidence ∩ top-k turns| / |evidence|, averaged over questions with
evidence. Modes: ``default`` (the search a user gets without flags), ``vector``, ``hybrid`` (keywords
and vectors), ``full`` (hybrid and rerank). Categories: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial; "overall" is 1–4. Data format: LoCoMo's own JSON (a list of
``{sample_id, conversation: {speaker_a, speaker_b, session_N, session_N_date_time}, qa}``).
"""

from __future__ import annotations

import itertools
import json
import re
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from memlane.evaluation.modes import MODES
from memlane.memory import Memory



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
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [image: {turn['blip_caption']}]"
            created = (start + timedelta(seconds=index)).isoformat() if start else None
            out.append({"dia_id": turn["dia_id"], "text": text, "speaker": turn["speaker"], "session_date": date, "session": number,
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
        mode: str = "default") -> dict[str, Any]:
    """One mode's report; search latency includes embedding each question."""
    return run_modes(memory, data, ks=ks, modes=(mode,))[mode]


@dataclass
class Question:
    conversation: str
    category: str
    text: str
    wanted: set[str]


@dataclass
class Loaded:
    """Conversations stored in ``memory``, each in its own scope, and the questions with evidence."""

    scopes: dict[str, str]
    questions: list[Question]
    unmatched: int
    #: memory id -> the dialog turn it stores
    turn_of: dict[str, str] = field(default_factory=dict)


def load_conversations(memory: Memory, data: list[dict[str, Any]]) -> Loaded:
    """Store every conversation through ``add``, a session a call (once; embedding is the slow part)."""
    scopes: dict[str, str] = {}
    questions: list[Question] = []
    unmatched = 0
    turn_of: dict[str, str] = {}
    for sample in data:
        scope = scopes[sample["sample_id"]] = f"locomo-{sample['sample_id']}-{uuid.uuid4().hex[:6]}"
        conversation = turns(sample["conversation"])
        for _, session in itertools.groupby(conversation, key=lambda t: t["session"]):
            session = list(session)
            added = memory.add([{"role": "user", "content": t["text"], "name": t["speaker"],
                                 **({"created_at": t["created_at"]} if t["created_at"] else {})} for t in session],
                               user_id=scope, infer=False)
            turn_of.update((r["id"], t["dia_id"]) for r, t in zip(added["results"], session))
        known = {t["dia_id"] for t in conversation}
        for qa in sample["qa"]:
            wanted = evidence_ids(qa.get("evidence", []))
            unmatched += len(wanted - known)
            if wanted & known:
                questions.append(Question(sample["sample_id"], str(qa["category"]), qa["question"], wanted & known))
    return Loaded(scopes, questions, unmatched, turn_of)


def search_all(memory: Memory, loaded: Loaded, mode: str, depth: int) -> tuple[list[list[str]], list[float]]:
    """Each question's ranked turn ids in ``mode`` (to ``depth``), and each search's seconds."""
    ranked, latencies = [], []
    for question in loaded.questions:
        started = time.perf_counter()
        hits = memory.search(question.text, user_id=loaded.scopes[question.conversation], limit=depth,
                             **MODES[mode])["results"]
        latencies.append(time.perf_counter() - started)
        ranked.append([loaded.turn_of.get(hit["id"], "") for hit in hits])
    return ranked, latencies


def recalls(loaded: Loaded, ranked: list[list[str]], ks: Sequence[int]) -> list[dict[int, float]]:
    """Recall@k of each question: the share of its evidence turns in the top k."""
    return [{k: len(q.wanted & set(r[:k])) / len(q.wanted) for k in ks} for q, r in zip(loaded.questions, ranked)]


def run_modes(memory: Memory, data: list[dict[str, Any]], *, ks: Sequence[int] = (1, 5, 10, 25, 50),
              modes: Sequence[str] = ("default",)) -> dict[str, dict[str, Any]]:
    """A report per mode, from one insertion of each conversation (embedding the turns is the slow
    part). With several modes every question is embedded before the searches are timed, so that
    all modes' ``search_ms`` exclude it alike (``search_ms_includes_embedding`` says which)."""
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise ValueError(f"modes must be among {', '.join(MODES)}; got {list(modes)}")
    loaded = load_conversations(memory, data)
    warm = len(modes) > 1
    if warm:
        for question in loaded.questions:
            if memory.embeddings.has_tokens:
                memory.embeddings.query_tokens(question.text)  # fills the query-vector cache too
            else:
                memory.embeddings.query(question.text)
    reports = {}
    for mode in modes:
        ranked, latencies = search_all(memory, loaded, mode, max(ks))
        reports[mode] = _report(mode, memory, ks, loaded, recalls(loaded, ranked, ks), latencies, not warm)
    return reports


#: what ``cross_validate`` tunes by default: the candidate pool, the fusion, actor and rerank weights
DEFAULT_GRID: dict[str, list[Any]] = {
    "candidates": [100, 200],
    "keyword_weight": [0.5, 0.7],
    "actor_weight": [0.2, 0.3],
    "rerank_weight": [0.2, 0.3],
}


def settings_grid(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every combination of the values in ``grid`` (a setting of ``retrieval`` -> values to try)."""
    names = list(grid)
    return [dict(zip(names, values)) for values in itertools.product(*(grid[n] for n in names))]


def cross_validate(memory: Memory, data: list[dict[str, Any]], *, grid: dict[str, list[Any]] | None = None,
                   mode: str = "default", ks: Sequence[int] = (1, 5, 10, 25, 50), select_k: int = 10) -> dict[str, Any]:
    """Leave-one-conversation-out tuning: for each conversation, the settings of ``grid`` with the best
    overall R@``select_k`` on the other conversations, measured on it. Reports the held-out figures
    (pooled over all questions, and the mean of the folds) next to the all-conversations figures of
    the best setting overall (tuned and measured on the same data) and of the configured setting."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    grid = DEFAULT_GRID if grid is None else grid
    unknown = sorted(set(grid) - set(type(memory.config.retrieval).model_fields))
    if unknown:
        raise ValueError(f"grid names unknown retrieval settings: {', '.join(unknown)}")
    if select_k not in ks:
        ks = sorted({*ks, select_k})
    return cross_validate_loaded(memory, load_conversations(memory, data), grid=grid, mode=mode, ks=ks,
                                 select_k=select_k)


def cross_validate_loaded(memory: Memory, loaded: Loaded, *, grid: dict[str, list[Any]], mode: str,
                          ks: Sequence[int], select_k: int) -> dict[str, Any]:
    """``cross_validate`` over conversations already stored."""
    conversations = list(loaded.scopes)
    if len(conversations) < 2:
        raise ValueError("cross-validation needs at least two conversations")
    configured = memory.config.retrieval
    settings = settings_grid(grid)
    per_setting: list[list[dict[int, float]]] = []
    try:
        for setting in settings:
            memory.config.retrieval = configured.model_copy(update=setting)
            ranked, _ = search_all(memory, loaded, mode, max(ks))
            per_setting.append(recalls(loaded, ranked, ks))
        memory.config.retrieval = configured
        ranked, _ = search_all(memory, loaded, mode, max(ks))
        baseline = recalls(loaded, ranked, ks)
    finally:
        memory.config.retrieval = configured

    held_out, folds, best_all = select(loaded, settings, per_setting, ks, select_k)
    fold_mean = {f"R@{k}": round(statistics.mean(f["overall_1_4"][f"R@{k}"] for f in folds
                                                 if f["overall_1_4"][f"R@{k}"] is not None), 1) for k in ks}
    return {
        "mode": mode, "engine": memory.embeddings.name, "select_k": select_k, "grid": grid,
        "settings_tried": len(settings), "questions": len(loaded.questions),
        "cross_validated": _summary(loaded, held_out, ks, set(conversations)),
        "cross_validated_fold_mean": fold_mean,
        "all_conversations_best": {"setting": settings[best_all],
                                   **_summary(loaded, per_setting[best_all], ks, set(conversations))},
        "configured": _summary(loaded, baseline, ks, set(conversations)),
        "by_setting": [{"setting": setting, **_summary(loaded, rows, ks, set(conversations))["overall_1_4"]}
                       for setting, rows in zip(settings, per_setting)],
        "folds": folds,
    }


def select(loaded: Loaded, settings: list[dict[str, Any]], per_setting: list[list[dict[int, float]]],
           ks: Sequence[int], select_k: int) -> tuple[list[dict[int, float]], list[dict[str, Any]], int]:
    """The held-out recalls (each question's under the setting chosen without its conversation), the
    folds, and the index of the setting best on all conversations. A setting is chosen by the mean
    R@``select_k`` of the training conversations' questions of categories 1-4 (ties: the first)."""
    conversations = list(loaded.scopes)

    def score(rows: list[dict[int, float]], where: set[str]) -> float:
        values = [r[select_k] for q, r in zip(loaded.questions, rows) if q.conversation in where
                  and q.category in OVERALL]
        return statistics.mean(values) if values else 0.0

    held_out: list[dict[int, float]] = [{} for _ in loaded.questions]
    folds = []
    for test in conversations:
        train = set(conversations) - {test}
        best = max(range(len(settings)), key=lambda i: score(per_setting[i], train))
        for n, question in enumerate(loaded.questions):
            if question.conversation == test:
                held_out[n] = per_setting[best][n]
        folds.append({"conversation": test, "setting": settings[best],
                      **_summary(loaded, per_setting[best], ks, {test})})
    best_all = max(range(len(settings)), key=lambda i: score(per_setting[i], set(conversations)))
    return held_out, folds, best_all


#: the categories of the overall figure (5, adversarial, is reported on its own)
OVERALL = ("1", "2", "3", "4")


def _table(values: dict[int, list[float]]) -> dict[str, float | None]:
    return {f"R@{k}": round(100 * statistics.mean(v), 1) if v else None for k, v in values.items()}


def _summary(loaded: Loaded, rows: list[dict[int, float]], ks: Sequence[int],
             conversations: set[str]) -> dict[str, Any]:
    """Overall (categories 1-4) and per-category recall of the questions of ``conversations``."""
    by_category: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for question, row in zip(loaded.questions, rows):
        if question.conversation in conversations:
            for k in ks:
                by_category[question.category][k].append(row[k])
    overall = {k: [v for cat in OVERALL if cat in by_category for v in by_category[cat][k]] for k in ks}
    return {"overall_1_4": _table(overall),
            "by_category": {cat: {**_table(by_category[cat]), "questions": len(by_category[cat][ks[0]])}
                            for cat in sorted(by_category)}}


def _report(mode: str, memory: Memory, ks: Sequence[int], loaded: Loaded, rows: list[dict[int, float]],
            latencies: list[float], with_embedding: bool) -> dict[str, Any]:
    ordered = sorted(latencies)
    by_conversation = {}
    for conversation in loaded.scopes:
        summary = _summary(loaded, rows, ks, {conversation})["overall_1_4"]
        count = sum(1 for q in loaded.questions if q.conversation == conversation and q.category in OVERALL)
        by_conversation[conversation] = {**summary, "questions": count}
    return {
        "mode": mode,
        "engine": memory.embeddings.name,
        "questions": len(latencies),
        **_summary(loaded, rows, ks, set(loaded.scopes)),
        "by_conversation": by_conversation,
        "search_ms": {"p50": round(1000 * ordered[len(ordered) // 2], 2),
                      "p95": round(1000 * ordered[int(len(ordered) * 0.95)], 2)} if ordered else {},
        "search_ms_includes_embedding": with_embedding,
        "unmatched_evidence": loaded.unmatched,
    }
