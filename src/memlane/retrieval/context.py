"""Agent context: whether a conversation needs long-term memory, and what memory it needs.

Pure functions over a conversation and candidate memories; ``Memory`` fetches
the candidates and calls them (docs/context.md).

* ``decide``: the gate behind ``should_search_memory``. Signals, each worth
  ``weight`` points per distinct hit (all of them by default, as seed 004
  scores; ``max_hits_per_signal`` caps them): memory words (remember, last
  time, 记得, 上次 ...), question words (what, ?, 什么, 吗 ...), pronouns of an
  ongoing relationship (my, our, we, 我的, 我们 ...) and, in memlane's tuned
  gate, references to earlier turns (you said, we discussed, 你说过, 刚才 ...),
  requests to choose for the speaker, their own people and constraints, requests
  for know-how. Search when the points reach ``threshold``. The markers of each
  language (English, Chinese, Spanish, German, French, Portuguese, Italian,
  Russian, Japanese, Korean): ``context_markers``.
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
from memlane.retrieval import context_markers as markers
from memlane.retrieval import context_terms
from memlane.retrieval.context_terms import Term
from memlane.text import small_talk

# -- the gate ------------------------------------------------------------------------------------

#: signal -> (config field holding its weight, {language: markers}). The markers of each language and how
#: they match (English whole words; Chinese and Japanese substrings; Korean words with their particles;
#: accented Latin and Cyrillic words as whole words): ``context_markers``.
SIGNALS: dict[str, tuple[str, dict[str, tuple[str, ...]]]] = {
    "memory_keywords": ("memory_keyword_weight", markers.MARKERS["memory_keywords"]),
    "questions": ("question_weight", markers.MARKERS["questions"]),
    "pronouns": ("pronoun_weight", markers.MARKERS["pronouns"]),
    "references": ("reference_weight", markers.MARKERS["references"]),
    # asking for know-how: how a thing is done is the same for everyone (a negative weight)
    "know_how": ("know_how_weight", markers.MARKERS["know_how"]),
    # someone close to the speaker, their pets, their own constraints: what memory knows of them matters
    "personal": ("personal_weight", markers.MARKERS["personal"]),
    # a choice made for the speaker: what suits them depends on what is known of them
    "requests": ("request_weight", markers.MARKERS["requests"]),
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


def hits(text: str, signal: str, languages: tuple[str, ...] | None = None) -> list[str]:
    """The distinct markers of ``signal`` that ``text`` contains, in the order of the marker lists (language
    by language). ``languages``: whose markers to read it with (``context_markers.languages_of(text)``
    when not given: English and Chinese, and each language the text shows)."""
    normal = markers.normalise(text)
    found = []
    for order, marker, pattern, plain, anchor in markers.patterns(signal, languages or markers.languages_of(text)):
        if anchor not in normal:  # cheaper than the pattern: most markers are not there
            continue
        match = pattern.search(normal)
        if match:
            found.append((order, marker if plain else match.group(0)))
            normal = pattern.sub(" \x00 ", normal)  # a consumed span cannot feed a shorter marker
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


#: what the last user turn brings with it: a text after a colon, a quotation («», „“ too; an apostrophe
#: inside a word, as in don't or s'appelait, opens none), code
_MATERIAL = re.compile(r"[:：]\s*\S.{12,}|[\"“「『«„].{8,}?[\"”」』»“]|(?<![^\W_])['‘].{8,}?['’](?![^\W_])"
                       r"|```|\bdef \w+\(|\bfor \w+ in \b|[{};]\s*$|=>")


def last_user_turn(conversation: list[Message]) -> str:
    said = [m.content for m in conversation if m.role == "user"] or [m.content for m in conversation
                                                                       if m.role != "system"]
    return said[-1] if said else ""


def _small_talk(text: str) -> bool:
    """Small talk in any language with a pack (``text.small_talk``); the language from the script and
    the words the gate reads (``context_markers.language_of``), the language detector only when they do
    not settle it."""
    return small_talk.is_small_talk(text, markers.language_of(text))


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
    spoken = markers.languages_of(text)
    prompt = markers.languages_of(system_prompt) if system_prompt and turns else ()
    return GateReading(
        turns_read=len(turns), hits={name: hits(text, name, spoken) for name in SIGNALS},
        prompt_hits={name: hits(system_prompt, name, prompt) if prompt else [] for name in SIGNALS},
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
    """Score each distinct candidate (record, cosine to the recent turns on the common similarity scale,
    as ``search`` scores: ``Searcher._vector_hits``); keep those that contain a search term or whose
    cosine reaches ``min_similarity``; best first."""
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
