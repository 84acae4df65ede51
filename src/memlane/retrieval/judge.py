"""``filter_memories``: drop results that do not answer the query.

Offline: a memory stays when its cosine similarity reaches ``MIN_COSINE`` or it
contains at least half of the query's keyword terms (calibration on the LoCoMo
dev set in benchmarks/RESULTS.md). With an LLM configured, the model judges all
results in one call. Either way a list whose first hit is clearly relevant is
never emptied.
"""

from __future__ import annotations

from typing import Any

from memlane.text import keywords
from memlane.core.query import Query
from memlane.retrieval.candidates import Candidate

MIN_COSINE = 0.25
MIN_COVERAGE = 0.5
#: a first hit at least this similar is "clearly relevant"
CLEAR_COSINE = 0.35


def _coverage(query: Query, text: str) -> float:
    """The share of the query's keyword terms the text contains."""
    return len(set(query.terms) & set(keywords.analyze(text))) / len(query.terms) if query.terms else 0.0


def clearly_relevant(query: Query, candidate: Candidate) -> bool:
    return candidate.cosine >= CLEAR_COSINE or _coverage(query, candidate.record.text) >= MIN_COVERAGE


def offline_filter(query: Query, candidates: list[Candidate]) -> list[Candidate]:
    kept = [c for c in candidates if c.cosine >= MIN_COSINE or _coverage(query, c.record.text) >= MIN_COVERAGE]
    return _never_empty(query, candidates, kept)


JUDGE_PROMPT = """Which memories help answer the query? Query: {query}

Memories:
{memories}

Answer with only a JSON object: {{"relevant": [<numbers of the helpful memories>]}}"""


def llm_filter(llm: Any, query: Query, candidates: list[Candidate]) -> list[Candidate]:
    from memlane.llms.parsing import parse_json_answer

    if not candidates:
        return candidates
    listing = "\n".join(f"{n}. {c.record.text}" for n, c in enumerate(candidates))
    answer = parse_json_answer(llm.chat([{"role": "user", "content": JUDGE_PROMPT.format(query=query.text, memories=listing)}]))
    chosen = answer.get("relevant") if isinstance(answer, dict) else answer
    if not isinstance(chosen, list):
        raise ValueError("the judge gave no list of relevant memories")
    wanted = {int(i) for i in chosen if isinstance(i, (int, str)) and str(i).isdigit()}
    return _never_empty(query, candidates, [c for n, c in enumerate(candidates) if n in wanted])


def _never_empty(query: Query, candidates: list[Candidate], kept: list[Candidate]) -> list[Candidate]:
    if not kept and candidates and clearly_relevant(query, candidates[0]):
        return candidates[:1]
    return kept
