"""Offline reconciliation: compare each fact with the memories near it and decide.

Statements are compared by what they are about first (``ingest/owners.py``): a fact about another
owner (the user's wife, their company, a named person) never changes a memory about the user, and
what two facts say of the same owner is compared without the owner's own words ("User's wife is a
doctor" and "User's wife loves dumplings" share nothing). Then as sets of terms (``language.terms``:
concepts, stems, Chinese characters; other languages' through their packs), helped by the embedding
similarity:

- **duplicate → NONE**: the fact says nothing the memory does not (same terms,
  or a subset), and neither side negates what the other asserts;
- **contradiction**: the fact negates the memory (``doesn't like X anymore``,
  不想…了) → DELETE (the memory is invalidated, not erased) and the negative
  fact is added; if it also names the new state (``switched … to Y``, 转向Y),
  → UPDATE with the new statement instead;
- **ended → DELETE or UPDATE**: the fact ends what the memory is about (sold, quit, left, traded
  in, broke up, 卖掉, 辞职 … the memory holds every term of the object: ``ingest/endings.py``);
  UPDATE when the fact names the new state too ("… for an electric Kia");
- **changed value → UPDATE**: both talk about the same exclusive attribute of
  the same party (where someone lives, their job, name, risk tolerance …) with
  a different value, or the fact announces a change (moved, switched, 换, 现在…);
- **refinement → UPDATE**: the fact covers the memory and adds detail, or it was said as a
  refinement ("Specifically, …", 具体来说…) and shares a specific term with the memory;
- otherwise **ADD**. A request to forget deletes the memories it is about.

Each memory is claimed by at most one fact per call. A fact that only announces a change ("I changed
jobs", 我换工作了) leaves the memory to a later fact of the same call that states the new value
("now I work at a bank", 现在在银行上班): that one updates the memory (its history records the
change), and the announcement is not added beside it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memlane.ingest import endings, language, lexicon, owners, speakers
from memlane.ingest.types import Candidates, Decision, Fact

#: Embedding similarity above which two statements are taken as the same (absent negation).
SAME_MEANING = 0.95
#: Share of the memory's terms the fact must cover to refine or replace it.
MIN_COVERAGE = 0.5

#: Markers that name a replacement outright ("switched to Y", 换成Y): one shared term is enough.
_EXPLICIT_REPLACEMENT = ("switched to", "switched from", "replaced", "instead of", "moved to", "changed to", "joined",
                         "now works at", "now works for", "now lives in",
                         "换成", "改成", "改为", "改用", "换了", "转向", "搬到")
#: After a negation, these name the new state ("… now I only want bonds", 只想买债券).
_NEW_STATE = _EXPLICIT_REPLACEMENT + ("instead", "rather", "转而", "只想")
#: A fact that covers a memory and adds less than this share of new terms is a paraphrase.
PARAPHRASE_NOVELTY = 0.2
_FORGET_WORDS = lexicon.FORGET_EN + lexicon.FORGET_ZH + lexicon.REQUEST_EN + lexicon.REQUEST_ZH + lexicon.FORGET_NOISE


def negated(text: str) -> bool:
    return language.contains_any(text, lexicon.NEGATION_EN + lexicon.NEGATION_ZH) or "DISLIKE" in language.terms(text)


def _new_value_terms(fact: str) -> frozenset[str]:
    """Terms of what follows a replacement marker ("switched to Y", 换成Y): the new value."""
    simplified = language.to_simplified(fact).lower()
    found: set[str] = set()
    for marker in _EXPLICIT_REPLACEMENT:
        at = simplified.find(marker)
        if at >= 0:
            tail = re.split(r"[,.;!?，。；！？]", simplified[at + len(marker):], maxsplit=1)[0]
            if marker.endswith(" from"):  # "switched from X to Y": the new value follows "to"
                tail = tail.split(" to ", 1)[1] if " to " in tail else ""
            found |= language.terms(tail)
    return frozenset(found)


_FRAME_EN = re.compile(r"^(?P<owner>[A-Z][\w-]*)(?:'s|’s)\s+(?P<attribute>[^,;]+?)\s+(?:is|are|was|were)\s+(?P<value>.+)$")
_FRAME_ZH = re.compile(r"^(?P<owner>[^的，,。]{1,6})的(?P<attribute>[^，,。是叫为]{1,10})(?:是|叫|为|叫做)(?P<value>.+)$")


def attribute_frame(text: str) -> tuple[str, frozenset[str], frozenset[str]] | None:
    """"User's car is a Honda" → (owner, attribute terms, value terms); 用户的女儿叫小雨 likewise."""
    simplified = language.to_simplified(text).strip()
    match = _FRAME_EN.match(simplified) or _FRAME_ZH.match(simplified)
    if not match:
        return None
    attribute, value = language.terms(match["attribute"]), language.terms(match["value"])
    if not attribute or not value:
        return None
    return match["owner"].lower(), attribute, value


def _new_attribute_value(fact: str, memory: str) -> bool:
    """Both give the same owner's same attribute (car, favourite editor, 女儿) a different value."""
    f, m = attribute_frame(fact), attribute_frame(memory)
    return bool(f and m and f[:2] == m[:2] and not f[2] <= m[2] and not m[2] <= f[2])


#: an identity said by name: "is a red Honda", "is the Tesla", 叫小雨 (a make, a model, a name)
_IDENTITY = re.compile(r"^(?:is|are|was|were)\s+(?:an?|the)\s+(?:[a-z-]+\s+){0,2}(?P<value>[A-Z][\w-]*(?:\s+[A-Z0-9][\w-]*)*)"
                       r"(?:\s+(?:now|today|these days|nowadays|again|instead))?\s*$"
                       r"|^(?:叫|叫做)(?P<value_zh>.+)$")


def _new_identity(fact_said: str, memory_said: str) -> bool:
    """Something's make or someone's name given anew: "is a Mazda" after "is a red Honda", 叫小雨 after 叫小雪.
    Not "is scared of thunder" after "is a beagle" (a state), nor "is a good swimmer" after "is a nurse"
    (two things one can be at once): only names and makes replace each other."""
    f, m = _IDENTITY.match(fact_said.strip()), _IDENTITY.match(memory_said.strip())
    if not f or not m:
        return False
    new, old = (language.terms(x["value"] or x["value_zh"]) for x in (f, m))
    return bool(new and old and not new <= old and not old <= new)


def _ends(fact: str, memory: str, memory_terms: frozenset[str]) -> str | None:
    """"replace" or "contradict" when the fact ends what the memory is about ("sold their Civic" /
    "owns a Honda Civic"): the memory holds every term of the ended object (``ingest/endings.py``)
    and is not itself a negation; "replace" when the fact also names a new state."""
    ended = endings.ended_terms(fact)
    if not ended or not (ended - lexicon.GENERIC) or negated(memory):
        return None
    if endings.ended_by_pack(fact):  # the object is wherever the language puts it: one shared specific term
        if not (ended & memory_terms) - lexicon.GENERIC:
            return None
    elif not ended <= memory_terms:
        return None
    return "replace" if endings.new_state_terms(fact, ended) - memory_terms - lexicon.GENERIC else "contradict"


def relation(fact: str, memory: str, similarity: float, *, refines: bool = False) -> str | None:
    """How a fact relates to a memory: duplicate, contradict, replace, refine, or None (unrelated).
    ``refines``: the fact was said as a refinement ("Specifically, …", 具体来说…): sharing a specific
    term with the memory is enough to refine it."""
    a, b = language.terms(fact), language.terms(memory)
    if not a or not b:
        return "duplicate" if similarity >= SAME_MEANING else None
    negation_differs = negated(fact) != negated(memory)
    fact_owner, fact_said = owners.owner(fact)
    memory_owner, memory_said = owners.owner(memory)
    same_owner = fact_owner == memory_owner
    mentioned = False  # "Has a dog" is about the dog too: "User's dog is called Biscuit" may refine it
    if not same_owner and owners.USER in (fact_owner, memory_owner):
        mentioned = owners.mentions(fact_owner, memory) if memory_owner == owners.USER else \
            owners.mentions(memory_owner, fact)
    # the speaker ends what is theirs ("sold my car" ends "User's car is a Mazda"), not a relative's
    theirs = fact_owner == owners.USER and not memory_owner.startswith(owners.PEOPLE)
    # a break-up ends the memory about the partner ("Pablo y yo rompimos" ends "Mi novio se llama Pablo")
    partner = memory_owner == "spouse" and endings.ended_by_pack(fact)
    if (same_owner or theirs or partner or endings.ends_a_relationship(fact)) and (
            ended := _ends(fact, memory, b)):
        return ended
    if mentioned:  # only a refinement: what the fact says of it covers everything the memory says
        lost = b - a
        return "refine" if (a & b) - lexicon.GENERIC and a - b - lexicon.GENERIC and lost <= lexicon.GENERIC else None
    if not same_owner:  # about someone or something else: another attribute, whatever the words share
        return "duplicate" if similarity >= SAME_MEANING and not negation_differs else None
    if fact_said != fact or memory_said != memory:  # the owner's words are not what the two say of them
        a, b = language.terms(fact_said) or a, language.terms(memory_said) or b
    shared = a & b
    strong = shared - lexicon.GENERIC
    coverage = len(shared) / len(b)
    novel = a - b - lexicon.GENERIC
    lost = b - a  # what the memory says that the fact does not
    exclusive = shared & lexicon.EXCLUSIVE

    # a negation of the general case reaches the specific memory: "no tech stocks" ends "likes AI tech stocks"
    own = a - lexicon.GENERIC
    fact_coverage = len(strong) / len(own) if own else 0.0
    if strong and negation_differs and max(coverage, fact_coverage) >= MIN_COVERAGE:
        return "replace" if novel and language.contains_any(fact, _NEW_STATE) else "contradict"
    if exclusive and same_owner and novel:
        return "replace"
    if exclusive and same_owner and negation_differs:  # "left the job", 离职了: the state ended
        return "contradict"
    if (fact_owner == owners.USER and _new_attribute_value(fact, memory)) or _new_identity(fact_said, memory_said):
        return "replace"
    scales_f, scales_m = language.scale_values(fact), language.scale_values(memory)
    if strong and scales_f and scales_m and not scales_f & scales_m:
        return "replace"
    changes = language.contains_any(fact, lexicon.CHANGE_EN + lexicon.CHANGE_ZH) or language.announces_change(fact)
    if changes and novel and coverage >= MIN_COVERAGE and len(strong) >= 2:
        return "replace"
    if novel and strong - _new_value_terms(fact) and language.contains_any(fact, _EXPLICIT_REPLACEMENT):
        return "replace"  # the memory holds the old value the fact replaces
    if not negation_differs and (a <= b or similarity >= SAME_MEANING):
        return "duplicate"
    if not negation_differs and not changes and not lost and len(novel) <= PARAPHRASE_NOVELTY * len(a):
        return "duplicate"
    if strong and novel and same_owner and lost <= lexicon.GENERIC:
        return "refine"  # the fact covers everything the memory says and adds detail
    if refines and strong and novel and same_owner and not negation_differs:
        return "refine"  # "Specifically, I buy S&P 500 index ETFs" over "Invests in ETFs"
    return None


_CHANGE_TERMS = frozenset().union(*(language.terms(word) for word in lexicon.CHANGE_EN + lexicon.CHANGE_ZH))


def announces_only(fact: str, memory: str) -> bool:
    """The fact says that something changed but not what it is now: its terms beyond the memory's are
    change markers ("changed", 换) or generic."""
    return not (language.terms(fact) - language.terms(memory) - lexicon.GENERIC - _CHANGE_TERMS)


def _stated_later(facts: list[Fact], i: int, memory: str, similarity: Sequence[float]) -> bool:
    """Whether fact ``i`` only announces a change of ``memory`` that a later fact of the call states."""
    return announces_only(facts[i].text, memory) and any(
        facts[k].kind != "forget" and speakers.may_reconcile(facts[k].actor_id, facts[i].actor_id)
        and relation(facts[k].text, memory, float(similarity[k])) == "replace"
        and not announces_only(facts[k].text, memory)
        for k in range(i + 1, len(facts)))


def _about(topic: str, memory: str) -> bool:
    """Does a request to forget ``topic`` concern ``memory``?"""
    wanted = language.terms(language.without(topic, _FORGET_WORDS))
    return bool(wanted & language.terms(memory) - lexicon.GENERIC)


def reconcile(facts: list[Fact], candidates: Candidates) -> list[Decision]:
    decisions: list[Decision] = []
    claimed: set[str] = set()
    memories = candidates.memories
    for i, fact in enumerate(facts):
        # offline facts are first-person statements: another speaker's memory is never their counterpart
        order = [j for j in sorted(range(len(memories)), key=lambda j: -float(candidates.similarity[i, j]))
                 if speakers.may_reconcile(fact.actor_id, memories[j].actor_id)]
        if fact.kind == "forget":
            for j in order:
                if memories[j].id not in claimed and _about(fact.text, memories[j].text):
                    claimed.add(memories[j].id)
                    decisions.append(Decision("DELETE", text=fact.text, target=memories[j].id, fact=i,
                                              reason="the user asked to forget it"))
            continue
        for j in order:
            memory = memories[j]
            if memory.id in claimed:
                continue
            kind = relation(fact.text, memory.text, float(candidates.similarity[i, j]), refines=fact.refines)
            if kind is None:
                continue
            if kind == "replace" and _stated_later(facts, i, memory.text, candidates.similarity[:, j]):
                break  # no decision of its own: the later fact's UPDATE records the change
            claimed.add(memory.id)
            if kind == "duplicate":
                decisions.append(Decision("NONE", text=fact.text, target=memory.id, fact=i, reason="already known"))
            elif kind == "contradict":
                decisions.append(Decision("DELETE", text=fact.text, target=memory.id, fact=i,
                                          reason=f"contradicted by: {fact.text}"))
                decisions.append(Decision("ADD", text=fact.text, fact=i, memory_type=fact.memory_type))
            else:
                decisions.append(Decision("UPDATE", text=fact.text, target=memory.id, fact=i,
                                          reason="changed" if kind == "replace" else "refined",
                                          memory_type=fact.memory_type))
            break
        else:
            decisions.append(Decision("ADD", text=fact.text, fact=i, memory_type=fact.memory_type))
    return decisions
