"""Statements in languages other than English and Chinese: the speaker's own sentence, kept.

The offline engine rewrites English and Chinese into the third person ("User lives in Leeds",
用户住在苏州). For every other language it keeps what the speaker said, in their words and script,
first person included ("Vivo en Madrid", 私は東京に住んでいます) — nothing glued to it — and drops
what a person would not store. A sentence is read with its language's pack (``text/languages``):

- small talk at either end of a sentence is cut off (``small_talk.strip_any``); a sentence of
  nothing else is skipped;
- a sentence is cut into clauses at commas and the like; a clause that asks (a question mark, an
  opening question word, a closing question particle) or asks the assistant for something (a
  request's opening words; its closing words in a verb-final language) is dropped, the rest is
  kept: "Soy alérgica al marisco, ¿qué me recomiendas?" keeps "Soy alérgica al marisco";
- a reason's opener is dropped from a kept clause ("Comme je suis diabétique" -> "Je suis
  diabétique"), and so is a conjunctive ending at its end (乳製品が食べられないんですが -> 乳製品が食べられない);
- a clause is kept when it is about the speaker: it holds a first-person word, or the language
  leaves its subject out (``pro_drop``: "Trabajo como contable" is the speaker's);
- two statements joined by "and" become two memories when the second can stand alone: it opens
  with a first-person word, or (subject-dropping languages) with a word that is not a function
  word ("Soy vegetariano y vivo en Madrid" -> "Soy vegetariano", "Vivo en Madrid"); not before
  "now" ("Dejé Telefónica y ahora trabajo en …" is one change).

A language without a pack is read by punctuation alone: questions (?, ؟) and laughter are
dropped, other sentences kept as said, and a sentence dropped says which language it was in.
"""

from __future__ import annotations

import re

from memlane.text import languages, small_talk
from memlane.text.languages import Pack
from memlane.text.languages.pack import LETTERS

QUESTION = "a question"
REQUEST = "a request to the assistant"
SMALL_TALK = "a greeting or small talk"
NO_STATEMENT = "no statement about a person"

#: where a sentence ends: Latin, Greek, Arabic, Devanagari and CJK marks; a capital, a digit or an opening
#: mark after the space (a lower-case word after "etc. " goes on)
_SENTENCE_END = re.compile(r"(?<=[.!?؟।])[\"')\]»”]*\s+(?=[\"'(\[¿¡«“]?[^\W\d_a-zà-ÿа-яёіїєґ])"
                           r"|(?<=[。！？!?؟।])(?=\S)(?![!?！？])|\n+|;\s+")
_CLAUSE = re.compile(r"\s*([,;:،、，；：])\s*|\s+[-–—]\s+")
_QUESTION_MARKS = ("?", "？", "؟", "¿")
_TRAILING = " .!?。！？;；,，、:：…¿¡؟।\"'“”«»"


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _finish(text: str) -> str:
    text = text.strip(_TRAILING)
    return text[:1].upper() + text[1:] if text else text


def _asks(clause: str, pack: Pack | None) -> str | None:
    """QUESTION or REQUEST when the clause is one, else None."""
    stripped = clause.strip()
    if stripped.endswith(_QUESTION_MARKS) or stripped.startswith("¿"):
        return QUESTION
    if pack is None:
        return None
    lexicon = pack.lexicon
    bare = stripped.rstrip(_TRAILING)
    if pack.verb_final or not pack.spaced:  # the request's words close the clause: …を教えて, 추천해 주세요
        if pack.requests and _ends_with(bare, pack.requests, pack):
            return REQUEST
        if pack.question_particles and _ends_with(bare, pack.question_particles, pack):
            return QUESTION
    else:
        if lexicon.starts(bare, pack.requests):
            return REQUEST
        if pack.question_particles and lexicon.has(bare, pack.question_particles):
            return QUESTION
    if lexicon.starts(bare, pack.question_words, exact=True):
        return QUESTION
    return None


def _ends_with(text: str, forms: tuple[str, ...], pack: Pack) -> bool:
    if not pack.spaced:
        return text.endswith(tuple(f for f in forms if f)) or any(
            text.endswith(f + tail) for f in forms if f for tail in ("ね", "よ", "な", "ませんか", "くれる", "くれない"))
    words = pack.lexicon.words(text)
    if not words:
        return False
    for form in forms:
        parts = form.split()
        if len(parts) > 1:  # "önerir misin": the clause's last words
            if words[-len(parts):] == parts:
                return True
        elif form and (words[-1] == form or words[-1].endswith(form.rstrip("-")) if not form.endswith("-")
                       else words[-1].startswith(form[:-1])):
            return True
    return False


def _about_speaker(clause: str, pack: Pack | None) -> bool:
    if pack is None or pack.pro_drop:
        return True
    return pack.lexicon.has(clause, pack.first_person + pack.possessives)


def _trim(clause: str, pack: Pack | None) -> str:
    """The clause without a reason's opener and a conjunctive ending."""
    if pack is None:
        return clause
    opener = pack.lexicon.starts(clause, pack.reasons)
    if opener and pack.spaced:  # drop the opener's words, however the clause spells them
        rest = clause.lstrip(" ¿¡\"'«“(")
        for _ in pack.lexicon.words(opener):
            rest = re.sub(rf"^{LETTERS}+(?:['’]\s*)?\s*", "", rest, count=1)
        clause = rest or clause
    elif opener:
        clause = clause.lstrip()[len(opener):] or clause
    bare = clause.rstrip(_TRAILING)
    for ending in sorted(pack.clause_endings, key=len, reverse=True):
        if ending and bare.endswith(ending) and len(bare) > len(ending) + 1:
            if pack.spaced and not pack.verb_final and not bare[:-len(ending)].endswith(" "):
                continue
            return bare[:-len(ending)].rstrip()
    return clause


def _split_compound(statement: str, pack: Pack | None) -> list[str]:
    """"Soy vegetariano y vivo en Madrid" -> two statements (module docstring)."""
    if pack is None or not pack.spaced or not pack.conjunctions:
        return [statement]
    lexicon = pack.lexicon
    conjunctions = "|".join(re.escape(c) for c in sorted(pack.conjunctions, key=len, reverse=True))
    pattern = re.compile(rf",?\s+(?:{conjunctions})\s+(?=\S)", re.I)
    parts, start = [], 0
    for match in pattern.finditer(statement):
        rest = statement[match.end():]
        words, before = lexicon.words(rest), lexicon.words(statement[start:match.start()])
        if len(words) < 3 or len(before) < 2:
            continue
        if len(before) <= 3 and lexicon.is_one(before[0], pack.possessives):
            continue  # "Mi hermana y yo vivimos …": a compound subject, not two statements
        head = words[0]
        if lexicon.is_one(head, pack.now):
            continue
        if lexicon.is_one(head, pack.first_person) or (pack.pro_drop and not lexicon.is_one(head, pack.stop_words)):
            parts.append(statement[start:match.start()])
            start = match.end()
    parts.append(statement[start:])
    return [p for p in (_finish(p) for p in parts) if p]


def statements(sentence: str, code: str) -> tuple[list[str], list[str]]:
    """The statements of one sentence in language ``code`` and the reasons for what was dropped."""
    pack = languages.pack(code)
    kept = small_talk.strip_any(sentence, code)
    if not kept:
        return [], [SMALL_TALK]
    parts = _CLAUSE.split(kept)
    # parts alternate: clause, separator, clause … (a dash separator gives None)
    clauses = parts[0::2]
    separators = parts[1::2]
    found: list[str] = []
    reasons: list[str] = []
    run: list[str] = []

    def close() -> None:
        if run:
            found.extend(_split_compound(_finish("".join(run)), pack))
            run.clear()

    for i, clause in enumerate(clauses):
        clause = (clause or "").strip()
        if not clause:
            continue
        if small_talk.is_small_talk(clause, code):
            reasons.append(SMALL_TALK)
            close()
            continue
        kind = _asks(clause, pack)
        if kind:
            reasons.append(kind)
            close()
            continue
        if not run:
            clause = _trim(clause, pack)
        else:
            clause = _trim(clause, pack) if pack and pack.lexicon.starts(clause, pack.reasons) else clause
        if not run and not _about_speaker(clause, pack):
            reasons.append(NO_STATEMENT)
            continue
        separator = separators[i] if i < len(separators) and separators[i] else ","
        run.append(clause)
        run.append(separator if separator in "、，；：" else f"{separator} ")
    if run:
        run.pop()  # the separator after the last kept clause
    close()
    if not found and pack is None:
        reasons = [f"{r} ({languages.name(code)}, read by punctuation only: the offline engine has no "
                   f"{languages.name(code)} word lists; an LLM reads it fully)" for r in reasons or [NO_STATEMENT]]
    return found, reasons
