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
from memlane.text import small_talk
from memlane.text.relations import PETS_EN, PETS_ZH, PLURAL_RELATIONS_EN, RELATIONS_EN, RELATIONS_ZH
from memlane.text.normalize import has_cjk, to_simplified

# -- the gate ------------------------------------------------------------------------------------

#: what a person's answers depend on besides the people around them
_CONSTRAINTS_EN = frozenset("""allergy allergies diet budget schedule taste tastes preferences usual routine plan plans
goals goal training health condition job work commute home house flat apartment car""".split())
_CONSTRAINTS_ZH = ("我的口味", "我的饮食", "我的预算", "我的安排", "我的计划", "我的习惯", "我平时", "我家", "我的工作")

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
        "did you say", "did i say", "did i tell you", "did i mention", "have i told you", "i said", "we decided",
        "we agreed", "we planned",
        "说过", "提到", "提过", "告诉过你", "你推荐", "你建议", "聊过", "讨论过", "那次", "刚才", "前几天",
        "上周", "上个月", "去年", "跟以前一样", "再说一遍", "我说的", "我跟你说", "你说的", "我们定的")),
    # asking for know-how: how a thing is done is the same for everyone (a negative weight)
    "know_how": ("know_how_weight", (
        "how do i", "how can i", "how to", "how should i", "how would i", "how do you", "why is my", "why does my",
        "why do my", "what's wrong with my", "is it true", "what is the difference", "what's the difference",
        "怎么让", "怎样才能", "怎么才能", "如何", "为什么我", "是什么意思", "什么是", "有什么区别")),
    # someone close to the speaker, their pets, their own constraints: what memory knows of them matters
    "personal": ("personal_weight", (
        *(f"{owner} {who}" for owner in ("my", "our") for who in sorted(
            RELATIONS_EN.keys() | PLURAL_RELATIONS_EN | PETS_EN | _CONSTRAINTS_EN)),
        *RELATIONS_ZH, *PETS_ZH, *_CONSTRAINTS_ZH)),
    # a choice made for the speaker: what suits them depends on what is known of them
    "requests": ("request_weight", (
        "recommend", "recommendation", "recommendations", "suggest", "suggestion", "suggestions", "idea", "ideas",
        "pick", "choose", "plan", "what should i", "which should i", "where should i", "should i get",
        "should i buy", "should i wear", "should i try", "for me", "suit me", "suits me", "about me", "i'd enjoy",
        "i would enjoy", "i'd like", "i like", "i can", "can i", "am i", "i'm on", "my usual", "where i live",
        "near me", "me and",
        "推荐", "建议", "适合", "合适", "什么好", "哪个好", "想想", "安排", "挑", "选", "我能", "我可以", "按我", "我平时",
        "给我做", "我家附近", "我的口味")),
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


@dataclass(frozen=True, slots=True)
class MemoryEvidence:
    """What the named scope holds that bears on the conversation's last user turn (``Searcher.evidence``)."""

    #: whether the scope holds any valid memory
    has_memories: bool
    #: words of the last user turn that some memory of the scope contains
    matched_terms: tuple[str, ...] = ()
    #: the highest cosine similarity of a memory to the last user turn
    best_similarity: float = 0.0


#: what the last user turn brings with it: a text after a colon, a quotation, code
_MATERIAL = re.compile(r"[:：]\s*\S.{12,}|[\"“「『'‘].{8,}?[\"”」』'’]|```|\bdef \w+\(|\bfor \w+ in \b|[{};]\s*$|=>")


def last_user_turn(conversation: list[Message]) -> str:
    said = [m.content for m in conversation if m.role == "user"] or [m.content for m in conversation
                                                                       if m.role != "system"]
    return said[-1] if said else ""


def _small_talk(text: str) -> bool:
    return small_talk.is_small_talk_zh(text, to_simplified(text)) if has_cjk(text) else small_talk.is_small_talk_en(text)


@dataclass(frozen=True, slots=True)
class GateReading:
    """What the gate read of a conversation, before any weight: the hits of each signal, in the turns
    read and in the system prompt; whether the last user turn brings its material or is small talk;
    and what the named scope holds. ``judge`` weighs it (so one reading serves many settings)."""

    turns_read: int
    hits: dict[str, list[str]]
    prompt_hits: dict[str, list[str]]
    material: bool
    small_talk: bool
    evidence: MemoryEvidence | None


def read(conversation: list[Message], system_prompt: str, settings: ContextConfig,
         evidence: MemoryEvidence | None = None) -> GateReading:
    """The hits of every signal in the turns the gate reads (``gate_reads``, ``recent_turns``)."""
    turns = gate_turns(conversation, settings)
    text = "\n".join(turns)
    last = last_user_turn(conversation)
    return GateReading(
        turns_read=len(turns), hits={name: hits(text, name) for name in SIGNALS},
        prompt_hits={name: hits(system_prompt, name) if system_prompt and turns else [] for name in SIGNALS},
        material=bool(_MATERIAL.search(last)), small_talk=bool(last) and _small_talk(last), evidence=evidence)


def _weigh(reading: GateReading, settings: ContextConfig) -> tuple[list[tuple], float, str | None]:
    """Each signal as (name, weight, hits, system-prompt hits, points), the total, and a veto (or None)."""
    cap = settings.max_hits_per_signal
    rows: list[tuple] = []
    for name, (weight_field, _) in SIGNALS.items():
        weight = float(getattr(settings, weight_field))
        found, in_prompt = reading.hits[name], reading.prompt_hits[name]
        rows.append((name, weight, found, in_prompt,
                     weight * (len(found[:cap]) + settings.system_prompt_factor * len(in_prompt[:cap]))))
    veto = None
    if settings.material_penalty and reading.material:
        rows.append(("material", -settings.material_penalty, ["material"], [], -settings.material_penalty))
    evidence = reading.evidence
    if evidence is not None:
        terms = list(evidence.matched_terms)
        rows.append(("memory_terms", settings.memory_term_weight, terms, [],
                     settings.memory_term_weight * len(terms[:cap])))
        close = evidence.best_similarity >= settings.memory_similarity
        rows.append(("memory_similarity", settings.memory_similarity_weight,
                     [f"{evidence.best_similarity:.3f}"] if close else [], [],
                     settings.memory_similarity_weight if close else 0.0))
        if settings.require_memories and not evidence.has_memories:
            veto = "no_memories"
    if settings.skip_small_talk and reading.small_talk:
        veto = "small_talk"
    return rows, round(sum(row[4] for row in rows), 6), veto


def should_search(reading: GateReading, settings: ContextConfig) -> bool:
    """``judge(reading, settings).should_search`` without the explanation (cross-validation scores
    thousands of settings)."""
    _, total, veto = _weigh(reading, settings)
    return bool(reading.turns_read) and not veto and total >= settings.threshold


def judge(reading: GateReading, settings: ContextConfig) -> SearchDecision:
    """The weighted score of a reading and the decision: search when it reaches ``threshold`` and
    nothing vetoes it (small talk; a named scope without memories)."""
    rows, total, veto = _weigh(reading, settings)
    signals = [SignalScore(signal=name, weight=weight, hits=found, system_prompt_hits=in_prompt,
                           points=round(points, 6)) for name, weight, found, in_prompt, points in rows]
    if veto:
        signals.append(SignalScore(signal=veto, weight=0.0, hits=[veto], system_prompt_hits=[], points=0.0))
    return SearchDecision(should_search=bool(reading.turns_read) and not veto and total >= settings.threshold,
                          score=total, threshold=settings.threshold, signals=signals, turns_read=reading.turns_read)


def decide(conversation: list[Message], system_prompt: str, settings: ContextConfig,
           evidence: MemoryEvidence | None = None) -> SearchDecision:
    """The gate's decision; an empty conversation never needs a search (seed 004: empty input is handled
    gracefully), whatever the system prompt says. ``evidence``: what the named scope holds (None: no
    scope named, the keywords alone decide)."""
    return judge(read(conversation, system_prompt, settings, evidence), settings)


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
