"""What a statement says has ended: "sold my Civic", "quit Deloitte", "left St Mary's", 把宝马卖了.

People announce changes by ending something: selling, quitting, leaving, trading in, moving out,
breaking up, giving up (卖掉, 辞职, 离开, 搬出, 分手, 戒了 …). The verb says *that* a state ended;
its object says *which*: the memory to invalidate is the one about that object, whatever verb
first stated it ("owns a Honda Civic", "drives a Ford Focus", "works at Deloitte as an auditor").
So one rule serves every verb: ``ended_terms`` gives the comparable terms (``language.terms``) of
the object, and reconciliation (``offline_reconcile.relation``) ends the memory that holds all of
them. What else the statement names ("… for an electric Kia", "… and started my own bakery") is
the new state, ``new_state_terms``.

English verbs are recognised by lemma (lemminflect: "sold", "selling", "sells" are all *sell*),
with the particle of a phrasal verb ("trade in", "break up", "move out"). For "break up" and the
like the object may be the co-subject: "Sofia and I broke up" ended something with Sofia.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memlane.ingest import english, language
from memlane.text import languages

#: verbs (base form) that end the state their object was in, with the particle a phrasal one needs ("" none)
ENDING_VERBS_EN: dict[str, tuple[str, ...]] = {
    "sell": ("", "off"), "quit": ("",), "leave": ("",), "resign": ("", "from"), "retire": ("from",),
    "divorce": ("",), "break": ("up with", "up"), "split": ("up with", "up", "from"), "trade": ("in",),
    "give": ("up", "away"), "stop": ("",), "cancel": ("",), "drop": ("out of", "out"), "move": ("out of", "away from"),
    "get": ("rid of",), "graduate": ("from",), "close": ("", "down"), "shut": ("down",), "abandon": ("",), "ditch": ("",), "dump": ("",), "exit": ("",), "unsubscribe": ("from",),
    "uninstall": ("",), "return": ("",), "part": ("ways with",), "walk": ("away from", "out of"), "let": ("go of",),
}
#: verbs whose other party may be the co-subject ("Sofia and I broke up")
_MUTUAL = frozenset({"break", "split", "divorce", "part"})
#: Chinese forms (Simplified): the verb, and where its object usually is (把X卖了, 从X辞职, 和X分手, 离开X)
ENDING_ZH = ("卖掉", "卖了", "卖给", "转卖", "辞职", "辞掉", "离职", "离开", "退出", "分手", "离婚", "戒掉", "戒了",
             "搬出", "搬离", "退掉", "退了", "关掉", "关了", "取消", "放弃", "毕业", "退休", "换掉", "送人", "送走",
             "转让", "处理掉", "不干了", "不做了")
#: words after the object that end it: a new clause, a reason, a time, the new state
_OBJECT_END_EN = re.compile(
    r"[,.;:!?]|\s(?:and|so|but|because|since|after|before|when|as|for|to|last|this|yesterday|today|tonight|ago|now|"
    r"in|on|at|earlier|recently|finally|already|then|which|who|instead)\b")
_TIME_ZH = re.compile(r"(?:上|下|这|本)(?:个)?(?:月|周|星期|礼拜)|(?:去|今|明|前)年|(?:昨|今|前)天|最近|刚刚|刚|已经|终于|现在|之前|以前")
_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")


@lru_cache(maxsize=2048)
def _ending_en(text: str) -> tuple[str, str, str] | None:
    """(verb lemma, what follows the verb and its particle, what precedes the verb) of the first ending verb."""
    previous = ""
    for match in _WORD.finditer(text):
        word = match.group(0)
        lemma = _verb_lemma(word, previous)
        previous = word.lower()
        if lemma not in ENDING_VERBS_EN:
            continue
        rest = text[match.end():]
        for particle in sorted(ENDING_VERBS_EN[lemma], key=len, reverse=True):
            if not particle:
                return lemma, rest, text[:match.start()]
            found = re.match(rf"\s+{re.escape(particle)}\b", rest, re.I)
            if found:
                return lemma, rest[found.end():], text[:match.start()]
    return None


_NOT_BEFORE_A_VERB = frozenset("a an the my your his her its our their this that these those bus".split())


def _verb_lemma(word: str, previous: str) -> str | None:
    """The lemma of ``word`` used as a verb: an inflected form, or the base form not after a determiner."""
    form = english.verb_form(word)
    if form not in ("VB", "VBD", "VBZ", "VBG") or (form == "VB" and previous in _NOT_BEFORE_A_VERB):
        return None
    found = english.lemmas(word).get("VERB")
    return found[0] if found else None


def _object_en(rest: str) -> str:
    """The words of the object: up to a new clause, a reason, a time or the new state; adverbs left out."""
    end = _OBJECT_END_EN.search(rest)
    words = _WORD.findall(rest[:end.start()] if end else rest)
    return " ".join(w for w in words if not english.is_adverb(w))


def ended_terms(text: str, subject_words: frozenset[str] = frozenset()) -> frozenset[str] | None:
    """Terms of what ``text`` says has ended (None when it ends nothing). ``subject_words``: words that
    name the speaker ("user") and are never the object."""
    code = languages.detect(text)
    if code not in ("en", "zh"):
        return _ended_pack(text, code)
    if language.has_cjk(text):
        return _ended_zh(text)
    found = _ending_en(text)
    if found is None:
        return None
    lemma, rest, before = found
    terms = set(language.terms(_object_en(rest)))
    if lemma in _MUTUAL and not terms:  # "User and Sofia broke up": the other party is the co-subject
        partner = re.search(r"\band\s+(?:their\s+)?([\w' -]+?)\s*$", before)
        if partner:
            terms |= language.terms(partner.group(1))
    terms -= subject_words | {"user", "agent"}
    return frozenset(terms) if terms else None


def _verb_terms_pack(text: str, code: str) -> frozenset[str] | None:
    """The terms of the ending verbs ``text`` holds (its language's pack), or None when it holds none."""
    pack = languages.pack(code)
    if pack is None:
        return None
    found = pack.lexicon.find(text, pack.endings)
    if not found:
        return None
    return frozenset().union(*(language.pack_terms(form, code) for form in found))


def _ended_pack(text: str, code: str) -> frozenset[str] | None:
    """Another language's ending (its pack's ``endings``): where the object stands differs from language to
    language (…を辞めた, ушёл из …, verkocht), so what ended is every specific term of the statement but the
    verb's and the concepts'; reconciliation ends the memory that shares one of them."""
    verbs = _verb_terms_pack(text, code)
    if verbs is None:
        return None
    terms = frozenset(t for t in language.terms(text) - verbs if not t.isupper())
    return terms or None


def ended_by_pack(text: str) -> bool:
    """Whether ``text`` is in a language read by its pack (not English or Chinese): its ended terms are all
    the statement's terms, a memory is ended by one of them (``offline_reconcile``)."""
    return languages.detect(text) not in ("en", "zh")


def ends_a_relationship(text: str) -> bool:
    """"broke up with", "divorced", 分手, 离婚: what ended is the relationship itself, so the memory to end
    is about the partner ("User's girlfriend is Sofia") rather than about the user."""
    if language.has_cjk(text):
        return any(m in language.to_simplified(text) for m in ("分手", "离婚"))
    found = _ending_en(text)
    return bool(found and found[0] in _MUTUAL)


def _ended_zh(text: str) -> frozenset[str] | None:
    simplified = language.to_simplified(text)
    for clause in re.split(r"[，,。；;！!？?]", simplified):
        marker = next((m for m in ENDING_ZH if m in clause), None)
        if marker is None:
            continue
        rest = _TIME_ZH.sub(" ", clause.replace(marker, " "))
        rest = re.sub(r"用户|使用者|把|从|和|跟|与|给|了|掉", " ", rest)
        terms = language.terms(rest)
        return terms or None
    return None


def new_state_terms(text: str, ended: frozenset[str]) -> frozenset[str]:
    """What else ``text`` names besides what it ended, the ending verb and times: the new state, if any."""
    code = languages.detect(text)
    if code not in ("en", "zh"):
        return frozenset(language.terms(text) - ended - (_verb_terms_pack(text, code) or frozenset()))
    if language.has_cjk(text):
        simplified = language.to_simplified(text)
        rest = _TIME_ZH.sub(" ", simplified)
        for marker in ENDING_ZH:
            rest = rest.replace(marker, " ")
        return frozenset(language.terms(rest) - ended)
    found = _ending_en(text)
    verb_terms: set[str] = set()
    if found:
        verb_terms = set(language.terms(found[0]))
        for word in _WORD.findall(text):
            if english.lemmas(word).get("VERB", ("",))[0] == found[0]:
                verb_terms |= language.terms(word)
    months = language.terms("january february march april may june july august september october november "
                            "december monday tuesday wednesday thursday friday saturday sunday week weekend month "
                            "year last ago yesterday today")
    return frozenset(language.terms(text) - ended - verb_terms - months)
