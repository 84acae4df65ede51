"""Agent context: whether a conversation needs long-term memory, and what memory it needs.

Pure functions over a conversation and candidate memories; ``Memory`` fetches
the candidates and calls them (docs/context.md).

* ``decide``: the gate behind ``should_search_memory``. Signals, each worth
  ``weight`` points per distinct hit (all of them by default, as seed 004
  scores; ``max_hits_per_signal`` caps them): memory words (remember, last
  time, 记得, 上次 ...), question words (what, ?, 什么, 吗 ...), pronouns of an
  ongoing relationship (my, our, we, 我的, 我们 ...) and, in memlane's tuned
  gate, references to earlier turns (you said, we discussed, 你说过, 刚才 ...).
  Search when the points reach ``threshold``.
* ``scope_pools``: which memories a call may see (a user's, an agent's, or all of them).
* ``score``: a memory's ``match_score`` combines the search terms it contains
  (``context_terms``) with the cosine similarity of the conversation's recent
  turns, so a paraphrase with no shared word is still found.
* ``group``: matches split by category, agent vs user (scope) x profile vs
  event (``memory_type``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel

from memlane.core import filters as flt
from memlane.core.config import ContextConfig
from memlane.core.models import MemoryRecord, Message
from memlane.retrieval import context_terms
from memlane.retrieval.context_terms import Term
from memlane.text.normalize import has_cjk, to_simplified

# -- the gate ------------------------------------------------------------------------------------

#: signal -> (config field holding its weight, markers). English markers match whole words,
#: Chinese ones as substrings of the Simplified text.
SIGNALS: dict[str, tuple[str, tuple[str, ...]]] = {
    "memory_keywords": ("memory_keyword_weight", (
        "remember", "remembered", "remembering", "recall", "recalled", "recollect", "memory", "memories",
        "forgot", "forget", "forgotten", "remind me", "last time", "previously", "previous", "before",
        "as usual", "the usual", "my usual",
        "记得", "记住", "记不记得", "回忆", "想起", "上次", "上回", "之前", "以前", "忘了", "忘记", "提醒我",
        "老样子", "照旧")),
    "questions": ("question_weight", (
        "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "?",
        "什么", "哪", "谁", "为什么", "怎么", "如何", "多少", "几点", "吗", "呢", "？")),
    "pronouns": ("pronoun_weight", (
        "my", "mine", "our", "ours", "we", "us", "myself",
        "我的", "我们", "咱们", "咱", "我家", "我妈", "我爸", "我女儿", "我儿子", "我老婆", "我老公", "我太太",
        "我丈夫", "我男朋友", "我女朋友", "我朋友", "我同事", "我老板", "我公司")),
    "references": ("reference_weight", (
        "as i said", "as i mentioned", "i told you", "i mentioned", "you said", "you mentioned", "you told me",
        "you suggested", "you recommended", "we discussed", "we talked", "we spoke", "earlier", "the other day",
        "last week", "last month", "last year", "back then", "again", "same as before",
        "说过", "提到", "提过", "告诉过你", "你推荐", "你建议", "聊过", "讨论过", "那次", "刚才", "前几天",
        "上周", "上个月", "去年", "跟以前一样", "再说一遍")),
}


class SignalScore(BaseModel):
    """One signal of the gate: its distinct hits in the conversation and the system prompt."""

    signal: str
    weight: float
    hits: list[str]
    system_prompt_hits: list[str]
    points: float


class SearchDecision(BaseModel):
    """``should_search_memory(..., explain=True)``: the decision and how it was reached."""

    should_search: bool
    score: float
    threshold: float
    signals: list[SignalScore]
    #: the messages the gate read (all of them, or the last ``recent_turns`` user messages)
    turns_read: int


def _pattern(marker: str) -> re.Pattern[str]:
    if has_cjk(marker) or not marker[0].isalnum():
        return re.compile(re.escape(marker))
    return re.compile(r"(?<![a-z0-9'])" + re.escape(marker) + r"(?![a-z0-9])")


#: longest markers first, so "as i mentioned" is one hit, not also "i mentioned"
_PATTERNS = {name: sorted(((i, m, _pattern(m)) for i, m in enumerate(markers)), key=lambda x: -len(x[1]))
             for name, (_, markers) in SIGNALS.items()}


def _normalise(text: str) -> str:
    return to_simplified(text).lower().replace("’", "'")


def hits(text: str, signal: str) -> list[str]:
    """The distinct markers of ``signal`` that ``text`` contains, in the order of the marker list."""
    normal = _normalise(text)
    found = []
    for index, marker, pattern in _PATTERNS[signal]:
        normal, count = pattern.subn(" \x00 ", normal)  # a consumed span cannot feed a shorter marker
        if count:
            found.append((index, marker))
    return [marker for _, marker in sorted(found)]


def gate_turns(conversation: list[Message], settings: ContextConfig) -> list[str]:
    """The texts the gate reads: every message (``gate_reads="conversation"``, seed 004), or the last
    ``recent_turns`` user messages (every non-system message when there is no user message)."""
    if settings.gate_reads == "conversation":
        return [m.content for m in conversation]
    said = [m.content for m in conversation if m.role == "user"]
    if not said:
        said = [m.content for m in conversation if m.role != "system"]
    return said[-settings.recent_turns:]


def decide(conversation: list[Message], system_prompt: str, settings: ContextConfig) -> SearchDecision:
    """The gate's decision; an empty conversation never needs a search (seed 004: empty input is handled
    gracefully), whatever the system prompt says."""
    turns = gate_turns(conversation, settings)
    text = "\n".join(turns)
    cap = settings.max_hits_per_signal
    signals, total = [], 0.0
    for name, (weight_field, _) in SIGNALS.items():
        weight = float(getattr(settings, weight_field))
        found = hits(text, name)
        in_prompt = hits(system_prompt, name) if system_prompt and turns else []
        points = weight * (len(found[:cap]) + settings.system_prompt_factor * len(in_prompt[:cap]))
        signals.append(SignalScore(signal=name, weight=weight, hits=found, system_prompt_hits=in_prompt,
                                   points=round(points, 6)))
        total += points
    total = round(total, 6)
    return SearchDecision(should_search=bool(turns) and total >= settings.threshold, score=total,
                          threshold=settings.threshold, signals=signals, turns_read=len(turns))


# -- what a call may see ---------------------------------------------------------------------------

def _eq(column: str, value: str | None) -> flt.Node:
    return flt.Compare(flt.Field(column=column), "eq", value)


def scope_pools(user_id: str | None, agent_id: str | None, *, user_ignored: bool = False) -> dict[str, flt.Node]:
    """The memories a context search reads, as ``{"agent": where, "user": where}`` (or ``{"all": ...}``).

    * agent memories: ``agent_id`` = the agent and no ``user_id`` (what the agent knows of itself);
    * with ``user_id``: the user's memories, recorded without an agent or with this agent (not
      those the user shared with a different agent);
    * ``user_id=None`` with ``agent_id``: the memories of every user recorded with this agent
      (the users it has met);
    * neither: every memory of the store (seed 004: "if None, searches all memories"; on the server,
      the caller's tenant);
    * ``user_ignored``: the call named a user id that is not a valid id (seed 004: "invalid user IDs
      are silently ignored"): it names nobody, so no user memories are read, and the call is not
      widened to every memory.
    """
    if user_id is None and agent_id is None:
        return {} if user_ignored else {"all": flt.MATCH_ALL}
    pools: dict[str, flt.Node] = {}
    if agent_id is not None:
        pools["agent"] = flt.conjoin(_eq("agent_id", agent_id), _eq("user_id", None))
    if user_id is not None:
        agents = (flt.Or((_eq("agent_id", None), _eq("agent_id", agent_id))),) if agent_id is not None else ()
        pools["user"] = flt.conjoin(_eq("user_id", user_id), *agents)
    elif agent_id is not None and not user_ignored:
        pools["user"] = flt.conjoin(_eq("agent_id", agent_id), flt.Compare(flt.Field(column="user_id"), "exists"))
    return pools


def semantic_query(conversation: list[Message], recent_turns: int, max_chars: int = 1000) -> str:
    """The recent turns (any speaker but the system), latest last, cut to what the model reads."""
    said = [m.content for m in conversation if m.role != "system"][-recent_turns:]
    return "\n".join(said)[-max_chars:]


# -- scoring and grouping ----------------------------------------------------------------------------

CATEGORIES = ("agent_profile_matches", "agent_event_matches", "user_profile_matches", "user_event_matches")


def category(record: MemoryRecord) -> str:
    """Agent vs user from the scope (an agent memory has an agent and no user); event vs profile
    from ``memory_type``: ``event`` and untyped memories (messages stored verbatim) are events,
    facts, preferences, profiles and procedures are the profile."""
    who = "agent" if record.agent_id is not None and record.user_id is None else "user"
    kind = "event" if record.memory_type in (None, "event") else "profile"
    return f"{who}_{kind}_matches"


@dataclass(slots=True)
class Match:
    record: MemoryRecord
    cosine: float
    terms: list[Term]
    term_score: float
    score: float

    def to_item(self) -> dict:
        item = self.record.to_item(self.score)
        item["content"] = self.record.text
        item["match_score"] = self.score
        item["matched_terms"] = [t.text for t in self.terms]
        item["scores"] = {"terms": round(self.term_score, 6), "vector": round(self.cosine, 6)}
        return item


def score(candidates: Iterable[tuple[MemoryRecord, float]], terms: list[Term], *, semantic_weight: float,
          min_similarity: float) -> list[Match]:
    """Score each distinct candidate (record, cosine to the recent turns); keep those that contain a
    search term or whose cosine reaches ``min_similarity``; best first."""
    seen: set[str] = set()
    matches = []
    for record, cosine in candidates:
        if record.id in seen:
            continue
        seen.add(record.id)
        found = context_terms.matched(terms, record.text)
        if not found and cosine < min_similarity:
            continue
        lexical = context_terms.term_score(found)
        value = (1 - semantic_weight) * lexical + semantic_weight * max(cosine, 0.0)
        matches.append(Match(record, float(cosine), found, lexical, round(value, 6)))
    matches.sort(key=lambda m: (-m.score, m.record.id))
    return matches


def group(terms: list[Term], matches: list[Match], max_results: int) -> dict:
    """The documented result: search terms, up to ``max_results`` matches per category, the total."""
    out: dict = {"search_terms": [t.text for t in terms]}
    for name in CATEGORIES:
        out[name] = []
    for m in matches:
        bucket = out[category(m.record)]
        if len(bucket) < max_results:
            bucket.append(m.to_item())
    out["total_matches"] = sum(len(out[name]) for name in CATEGORIES)
    return out
