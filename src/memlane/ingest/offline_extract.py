"""Offline fact extraction: keep what a speaker states about themselves, in their own language.

For each message of the speaker whose facts we want, split sentences (and
Chinese clauses), drop questions, requests, greetings and small talk, strip
discourse openers ("Big news:", "对了，"), and rewrite the first person into
the third ("I like X" → "User likes X", 我喜欢X → 用户喜欢X). A request to
forget something becomes a ``forget`` fact.
"""

from __future__ import annotations

import re

from memlane.ingest import language, lexicon
from memlane.ingest.types import Fact
from memlane.models import Message

_FIRST_PERSON_EN = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b", re.I)
_YOU_EN = re.compile(r"\b(you|your|yours)\b", re.I)
_OPENER_EN = re.compile(
    r"^(?:" + "|".join(re.escape(o) for o in sorted(lexicon.OPENERS_EN, key=len, reverse=True)) + r")\b[\s:,!—–-]*",
    re.I,
)
_AND_I_EN = re.compile(r",?\s+(?:and|but|also|plus)\s+(?=(?:i|i'm|i've|i'd|my|we|our)\b)", re.I)

_ADVERBS = frozenset("""just really also usually always never still recently actually often sometimes only mostly even
already currently finally totally definitely absolutely mainly generally normally typically rarely seldom hardly
probably truly honestly literally basically now then kinda sorta""".split())
_MODALS = frozenset("can could will would should shall may might must".split())
_IRREGULAR_PAST = frozenset("""was were went had got made took bought began became came saw left felt found gave knew
met ran said sent sold spent thought told won wrote taught brought caught drove ate drank flew grew kept lost paid
put read sat slept spoke stood swam understood woke wore quit set cut hit let shut did built chose fell forgot heard
held hurt led lent meant rode rang rose sang sank shot sold stole struck swore threw tore""".split())
_THIRD_PERSON = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_CONTRACTIONS = [
    (r"\bI am\b", "{S} is"), (r"\bI'm\b", "{S} is"), (r"\bI’m\b", "{S} is"), (r"\bI was\b", "{S} was"),
    (r"\bI've\b", "{S} has"), (r"\bI’ve\b", "{S} has"), (r"\bI'd\b", "{S} would"), (r"\bI'll\b", "{S} will"),
    (r"\bI don't\b", "{S} doesn't"), (r"\bI do not\b", "{S} does not"), (r"\bI can't\b", "{S} can't"),
]


def _conjugate(verb: str) -> str:
    lower = verb.lower()
    if lower in _MODALS or lower in _IRREGULAR_PAST or lower.endswith("ed") or lower.endswith("n't"):
        return verb
    if lower in _THIRD_PERSON:
        return _THIRD_PERSON[lower]
    if re.search(r"(s|sh|ch|x|z|o)$", lower):
        return verb + "es"
    if re.search(r"[^aeiou]y$", lower):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person_en(sentence: str, subject: str) -> str:
    text = sentence
    for pattern, replacement in _CONTRACTIONS:
        text = re.sub(pattern, replacement.format(S=subject), text)

    def verb_after_i(match: re.Match) -> str:
        adverbs, verb = match.group(1), match.group(2)
        return f"{subject} {adverbs}{_conjugate(verb)}"

    adverb = r"(?:" + "|".join(sorted(_ADVERBS)) + r")"
    text = re.sub(r"\bI\s+((?:" + adverb + r"\s+)*)([A-Za-z]+)\b", verb_after_i, text)

    def possessive(match: re.Match) -> str:  # "User is training for their first marathon"
        return "their" if subject in text[:match.start()] else f"{subject}'s"

    text = re.sub(r"\b[Mm]y\b", possessive, text)
    text = re.sub(r"\b[Mm]ine\b", f"{subject}'s", text)
    text = re.sub(r"\b[Mm]yself\b", "themselves", text)
    text = re.sub(r"\b[Mm]e\b", lambda m: "them" if subject in text[:m.start()] else subject, text)
    text = re.sub(r"\b[Oo]ur\b", f"{subject}'s", text)
    text = re.sub(r"\b[Ww]e\b", f"{subject} and others", text)
    text = re.sub(r"\b[Uu]s\b", f"{subject} and others", text)
    return text


def third_person_zh(text: str, subject: str) -> str:
    return text.replace("我们", f"{subject}和家人").replace("我", subject)


def _finish(text: str) -> str:
    text = text.strip().rstrip(".!。！;；,，")
    return text[:1].upper() + text[1:] if text else text


def _is_small_talk_en(sentence: str) -> bool:
    words = re.findall(r"[a-z']+", sentence.lower())
    return not words or all(w in lexicon.SMALL_TALK_EN for w in words)


def _is_question_or_request_en(sentence: str) -> bool:
    lowered = sentence.lower().strip()
    if lowered.endswith("?"):
        return True
    first = re.findall(r"[a-z']+", lowered)[:1]
    if first and first[0] in ("please", "tell", "help", "show", "give", "remind", "recommend", "suggest",
                              "translate", "explain", "find", "let's"):
        return True
    return language.contains_any(lowered, ("can you", "could you", "would you", "will you"))


def _statements_en(text: str, agent: bool) -> list[str]:
    subject = language.subject_word("en", agent)
    found = []
    for sentence in language.sentences(text):
        if _is_question_or_request_en(sentence) or _is_small_talk_en(sentence):
            continue
        while (stripped := _OPENER_EN.sub("", sentence, count=1)) != sentence:
            sentence = stripped
        for part in _AND_I_EN.split(sentence):
            clauses = [c for c in re.split(r",\s+", part) if c.strip()]
            # drop trailing asides addressed to the assistant ("so keep that in mind whenever you …")
            kept = [c for c in clauses if not (_YOU_EN.search(c) and not _FIRST_PERSON_EN.search(c))]
            statement = ", ".join(kept)
            if statement and _FIRST_PERSON_EN.search(statement) and not _is_small_talk_en(statement):
                found.append(_finish(third_person_en(statement, subject)))
    return found


def _clause_kind_zh(clause: str) -> str:
    simplified = language.to_simplified(clause)
    bare = re.sub(r"[\s!！。.?？~～…]+", "", simplified)
    if not bare or bare in lexicon.SMALL_TALK_ZH:
        return "skip"
    if clause.rstrip().endswith(("?", "？")) or any(q in simplified for q in lexicon.QUESTION_ZH if q not in ("么",)):
        return "skip"
    if any(simplified.startswith(r) for r in lexicon.REQUEST_ZH) or "推荐" in simplified or "建议" in simplified:
        return "skip"
    if "我" not in clause and "你" in clause:  # an aside to the assistant ("你记一下")
        return "skip"
    return "first" if "我" in clause else "more"


def _statements_zh(text: str, agent: bool) -> list[str]:
    subject = language.subject_word(language.script(text), agent)
    found = []
    for sentence in language.sentences(text):
        if sentence.rstrip().endswith(("?", "？")):
            continue
        current: list[str] = []
        for clause in language.clauses_zh(sentence.rstrip("。！!；;")):
            kind = _clause_kind_zh(clause)
            if kind == "skip":
                continue
            if kind == "first" and current:
                found.append("，".join(current))
                current = []
            if kind == "first" or current:
                current.append(clause)
        if current:
            found.append("，".join(current))
    return [_finish(third_person_zh(statement, subject)) for statement in found]


def _forget_topic(sentence: str) -> str | None:
    """The subject of a request to forget, or None if the sentence asks nothing of the kind."""
    if not language.contains_any(sentence, lexicon.FORGET_EN + lexicon.FORGET_ZH):
        return None
    if not (language.has_cjk(sentence) or _FIRST_PERSON_EN.search(sentence) or _YOU_EN.search(sentence)):
        return None
    return sentence


def classify(text: str) -> str:
    """fact | preference | event | profile, from the words a statement uses."""
    found = language.terms(text)
    simplified = language.to_simplified(text).lower()
    if found & {"PREF", "DISLIKE"}:
        return "preference"
    if re.search(r"\b(yesterday|today|tomorrow|tonight|last|next|ago|recently|just|this (week|weekend|month|year)|"
                 r"january|february|march|april|may|june|july|august|september|october|november|december|"
                 r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{4})\b", simplified) \
            or any(w in simplified for w in ("昨天", "今天", "明天", "上周", "下周", "下个月", "上个月", "明年", "去年",
                                             "最近", "刚", "月", "日", "号", "周末", "星期", "礼拜")):
        return "event"
    if found & {"RESIDENCE", "JOB", "NAME", "AGE", "ALLERGY", "DIET_VEGETARIAN", "DIET_VEGAN", "SPOUSE", "PET"}:
        return "profile"
    return "fact"


def extract(messages: list[Message], *, agent_facts: bool) -> list[Fact]:
    facts: list[Fact] = []
    seen: set[str] = set()
    for index, message in enumerate(messages):
        speaker_is_agent = message.role == "assistant"
        if message.role not in ("user", "assistant") or (speaker_is_agent and not agent_facts):
            continue
        statements: list[str] = []
        for sentence in language.sentences(message.content):
            topic = _forget_topic(sentence) if not speaker_is_agent else None
            if topic is not None:
                facts.append(Fact(text=topic, kind="forget", sources=(index,)))
                continue
            if language.has_cjk(sentence):
                statements.extend(_statements_zh(sentence, speaker_is_agent))
            else:
                statements.extend(_statements_en(sentence, speaker_is_agent))
        for statement in statements:
            key = statement.casefold()
            if statement and key not in seen:
                seen.add(key)
                facts.append(Fact(text=statement, memory_type=classify(statement), sources=(index,)))
    return facts
