"""The answer to a question about the user or one of their people (``about_user.py``): what the scope holds
about them, who they are first.

A similarity search is the wrong tool for "What do you know about me?": nothing in the question is
like any memory. The answer is read from the scope's memories instead (the filters and validity of
the search apply; the most recent ``READ`` of them):

- about the user: every memory; about one of their people ("my wife"): the memories that name them
  (a word for them in English or Chinese, as formation writes memories, or in the question's language:
  wife, 老婆, esposa), and those naming them by the name these give them ("User's wife Jane …", then
  "Jane loves hiking");
- **profile first**: memories formation typed ``profile`` (who someone is: ``lexicon.PROFILE``, name,
  age, home, work, family, pets, diet, allergies), in that order, then by recency;
- then the rest, most recently changed first.

The score says how central a memory is to the portrait, not how similar it is to the words of the
question: a profile memory scores 1.0, any other ``0.5 + 0.4 × 0.5^(days since it changed / 30)``
(0.9 today, 0.7 a month ago, toward 0.5). Scores never rise down the list; ``threshold`` keeps those
at or above it, as in any search, and ``limit`` the first ones.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from memlane.core.models import MemoryRecord
from memlane.ingest import language, lexicon
from memlane.retrieval.about_user import CHINESE, CJK_OR_KANA, ENGLISH, AboutQuestion, pack_of
from memlane.text.languages import Pack
from memlane.text.normalize import to_simplified

#: the most recent memories of the scope an answer reads
READ = 1000
#: the score of a profile memory, and the floor and span of the others' (``HALF_LIFE_DAYS``: the decay)
PROFILE_SCORE = 1.0
REST_FLOOR, REST_SPAN, HALF_LIFE_DAYS = 0.5, 0.4, 30.0
#: how ``metadata.score`` names the rule
SCORE_RULE = (f"about_user: profile memories {PROFILE_SCORE}; others {REST_FLOOR} + {REST_SPAN} * "
              f"0.5^(days since updated / {HALF_LIFE_DAYS:g})")
_ORDER = {concept: i for i, concept in enumerate(lexicon.PROFILE)}
#: a capitalised word (a name)
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


def answer(records: list[MemoryRecord], asked: AboutQuestion,
           now: datetime | None = None) -> list[tuple[MemoryRecord, float]]:
    """``records`` (most recent first) that answer ``asked``, with their scores, best first."""
    now = now or datetime.now(timezone.utc)
    if asked.party != "user":
        records = _about_party(records, asked)
    ranked: list[tuple[tuple, MemoryRecord, float]] = []
    for i, record in enumerate(records):
        rank = profile_rank(record)
        if rank is not None:
            ranked.append(((0, rank, i), record, PROFILE_SCORE))
        else:
            ranked.append(((1, 0, i), record, _recency(record, now)))
    ranked.sort(key=lambda item: item[0])
    out: list[tuple[MemoryRecord, float]] = []
    floor = 1.0
    for _, record, score in ranked:
        floor = min(floor, score)  # never rising down the list
        out.append((record, round(floor, 6)))
    return out


def profile_rank(record: MemoryRecord) -> int | None:
    """Where a memory stands in a portrait (``lexicon.PROFILE``'s order), or None when it is not a ``profile``
    memory (formation types a statement by the same concepts: ``offline_extract.classify``)."""
    if record.memory_type != "profile":
        return None
    found = [_ORDER[c] for c in language.terms(record.text) if c in _ORDER]
    if language.is_name_statement(record.text):
        found.append(_ORDER["NAME"])
    return min(found, default=len(_ORDER))


def _about_party(records: list[MemoryRecord], asked: AboutQuestion) -> list[MemoryRecord]:
    """The memories that name the speaker's ``asked.party`` by a word for them (in English and Chinese, as
    formation writes memories, and in the question's language), and those that name them by the name these give
    them ("User's wife Jane is a teacher", then "Jane loves hiking")."""
    packs = [p for p in {ENGLISH.code: ENGLISH, CHINESE.code: CHINESE, asked.language: pack_of(asked.language)}.values()
             if p is not None]
    named = [r for r in records if any(_names(p, r.text, asked.party) for p in packs)]
    called = {name for r in named for p in packs for name in _called(p, r.text, asked.party)}
    ids = {r.id for r in named}
    return [r for r in records if r.id in ids or called & set(_NAME.findall(r.text))]


def _names(pack: Pack, text: str, party: str) -> bool:
    if not pack.spaced:
        if not CJK_OR_KANA.search(text):
            return False
        text = to_simplified(text) if pack.code == "zh" else text
    return pack.lexicon.has(text, pack.relations.get(party, ()))


def _called(pack: Pack, text: str, party: str) -> list[str]:
    """The names ``text`` gives the speaker's ``party``: the capitalised word right after a word for them."""
    forms = pack.relations.get(party, ()) if pack.spaced else ()
    if not forms:
        return []
    words = re.compile(r"\b(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
                       + r")\s+([A-Z][a-z]+)\b", re.I)
    return [name for name in words.findall(text) if name[0].isupper()]


def _recency(record: MemoryRecord, now: datetime) -> float:
    try:
        changed = datetime.fromisoformat(record.updated_at or record.created_at)
    except (TypeError, ValueError):
        return REST_FLOOR
    if changed.tzinfo is None:
        changed = changed.replace(tzinfo=timezone.utc)
    days = max(0.0, (now - changed).total_seconds() / 86400)
    return REST_FLOOR + REST_SPAN * 0.5 ** (days / HALF_LIFE_DAYS)
