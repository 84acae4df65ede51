"""Who or what a statement is about — its *owner* — and what it says of them — its *predicate*.

Reconciliation compares facts by what they are about, not by their subject alone: "My wife is a
doctor" and "My wife loves dumplings" have one owner (the user's wife) and two attributes, so both
stay; "I work at a bank" and "Our company is hiring" have two owners (the user, the user's company),
so "works at" is not replaced by "hiring". A new value of the same attribute of the same owner
(``offline_reconcile``) is a change.

The owner of a statement is read from its opening words, in the forms memlane writes and people say:

- English as rewritten: "User's wife …", "User's brother Tom …" (a relative, a pet, a possession —
  the user's company, car, school, house), "User …" and "User and their family …" (the user),
  "Tom …" (a person named);
- Chinese: 用户的老婆…, 用户家狗…, 用户…;
- other languages, as said: "Mi esposa …", "Meine Frau …", 私の妻は…, 妻は…, 제 아내는…, else the speaker.

A noun after "User's" that names an attribute rather than someone or something ("User's favourite
editor", "User's shoe size") leaves the owner the user: the attribute is theirs. Relatives, pets
and possessions are named by their kind; a spouse is one whatever the word ("wife", "esposa", 老婆),
so a statement about them meets another across languages.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memlane.ingest import english, language, lexicon
from memlane.text import languages
from memlane.text.normalize import to_simplified
from memlane.text.relations import PETS_EN, PETS_ZH, PLURAL_RELATIONS_EN, RELATIONS_EN, RELATIONS_ZH

USER = "user"
#: things people own or belong to that statements are about
_THINGS_EN = frozenset("""car cars house home flat apartment company firm employer startup school university office team
bike bicycle phone laptop computer boat garden business shop restaurant band club landlord""".split())
_THINGS_ZH = ("公司", "学校", "房子", "车", "单位", "团队", "店", "家里")
_SPOUSE = frozenset(lexicon.PARTIES["spouse"])
#: words after "User's" that name an attribute of the user, not someone or something of theirs
_ATTRIBUTE_WORDS_EN = frozenset("""favourite favorite preferred usual dream name names nickname birthday age email phone
number address size height weight salary income budget goal goals plan plans schedule diet dietary restriction
restrictions preference preferences job role title hobby hobbies language languages timezone blood pronouns sign
zodiac routine habit habits risk tolerance horizon strategy portfolio""".split())
_ENTITIES_EN = (RELATIONS_EN.keys() | PLURAL_RELATIONS_EN | PETS_EN | _THINGS_EN |
                {w for words in lexicon.PARTIES.values() for w in words if w.isascii()})
_ENTITIES_ZH = tuple(sorted({*RELATIONS_ZH, *PETS_ZH, *_THINGS_ZH, "家狗", "家猫",
                             *(w for words in lexicon.PARTIES.values() for w in words if not w.isascii())},
                            key=len, reverse=True))
_ATTRIBUTE_WORDS_ZH = frozenset("名字 生日 年龄 爱好 口味 风险 邮箱 电话 地址 工作 职业 目标 计划 习惯 饮食 偏好 身高 体重 预算".split())
#: the last character of an institution's or a place's name: 银行, 公司, 学校, 医院, 工厂 …
_INSTITUTIONS_ZH = tuple("行司校院厂店局所部队馆园团组")
_USER_EN = re.compile(r"^(?:User|Agent)(?:['’]s\s+(?P<phrase>[^,;.]+))?\b")
_GROUP_EN = re.compile(r"^(?:User|Agent)\s+and\s+(?:their\s+)?[\w-]+\s*")
_NAME_EN = re.compile(r"^(?P<name>[A-Z][a-z]+)\s+")
_USER_ZH = re.compile(r"^(?:用户|使用者|助手|助理)(?P<link>的|家)?")


#: owners that are people (a statement by the user never ends what is theirs): "spouse" or "person:<word>"
PEOPLE = ("spouse", "person:")


def _key(word: str) -> str:
    low = word.lower()
    if low in _SPOUSE:
        return "spouse"
    singular = english.lemmas(low).get("NOUN", (low,))[0]
    return f"person:{singular}" if low in RELATIONS_EN or low in PLURAL_RELATIONS_EN else f"entity:{singular}"


@lru_cache(maxsize=4096)
def owner(text: str) -> tuple[str, str]:
    """(owner, predicate) of a statement (module docstring): "User's wife loves dumplings" ->
    ("spouse", "loves dumplings"); "User works at a bank" -> ("user", "works at a bank")."""
    text = text.strip()
    code = languages.detect(text)
    if code == "zh":
        return _owner_zh(text)
    if code == "en" or text.startswith(("User", "Agent")):
        return _owner_en(text)
    return _owner_pack(text, code)


def _owner_en(text: str) -> tuple[str, str]:
    match = _USER_EN.match(text)
    if match and match["phrase"]:
        words = match["phrase"].split()
        head = None
        for i, word in enumerate(words):  # the noun phrase ends where its verb starts
            bare = re.sub(r"[^A-Za-z-]", "", word)
            if i and (english.verb_form(bare) in ("VBZ", "VBD", "MD") or bare.lower() in ("is", "are", "was", "were")):
                break
            if bare.lower() in _ATTRIBUTE_WORDS_EN:
                return USER, text  # "User's favourite editor", "User's shoe size": the user's own attribute
            if bare.lower() in _ENTITIES_EN:
                rest = " ".join(words[i + 1:])
                name = re.match(r"[A-Z][a-z]+\s+", rest)  # "User's brother Tom just moved"
                return _key(bare), rest[name.end():] if name else rest
            head = (i, bare) if bare else head
        if head is not None and re.match(r"[A-Za-z]", head[1]):  # something of theirs: "User's Tesla", "User's lease"
            i, bare = head
            return _key(bare), " ".join(words[i + 1:])
        return USER, text
    group = _GROUP_EN.match(text)
    if group:
        return USER, text[group.end():]
    if match:
        return USER, text[match.end():].strip()
    name = _NAME_EN.match(text)
    if name and english.subject_of(text) == "name":
        return f"name:{name['name'].lower()}", text[name.end():]
    return USER, text


def _owner_zh(text: str) -> tuple[str, str]:
    simplified = to_simplified(text)
    match = _USER_ZH.match(simplified)
    if match is None:
        return USER, text
    rest = simplified[match.end():]
    for entity in _ENTITIES_ZH:
        if rest.startswith(entity):
            kind = "spouse" if entity in _SPOUSE else f"person:{entity}" if entity in RELATIONS_ZH else f"entity:{entity}"
            return kind, text[match.end() + len(entity):]
    if match["link"]:  # 用户的银行…, 用户家的车…: an institution or a thing of theirs, not an attribute (用户的名字)
        import rjieba

        tokens = rjieba.tag(rest.lstrip("的"))
        if tokens:
            word, tag = tokens[0]
            if word not in _ATTRIBUTE_WORDS_ZH and (tag in ("nt", "ns", "nz") or word.endswith(_INSTITUTIONS_ZH)):
                at = match.end() + (len(rest) - len(rest.lstrip("的"))) + len(word)
                return f"entity:{word}", text[at:]
    return USER, text[match.end():]


def _owner_pack(text: str, code: str) -> tuple[str, str]:
    pack = languages.pack(code)
    if pack is None or not pack.relations:
        return USER, text
    parties = {form: party for party, forms in pack.relations.items() for form in forms}
    stripped = text.lstrip(" ¿¡\"'«“(")
    if not pack.spaced:  # Japanese: 私の妻は…, 妻は…
        for possessive in sorted(pack.possessives, key=len, reverse=True):
            if stripped.startswith(possessive):
                stripped = stripped[len(possessive):]
                break
        for form in sorted(parties, key=len, reverse=True):
            if stripped.startswith(form):
                return _party_key(parties[form], form, pack), stripped[len(form):]
        return USER, text
    words = pack.lexicon.words(stripped)
    if len(words) < 2:
        return USER, text
    # "mon mari …" where the pack lists the phrase, or "mi esposa …" where it lists the noun
    phrase = pack.lexicon.starts(stripped, tuple(parties))
    if phrase and pack.lexicon.is_one(pack.lexicon.words(phrase)[0], pack.possessives):
        rest = re.sub(r"^(?:\S+\s+){%d}" % len(phrase.split()), "", stripped + " ", count=1).strip()
        return _party_key(parties[phrase], phrase, pack), rest
    if pack.lexicon.is_one(words[0], pack.possessives):
        for form, party in parties.items():
            if pack.lexicon.find(words[1], (form,)) or pack.lexicon.find(f"{words[0]} {words[1]}", (form,)):
                rest = re.sub(r"^\S+\s+\S+\s*", "", stripped, count=1)
                return _party_key(party, form, pack), rest
    return USER, text


def _party_key(party: str, form: str, pack: languages.Pack) -> str:
    if party == "spouse":
        return "spouse"
    kind = "entity" if party in ("pet", "work") else "person"
    return f"{kind}:{pack.lexicon.key(form.rstrip('-'))}"


def mentions(owner_key: str, text: str) -> bool:
    """Whether ``text`` names the owner ``owner_key`` itself: "Has a dog" names the user's dog, so "User's dog is
    called Biscuit" refines it."""
    if owner_key == "spouse" or not owner_key.startswith(("entity:", "person:")):
        return owner_key == "spouse" and "SPOUSE" in language.terms(text)  # a named one has a life of its own
    noun = owner_key.split(":", 1)[1]
    simplified = to_simplified(text).lower()
    if not noun.isascii():
        return noun in simplified
    return any(english.lemmas(w).get("NOUN", (w,))[0] == noun for w in re.findall(r"[a-z]+", simplified))
